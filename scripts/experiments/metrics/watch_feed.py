"""A watched switch into the telemetry (`p4scope watch ... --metrics-port
N`): what the watch's sources (live/attach.py) take from the switch's
telemetry instrument, as the series of a run's endpoint.

From the INT reports (ReportFeed):
* each queue's level now: what the last reported packet found in it (it
  and what it left behind); the most since the last scrape also takes
  the interval maxima reported;
* bursts per egress port: how many began, the last one's peak in bytes;
* hop latency per (node, egress port) of every packet reported on its own
  (postcards of watched flows, packets reported while a burst lasts), and
  per (node, egress port) of every hop of the INT-MD paths sinks reported
  (source int_md; hops without node id or hop latency are left out).
From the instrument's registers and counters over P4Runtime (RuntimeFeed):
* each measured port's level: the current interval's maximum (0 when no
  packet left for a whole interval);
* per (egress, ingress) the bytes and packets delivered since the watch
  began (tel_delivered);
* drops: what was offered and not delivered (tel_offered minus
  tel_delivered), taken when the egress queue is seen empty (no packet
  left for a whole interval): then it is exact; in between, an offered
  packet may still be queued;
* bursts counted (tel_bursts) since the watch began.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from .telemetry import Telemetry

PAIR_BITS = 6  # telemetry.p4's TEL_PORT_BITS: a pair's counter index is egress << 6 | ingress
SOURCE = "instrument"


class WatchFeed:
    """Called from the watch's loop (one thread); the telemetry locks."""

    def __init__(self, telemetry: Telemetry, switch: str):
        self.t = telemetry
        self.switch = switch
        self.base: Optional[dict[str, dict[int, Any]]] = None  # counters when the watch began
        self.last: dict[str, dict[int, Any]] = {}
        self.dropped: dict[int, int] = {}  # per pair index, the drops exposed

    # ----- INT reports -------------------------------------------------------------

    def reports(self, samples: list[Any], intervals: list[Any], bursts: list[Any]) -> None:
        """The collector's QueueSamples and IntervalMaxes since the last pull
        and all its BurstEvents."""
        by_queue: dict[tuple[int, int], list[Any]] = {}
        latency: dict[tuple[int, int], list[int]] = {}
        for s in samples:
            by_queue.setdefault((s.egress_port, s.queue_id), []).append(s)
            latency.setdefault((s.node_id, s.egress_port), []).append(s.hop_latency_ns)
        for (port, queue), ss in sorted(by_queue.items()):
            self.t.queue_level((self.switch, port, queue), ss[-1].held_bytes, ss[-1].held_pkts,
                               max(s.held_bytes for s in ss), max(s.held_pkts for s in ss))
        for i in intervals:
            self.t.queue_max((self.switch, i.port, 0), i.max_bytes, i.max_pkts)
        for (node, port), v in sorted(latency.items()):
            self.t.hop_latency((self.switch, node, port, SOURCE), v)
        per_port: dict[int, list[Any]] = {}
        for b in bursts:
            per_port.setdefault(b.port, []).append(b)
        for port, bs in sorted(per_port.items()):
            last = max(bs, key=lambda b: (_first_seen(b), b.burst_id))
            self.t.burst_state((self.switch, port, 0, SOURCE), len(bs), last.peak_bytes, "bytes")

    def int_md(self, paths: Iterable[Any]) -> None:
        """IntMdPaths a sink reported: every hop's latency, as its node's."""
        latency: dict[tuple[int, Optional[int]], list[int]] = {}
        for p in paths:
            for h in p.hops:
                if h.node_id is not None and h.hop_latency_ns is not None:
                    latency.setdefault((h.node_id, h.egress_port), []).append(h.hop_latency_ns)
        for (node, port), v in latency.items():
            self.t.hop_latency((self.switch, node, port, "int_md"), v)

    # ----- P4Runtime reads ---------------------------------------------------------

    def polled(self, levels: dict[int, tuple[float, float]], counters: dict[str, dict[int, Any]],
               idle: set[int]) -> None:
        """One poll: per measured port its level (bytes, packets); the
        counters read (tel_offered, tel_delivered per pair index,
        tel_bursts per port: CounterValues); the ports seen idle."""
        for port, (nbytes, pkts) in sorted(levels.items()):
            self.t.queue_level((self.switch, port, 0), nbytes, pkts, nbytes, pkts)
        if self.base is None:
            self.base = self.last = counters
            return
        mask = (1 << PAIR_BITS) - 1
        before = self.last.get("tel_delivered", {})
        for k, v in sorted(counters.get("tel_delivered", {}).items()):
            b, p = _value(before.get(k))
            if v.bytes > b or v.packets > p:
                self.t.add_pair((self.switch, k >> PAIR_BITS, k & mask), v.bytes - b,
                                v.packets - p, 0)
        for k in sorted(counters.get("tel_offered", {})):
            if k >> PAIR_BITS not in idle:
                continue
            lost = (self._since(counters, "tel_offered", k)
                    - self._since(counters, "tel_delivered", k))
            if lost > self.dropped.get(k, 0):
                self.t.add_pair((self.switch, k >> PAIR_BITS, k & mask), 0, 0,
                                lost - self.dropped.get(k, 0))
                self.dropped[k] = lost
        for port in sorted(counters.get("tel_bursts", {})):
            self.t.burst_state((self.switch, port, 0, SOURCE),
                               self._since(counters, "tel_bursts", port))
        self.last = counters

    def _since(self, counters: dict[str, dict[int, Any]], name: str, k: int) -> int:
        """Packets counted in counter `name`'s cell `k` since the watch began."""
        return _value(counters.get(name, {}).get(k))[1] - _value(self.base.get(name, {}).get(k))[1]


def _value(v: Any) -> tuple[int, int]:
    return (0, 0) if v is None else (int(v.bytes), int(v.packets))


def _first_seen(b: Any) -> int:
    """When a burst was first seen (its start, else its last packet's egress)."""
    for t in (b.start_ns, b.last_ns, b.end_ns):
        if t is not None:
            return t
    return -1
