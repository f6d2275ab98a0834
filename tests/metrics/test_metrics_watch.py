"""`p4scope watch --reports ... --metrics-port` as a user runs it: INT
reports made by hand sent over UDP to the watch, Debian's real prometheus
server scraping its endpoint, and the hop latencies (postcards per node
and port, INT-MD hops per node), the queue and the burst read back through
Prometheus' HTTP API; and the --metrics-* options' errors (exit 2 naming
the option, nothing left running)."""

from __future__ import annotations

import json
import re
import signal
import socket
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.metrics.int_reports import flow, queue_report, stack_report
from tests.metrics.metrics_procs import ENDPOINT, PROMETHEUS, Proc, p4scope, query, start_prometheus
from p4scope.control.int_md_headers import IntHop
from p4scope.control.reports import EVENT_BURST_END, EVENT_BURST_PKT, EVENT_BURST_START

DASHBOARD = re.compile(r"dashboard at http://127\.0\.0\.1:\d+/")
LATENCIES = (400, 900, 3_000, 25_000, 180_000)  # node 5, egress port 2


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for p in started:
        p.stop(signal.SIGKILL)


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _value(base: str, expr: str):
    r = query(base, expr)
    return float(r[0]["value"][1]) if r else None


def _wait(base: str, expr: str, want: float, *logs: Proc, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while _value(base, expr) != want:
        assert time.monotonic() < deadline, (expr, _value(base, expr),
                                             *(p.text()[-2000:] for p in logs))
        time.sleep(0.2)


def test_prometheus_reads_back_the_hop_latency_the_watch_was_sent(tmp_path, procs):
    if PROMETHEUS is None:
        pytest.skip("no prometheus binary (scripts/setup.sh installs Debian's)")
    udp = _free_udp_port()
    watch = Proc(p4scope("watch", "--reports", f"127.0.0.1:{udp}", "--metrics-port", "0"))
    procs.append(watch)
    port = int(watch.wait_for(ENDPOINT).group(1))
    watch.wait_for(DASHBOARD)
    prom, base = start_prometheus(tmp_path, port)
    procs.append(prom)
    _wait(base, 'up{job="p4scope"}', 1, prom, watch)

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out = ("127.0.0.1", udp)
    seq = 0
    for i, lat in enumerate(LATENCIES):  # postcards; the third and fourth inside a burst
        ev = {2: EVENT_BURST_START | EVENT_BURST_PKT, 3: EVENT_BURST_PKT}.get(i, 1)
        sock.sendto(queue_report(5, seq, egress_port=2, latency=lat, events=ev, burst_id=1,
                                 deq_qdepth=10 * i, deq_qbytes=10_000 * i), out)
        seq += 1
    sock.sendto(queue_report(5, seq, egress_port=2, latency=500, events=EVENT_BURST_END,
                             burst_id=1), out)
    seq += 1
    hops = [IntHop(node_id=9, ingress_port=1, egress_port=3, hop_latency_ns=2_000,
                   ingress_ts_ns=1, egress_ts_ns=2_001)]
    for k in range(3):  # INT-MD paths through node 9, node 5 their sink
        pkt = flow(sport=100 + k, ident=k)
        sock.sendto(stack_report(5, seq, pkt, hops, ingress_ts=10_000 + k), out)
        sock.sendto(queue_report(5, seq + 1, egress_port=2, latency=600 + k,
                                 ingress_ts=10_000 + k, packet=pkt), out)
        seq += 2
    sock.close()

    sw = f'switch="reports@127.0.0.1:{udp}"'
    postcards = f'{{{sw},node="5",port="2",source="instrument"}}'
    n_reported = len(LATENCIES) + 1 + 3  # the burst's end is a reported packet too
    _wait(base, f"p4scope_hop_latency_seconds_count{postcards}", n_reported, prom, watch)
    total_ns = sum(LATENCIES) + 500 + 600 + 601 + 602
    assert _value(base, f"p4scope_hop_latency_seconds_sum{postcards}") == pytest.approx(
        total_ns * 1e-9)
    assert _value(base, f"max_over_time(p4scope_hop_latency_max_seconds{postcards}[10m])") \
        == pytest.approx(180_000e-9)
    buckets = {float(r["metric"]["le"]): float(r["value"][1]) for r in
               query(base, f"p4scope_hop_latency_seconds_bucket{postcards}")}
    assert buckets[5e-7] == 2  # 400 and 500 ns: a value on a bound is in its bucket
    assert buckets[1e-6] == 6 and buckets[5e-6] == 7
    assert buckets[5e-5] == 8 and buckets[2e-4] == 9 and buckets[float("inf")] == 9
    md = f'{{{sw},node="9",port="3",source="int_md"}}'
    _wait(base, f"p4scope_hop_latency_seconds_count{md}", 3, prom, watch)
    assert _value(base, f"p4scope_hop_latency_seconds_sum{md}") == pytest.approx(6_000e-9)
    sink = f'{{{sw},node="5",port="2",source="int_md"}}'
    assert _value(base, f"max_over_time(p4scope_hop_latency_max_seconds{sink}[10m])") \
        == pytest.approx(602e-9)
    # the queue and the burst, as the run's endpoint names them
    assert _value(base, f'max_over_time(p4scope_queue_occupancy_max_bytes{{{sw},port="2"}}[10m])'
                  ) == 40_000 + 1000  # the last postcard's: what it left and itself
    assert _value(base, f'p4scope_bursts_total{{{sw},port="2",source="instrument"}}') == 1

    # more postcards later: a rate, and the dashboard's quantiles, have an increase to show
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for k in range(5):
        sock.sendto(queue_report(5, seq + k, egress_port=2, latency=700), out)
    sock.close()
    _wait(base, f"p4scope_hop_latency_seconds_count{postcards}", n_reported + 5, prom, watch)
    p50 = _value(base, "histogram_quantile(0.5, sum by (le) (rate(p4scope_hop_latency_seconds_"
                       f"bucket{postcards}[1m])))")
    assert 5e-7 < p50 <= 1e-6  # the 700 ns bucket
    # the dashboard's hop-latency panels draw these series over the last minutes, as
    # Grafana asks for them
    for expr in _dashboard_exprs("p4scope_hop_latency"):
        deadline = time.monotonic() + 15
        while not _drawn(base, expr):
            assert time.monotonic() < deadline, expr
            time.sleep(0.2)

    assert watch.stop(signal.SIGINT) == 0
    assert prom.stop(signal.SIGTERM) == 0


def _drawn(base: str, expr: str) -> bool:
    """Whether a range query of `expr` over the last 5 minutes (1 s steps)
    has a point that is a number."""
    now = time.time()
    url = f"{base}/api/v1/query_range?" + urllib.parse.urlencode(
        {"query": expr, "start": now - 300, "end": now, "step": 1})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return any(v[1] not in ("NaN", "+Inf", "-Inf") for series in body["data"]["result"]
               for v in series["values"])


def _dashboard_exprs(metric: str) -> list[str]:
    """The Grafana dashboard's queries over `metric`, its variables filled in."""
    import p4scope.experiments.metrics as pkg

    dash = json.loads((Path(pkg.__file__).parent / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"] if metric in t["expr"]]
    assert len(exprs) >= 2
    return [e.replace("$switch", ".*").replace("$port", ".*").replace("$__rate_interval", "1m")
            for e in exprs]


def _taken_tcp():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, s.getsockname()[1]


@pytest.mark.parametrize("args, msg", [
    (["--metrics-port", "70000"], "--metrics-port 70000: a port is 0..65535"),
    (["--metrics-port", "-1"], "--metrics-port -1"),
    (["--metrics-port", "x"], "--metrics-port"),
    (["--metrics-port", "0", "--metrics-address", "nowhere"], "--metrics-address 'nowhere'"),
    (["--metrics-port", "0", "--metrics-address", "192.0.2.1"],
     "--metrics-address 192.0.2.1: cannot listen there"),
    (["--metrics-address", "127.0.0.2"], "--metrics-address: only with --metrics-port"),
])
def test_bad_watch_metrics_options_exit_2(args, msg):
    w = Proc(p4scope("watch", "--reports", str(_free_udp_port()), *args))
    assert w.wait(60) == 2, w.text()
    assert msg in w.text() and "Traceback" not in w.text(), w.text()


def test_a_taken_metrics_port_exits_2_naming_the_option():
    blocker, port = _taken_tcp()
    try:
        w = Proc(p4scope("watch", "--reports", str(_free_udp_port()), "--metrics-port",
                         str(port)))
        assert w.wait(60) == 2
        assert f"--metrics-port {port}: port {port} on 127.0.0.1 is taken" in w.text()
        assert "Traceback" not in w.text()
    finally:
        blocker.close()


def test_metrics_port_is_for_a_running_switch_not_a_replay(tmp_path):
    w = Proc(p4scope("watch", str(tmp_path), "--metrics-port", "0"))
    assert w.wait(60) == 2
    assert "--metrics-port: watch a running switch, not a stored run" in w.text()
