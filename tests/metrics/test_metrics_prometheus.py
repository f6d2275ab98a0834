"""A run's Prometheus endpoint as a user sees it: Debian's real prometheus
server scrapes `p4scope run microburst --metrics-port` and its HTTP API
gives back what the run stored (peak occupancy, bursts, bytes per
ingress); and the --metrics-* options' errors."""

import signal
import socket
import time

import pandas as pd
import pytest

from tests.metrics.metrics_procs import (ENDPOINT, PROMETHEUS, TINY_RUN, Proc, p4scope, query,
                                        start_prometheus)


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for p in started:
        p.stop(signal.SIGKILL)


def _value(base: str, expr: str):
    r = query(base, expr)
    return float(r[0]["value"][1]) if r else None


def test_prometheus_scrapes_the_run_and_reads_back_what_it_stored(tmp_path, procs):
    if PROMETHEUS is None:
        pytest.skip("no prometheus binary (scripts/setup.sh installs Debian's)")
    results = tmp_path / "results"
    run = Proc(p4scope(*TINY_RUN, "--results", str(results), "--run-id", "m",
                       "--metrics-port", "0", "--metrics-linger", "120"))
    procs.append(run)
    port = int(run.wait_for(ENDPOINT).group(1))
    prom, base = start_prometheus(tmp_path, port)
    procs.append(prom)

    deadline = time.monotonic() + 30
    while _value(base, 'p4scope_run_cases{state="done"}') != 2:  # a scrape after the run
        assert time.monotonic() < deadline, prom.text()[-3000:] + run.text()
        assert prom.proc.poll() is None, prom.text()[-3000:]
        time.sleep(0.2)

    stored = results / "m"
    peak = pd.read_parquet(stored / "instrument_errors.parquet")["peak_truth"].max()
    bursts = pd.read_parquet(stored / "burst_events.parquet")
    streams = pd.read_parquet(stored / "streams.parquet")
    sel = '{job="p4scope",switch="virtual",port="31",queue="0"}'
    assert _value(base, f"max_over_time(p4scope_queue_occupancy_max_bytes{sel}[10m])") == peak
    assert _value(base, f"p4scope_queue_occupancy_bytes{sel}") == 0  # drained at the end
    assert _value(base, 'p4scope_bursts_total{source="truth",port="31",queue="0"}') == \
        (bursts["source"] == "truth").sum()
    per_ingress = streams.groupby("ingress_port")["rx_bytes"].sum()
    got = {int(r["metric"]["ingress"]): float(r["value"][1]) for r in
           query(base, 'p4scope_egress_ingress_bytes_total{port="31"}')}
    assert got == {int(i): float(b) for i, b in per_ingress.items()}
    assert _value(base, 'sum(p4scope_drops_total{port="31"})') == 0
    # the hop latency of every packet the instrument reported (the DUT is INT node 1)
    lat = pd.read_parquet(stored / "instrument_series.parquet")["hop_latency_ns"]
    lat = lat[lat >= 0]
    hop = '{job="p4scope",switch="virtual",node="1",port="31",source="instrument"}'
    assert len(lat) > 100
    assert _value(base, f"p4scope_hop_latency_seconds_count{hop}") == len(lat)
    assert _value(base, f"p4scope_hop_latency_seconds_sum{hop}") == pytest.approx(lat.sum() * 1e-9)
    assert _value(base, f"max_over_time(p4scope_hop_latency_max_seconds{hop}[10m])") == \
        pytest.approx(lat.max() * 1e-9)

    assert run.stop(signal.SIGINT) == 0  # Ctrl-C ends the linger; the run was complete
    assert prom.stop(signal.SIGTERM) == 0


def _taken():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, s.getsockname()[1]


def test_a_taken_metrics_port_exits_2_naming_the_option(tmp_path):
    blocker, port = _taken()
    try:
        r = Proc(p4scope(*TINY_RUN, "--results", str(tmp_path), "--metrics-port", str(port)))
        assert r.wait(60) == 2
        assert f"--metrics-port {port}" in r.text() and "taken" in r.text()
        assert not any(tmp_path.iterdir())  # nothing started
    finally:
        blocker.close()


@pytest.mark.parametrize("args, msg", [
    (["--metrics-port", "70000"], "--metrics-port 70000"),
    (["--metrics-port", "-1"], "--metrics-port -1"),
    (["--metrics-port", "x"], "--metrics-port"),
    (["--metrics-linger", "5"], "--metrics-linger: only with --metrics-port"),
    (["--metrics-port", "0", "--metrics-address", "nowhere"], "--metrics-address 'nowhere'"),
    (["--metrics-port", "0", "--metrics-linger", "-1"], "--metrics-linger -1"),
])
def test_bad_metrics_options_exit_2(args, msg, tmp_path):
    r = Proc(p4scope(*TINY_RUN, "--results", str(tmp_path), *args))
    assert r.wait(60) == 2
    assert msg in r.text() and "Traceback" not in r.text()
    assert not any(tmp_path.iterdir())


def test_metrics_port_is_for_virtual_time_runs_only(tmp_path):
    r = Proc(p4scope("run", "fairness", "--mode", "mininet", "--results", str(tmp_path),
                     "--metrics-port", "0"))
    assert r.wait(60) == 2
    assert "--metrics-port: the endpoint follows virtual-time runs only" in r.text()
    assert "Traceback" not in r.text()
    assert not any(tmp_path.iterdir())
