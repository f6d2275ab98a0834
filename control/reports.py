"""INT Telemetry Report v2.0 (P4.org), as p4src/include/int_report.p4 sends it.

    report = parse_report(udp_payload)     # or parse_report_frame(frame)
    report.node_id, report.seq, report.congested
    report.md.hop_latency_ns, report.md.queue_occupancy
    report.queue.enq_qdepth, report.queue.events   # DOMAIN_QUEUE block
    report.tap.bytes_to_dut                        # DOMAIN_TAP block
    report.inner                                   # the reported packet's first bytes
    report.int_md.hops                             # an INT-MD sink's stack (InType IPv4)

The parser follows the lengths in the headers (Report Length, MD Length,
RepMdBits, DSMdBits) and checks them against the datagram, so a report
from another INT implementation with other metadata still parses: unknown
baseline bits are skipped by size, unknown domains are kept as raw words.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Optional

from .int_md_headers import IntMdError, IntMdStack, parse_int_md
from .packets import ETH_IPV4, PROTO_UDP

VERSION = 2
REP_TYPE_INT = 1
IN_TYPE_NONE, IN_TYPE_ETHERNET, IN_TYPE_IPV4 = 0, 3, 4  # Telemetry Report v2.0, 3.1
DOMAIN_QUEUE = 0x5051
DOMAIN_TAP = 0x5054

EVENT_POSTCARD = 0x01
EVENT_BURST_START = 0x02
EVENT_BURST_PKT = 0x04
EVENT_BURST_END = 0x08
EVENT_INTERVAL = 0x10
EVENT_TAP = 0x20
EVENT_NAMES = {EVENT_POSTCARD: "postcard", EVENT_BURST_START: "burst_start",
               EVENT_BURST_PKT: "burst_pkt", EVENT_BURST_END: "burst_end",
               EVENT_INTERVAL: "interval", EVENT_TAP: "tap"}

# RepMdBits, bit 0 = MSB: size in bytes of each baseline item
_MD_SIZES = {1: 4, 2: 4, 3: 4, 4: 8, 5: 8, 6: 8, 7: 4, 8: 4, 15: 4}


class ReportError(ValueError):
    """A datagram that is not a well-formed Telemetry Report v2.0."""


@dataclass
class BaselineMetadata:
    ingress_port: Optional[int] = None
    egress_port: Optional[int] = None
    hop_latency_ns: Optional[int] = None
    queue_id: Optional[int] = None
    queue_occupancy: Optional[int] = None
    ingress_ts_ns: Optional[int] = None
    egress_ts_ns: Optional[int] = None
    l2_ingress_port: Optional[int] = None
    l2_egress_port: Optional[int] = None
    tx_utilization: Optional[int] = None
    buffer_id: Optional[int] = None
    buffer_occupancy: Optional[int] = None
    drop_queue_id: Optional[int] = None
    drop_reason: Optional[int] = None


@dataclass
class QueueBlock:
    """p4scope's DOMAIN_QUEUE metadata (int_report.p4, report_queue_ds_t)."""
    events: int
    flags: int
    frame_bytes: int
    enq_qdepth: int
    deq_qdepth: int
    enq_qbytes: int
    deq_qbytes: int
    buffer_bytes: int
    queue_time_ns: int
    burst_id: int
    burst_pkts: int
    interval_max_pkts: int
    interval_max_bytes: int
    interval: int

    FORMAT = "!BBH11I"

    @property
    def bytes_valid(self) -> bool:
        return bool(self.flags & 1)

    def has(self, event: int) -> bool:
        return bool(self.events & event)

    @property
    def event_names(self) -> list[str]:
        return [n for b, n in EVENT_NAMES.items() if self.events & b]


class TapOccupancy:
    """What the tap saw in the DUT: bytes (or packets) towards it minus
    bytes (or packets) from it; for records with the tap's counter fields."""

    bytes_to_dut: int
    bytes_from_dut: int
    pkts_to_dut: int
    pkts_from_dut: int

    @property
    def occupancy_bytes(self) -> int:
        return self.bytes_to_dut - self.bytes_from_dut

    @property
    def occupancy_pkts(self) -> int:
        return self.pkts_to_dut - self.pkts_from_dut


@dataclass
class TapBlock(TapOccupancy):
    """p4scope's DOMAIN_TAP metadata (report_tap_ds_t)."""
    event: int
    direction: int
    bytes_to_dut: int
    bytes_from_dut: int
    pkts_to_dut: int
    pkts_from_dut: int
    frame_bytes: int

    FORMAT = "!BBHQQIII"


@dataclass
class Report:
    hw_id: int
    seq: int
    node_id: int
    rep_type: int
    in_type: int
    report_length: int
    md_length: int
    dropped: bool
    congested: bool
    tracked: bool
    intermediate: bool
    rep_md_bits: int
    domain_id: int
    ds_md_bits: int
    ds_md_status: int
    md: BaselineMetadata
    queue: Optional[QueueBlock] = None
    tap: Optional[TapBlock] = None
    ds_words: list[int] = field(default_factory=list)
    inner: bytes = b""
    int_md: Optional[IntMdStack] = None
    """The INT-MD stack embedded in an IPv4 inner packet (an INT-MD sink's report)."""


_HEAD = struct.Struct("!III4H")
_QUEUE = struct.Struct(QueueBlock.FORMAT)
_TAP = struct.Struct(TapBlock.FORMAT)


