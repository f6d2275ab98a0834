"""The Prometheus exposition of a run's telemetry, without Prometheus:
label sets and values as a scraper parses them, the max since the last
scrape, and what a finished case's tables add."""

import numpy as np
import pandas as pd
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from p4scope.experiments.metrics.feed import RunFeed
from p4scope.experiments.metrics.telemetry import Telemetry


def _scrape(t: Telemetry) -> dict[tuple[str, frozenset], float]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(t)
    text = generate_latest(reg).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def _q(port, queue=0):
    return frozenset({"switch": "virtual", "port": str(port), "queue": str(queue)}.items())


def _piece(rows):
    cols = ("time_ns", "port", "queue", "ingress", "kind", "q_pkts", "q_bytes", "in_pkts", "in_bytes")
    return {c: np.array([r[i] for r in rows]) for i, c in enumerate(cols)}


def test_occupancy_now_and_max_since_the_last_scrape():
    t = Telemetry()
    feed = RunFeed(t)
    # port 31 q0 fills to 3 frames then drains to 1; port 32 q1 holds one; a drop is ignored
    feed.on_trace(100, _piece([(10, 31, 0, 1, 0, 1, 1000, 1, 1000),
                               (20, 31, 0, 2, 0, 2, 2000, 1, 1000),
                               (30, 31, 0, 1, 0, 3, 3000, 2, 2000),
                               (31, 31, 0, 1, 2, 9, 9999, 9, 9999),
                               (40, 31, 0, 2, 1, 2, 2000, 0, 0),
                               (45, 32, 1, 3, 0, 1, 500, 1, 500),
                               (50, 31, 0, 1, 1, 1, 1000, 1, 1000)]))
    s = _scrape(t)
    assert s[("p4scope_queue_occupancy_bytes", _q(31))] == 1000
    assert s[("p4scope_queue_occupancy_packets", _q(31))] == 1
    assert s[("p4scope_queue_occupancy_max_bytes", _q(31))] == 3000
    assert s[("p4scope_queue_occupancy_max_packets", _q(31))] == 3
    assert s[("p4scope_queue_occupancy_max_bytes", _q(32, 1))] == 500
    # the next scrape's max starts from the level the queue was left at
    s = _scrape(t)
    assert s[("p4scope_queue_occupancy_max_bytes", _q(31))] == 1000
    feed.on_trace(200, _piece([(60, 31, 0, 2, 0, 2, 2500, 1, 1500),
                               (70, 31, 0, 2, 1, 0, 0, 0, 0)]))
    s = _scrape(t)
    assert s[("p4scope_queue_occupancy_max_bytes", _q(31))] == 2500
    assert s[("p4scope_queue_occupancy_bytes", _q(31))] == 0
    assert {k[0] for k in s if k[1] == _q(31)} == {
        "p4scope_queue_occupancy_bytes", "p4scope_queue_occupancy_packets",
        "p4scope_queue_occupancy_max_bytes", "p4scope_queue_occupancy_max_packets"}


class _Ev:
    def __init__(self, kind, planned=2, status="complete", tables=None):
        self.kind, self.planned, self.status, self.tables = kind, planned, status, tables


