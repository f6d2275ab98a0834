"""The collector's outputs for a whole capture of report frames at once.

    cap = collect_capture(frames, udp_port)
    cap.tables()        # the same tables as Collector.tables() after feed_frames(frames)
    cap.bursts(port), cap.lost, cap.errors, cap.tap

Collector parses and derives report by report, which suits a stream (a
socket, packet-ins); a capture of a microburst holds a report for every
burst packet, 10^5 of them. Here the frames are parsed into columns
(report_columns) and the samples, intervals, burst events and lost
sequence numbers are computed over the columns, with Collector's rules:

* a sample per DOMAIN_QUEUE report with an event besides EVENT_INTERVAL,
  an IntervalMax per report with EVENT_INTERVAL;
* a BurstEvent per (node, egress port, burst id) of the reports with a
  burst event: start and end at the last START and END report, and over
  the START and PKT reports: count, frame bytes, last egress time, peaks
  of what the queue held, reports per ingress port, flows; packets the
  highest burst_pkts of them all;
* reports lost: per node, the forward gaps in the sequence numbers of the
  valid reports in capture order (a step back is a reordering).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..report_columns import FrameBlock, ReportColumns, parse_report_frames
from ..reports import EVENT_BURST_END, EVENT_BURST_PKT, EVENT_BURST_START, EVENT_INTERVAL
from .collector import (SAMPLE_COLUMNS, SAMPLE_COLUMNS_NO_FLOW, BurstEvent, IntervalMax, TapSample,
                        make_tables)

_SEQ_MASK = 0x3FFFFF
_SEQ_AHEAD = 0x200000


def collect_capture(frames: "Sequence[bytes] | FrameBlock",
                    udp_port: Optional[int] = None) -> "CapturedReports":
    return CapturedReports(parse_report_frames(frames, udp_port))


class CapturedReports:
    def __init__(self, cols: ReportColumns):
        self.columns = cols.queue
        self.errors: list[str] = [msg for _, msg in cols.errors]
        self.tap: list[TapSample] = [
            TapSample(r.node_id, r.md.ingress_ts_ns or 0, r.tap.direction, r.tap.bytes_to_dut,
                      r.tap.bytes_from_dut, r.tap.pkts_to_dut, r.tap.pkts_from_dut,
                      r.tap.frame_bytes) for _, r in cols.others if r.tap is not None]
        self.lost: dict[int, int] = _lost(cols)
        self._flow_code, self._flows = _flow_codes(cols.queue)
        self._bursts = self._burst_events()

    def __len__(self) -> int:
        return len(self.columns["position"])

    def bursts(self, port: Optional[int] = None) -> list[BurstEvent]:
        return [b for b in self._bursts if port is None or b.port == port]

    def tables(self, flows: bool = True) -> dict[str, Any]:
        """Collector.tables()'s tables; `flows` False leaves queue_samples'
        flow column out (a string per report, the costliest column)."""
        import pandas as pd
        import pyarrow as pa

        c = self.columns
        s = (c["events"] & ~EVENT_INTERVAL & 0xFF) != 0
        egress = c["egress_ts_ns"][s]
        samples = pd.DataFrame({
            "node_id": c["node_id"][s], "seq": c["seq"][s],
            "enq_ns": egress - c["queue_time_ns"][s], "egress_ns": egress,
            "ingress_port": c["ingress_port"][s], "egress_port": c["egress_port"][s],
            "queue_id": c["queue_id"][s], "enq_qdepth": c["enq_qdepth"][s],
            "deq_qdepth": c["deq_qdepth"][s], "enq_qbytes": c["enq_qbytes"][s],
            "deq_qbytes": c["deq_qbytes"][s], "queue_time_ns": c["queue_time_ns"][s],
            "hop_latency_ns": c["hop_latency_ns"][s], "events": c["events"][s],
            "burst_id": c["burst_id"][s], "frame_bytes": c["frame_bytes"][s],
            "held_pkts": c["deq_qdepth"][s] + 1,
            "held_bytes": c["deq_qbytes"][s] + c["frame_bytes"][s]},
            columns=SAMPLE_COLUMNS_NO_FLOW, copy=False)
        if flows:
            # each report's flow as text, taken from the distinct ones in
            # Arrow (not a Python string per report)
            names = pa.array([None] + [str(f) for f in self._flows], pa.large_string())
            samples.insert(SAMPLE_COLUMNS.index("flow"), "flow",
                           pd.array(names.take(self._flow_code[s] + 1), dtype="str"))
        i = (c["events"] & EVENT_INTERVAL) != 0
        intervals = pd.DataFrame({
            "node_id": c["node_id"][i], "port": c["egress_port"][i], "interval": c["interval"][i],
            "max_pkts": c["interval_max_pkts"][i], "max_bytes": c["interval_max_bytes"][i],
            "reported_ns": c["egress_ts_ns"][i]}, columns=[f for f in IntervalMax.__dataclass_fields__])
        return make_tables(samples, self._bursts, intervals, self.tap, [], [])

    def _burst_events(self) -> list[BurstEvent]:
        c = self.columns
        ev = c["events"]
        rows = np.flatnonzero(ev & (EVENT_BURST_START | EVENT_BURST_PKT | EVENT_BURST_END))
        if not len(rows):
            return []
        key = np.stack([c["node_id"][rows], c["egress_port"][rows], c["burst_id"][rows]], axis=1)
        if (key == key[0]).all():  # one burst (most captures): in capture order already
            return [self._burst(rows)]
        order = np.lexsort(key.T[::-1])  # stable: capture order within a burst
        rows, key = rows[order], key[order]
        cuts = np.flatnonzero((key[1:] != key[:-1]).any(axis=1)) + 1
        return [self._burst(seg) for seg in np.split(rows, cuts)]

    def _burst(self, seg: np.ndarray) -> BurstEvent:
        c = self.columns
        ev, egress = c["events"][seg], c["egress_ts_ns"][seg]
        b = BurstEvent(int(c["node_id"][seg[0]]), int(c["egress_port"][seg[0]]),
                       int(c["burst_id"][seg[0]]))
        starts, ends = np.flatnonzero(ev & EVENT_BURST_START), np.flatnonzero(ev & EVENT_BURST_END)
        if len(starts):
            b.start_ns = int(egress[starts[-1]])
        if len(ends):
            b.end_ns = int(egress[ends[-1]])
        b.packets = max(0, int(c["burst_pkts"][seg].max()))
        pk = seg[(ev & (EVENT_BURST_START | EVENT_BURST_PKT)) != 0]
        if len(pk):
            frame = c["frame_bytes"][pk]
            b.reported, b.bytes = len(pk), int(frame.sum())
            b.last_ns = int(c["egress_ts_ns"][pk].max())
            b.peak_pkts = max(0, int(c["deq_qdepth"][pk].max()) + 1)
            b.peak_bytes = max(0, int((c["deq_qbytes"][pk] + frame).max()))
            ports, first, counts = np.unique(c["ingress_port"][pk], return_index=True,
                                             return_counts=True)
            order = np.argsort(first)
            b.by_ingress = {int(ports[k]): int(counts[k]) for k in order}
            codes = np.unique(self._flow_code[pk])
            b.flows = {self._flows[k] for k in codes if k >= 0}
        return b


def _flow_codes(c: dict[str, np.ndarray]) -> tuple[np.ndarray, list[tuple]]:
    """Per report, the index of its five-tuple among the distinct ones (-1:
    no flow), and those five-tuples as the collector writes them (ports
    None when the inner packet shows none)."""
    import pandas as pd

    has = c["has_flow"]
    code = np.full(len(has), -1, dtype=np.int64)
    if not has.any():
        return code, []
    ips = (c["ip_src"][has] << 32) | c["ip_dst"][has]
    rest = ((c["proto"][has] << 33) | (c["has_ports"][has].astype(np.int64) << 32)
            | (c["sport"][has] << 16) | c["dport"][has])
    a, _ = pd.factorize(ips.astype(np.uint64))
    r, _ = pd.factorize(rest)
    combined, _ = pd.factorize(a.astype(np.int64) * (int(r.max()) + 1) + r)
    code[has] = combined
    at = np.flatnonzero(has)
    _, first = np.unique(combined, return_index=True)
    flows = []
    for k in first:
        i = at[k]
        ports = bool(c["has_ports"][i])
        flows.append((int(c["ip_src"][i]), int(c["ip_dst"][i]), int(c["proto"][i]),
                      int(c["sport"][i]) if ports else None, int(c["dport"][i]) if ports else None))
    return code, flows


def _lost(cols: ReportColumns) -> dict[int, int]:
    """Reports missing by sequence number per node, as Collector counts
    them: every valid report, in capture order."""
    pos = np.concatenate([cols.queue["position"],
                          np.asarray([p for p, _ in cols.others], dtype=np.int64)])
    node = np.concatenate([cols.queue["node_id"],
                           np.asarray([r.node_id for _, r in cols.others], dtype=np.int64)])
    seq = np.concatenate([cols.queue["seq"],
                          np.asarray([r.seq for _, r in cols.others], dtype=np.int64)])
    order = np.argsort(pos, kind="stable")
    node, seq = node[order], seq[order]
    lost: dict[int, int] = {}
    for n in dict.fromkeys(node.tolist()):
        s = seq[node == n]
        gap = (s[1:] - ((s[:-1] + 1) & _SEQ_MASK)) & _SEQ_MASK
        ahead = gap[(gap != 0) & (gap < _SEQ_AHEAD)]
        if len(ahead):
            lost[n] = int(ahead.sum())
    return lost
