"""INT-MD v2.1 over UDP, as p4src/include/int_md_headers.p4 carries it:
read from a packet (the collector, tests) and written into one (tests,
PTF expectations).

    md = parse_int_md(ipv4_packet)          # IntMdStack, or None: no INT-MD
    md.hops                                 # IntHop per hop, the source's first
    frame = with_int_md(udp_frame, instructions, remaining_hops=7, hops=[IntHop(...)])
    frame = without_int_md(frame)           # what a sink forwards

Layout behind the UDP header (destination port INT_MD_UDP_PORT, the
flow's own port in the shim): shim (type 1, NPT 1, length in words of
what follows it), the 12-byte INT-MD header, then Hop ML words per hop,
newest first. Metadata a hop cannot give is all-ones; it reads as None.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, fields
from typing import Optional, Sequence

from .packets import PROTO_UDP, checksum16

INT_MD_UDP_PORT = 32767
"""The P4 program's INT_MD_UDP_PORT (its default; -DINT_MD_UDP_PORT=N)."""
INT_TYPE_MD = 1
NPT_UDP_PORT = 1
VERSION = 2
SHIM_BYTES, HEADER_BYTES = 4, 12

# instruction bitmap, bit 0 = MSB
INS_NODE_ID = 0x8000
INS_L1_PORTS = 0x4000
INS_HOP_LATENCY = 0x2000
INS_QUEUE = 0x1000
INS_INGRESS_TS = 0x0800
INS_EGRESS_TS = 0x0400
INS_L2_PORTS = 0x0200
INS_TX_UTIL = 0x0100
INS_BUFFER = 0x0080
INS_RESERVED = 0x007E
INS_CHECKSUM_COMPLEMENT = 0x0001
_EIGHT_BYTES = (INS_INGRESS_TS, INS_EGRESS_TS, INS_L2_PORTS)


class IntMdError(ValueError):
    """INT-MD whose lengths do not add up."""


def instruction_words(instructions: int) -> int:
    """Words of metadata per hop that `instructions` asks for (reserved
    bits as 4-byte items, as a v2.1 hop must treat them)."""
    return sum(2 if b in _EIGHT_BYTES else 1 for b in _bits(instructions))


def _bits(instructions: int) -> list[int]:
    return [0x8000 >> i for i in range(16) if instructions & (0x8000 >> i)]


@dataclass
class IntHop:
    """One hop's metadata; None: not asked for, or not available there."""
    node_id: Optional[int] = None
    ingress_port: Optional[int] = None
    egress_port: Optional[int] = None
    hop_latency_ns: Optional[int] = None
    queue_id: Optional[int] = None
    queue_occupancy: Optional[int] = None
    ingress_ts_ns: Optional[int] = None
    egress_ts_ns: Optional[int] = None
    l2_ingress_port: Optional[int] = None
    l2_egress_port: Optional[int] = None
    tx_utilization_mbps: Optional[int] = None
    buffer_id: Optional[int] = None
    buffer_occupancy: Optional[int] = None
    extra_words: list[int] = field(default_factory=list)
    """Words past the bitmap's items (domain-specific metadata)."""


HOP_FIELDS = [f.name for f in fields(IntHop) if f.name != "extra_words"]

# per instruction: struct format, IntHop fields (None: a word to skip)
_ITEMS = {
    INS_NODE_ID: ("!I", ("node_id",)),
    INS_L1_PORTS: ("!HH", ("ingress_port", "egress_port")),
    INS_HOP_LATENCY: ("!I", ("hop_latency_ns",)),
    INS_QUEUE: ("!I", ("queue_id", "queue_occupancy")),
    INS_INGRESS_TS: ("!Q", ("ingress_ts_ns",)),
    INS_EGRESS_TS: ("!Q", ("egress_ts_ns",)),
    INS_L2_PORTS: ("!II", ("l2_ingress_port", "l2_egress_port")),
    INS_TX_UTIL: ("!I", ("tx_utilization_mbps",)),
    INS_BUFFER: ("!I", ("buffer_id", "buffer_occupancy")),
}
_SPLIT_24 = (INS_QUEUE, INS_BUFFER)  # 8-bit id + 24-bit occupancy


