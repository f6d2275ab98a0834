"""The frames of the two classes and the CNPs, as header templates for
the tester (lengths and the IPv4 checksum are set per frame size; the
tester's tag takes the last 16 bytes).

* lossy: TCP-like (IPv4 protocol 6, PSH+ACK), DSCP 0, not ECN-capable;
* lossless: RoCEv2-like (UDP to 4791, the InfiniBand base transport
  header of an RC RDMA WRITE Only), DSCP 26, ECN-capable (ECT(0)), as
  RoCEv2 NICs send for DCQCN;
* CNP: a RoCEv2 congestion notification (BTH opcode 0x81 and 16 reserved
  bytes), DSCP 48.
"""

from __future__ import annotations

import struct

from ..testbed import host_ip, host_mac
from .params import CNP_DSCP, LOSSLESS_DSCP, LOSSY_DSCP, ROCEV2_UDP

ECT0 = 2
BTH_RDMA_WRITE_ONLY = 0x0A
BTH_CNP = 0x81


def _ethernet(src_port: int, dst_port: int) -> bytes:
    return (host_mac(dst_port).to_bytes(6, "big") + host_mac(src_port).to_bytes(6, "big")
            + b"\x08\x00")


def _ipv4(src_port: int, dst_port: int, dscp: int, ecn: int, proto: int) -> bytes:
    # total length and checksum are the tester's, per frame size
    return struct.pack("!BBHHHBBH4s4s", 0x45, (dscp << 2) | ecn, 0, 0, 0x4000, 64, proto, 0,
                       host_ip(src_port).to_bytes(4, "big"), host_ip(dst_port).to_bytes(4, "big"))


def _bth(opcode: int, qp: int) -> bytes:
    """Base transport header: opcode, flags, P_Key, destination QP, PSN."""
    return struct.pack("!BBHI I", opcode, 0, 0xFFFF, qp & 0xFFFFFF, 0)


def lossy(src_port: int, dst_port: int) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", 10000 + src_port, 5001, 0, 0, 5 << 4, 0x18, 0xFFFF, 0, 0)
    return _ethernet(src_port, dst_port) + _ipv4(src_port, dst_port, LOSSY_DSCP, 0, 6) + tcp


def lossless(src_port: int, dst_port: int) -> bytes:
    udp = struct.pack("!HHHH", 49152 + src_port, ROCEV2_UDP, 0, 0)
    return (_ethernet(src_port, dst_port) + _ipv4(src_port, dst_port, LOSSLESS_DSCP, ECT0, 17)
            + udp + _bth(BTH_RDMA_WRITE_ONLY, src_port))


def cnp(src_port: int, dst_port: int) -> bytes:
    udp = struct.pack("!HHHH", 49152 + src_port, ROCEV2_UDP, 0, 0)
    return (_ethernet(src_port, dst_port) + _ipv4(src_port, dst_port, CNP_DSCP, 0, 17) + udp
            + _bth(BTH_CNP, src_port) + bytes(16))


CNP_SIZE = 14 + 20 + 8 + 12 + 16 + 16 + 4
"""A CNP's headers, the tester's 16-byte tag after them, and the FCS."""
