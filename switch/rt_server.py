"""The run-time control server: BMv2's Thrift API on --thrift-port.

Wire format as BMv2's server speaks it: TCP, buffered transport, binary
protocol, services multiplexed by name ("standard:bm_mt_add_entry"). One
thread accepts, one thread serves each connection; calls are serialised by
the device lock in the handlers. It listens on loopback unless the caller
explicitly allows another address (BMv2 listens on every interface).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from typing import Optional

from .rt_handler import RuntimeApi
from .rtidl import SERVICES, bm

log = logging.getLogger("p4scope.switch.runtime")


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RuntimeServer:
    def __init__(self, api: RuntimeApi, host: str = "127.0.0.1", port: int = 9090,
                 allow_remote: bool = False):
        if not allow_remote and not is_loopback(host):
            raise ValueError(f"the run-time server listens on loopback only; '{host}' is not "
                             "a loopback address (ask for it explicitly to allow it)")
        self.api = api
        self.host = host
        self.port = port
        self._sock: Optional[socket.socket] = None
        self._threads: list[threading.Thread] = []
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._processor = None

    def _make_processor(self):
        from thriftpy2.thrift import TMultiplexedProcessor, TProcessor
        m = bm()
        proc = TMultiplexedProcessor()
        for name, handler in self.api.handlers().items():
            proc.register_processor(name, TProcessor(getattr(m, SERVICES[name]), handler))
        return proc

    def start(self) -> int:
        """Binds and starts serving; returns the port (useful with port 0)."""
        self._processor = self._make_processor()
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((self.host, self.port))
            s.listen(16)
        except OSError:
            s.close()
            raise
        self._sock = s
        self.port = s.getsockname()[1]
        self.api.thrift_port = self.port
        t = threading.Thread(target=self._accept, name="thrift-accept", daemon=True)
        t.start()
        self._threads.append(t)
        return self.port

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                if self._stopped.is_set():
                    conn.close()
                    return
                self._conns.add(conn)
            t = threading.Thread(target=self._serve, args=(conn,), name="thrift-conn",
                                 daemon=True)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        from thriftpy2.protocol.binary import TBinaryProtocol
        from thriftpy2.transport import TSocket, TTransportException
        from thriftpy2.transport.buffered import TBufferedTransport
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        trans = TBufferedTransport(TSocket(sock=conn))
        proto = TBinaryProtocol(trans)
        try:
            while not self._stopped.is_set():
                self._processor.process(proto, proto)
        except TTransportException:
            pass  # the client went away
        except Exception:  # a malformed message ends this connection only
            if not self._stopped.is_set():
                log.exception("run-time connection ended on an error")
        finally:
            with self._lock:
                self._conns.discard(conn)
            try:
                conn.close()
            except OSError:
                pass

    def stop(self) -> None:
        self._stopped.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout=2)
