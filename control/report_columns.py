"""A capture of INT reports parsed at once into columns (numpy): the bulk
counterpart of reports.parse_report_frame, for thousands of report frames.

    cols = parse_report_frames(frames, udp_port)   # frames: [bytes] or a FrameBlock
    cols.queue["deq_qdepth"], cols.queue["egress_ts_ns"]  # one entry per DOMAIN_QUEUE report
    cols.queue["position"]          # where the report was in `frames`
    cols.others                     # [(position, Report)]: valid reports of other domains
    cols.errors                     # [(position, message)]: frames parse_report_frame rejects
    tap = parse_tap_frames(frames, udp_port)  # DOMAIN_TAP reports: tap.columns, tap.inner,
                                              # tap.slow (positions left to parse one by one)

Frames are grouped by length and by every header field that decides how a
report parses (ether type, IP header length, protocol and total length, UDP
port and length, version, report type, Report and MD Length, RepMdBits,
domain). In a group each field sits at the same offset: the group's first
frame goes through parse_report_frame, and when it is a DOMAIN_QUEUE report
every field of the group is read as one column. Frames of other groups
(rejected, other domains, IP options) go through parse_report_frame one by
one, so the result is exactly what it gives frame by frame.

Baseline fields the RepMdBits leave out read 0 (the collector reads them
so). The inner packet's five-tuple is read as packets.parse_frame reads it:
`has_flow` when it is IPv4 (ip_src, ip_dst, proto), `has_ports` when it
also carries TCP/UDP ports (sport, dport) in an unfragmented datagram.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .packets import ETH_IPV4, PROTO_TCP, PROTO_UDP, parse_frame
from .reports import (DOMAIN_QUEUE, IN_TYPE_IPV4, Report, ReportError, baseline_offsets,
                      parse_report_frame)

_OUTER = 42  # Ethernet, IPv4 without options, UDP
_HEADERS = 20  # group, individual and main report headers
# the bytes whose values decide how a frame parses (ihl is masked in `_key`)
_KEY_BYTES = [12, 13, 14, 16, 17, 23, 36, 37, 38, 39, 42, 50, 51, 52, 54, 55, 56, 57]

BASELINE_COLUMNS = ("ingress_port", "egress_port", "hop_latency_ns", "queue_id",
                    "queue_occupancy", "ingress_ts_ns", "egress_ts_ns")
QUEUE_BLOCK_COLUMNS = ("events", "flags", "frame_bytes", "enq_qdepth", "deq_qdepth",
                       "enq_qbytes", "deq_qbytes", "buffer_bytes", "queue_time_ns", "burst_id",
                       "burst_pkts", "interval_max_pkts", "interval_max_bytes", "interval")
FLOW_COLUMNS = ("has_flow", "ip_src", "ip_dst", "proto", "has_ports", "sport", "dport")
QUEUE_COLUMNS = (("position", "hw_id", "seq", "node_id") + BASELINE_COLUMNS
                 + QUEUE_BLOCK_COLUMNS + FLOW_COLUMNS)
# QueueBlock.FORMAT "!BBH11I": offset and width of each field in the block
_QUEUE_BLOCK = [(0, 1), (1, 1), (2, 2)] + [(4 + 4 * i, 4) for i in range(11)]


class FrameBlock(Sequence[bytes]):
    """Frames one after the other in one byte string, with their lengths:
    a capture of 10^5 reports without a Python object per frame (the
    engine's `take_captured_block`). Indexing gives a frame's bytes."""

    def __init__(self, data: bytes, lengths: "np.ndarray | Sequence[int]"):
        self.data = data
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.offsets = np.zeros(len(self.lengths), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=self.offsets[1:])
        if len(self.lengths) and int(self.offsets[-1] + self.lengths[-1]) != len(data):
            raise ValueError("frame lengths do not add up to the data")

    @classmethod
    def of(cls, frames: Sequence[bytes]) -> "FrameBlock":
        if isinstance(frames, FrameBlock):
            return frames
        return cls(b"".join(frames), np.fromiter(map(len, frames), dtype=np.int64, count=len(frames)))

    @classmethod
    def joined(cls, blocks: Sequence["FrameBlock"]) -> "FrameBlock":
        if len(blocks) == 1:
            return blocks[0]
        return cls(b"".join(b.data for b in blocks),
                   np.concatenate([b.lengths for b in blocks]) if blocks else [])

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        at = int(self.offsets[i])
        return self.data[at:at + int(self.lengths[i])]

    def rows(self, pos: np.ndarray, length: int) -> np.ndarray:
        """The frames at positions `pos` (all `length` bytes long) as the
        rows of a uint8 array."""
        raw = np.frombuffer(self.data, dtype=np.uint8)
        if len(pos) == len(self):
            return raw.reshape(-1, length)
        return raw[self.offsets[pos][:, None] + np.arange(length)]


@dataclass
class ReportColumns:
    queue: dict[str, np.ndarray]
    """DOMAIN_QUEUE reports, by position: int64 columns (bool for has_*)."""
    others: list[tuple[int, Report]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.queue["position"])


def parse_report_frames(frames: "Sequence[bytes] | FrameBlock",
                        udp_port: Optional[int] = None) -> ReportColumns:
    """Parses every frame as parse_report_frame(frame, udp_port) would."""
    frames = FrameBlock.of(frames)
    groups, slow = _grouped(frames, lambda frame: _queue_layout(frame, udp_port))
    parts = [_read_group(block, pos, *layout) for block, pos, layout in groups]
    out = ReportColumns({})
    for i in sorted(slow):
        try:
            r = parse_report_frame(frames[i], udp_port)
        except ReportError as e:
            out.errors.append((i, str(e)))
            continue
        if r.queue is not None:
            parts.append(_columns_of(i, r))
        else:
            out.others.append((i, r))
    out.queue = _concat(parts)
    return out


TAP_COLUMNS = ("position", "time_ns", "seq", "direction", "tap_port", "frame_bytes",
               "bytes_to_dut", "bytes_from_dut", "pkts_to_dut", "pkts_from_dut", "node_id")
# TapBlock.FORMAT "!BBHQQIII": offset and width of the fields read
_TAP_BLOCK = {"direction": (1, 1), "bytes_to_dut": (4, 8), "bytes_from_dut": (12, 8),
              "pkts_to_dut": (20, 4), "pkts_from_dut": (24, 4), "frame_bytes": (28, 4)}


@dataclass
class TapReportColumns:
    """A tap's capture, the DOMAIN_TAP reports read in bulk: `columns`
    (TAP_COLUMNS, one entry per report, `position` (int64) where it was in
    the frames, the fields uint64 as the report holds them) and each one's
    inner frame (`inner`); `slow`: the positions of the frames left for
    parse_report_frame one by one (other domains, IP options, an inner
    IPv4 packet whose INT-MD needs parsing, frames it rejects)."""

    columns: dict[str, np.ndarray]
    inner: list[bytes]
    slow: list[int]


def parse_tap_frames(frames: "Sequence[bytes] | FrameBlock",
                     udp_port: Optional[int] = None) -> TapReportColumns:
    """The DOMAIN_TAP reports among `frames` as parse_report_frame would
    read them (the fields the tap inference uses: reports.TapBlock's, the
    tap's ingress timestamp and port, seq, node id, the inner frame), a
    baseline field the RepMdBits leave out as 0."""
    frames = FrameBlock.of(frames)
    groups, slow = _grouped(frames, lambda frame: _tap_layout(frame, udp_port))
    parts: list[dict[str, np.ndarray]] = []
    inner: list[bytes] = []
    for block, pos, (md, ds, inner_at, inner_end) in groups:
        ipv4_inner = (block[:, 50] & 0x0F) == IN_TYPE_IPV4  # INT-MD: parsed one by one
        if ipv4_inner.any() and inner_end > inner_at:
            slow.extend(pos[ipv4_inner].tolist())
            block, pos = block[~ipv4_inner], pos[~ipv4_inner]
            if not len(pos):
                continue
        fields = {"w0": (_OUTER, 4), "node_id": (_OUTER + 4, 4)}
        if 1 in md:
            fields["tap_port"] = (md[1], 2)
        if 4 in md:
            fields["time_ns"] = (md[4], 8)
        fields.update({name: (ds + o, w) for name, (o, w) in _TAP_BLOCK.items()})
        rec = _fields(block, {name: (o, f">u{w}") for name, (o, w) in fields.items()})
        zero = np.zeros(len(pos), dtype=np.uint64)
        cols: dict[str, np.ndarray] = {name: rec[name].astype(np.uint64) if name in fields
                                       else zero for name in TAP_COLUMNS[1:]}
        cols["seq"] = rec["w0"].astype(np.uint64) & 0x3FFFFF
        cols["position"] = pos
        parts.append(cols)
        width = inner_end - inner_at
        if width:
            raw = np.ascontiguousarray(block[:, inner_at:inner_end]).tobytes()
            inner.extend(raw[i:i + width] for i in range(0, len(raw), width))
        else:
            inner.extend([b""] * len(pos))
    columns = {name: np.concatenate([p[name] for p in parts]) if parts
               else np.zeros(0, dtype=np.int64 if name == "position" else np.uint64)
               for name in TAP_COLUMNS}
    return TapReportColumns(columns, inner, sorted(slow))


def _grouped(frames: FrameBlock, layout_of: Callable[[bytes], Optional[Any]]
             ) -> tuple[list[tuple[np.ndarray, np.ndarray, Any]], list[int]]:
    """The frames in groups of one length and one key (see the module's
    docstring), each with the layout `layout_of` finds in its first frame
    (block, positions, layout), and the positions of the frames left to
    parse one by one (too short, IP options, a group without a layout)."""
    groups: list[tuple[np.ndarray, np.ndarray, Any]] = []
    slow: list[int] = []
    lengths = frames.lengths
    for length in np.unique(lengths).tolist():
        pos = np.flatnonzero(lengths == length)
        if length < _OUTER + _HEADERS:
            slow.extend(pos.tolist())
            continue
        block = frames.rows(pos, length)
        keyed, rest = _groups(_key(block))
        slow.extend(pos[rest].tolist())
        for rows in keyed:
            layout = (layout_of(bytes(frames[pos[rows[0]]]))
                      if block[rows[0], 14] & 0xF == 5 else None)  # no IP options
            if layout is None:
                slow.extend(pos[rows].tolist())
            else:
                whole = len(rows) == len(block)
                groups.append((block if whole else block[rows], pos if whole else pos[rows],
                               layout))
    return groups, slow


def _key_spans() -> list[tuple[int, int, int]]:
    """_KEY_BYTES as four little-endian words over the frame (offset,
    width, mask): bytes outside the key masked out, the IPv4 header length
    and the report version and type to their nibbles."""
    nibble = {14: 0x0F, 42: 0xF0, 50: 0xF0}
    spans = []
    for off, width in ((12, 8), (20, 4), (36, 8), (50, 8)):
        mask = bytes(nibble.get(b, 0xFF) if b in _KEY_BYTES else 0 for b in range(off, off + width))
        spans.append((off, width, int.from_bytes(mask, "little")))
    assert sorted(b for o, w, _ in spans for b in range(o, o + w) if b in _KEY_BYTES) == _KEY_BYTES
    return spans


_KEY_SPANS = _key_spans()


def _fields(block: np.ndarray, fields: dict[str, tuple[int, str]]) -> np.ndarray:
    """The rows of `block` as records of `fields` (name: (offset, numpy
    format)): each field at its offset in every row (a view, unless the
    rows are not contiguous)."""
    return np.ascontiguousarray(block).view(np.dtype({
        "names": list(fields), "formats": [f for _, f in fields.values()],
        "offsets": [o for o, _ in fields.values()], "itemsize": block.shape[1]})).reshape(-1)


def _key(block: np.ndarray) -> np.ndarray:
    """Per row, the bytes that decide how it parses, as four masked words
    (equal words: equal keys)."""
    rec = _fields(block, {f"k{i}": (o, f"<u{w}") for i, (o, w, _) in enumerate(_KEY_SPANS)})
    k = np.empty((len(rec), len(_KEY_SPANS)), dtype=np.uint64)
    for i, (_, _, mask) in enumerate(_KEY_SPANS):
        np.bitwise_and(rec[f"k{i}"], mask, out=k[:, i], casting="unsafe")
    return k


def _groups(keys: np.ndarray, most: int = 16) -> tuple[list[np.ndarray], np.ndarray]:
    """Row indexes of each distinct key, for the `most` first keys (a
    capture has few layouts), and the rows left (to parse one by one)."""
    out: list[np.ndarray] = []
    left = np.arange(len(keys))
    while len(left) and len(out) < most:
        rows = keys if len(left) == len(keys) else keys[left]
        same = (rows == rows[0]).all(axis=1)
        out.append(left[same])
        left = left[~same]
    return out, left


def _queue_layout(frame: bytes, udp_port: Optional[int]) -> Optional[tuple[dict[int, int], int, int, int]]:
    """(baseline offsets, queue block offset, inner start, inner end) in the
    frame when it parses as a DOMAIN_QUEUE report, else None."""
    try:
        r = parse_report_frame(frame, udp_port)
    except ReportError:
        return None
    if r.queue is None or r.domain_id != DOMAIN_QUEUE:
        return None
    return _layout(r)


def _layout(r: Report) -> tuple[dict[int, int], int, int, int]:
    """Where a report's fields sit in its frame (see `_queue_layout`)."""
    md, ds = baseline_offsets(r.rep_md_bits)
    at = _OUTER + _HEADERS
    return ({b: at + o for b, o in md.items()}, at + ds, _OUTER + 20 + r.md_length * 4,
            _OUTER + 12 + r.report_length * 4)


def _tap_layout(frame: bytes,
                udp_port: Optional[int]) -> Optional[tuple[dict[int, int], int, int, int]]:
    """`_queue_layout` for a DOMAIN_TAP report."""
    try:
        r = parse_report_frame(frame, udp_port)
    except ReportError:
        return None
    if r.tap is None:
        return None
    return _layout(r)


def _read_group(block: np.ndarray, pos: np.ndarray, md: dict[int, int], ds: int,
                inner_at: int, inner_end: int) -> dict[str, np.ndarray]:
    """Every field of rows of one layout, read through a structured dtype
    with each field at its offset in the frame."""
    n = len(pos)
    fields = {"w0": (_OUTER, 4), "node_id": (_OUTER + 4, 4)}
    if 1 in md:
        fields.update(ingress_port=(md[1], 2), egress_port=(md[1] + 2, 2))
    if 2 in md:
        fields["hop_latency_ns"] = (md[2], 4)
    if 3 in md:
        fields["queue"] = (md[3], 4)
    if 4 in md:
        fields["ingress_ts_ns"] = (md[4], 8)
    if 5 in md:
        fields["egress_ts_ns"] = (md[5], 8)
    for name, (o, w) in zip(QUEUE_BLOCK_COLUMNS, _QUEUE_BLOCK):
        fields[name] = (ds + o, w)
    rec = _fields(block, {name: (o, f">u{w}") for name, (o, w) in fields.items()})
    zero = np.zeros(n, dtype=np.int64)
    get = lambda name: rec[name].astype(np.int64) if name in fields else zero  # noqa: E731
    w0, q = get("w0"), get("queue")
    c = {"position": pos, "hw_id": (w0 >> 22) & 0x3F, "seq": w0 & 0x3FFFFF,
         "node_id": get("node_id"), "ingress_port": get("ingress_port"),
         "egress_port": get("egress_port"), "hop_latency_ns": get("hop_latency_ns"),
         "queue_id": q >> 24, "queue_occupancy": q & 0xFFFFFF,
         "ingress_ts_ns": get("ingress_ts_ns"), "egress_ts_ns": get("egress_ts_ns")}
    for name in QUEUE_BLOCK_COLUMNS:
        c[name] = get(name)
    c.update(_flows(block, inner_at, inner_end))
    return c


def _flows(block: np.ndarray, start: int, end: int) -> dict[str, np.ndarray]:
    """The five-tuple columns of the inner packets (at [start, end) of
    every row)."""
    n, size = len(block), end - start
    if size < 34:  # no IPv4 header in reach: no flow (parse_frame)
        zero, no = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
        return {"has_flow": no, "ip_src": zero, "ip_dst": zero, "proto": zero,
                "has_ports": no, "sport": zero, "dport": zero}
    ip = _fields(block, {"type": (start + 12, ">u2"), "ihl": (start + 14, "u1"),
                         "frag": (start + 20, ">u2"), "proto": (start + 23, "u1"),
                         "src": (start + 26, ">u4"), "dst": (start + 30, ">u4")})
    has_flow = ip["type"] == ETH_IPV4
    proto = ip["proto"].astype(np.int64)
    l4 = 14 + (ip["ihl"] & 0xF).astype(np.int64) * 4
    unfragmented = (ip["frag"] & 0x1FFF) == 0
    has_ports = (has_flow & ((proto == PROTO_TCP) | (proto == PROTO_UDP)) & unfragmented
                 & (l4 + 4 <= size))
    at = int(l4[0])
    if (l4 == at).all() and at + 4 <= size:  # one IP header length: the ports' offset is fixed
        p = _fields(block, {"sport": (start + at, ">u2"), "dport": (start + at + 2, ">u2")})
        sport, dport = p["sport"].astype(np.int64), p["dport"].astype(np.int64)
    else:
        b = np.take_along_axis(block[:, start:end], np.where(has_ports, l4, 0)[:, None]
                               + np.arange(4), axis=1).astype(np.int64)
        sport, dport = (b[:, 0] << 8) | b[:, 1], (b[:, 2] << 8) | b[:, 3]
    keep = lambda v: np.where(has_flow, v, 0)  # noqa: E731
    return {"has_flow": has_flow, "ip_src": keep(ip["src"].astype(np.int64)),
            "ip_dst": keep(ip["dst"].astype(np.int64)), "proto": keep(proto),
            "has_ports": has_ports, "sport": np.where(has_ports, sport, 0),
            "dport": np.where(has_ports, dport, 0)}


def _columns_of(position: int, r: Report) -> dict[str, np.ndarray]:
    """One report parsed the slow way, as a group of one."""
    md, q = r.md, r.queue
    row: dict[str, object] = {"position": position, "hw_id": r.hw_id, "seq": r.seq,
                              "node_id": r.node_id}
    for name in BASELINE_COLUMNS:
        row[name] = getattr(md, name) or 0
    for name in QUEUE_BLOCK_COLUMNS:
        row[name] = getattr(q, name)
    f = None
    if r.inner:
        try:
            f = parse_frame(r.inner)
        except ValueError:
            pass
    flow = f if f is not None and f.ip_src is not None else None
    ports = flow if flow is not None and flow.sport is not None else None
    row.update({"has_flow": flow is not None, "ip_src": flow.ip_src if flow else 0,
                "ip_dst": flow.ip_dst if flow else 0, "proto": flow.proto if flow else 0,
                "has_ports": ports is not None, "sport": ports.sport if ports else 0,
                "dport": ports.dport if ports else 0})
    return {k: np.asarray([v], dtype=bool if k.startswith("has_") else np.int64)
            for k, v in row.items()}


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if not parts:
        return {k: np.zeros(0, dtype=bool if k.startswith("has_") else np.int64)
                for k in QUEUE_COLUMNS}
    cols = parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts])
                                             for k in QUEUE_COLUMNS}
    if (np.diff(cols["position"]) > 0).all():
        return cols
    order = np.argsort(cols["position"], kind="stable")
    return {k: v[order] for k, v in cols.items()}
