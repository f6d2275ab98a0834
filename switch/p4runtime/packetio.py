"""Packet-in and packet-out through the CPU port (as PI on BMv2).

Packet-out: the `packet_out` controller header (P4Info
controller_packet_metadata) is built from the PacketOut metadata, fields
packed MSB first in P4Info order, and prepended to the payload; the packet
enters the switch on the CPU port. Every field of the header must be given
(spec "Packet I/O": as many values as the P4Info lists; PI zeroes missing
ones, but a packet-out without `egress_port` would then leave on port 0);
a missing field, an unknown id or a value wider than its field is an
INVALID_ARGUMENT and the packet is dropped.

Packet-in: a packet the switch sends to the CPU port loses its first
`packet_in` header bytes, which become the PacketIn metadata. Without such
a header in the P4Info both directions carry the bare packet.
"""

from __future__ import annotations

from typing import Optional

from .codec import from_uint, to_uint
from .errors import invalid
from .schema import PacketMetadataInfo


def build_packet_out(info: Optional[PacketMetadataInfo], msg, where: str = "packet") -> bytes:
    """The bytes to inject for a PacketOut message."""
    if info is None:
        if len(msg.metadata):
            raise invalid(f"{where}.metadata: the P4Info has no packet_out controller header")
        return bytes(msg.payload)
    pos = {f.id: i for i, f in enumerate(info.fields)}
    vals = [0] * len(info.fields)
    seen = set()
    for i, md in enumerate(msg.metadata):
        p = pos.get(md.metadata_id)
        if p is None:
            raise invalid(f"{where}.metadata[{i}].metadata_id: {md.metadata_id} is not a field of "
                          "the packet_out header")
        if p in seen:
            raise invalid(f"{where}.metadata[{i}]: field '{info.fields[p].name}' given twice")
        seen.add(p)
        vals[p] = to_uint(md.value, info.fields[p].bitwidth, f"{where}.metadata[{i}].value")
    missing = [f.name for k, f in enumerate(info.fields) if k not in seen]
    if missing:
        raise invalid(f"{where}.metadata: field(s) {', '.join(repr(m) for m in missing)} of the "
                      "packet_out header missing (every field must be given)")
    return pack_header(info, vals) + bytes(msg.payload)


def pack_header(info: PacketMetadataInfo, vals: list[int]) -> bytes:
    acc = 0
    bits = 0
    for f, v in zip(info.fields, vals):
        acc = (acc << f.bitwidth) | v
        bits += f.bitwidth
    pad = (-bits) % 8
    return (acc << pad).to_bytes((bits + pad) // 8, "big") if bits else b""


def parse_packet_in(info: Optional[PacketMetadataInfo], data: bytes, out) -> bool:
    """Fills `out` (p4.v1.PacketIn); False if the packet is too short."""
    if info is None:
        out.payload = data
        return True
    n = info.nbytes
    if len(data) < n:
        return False
    acc = int.from_bytes(data[:n], "big")
    shift = n * 8
    for f in info.fields:
        shift -= f.bitwidth
        v = (acc >> shift) & ((1 << f.bitwidth) - 1)
        out.metadata.add(metadata_id=f.id, value=from_uint(v))
    out.payload = data[n:]
    return True