def decode_hop(data: bytes, instructions: int) -> IntHop:
    """One hop's Hop ML words."""
    hop, off = IntHop(), 0
    for bit in _bits(instructions):
        size = 8 if bit in _EIGHT_BYTES else 4
        chunk = data[off:off + size]
        off += size
        if bit not in _ITEMS or chunk == b"\xff" * size:
            continue                     # reserved, checksum complement, or not available
        fmt, names = _ITEMS[bit]
        if bit in _SPLIT_24:
            v = struct.unpack(fmt, chunk)[0]
            vals: tuple = (v >> 24, v & 0xFFFFFF)
        else:
            vals = struct.unpack(fmt, chunk)
        for name, v in zip(names, vals):
            setattr(hop, name, v)
    hop.extra_words = list(struct.unpack(f"!{(len(data) - off) // 4}I", data[off:]))
    return hop


def encode_hop(hop: IntHop, instructions: int) -> bytes:
    """`hop` as a node adds it for `instructions` (None: all-ones)."""
    out = b""
    for bit in _bits(instructions):
        size = 8 if bit in _EIGHT_BYTES else 4
        if bit not in _ITEMS:
            out += b"\xff" * size
            continue
        fmt, names = _ITEMS[bit]
        vals = [getattr(hop, n) for n in names]
        if any(v is None for v in vals):
            out += b"\xff" * size
        elif bit in _SPLIT_24:
            out += struct.pack("!I", (vals[0] << 24) | vals[1])
        else:
            out += struct.pack(fmt, *vals)
    return out + b"".join(struct.pack("!I", w) for w in hop.extra_words)


@dataclass
class IntMdStack:
    """The INT-MD of one packet."""
    version: int
    discard: bool
    hops_exceeded: bool
    """E: a hop found the remaining hop count at 0."""
    mtu_exceeded: bool
    hop_ml: int
    remaining_hops: int
    instructions: int
    domain_id: int
    ds_instructions: int
    ds_flags: int
    original_dport: int
    hops: list[IntHop]
    """In path order: the first hop (the source) first."""
    flow: tuple = ()
    """(IPv4 source, destination, protocol, UDP source port, original destination port)."""
    ip_id: int = 0


