"""Small helpers shared by the controller tests."""

from __future__ import annotations

from p4scope.control import packets

H1 = "00:00:00:00:00:01"
H2 = "00:00:00:00:00:02"
H3 = "00:00:00:00:00:03"
BCAST = "ff:ff:ff:ff:ff:ff"


def ports_of(outs) -> list[int]:
    return sorted(p for p, _ in outs)


def frame(src=H1, dst=H2, size=60, **kw) -> bytes:
    return packets.udp_frame(dst_mac=dst, src_mac=src, size=size, **kw)
