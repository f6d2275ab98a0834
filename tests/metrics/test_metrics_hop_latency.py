"""INT hop latency (and the rest of what a watch sees) in the Prometheus
exposition: reports made by hand go through the watch's report feed (the
controller's collector) or a run's stored tables, and a scrape parsed by
prometheus_client gives back their hop latencies per node and port, as a
histogram and as the largest since the last scrape; the INT-MD hops per
node, the sink's joined from its postcard even when a pull falls between
the two; the counters read over P4Runtime as pairs, drops and bursts."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.metrics.int_reports import flow, queue_report, stack_report
from p4scope.control.apps.collector import Collector
from p4scope.control.int_md_headers import IntHop
from p4scope.control.reports import EVENT_BURST_PKT, EVENT_BURST_START, EVENT_INTERVAL
from p4scope.experiments.live.attach import ReportFeed
from p4scope.experiments.live.switch_model import SwitchModel
from p4scope.experiments.metrics.feed import RunFeed
from p4scope.experiments.metrics.telemetry import Telemetry
from p4scope.experiments.metrics.watch_feed import WatchFeed


def _scrape(t: Telemetry) -> dict[tuple[str, frozenset], float]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(t)
    text = generate_latest(reg).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def _hop(node, port, source="instrument", switch="sw", **extra):
    return frozenset({"switch": switch, "node": str(node), "port": str(port), "source": source,
                      **extra}.items())


def _watch():
    t = Telemetry(run=False)
    col = Collector()
    return t, col, ReportFeed(SwitchModel("sw"), col, "test", metrics=WatchFeed(t, "sw"))


def test_reported_packets_hop_latency_per_node_and_port():
    t, col, feed = _watch()
    for seq, lat in enumerate((300, 1500, 7000)):  # postcards of node 5, port 2
        col.feed(queue_report(5, seq, egress_port=2, latency=lat, deq_qdepth=seq,
                              deq_qbytes=1000 * seq))
    col.feed(queue_report(5, 3, egress_port=2, latency=40_000, events=EVENT_BURST_START
                          | EVENT_BURST_PKT, burst_id=1, burst_pkts=1, deq_qdepth=20,
                          deq_qbytes=20_000))
    col.feed(queue_report(5, 4, egress_port=2, latency=100, deq_qdepth=1, deq_qbytes=1000))
    col.feed(queue_report(6, 0, egress_port=3, latency=250_000))  # another node
    # an interval report describes an interval, not its packet: no latency from it
    col.feed(queue_report(5, 5, egress_port=2, latency=9_000_000, events=EVENT_INTERVAL,
                          interval=7, interval_max=(30, 30_000)))
    feed.pull()
    s = _scrape(t)
    assert s[("p4scope_hop_latency_seconds_count", _hop(5, 2))] == 5
    assert s[("p4scope_hop_latency_seconds_sum", _hop(5, 2))] == pytest.approx(48_900e-9)
    buckets = {le: s[("p4scope_hop_latency_seconds_bucket", _hop(5, 2, le=le))]
               for le in ("1e-07", "5e-07", "1e-06", "2e-06", "1e-05", "5e-05", "+Inf")}
    assert buckets == {"1e-07": 1, "5e-07": 2, "1e-06": 2, "2e-06": 3, "1e-05": 4,
                       "5e-05": 5, "+Inf": 5}
    assert s[("p4scope_hop_latency_max_seconds", _hop(5, 2))] == 40_000e-9
    assert s[("p4scope_hop_latency_seconds_count", _hop(6, 3))] == 1
    assert s[("p4scope_hop_latency_max_seconds", _hop(6, 3))] == 250_000e-9
    # the same scrape: the queue as the reports saw it, the burst, no run progress
    q2 = frozenset({"switch": "sw", "port": "2", "queue": "0"}.items())
    assert s[("p4scope_queue_occupancy_bytes", q2)] == 2000  # the last packet and what it left
    assert s[("p4scope_queue_occupancy_max_bytes", q2)] == 30_000  # the interval's maximum
    assert s[("p4scope_queue_occupancy_max_packets", q2)] == 30
    b = {"switch": "sw", "port": "2", "queue": "0", "source": "instrument"}
    assert s[("p4scope_bursts_total", frozenset(b.items()))] == 1
    assert s[("p4scope_burst_last_peak", frozenset({**b, "unit": "bytes"}.items()))] == 21_000
    assert not any(name == "p4scope_run_cases" for name, _ in s)

    # the max starts over at each scrape (absent with no packet since); the histogram adds up
    s = _scrape(t)
    assert ("p4scope_hop_latency_max_seconds", _hop(5, 2)) not in s
    assert s[("p4scope_hop_latency_seconds_count", _hop(5, 2))] == 5
    col.feed(queue_report(5, 6, egress_port=2, latency=800))
    feed.pull()
    s = _scrape(t)
    assert s[("p4scope_hop_latency_max_seconds", _hop(5, 2))] == 800e-9
    assert s[("p4scope_hop_latency_seconds_count", _hop(5, 2))] == 6
    assert ("p4scope_hop_latency_max_seconds", _hop(6, 3)) not in s


def test_int_md_hops_per_node_with_the_sinks_own_from_its_postcard():
    t, col, feed = _watch()
    hops = [IntHop(node_id=9, ingress_port=1, egress_port=2, hop_latency_ns=345,
                   ingress_ts_ns=10, egress_ts_ns=355),
            IntHop(node_id=7, ingress_port=3, egress_port=4, hop_latency_ns=1200,
                   ingress_ts_ns=400, egress_ts_ns=1600)]
    a, b = flow(sport=1, ident=11), flow(sport=2, ident=12)
    col.feed(stack_report(5, 0, a, hops, ingress_ts=5000))
    feed.pull()  # between a's stack report and its postcard: the path waits
    assert ("p4scope_hop_latency_seconds_count", _hop(9, 2, "int_md")) not in _scrape(t)
    col.feed(queue_report(5, 1, egress_port=2, latency=700, ingress_ts=5000, packet=a))
    col.feed(stack_report(5, 2, b, hops[:1], ingress_ts=6000))
    feed.pull()  # a's sink hop joined; b waits
    s = _scrape(t)
    assert s[("p4scope_hop_latency_seconds_count", _hop(9, 2, "int_md"))] == 1
    assert s[("p4scope_hop_latency_seconds_sum", _hop(7, 4, "int_md"))] == pytest.approx(1200e-9)
    assert s[("p4scope_hop_latency_max_seconds", _hop(5, 2, "int_md"))] == 700e-9  # the sink
    assert s[("p4scope_hop_latency_max_seconds", _hop(5, 2))] == 700e-9  # its postcard too
    feed.pull()  # b's postcard never came: its hops count without the sink's
    s = _scrape(t)
    assert s[("p4scope_hop_latency_seconds_count", _hop(9, 2, "int_md"))] == 2
    assert s[("p4scope_hop_latency_seconds_count", _hop(5, 2, "int_md"))] == 1
    assert col.int_md_paths == []


def _cv(packets, nbytes=None):
    return SimpleNamespace(packets=packets, bytes=1000 * packets if nbytes is None else nbytes)


def test_the_counters_read_over_p4runtime_as_pairs_drops_and_bursts():
    t = Telemetry(run=False)
    w = WatchFeed(t, "10.0.0.1:9559")

    def poll(offered, delivered, bursts, idle, level=(0, 0)):
        w.polled({2: level}, {"tel_offered": {(2 << 6) | i: _cv(n) for i, n in offered.items()},
                              "tel_delivered": {(2 << 6) | i: _cv(n)
                                                for i, n in delivered.items()},
                              "tel_bursts": {2: _cv(bursts, 0)}}, idle)

    poll({1: 10, 4: 5}, {1: 10, 4: 5}, 3, {2})  # when the watch began: the base
    poll({1: 110, 4: 65}, {1: 90, 4: 50}, 4, set(), (45_000, 45))  # 35 still queued or lost
    s = _scrape(t)
    q = frozenset({"switch": "10.0.0.1:9559", "port": "2", "queue": "0"}.items())
    assert s[("p4scope_queue_occupancy_bytes", q)] == 45_000
    assert s[("p4scope_queue_occupancy_max_packets", q)] == 45

    def pair(i):
        return frozenset({"switch": "10.0.0.1:9559", "port": "2", "ingress": str(i)}.items())

    assert s[("p4scope_egress_ingress_packets_total", pair(1))] == 80
    assert s[("p4scope_egress_ingress_bytes_total", pair(4))] == 45_000
    assert s[("p4scope_drops_total", pair(1))] == 0  # the queue was not seen empty
    b = frozenset({"switch": "10.0.0.1:9559", "port": "2", "queue": "0",
                   "source": "instrument"}.items())
    assert s[("p4scope_bursts_total", b)] == 1
    poll({1: 110, 4: 65}, {1: 95, 4: 62}, 4, {2})  # drained: 15 and 3 were dropped
    s = _scrape(t)
    assert s[("p4scope_drops_total", pair(1))] == 15
    assert s[("p4scope_drops_total", pair(4))] == 3
    assert s[("p4scope_egress_ingress_packets_total", pair(1))] == 85
    assert s[("p4scope_queue_occupancy_bytes", q)] == 0


def test_a_run_exposes_the_hop_latency_its_case_captured():
    t = Telemetry()
    series = pd.DataFrame({"case_id": "c", "t_ns": [1, 2, 3, 0], "egress_port": [31, 31, 31, 31],
                           "queue": 0, "kind": ["burst_pkt"] * 3 + ["interval_max"],
                           "depth_bytes": 0, "depth_frames": 0, "ingress_port": [1, 2, 1, -1],
                           "hop_latency_ns": [1_000, 3_000, 120_000, -1]})
    RunFeed(t).on_event(SimpleNamespace(kind="case_end", planned=1, status="complete",
                                        tables={"instrument_series": series}))
    s = _scrape(t)
    k = _hop(1, 31, switch="virtual")
    assert s[("p4scope_hop_latency_seconds_count", k)] == 3
    assert s[("p4scope_hop_latency_seconds_sum", k)] == pytest.approx(124_000e-9)
    assert s[("p4scope_hop_latency_max_seconds", k)] == 120_000e-9
    # a stored run from before the column: nothing, and no error
    RunFeed(t).case_tables({"instrument_series": series.drop(columns="hop_latency_ns")})
    assert _scrape(t)[("p4scope_hop_latency_seconds_count", k)] == 3


def test_the_instrument_series_keeps_each_reported_packets_hop_latency():
    from p4scope.experiments.instrument import from_collector

    col = Collector()
    col.feed(queue_report(1, 0, egress_port=31, latency=2_500, events=EVENT_BURST_START
                          | EVENT_BURST_PKT, burst_id=1, burst_pkts=1, deq_qdepth=3,
                          deq_qbytes=3000))
    col.feed(queue_report(1, 1, egress_port=31, latency=9_000, events=EVENT_INTERVAL,
                          interval=4, interval_max=(5, 5000)))
    seen = from_collector("c", col, interval_log2_us=0)
    by_kind = dict(zip(seen.series["kind"], seen.series["hop_latency_ns"]))
    assert by_kind == {"burst_pkt": 2_500, "interval_max": -1}