def parse_int_md(packet: bytes, udp_port: int = INT_MD_UDP_PORT) -> Optional[IntMdStack]:
    """The INT-MD of an IPv4 packet (from its IPv4 header; it may end
    right after the stack), or None when it carries none."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return None
    ihl = (packet[0] & 0xF) * 4
    if packet[9] != PROTO_UDP or len(packet) < ihl + 8:
        return None
    ip_id = struct.unpack("!H", packet[4:6])[0]
    src, dst = packet[12:16], packet[16:20]
    sport, dport = struct.unpack("!HH", packet[ihl:ihl + 4])
    if dport != udp_port:
        return None
    at = ihl + 8
    if len(packet) < at + SHIM_BYTES + HEADER_BYTES:
        raise IntMdError(f"{len(packet) - at} bytes after UDP: no room for shim and header")
    b0, length, port = struct.unpack("!BBH", packet[at:at + 4])
    if b0 >> 4 != INT_TYPE_MD or (b0 >> 2) & 3 != NPT_UDP_PORT:
        raise IntMdError(f"shim type {b0 >> 4} NPT {(b0 >> 2) & 3}: not INT-MD after UDP")
    if length < 3 or at + SHIM_BYTES + 4 * length > len(packet):
        raise IntMdError(f"shim length {length} words: the packet has "
                         f"{(len(packet) - at - SHIM_BYTES) // 4}")
    w0, ins, dom, dsi, dsf = struct.unpack("!IHHHH", packet[at + 4:at + 16])
    hop_ml = (w0 >> 8) & 0x1F
    stack = packet[at + 16:at + SHIM_BYTES + 4 * length]
    if stack and (hop_ml == 0 or len(stack) % (4 * hop_ml)):
        raise IntMdError(f"a stack of {len(stack) // 4} words is not whole hops of {hop_ml}")
    hops = [decode_hop(stack[i:i + 4 * hop_ml], ins)
            for i in range(0, len(stack), 4 * hop_ml)] if stack else []
    hops.reverse()  # the stack is newest first
    return IntMdStack(version=w0 >> 28, discard=bool(w0 >> 27 & 1),
                      hops_exceeded=bool(w0 >> 26 & 1), mtu_exceeded=bool(w0 >> 25 & 1),
                      hop_ml=hop_ml, remaining_hops=w0 & 0xFF, instructions=ins,
                      domain_id=dom, ds_instructions=dsi, ds_flags=dsf, original_dport=port,
                      hops=hops,
                      flow=(int.from_bytes(src, "big"), int.from_bytes(dst, "big"), PROTO_UDP,
                            sport, port),
                      ip_id=ip_id)


# ----- writing (tests and PTF expectations) --------------------------------------------

def with_int_md(frame: bytes, instructions: int, remaining_hops: int,
                hops: Sequence[IntHop] = (), *, version: int = VERSION, d: int = 0, e: int = 0,
                m: int = 0, hop_ml: Optional[int] = None, shim_len: Optional[int] = None,
                udp_port: int = INT_MD_UDP_PORT, stack: Optional[bytes] = None) -> bytes:
    """An Ethernet/IPv4/UDP `frame` as it leaves an INT-MD hop: shim,
    header and `hops` (path order, encoded for `instructions`, or the raw
    `stack`) after the UDP header, the destination port in the shim,
    lengths and checksums updated (a UDP checksum of 0 stays 0). hop_ml
    and shim_len default to the consistent values."""
    ihl = (frame[14] & 0xF) * 4
    u = 14 + ihl
    ip_total, = struct.unpack("!H", frame[16:18])
    end = 14 + ip_total                        # what follows is Ethernet padding
    sport, dport, ulen, ucsum = struct.unpack("!HHHH", frame[u:u + 8])
    if stack is None:
        stack = b"".join(encode_hop(h, instructions) for h in reversed(hops))
    if hop_ml is None:
        hop_ml = instruction_words(instructions)
    words = 3 + len(stack) // 4 if shim_len is None else shim_len
    shim = struct.pack("!BBH", (INT_TYPE_MD << 4) | (NPT_UDP_PORT << 2), words, dport)
    w0 = (version << 28) | (d << 27) | (e << 26) | (m << 25) | (hop_ml << 8) | remaining_hops
    header = struct.pack("!IHHHH", w0, instructions, 0, 0, 0)
    added = shim + header + stack
    udp = struct.pack("!HHHH", sport, udp_port, ulen + len(added), 0)
    payload = frame[u + 8:end]
    out = _ipv4_with_length(frame, ip_total + len(added)) + udp + added + payload
    return _udp_checksummed(out, u, ucsum != 0)


def without_int_md(frame: bytes) -> bytes:
    """What a sink forwards: `frame` without shim, header and stack, its
    UDP destination port restored."""
    ihl = (frame[14] & 0xF) * 4
    u = 14 + ihl
    ip_total, = struct.unpack("!H", frame[16:18])
    sport, _dport, ulen, ucsum = struct.unpack("!HHHH", frame[u:u + 8])
    length, port = frame[u + 9], struct.unpack("!H", frame[u + 10:u + 12])[0]
    cut = SHIM_BYTES + 4 * length
    udp = struct.pack("!HHHH", sport, port, ulen - cut, 0)
    out = (_ipv4_with_length(frame, ip_total - cut) + udp
           + frame[u + 8 + cut:14 + ip_total])
    return _udp_checksummed(out, u, ucsum != 0)


def with_udp_checksum(frame: bytes) -> bytes:
    """An Ethernet/IPv4/UDP `frame` with its UDP checksum computed."""
    return _udp_checksummed(frame, 14 + (frame[14] & 0xF) * 4, True)


def udp_checksum_ok(frame: bytes) -> bool:
    """Whether the UDP checksum of an Ethernet/IPv4/UDP frame is right (or 0: unused)."""
    u = 14 + (frame[14] & 0xF) * 4
    ulen, csum = struct.unpack("!HH", frame[u + 4:u + 8])
    if csum == 0:
        return True
    pseudo = frame[26:34] + struct.pack("!BBH", 0, PROTO_UDP, ulen)
    return checksum16(pseudo + frame[u:u + ulen]) == 0


def _ipv4_with_length(frame: bytes, total: int) -> bytes:
    """Ethernet and IPv4 headers of `frame` with IPv4 total length `total`
    and the header checksum recomputed."""
    ihl = (frame[14] & 0xF) * 4
    ip = bytearray(frame[14:14 + ihl])
    ip[2:4] = struct.pack("!H", total)
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", checksum16(bytes(ip)))
    return frame[:14] + bytes(ip)


def _udp_checksummed(frame: bytes, u: int, on: bool) -> bytes:
    """`frame` with its UDP checksum computed (left 0 when not `on`),
    padded to the 60-byte Ethernet minimum."""
    out = bytearray(frame)
    if on:
        out[u + 6:u + 8] = b"\0\0"
        ulen = struct.unpack("!H", out[u + 4:u + 6])[0]
        pseudo = out[26:34] + struct.pack("!BBH", 0, PROTO_UDP, ulen)
        c = checksum16(bytes(pseudo) + bytes(out[u:u + ulen]))
        out[u + 6:u + 8] = struct.pack("!H", c)  # as the DUT writes it (BMv2: 0 stays 0)
    if len(out) < 60:
        out += b"\0" * (60 - len(out))
    return bytes(out)