def test_a_finished_case_adds_its_pairs_drops_bursts_and_peaks():
    t = Telemetry()
    feed = RunFeed(t)
    feed.on_event(_Ev("start"))
    streams = pd.DataFrame({"ingress_port": [1, 2, 1], "egress_port": [31, 31, 31],
                            "tx_frames": [10, 10, 5], "tx_bytes": [640, 640, 320],
                            "rx_frames": [10, 7, 5], "rx_bytes": [640, 448, 320]})
    bursts = pd.DataFrame({"source": ["truth", "instrument", "truth"], "egress_port": [31, 31, 31],
                           "queue": [0, 0, 0], "start_ns": [5.0, 6.0, 50.0],
                           "peak": [900.0, 12.0, 700.0], "unit": ["bytes", "packets", "bytes"]})
    gt = pd.DataFrame({"egress_port": [31, 31], "queue": [0, 0], "t_ns": [1, 2],
                       "occupancy_bytes": [64, 4000], "occupancy_frames": [1, 60]})
    feed.on_event(_Ev("case_end", tables={"streams": streams, "burst_events": bursts,
                                          "ground_truth": gt}))
    feed.on_event(_Ev("case_end", status="failed", tables={}))
    s = _scrape(t)

    def pair(i):
        return frozenset({"switch": "virtual", "port": "31", "ingress": str(i)}.items())

    def burst(src, unit=None):
        d = {"switch": "virtual", "port": "31", "queue": "0", "source": src}
        if unit:
            d["unit"] = unit
        return frozenset(d.items())

    assert s[("p4scope_egress_ingress_bytes_total", pair(1))] == 960
    assert s[("p4scope_egress_ingress_packets_total", pair(1))] == 15
    assert s[("p4scope_egress_ingress_bytes_total", pair(2))] == 448
    assert s[("p4scope_drops_total", pair(1))] == 0
    assert s[("p4scope_drops_total", pair(2))] == 3
    assert s[("p4scope_bursts_total", burst("truth"))] == 2
    assert s[("p4scope_bursts_total", burst("instrument"))] == 1
    assert s[("p4scope_burst_last_peak", burst("truth", "bytes"))] == 700
    assert s[("p4scope_burst_last_peak", burst("instrument", "packets"))] == 12
    assert s[("p4scope_queue_occupancy_max_bytes", _q(31))] == 4000
    assert s[("p4scope_queue_occupancy_max_packets", _q(31))] == 60
    assert s[("p4scope_queue_occupancy_bytes", _q(31))] == 0
    assert s[("p4scope_run_cases", frozenset({"state": "done"}.items()))] == 1
    assert s[("p4scope_run_cases", frozenset({"state": "planned"}.items()))] == 2


def test_the_grafana_dashboard_draws_only_metrics_the_endpoint_exposes():
    import json
    import re
    from pathlib import Path

    import p4scope.experiments.metrics as pkg

    dash = json.loads((Path(pkg.__file__).parent / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
    used = {m for e in exprs for m in re.findall(r"\bp4scope_\w+", e)}
    t = Telemetry()
    RunFeed(t).on_trace(1, _piece([(1, 31, 0, 1, 0, 1, 64, 1, 64)]))
    t.add_pair(("virtual", 31, 1), 64, 1, 0)
    t.add_burst(("virtual", 31, 0, "truth"), 64, "bytes")
    t.hop_latency(("virtual", 1, 31, "instrument"), [1200])
    exposed = {name for name, _ in _scrape(t)}
    from types import SimpleNamespace

    from p4scope.switch.metrics import QueueStatsCollector

    class _Engine:  # one queue of a running switch, with a drop
        def tm_queue_stats(self):
            return [{"port": 1, "queue": 0, "pkts": 1, "bytes": 64, "enq_pkts": 2,
                     "enq_bytes": 128, "deq_pkts": 1, "deq_bytes": 64, "peak_pkts": 1,
                     "peak_bytes": 64, "drops": {"queue_full": 1}}]

        def tm_occupancy(self, port, queue):
            return {"ingress": {2: (1, 64)}}

    import threading

    dev = SimpleNamespace(lock=threading.RLock(), dataplane=SimpleNamespace(raw=_Engine()))
    exposed |= {name for name, _ in _scrape(QueueStatsCollector(dev, "device-0"))}
    assert used and used <= exposed, used - exposed
    assert {"p4scope_queue_occupancy_max_bytes", "p4scope_egress_ingress_bytes_total",
            "p4scope_bursts_total", "p4scope_drops_total", "p4scope_hop_latency_max_seconds",
            "p4scope_hop_latency_seconds_bucket"} <= used
    assert {p["type"] for p in dash["panels"]} >= {"timeseries", "status-history", "stat"}
