"""A client of BMv2's run-time Thrift services (p4scope's or BMv2's own).

`connect(ip, port)` opens one TCP connection and returns `Clients` with
one thriftpy2 client per multiplexed service, as simple_switch_CLI builds
them, so `p4scope switch-cli` drives real simple_switch as well.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from ...switch.thrift.idl import bm


class ConnectError(Exception):
    pass


@dataclass
class Clients:
    standard: Any
    pre: Any
    sswitch: Any
    transport: Any

    def close(self) -> None:
        try:
            self.transport.close()
        except Exception:
            pass


def connect(ip: str = "127.0.0.1", port: int = 9090, timeout_s: float = 30.0) -> Clients:
    from thriftpy2.protocol.binary import TBinaryProtocol
    from thriftpy2.protocol.multiplex import TMultiplexedProtocol
    from thriftpy2.thrift import TClient
    from thriftpy2.transport import TSocket, TTransportException
    from thriftpy2.transport.buffered import TBufferedTransport
    m = bm()
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    sock = TSocket(ip, port, socket_family=family, socket_timeout=int(timeout_s * 1000),
                   connect_timeout=5000)
    trans = TBufferedTransport(sock)
    try:
        trans.open()
    except TTransportException as e:
        raise ConnectError(f"Could not connect to thrift client on port {port}: {e}") from None
    proto = TBinaryProtocol(trans)

    def client(service, name):
        return TClient(service, TMultiplexedProtocol(proto, name))

    return Clients(client(m.Standard, "standard"), client(m.SimplePreLAG, "simple_pre_lag"),
                   client(m.SimpleSwitch, "simple_switch"), trans)
