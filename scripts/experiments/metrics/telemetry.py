"""The telemetry a user watches, kept between scrapes, and its Prometheus
exposition (a prometheus_client collector).

Every series carries the label `switch` (the switch it comes from); queue
series add `port` and `queue`, per-ingress ones `port` (the egress) and
`ingress`; hop latency ones `node`, `port` and `source` (hop_latency.py).
The "max since the last scrape" gauges are reset to the current
level by each collection, so the largest of the samples a scraper stored
is the true peak however short the burst (one scraper per endpoint: a
second one takes a share of the maxima).
"""

from __future__ import annotations

import threading
from typing import Iterator, Optional, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .hop_latency import HopKey, HopLatencies

Queue = tuple[str, int, int]  # switch, port, queue
Pair = tuple[str, int, int]  # switch, egress port, ingress port
BurstKey = tuple[str, int, int, str]  # switch, port, queue, source (truth or instrument)


class Telemetry(Collector):
    """Thread-safe store of the exposed values; `collect` is what a scrape
    reads. `run` False: no run progress (a watched switch has no cases)."""

    def __init__(self, run: bool = True) -> None:
        self.run = run
        self.lock = threading.Lock()
        self.occ_bytes: dict[Queue, float] = {}
        self.occ_pkts: dict[Queue, float] = {}
        self.max_bytes: dict[Queue, float] = {}
        self.max_pkts: dict[Queue, float] = {}
        self.pair_bytes: dict[Pair, float] = {}
        self.pair_pkts: dict[Pair, float] = {}
        self.drops: dict[Pair, float] = {}
        self.bursts: dict[BurstKey, int] = {}
        self.last_burst: dict[BurstKey, tuple[float, str]] = {}  # peak, unit
        self.cases_done = 0
        self.cases_planned = 0
        self.hops = HopLatencies()

    # ----- updates (the feed's) ----------------------------------------------------

    def queue_level(self, key: Queue, now_bytes: float, now_pkts: float,
                    top_bytes: float, top_pkts: float) -> None:
        """A queue's level now and the largest it held since the last update."""
        with self.lock:
            self.occ_bytes[key], self.occ_pkts[key] = float(now_bytes), float(now_pkts)
            self.max_bytes[key] = max(self.max_bytes.get(key, 0.0), float(top_bytes))
            self.max_pkts[key] = max(self.max_pkts.get(key, 0.0), float(top_pkts))

    def queue_max(self, key: Queue, top_bytes: float, top_pkts: float) -> None:
        """The largest a queue held lately (e.g. an interval's maximum), its
        level now unchanged (0 if never told)."""
        with self.lock:
            self.occ_bytes.setdefault(key, 0.0)
            self.occ_pkts.setdefault(key, 0.0)
            self.max_bytes[key] = max(self.max_bytes.get(key, 0.0), float(top_bytes))
            self.max_pkts[key] = max(self.max_pkts.get(key, 0.0), float(top_pkts))

    def add_pair(self, key: Pair, nbytes: float, pkts: float, dropped: float) -> None:
        with self.lock:
            self.pair_bytes[key] = self.pair_bytes.get(key, 0.0) + float(nbytes)
            self.pair_pkts[key] = self.pair_pkts.get(key, 0.0) + float(pkts)
            self.drops[key] = self.drops.get(key, 0.0) + max(0.0, float(dropped))

    def add_burst(self, key: BurstKey, peak: float, unit: str) -> None:
        with self.lock:
            self.bursts[key] = self.bursts.get(key, 0) + 1
            self.last_burst[key] = (float(peak), unit)

    def burst_state(self, key: BurstKey, count: int, peak: Optional[float] = None,
                    unit: str = "bytes") -> None:
        """Bursts counted so far (never fewer than before) and, when given, the
        last one's peak: for a source that tells totals, not each burst."""
        with self.lock:
            self.bursts[key] = max(self.bursts.get(key, 0), int(count))
            if peak is not None:
                self.last_burst[key] = (float(peak), unit)

    def hop_latency(self, key: HopKey, latencies_ns: Sequence[float]) -> None:
        """Hop latencies (ns) of packets reported by node `key[1]`."""
        with self.lock:
            self.hops.observe(key, latencies_ns)

    def progress(self, done: int, planned: int) -> None:
        with self.lock:
            self.cases_done, self.cases_planned = int(done), int(planned)

    # ----- exposition -----------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        q = ["switch", "port", "queue"]
        pr = ["switch", "port", "ingress"]
        b = ["switch", "port", "queue", "source"]
        with self.lock:
            fams = [
                _gauge("p4scope_queue_occupancy_bytes", "Bytes held in an egress queue now.",
                       q, self.occ_bytes),
                _gauge("p4scope_queue_occupancy_packets", "Packets held in an egress queue now.",
                       q, self.occ_pkts),
                _gauge("p4scope_queue_occupancy_max_bytes",
                       "The most bytes an egress queue held since the last scrape.",
                       q, self.max_bytes),
                _gauge("p4scope_queue_occupancy_max_packets",
                       "The most packets an egress queue held since the last scrape.",
                       q, self.max_pkts),
                _counter("p4scope_egress_ingress_bytes",
                         "Bytes an egress port delivered that came in on an ingress port.",
                         pr, self.pair_bytes),
                _counter("p4scope_egress_ingress_packets",
                         "Packets an egress port delivered that came in on an ingress port.",
                         pr, self.pair_pkts),
                _counter("p4scope_drops", "Packets from an ingress port to an egress port that "
                         "were sent and not delivered.", pr, self.drops),
                _counter("p4scope_bursts", "Bursts detected in an egress queue (source: "
                         "truth, the traffic manager; instrument, the P4 program's reports).",
                         b, self.bursts),
            ]
            last = GaugeMetricFamily("p4scope_burst_last_peak",
                                     "The peak of the last burst detected in an egress queue, "
                                     "in its unit (bytes or packets).", labels=[*b, "unit"])
            for k, (v, unit) in sorted(self.last_burst.items()):
                last.add_metric([*map(str, k), unit], v)
            fams.append(last)
            fams += self.hops.families()
            if self.run:
                done = GaugeMetricFamily("p4scope_run_cases",
                                         "The run's cases (state: done, planned).",
                                         labels=["state"])
                done.add_metric(["done"], self.cases_done)
                done.add_metric(["planned"], self.cases_planned)
                fams.append(done)
            # max since the last scrape: from now on, the level it starts from
            self.max_bytes = dict(self.occ_bytes)
            self.max_pkts = dict(self.occ_pkts)
        yield from fams


def _gauge(name: str, doc: str, labels: list[str], values: dict) -> GaugeMetricFamily:
    g = GaugeMetricFamily(name, doc, labels=labels)
    for k, v in sorted(values.items()):
        g.add_metric([str(x) for x in k], v)
    return g


def _counter(name: str, doc: str, labels: list[str], values: dict) -> CounterMetricFamily:
    c = CounterMetricFamily(name, doc, labels=labels)
    for k, v in sorted(values.items()):
        c.add_metric([str(x) for x in k], v)
    return c
