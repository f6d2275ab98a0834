"""INT hop latency for Prometheus: per (switch, node, port, source) a
histogram of the hop latencies reported (p4scope_hop_latency_seconds) and
the largest since the last scrape (p4scope_hop_latency_max_seconds).

`node` is the INT node id of the hop, `port` its egress port ("" when an
INT-MD hop does not carry it), `source` where the latency was read:
`instrument`, the telemetry instrument's per-packet reports (postcards of
watched flows and the packets reported while a burst lasts), or `int_md`,
a hop of an INT-MD path a sink reported. Latencies arrive in nanoseconds
(INT's unit) and are exposed in seconds (Prometheus' base unit).
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

HopKey = tuple[str, int, Optional[int], str]  # switch, node, egress port, source
LABELS = ["switch", "node", "port", "source"]
BUCKETS_NS = np.array([m * 10 ** e for e in range(2, 9) for m in (1, 2, 5)] + [10 ** 9],
                      dtype=np.float64)
"""Bucket bounds, 100 ns to 1 s in 1-2-5 steps: a hop with an empty queue
(a few hundred ns) to a full buffer drained by a slow port."""


def _labels(key: HopKey) -> list[str]:
    switch, node, port, source = key
    return [switch, str(node), "" if port is None else str(port), source]


class HopLatencies:
    """Counts per bucket, sums and maxima of the latencies observed; not
    locked (the Telemetry that holds it locks around every call)."""

    def __init__(self) -> None:
        self.counts: dict[HopKey, np.ndarray] = {}  # per bucket, the last one +Inf
        self.sums_ns: dict[HopKey, float] = {}
        self.max_ns: dict[HopKey, float] = {}  # since the last scrape

    def observe(self, key: HopKey, latencies_ns: Sequence[float]) -> None:
        v = np.asarray(latencies_ns, dtype=np.float64)
        if not len(v):
            return
        # Prometheus' buckets count the values <= their bound
        idx = np.searchsorted(BUCKETS_NS, v, side="left")
        add = np.bincount(idx, minlength=len(BUCKETS_NS) + 1)
        self.counts[key] = self.counts.get(key, 0) + add
        self.sums_ns[key] = self.sums_ns.get(key, 0.0) + float(v.sum())
        self.max_ns[key] = max(self.max_ns.get(key, 0.0), float(v.max()))

    def families(self) -> list[Metric]:
        """The two families as a scrape reads them; the maxima start over."""
        hist = HistogramMetricFamily(
            "p4scope_hop_latency_seconds", "INT hop latency (egress minus ingress time at a "
            "switch) of the packets reported (source: instrument, its per-packet reports; "
            "int_md, the hops of INT-MD paths).", labels=LABELS)
        bounds = [floatToGoString(b / 1e9) for b in BUCKETS_NS] + ["+Inf"]
        for key in sorted(self.counts, key=_labels):
            cum = np.cumsum(self.counts[key])
            hist.add_metric(_labels(key), list(zip(bounds, (float(c) for c in cum))),
                            self.sums_ns[key] / 1e9)
        top = GaugeMetricFamily("p4scope_hop_latency_max_seconds",
                                "The largest INT hop latency reported since the last scrape "
                                "(absent when no packet was).", labels=LABELS)
        for key in sorted(self.max_ns, key=_labels):
            top.add_metric(_labels(key), self.max_ns[key] / 1e9)
        self.max_ns = {}
        return [hist, top]