def parse_report(data: bytes) -> Report:
    """Parses the UDP payload of one report."""
    if len(data) < 20:
        raise ReportError(f"{len(data)} bytes: shorter than the 20 bytes of group, "
                          "individual and main headers")
    w0, node_id, w2, rep_md_bits, domain_id, ds_bits, ds_status = _HEAD.unpack_from(data)
    ver = w0 >> 28
    if ver != VERSION:
        raise ReportError(f"report version {ver}, expected {VERSION}")
    rep_type, in_type = w2 >> 28, (w2 >> 24) & 0xF
    rep_len, md_len = (w2 >> 16) & 0xFF, (w2 >> 8) & 0xFF
    flags = (w2 >> 4) & 0xF
    if rep_type != REP_TYPE_INT:
        raise ReportError(f"report type {rep_type}: only INT (1) is understood")
    end = 12 + rep_len * 4
    if end > len(data):
        raise ReportError(f"Report Length says {rep_len} words ({end} bytes with the "
                          f"headers) but the datagram has {len(data)}")
    md_end = 20 + md_len * 4
    if md_end > end:
        raise ReportError(f"MD Length {md_len} words runs past the report")
    md, off = _baseline(data, 20, md_end, rep_md_bits)
    ds = data[off:md_end]
    r = Report(hw_id=(w0 >> 22) & 0x3F, seq=w0 & 0x3FFFFF, node_id=node_id, rep_type=rep_type,
               in_type=in_type, report_length=rep_len, md_length=md_len,
               dropped=bool(flags & 8), congested=bool(flags & 4), tracked=bool(flags & 2),
               intermediate=bool(flags & 1), rep_md_bits=rep_md_bits, domain_id=domain_id,
               ds_md_bits=ds_bits, ds_md_status=ds_status, md=md,
               ds_words=list(struct.unpack_from(f"!{len(ds) // 4}I", ds)),
               inner=data[md_end:end])
    if domain_id == DOMAIN_QUEUE and len(ds) >= _QUEUE.size:
        r.queue = QueueBlock(*_QUEUE.unpack_from(ds))
    elif domain_id == DOMAIN_TAP and len(ds) >= _TAP.size:
        v = _TAP.unpack_from(ds)
        r.tap = TapBlock(v[0], v[1], *v[3:])
    if in_type == IN_TYPE_IPV4 and r.inner:
        try:
            r.int_md = parse_int_md(r.inner)
        except IntMdError as e:
            raise ReportError(f"the inner packet's INT-MD: {e}") from e
    return r


def _baseline(data: bytes, off: int, limit: int, bits: int) -> tuple[BaselineMetadata, int]:
    md = BaselineMetadata()
    for bit in range(16):
        if not bits & (0x8000 >> bit):
            continue
        size = _MD_SIZES.get(bit, 4)
        if off + size > limit:
            raise ReportError(f"RepMdBits bit {bit} needs {size} bytes past the metadata")
        chunk = data[off:off + size]
        off += size
        if bit == 1:
            md.ingress_port, md.egress_port = struct.unpack("!HH", chunk)
        elif bit == 2:
            md.hop_latency_ns = struct.unpack("!I", chunk)[0]
        elif bit == 3:
            v = struct.unpack("!I", chunk)[0]
            md.queue_id, md.queue_occupancy = v >> 24, v & 0xFFFFFF
        elif bit == 4:
            md.ingress_ts_ns = struct.unpack("!Q", chunk)[0]
        elif bit == 5:
            md.egress_ts_ns = struct.unpack("!Q", chunk)[0]
        elif bit == 6:
            md.l2_ingress_port, md.l2_egress_port = struct.unpack("!II", chunk)
        elif bit == 7:
            md.tx_utilization = struct.unpack("!I", chunk)[0]
        elif bit == 8:
            v = struct.unpack("!I", chunk)[0]
            md.buffer_id, md.buffer_occupancy = v >> 24, v & 0xFFFFFF
        elif bit == 15:
            md.drop_queue_id, md.drop_reason = chunk[0], chunk[1]
    return md, off


def baseline_offsets(bits: int) -> tuple[dict[int, int], int]:
    """Where each baseline item of RepMdBits `bits` starts, from the start
    of the baseline metadata, and the size of them all."""
    offsets, off = {}, 0
    for bit in range(16):
        if bits & (0x8000 >> bit):
            offsets[bit] = off
            off += _MD_SIZES.get(bit, 4)
    return offsets, off


def parse_report_frame(frame: bytes, udp_port: Optional[int] = None) -> Report:
    """Parses a report as the switch sends it: Ethernet/IPv4/UDP/report
    (checking the IPv4 and UDP lengths; `udp_port` if given)."""
    if len(frame) < 42:
        raise ReportError(f"{len(frame)} bytes: too short for Ethernet/IPv4/UDP")
    et = struct.unpack("!H", frame[12:14])[0]
    if et != ETH_IPV4:
        raise ReportError(f"ether type {et:#06x} is not IPv4")
    ihl = (frame[14] & 0xF) * 4
    total = struct.unpack("!H", frame[16:18])[0]
    if frame[23] != PROTO_UDP:
        raise ReportError(f"IP protocol {frame[23]} is not UDP")
    if 14 + total > len(frame):
        raise ReportError(f"IPv4 total length {total} runs past the frame ({len(frame)} bytes)")
    u = 14 + ihl
    dport, ulen = struct.unpack("!HH", frame[u + 2:u + 6])
    if udp_port is not None and dport != udp_port:
        raise ReportError(f"UDP port {dport} is not the collector's {udp_port}")
    if ulen != total - ihl:
        raise ReportError(f"UDP length {ulen} disagrees with IPv4 total length {total}")
    return parse_report(frame[u + 8:u + ulen])
