"""Ethernet/IPv4/UDP/TCP frames built and read without dependencies.

Enough for the controller (packet-out, reading packet-ins and reports) and
for tests: `udp_frame(...)` builds a frame padded to the 60-byte minimum
(64 with the FCS a software switch never sees); `parse_frame` reads one
back into a `Frame`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from . import values

ETH_IPV4 = 0x0800
PROTO_TCP = 6
PROTO_UDP = 17
MIN_FRAME = 60


def mac_bytes(mac) -> bytes:
    return values.to_int(mac, 48, "MAC").to_bytes(6, "big")


def ip_bytes(ip) -> bytes:
    return values.to_int(ip, 32, "IPv4 address").to_bytes(4, "big")


def checksum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ethernet(dst, src, ether_type: int) -> bytes:
    return mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", ether_type)


def ipv4(src, dst, proto: int, payload_len: int, ttl: int = 64, dscp: int = 0, ecn: int = 0,
         ident: int = 0, flags: int = 0, bad_checksum: bool = False) -> bytes:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, (dscp << 2) | ecn, 20 + payload_len, ident,
                      flags << 13, ttl, proto, 0, ip_bytes(src), ip_bytes(dst))
    c = checksum16(hdr)
    if bad_checksum:
        c ^= 0xFFFF
    return hdr[:10] + struct.pack("!H", c) + hdr[12:]


def pad(frame: bytes, size: int = MIN_FRAME) -> bytes:
    return frame + b"\0" * (size - len(frame)) if len(frame) < size else frame


def udp_frame(dst_mac="00:00:00:00:00:02", src_mac="00:00:00:00:00:01",
              src_ip="10.0.0.1", dst_ip="10.0.0.2", sport: int = 1234, dport: int = 80,
              payload: bytes = b"", size: int = MIN_FRAME, ttl: int = 64, dscp: int = 0,
              bad_checksum: bool = False) -> bytes:
    """An Ethernet/IPv4/UDP frame of at least `size` bytes (payload padded
    so that IPv4 and UDP lengths cover the whole frame)."""
    body_len = max(len(payload), size - 14 - 20 - 8)
    payload = payload + b"\0" * (body_len - len(payload))
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return (ethernet(dst_mac, src_mac, ETH_IPV4)
            + ipv4(src_ip, dst_ip, PROTO_UDP, len(udp), ttl, dscp, bad_checksum=bad_checksum)
            + udp)


def tcp_frame(dst_mac="00:00:00:00:00:02", src_mac="00:00:00:00:00:01",
              src_ip="10.0.0.1", dst_ip="10.0.0.2", sport: int = 1234, dport: int = 80,
              size: int = MIN_FRAME, ttl: int = 64) -> bytes:
    body_len = max(0, size - 14 - 20 - 20)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 0, 0, 5 << 4, 0x02, 8192, 0, 0) + b"\0" * body_len
    return ethernet(dst_mac, src_mac, ETH_IPV4) + ipv4(src_ip, dst_ip, PROTO_TCP, len(tcp), ttl) + tcp


def l2_frame(dst_mac="ff:ff:ff:ff:ff:ff", src_mac="00:00:00:00:00:01",
             ether_type: int = 0x88B5, size: int = MIN_FRAME) -> bytes:
    return pad(ethernet(dst_mac, src_mac, ether_type), size)


@dataclass
class Frame:
    dst_mac: int
    src_mac: int
    ether_type: int
    length: int
    ip_src: Optional[int] = None
    ip_dst: Optional[int] = None
    proto: Optional[int] = None
    ttl: Optional[int] = None
    dscp: Optional[int] = None
    ip_checksum_ok: Optional[bool] = None
    sport: Optional[int] = None
    dport: Optional[int] = None
    l4_payload: bytes = b""

    @property
    def five_tuple(self) -> tuple:
        return (self.ip_src, self.ip_dst, self.proto, self.sport, self.dport)


def parse_frame(data: bytes) -> Frame:
    """Reads what is there; missing layers stay None."""
    if len(data) < 14:
        raise ValueError(f"frame of {len(data)} bytes is shorter than an Ethernet header")
    dst, src, et = struct.unpack("!6s6sH", data[:14])
    f = Frame(int.from_bytes(dst, "big"), int.from_bytes(src, "big"), et, len(data))
    if et == ETH_IPV4 and len(data) >= 34:
        ip = data[14:34]
        vihl, tos, _tl, _id, fo, ttl, proto, _c, s, d = struct.unpack("!BBHHHBBH4s4s", ip)
        ihl = (vihl & 0xF) * 4
        f.ip_src, f.ip_dst = int.from_bytes(s, "big"), int.from_bytes(d, "big")
        f.proto, f.ttl, f.dscp = proto, ttl, tos >> 2
        f.ip_checksum_ok = checksum16(data[14:14 + ihl]) == 0
        l4 = 14 + ihl
        if proto in (PROTO_TCP, PROTO_UDP) and (fo & 0x1FFF) == 0 and len(data) >= l4 + 4:
            f.sport, f.dport = struct.unpack("!HH", data[l4:l4 + 4])
            f.l4_payload = data[l4 + (8 if proto == PROTO_UDP else 20):]
    return f
