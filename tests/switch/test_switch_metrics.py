"""`p4scope switch ... -- --metrics-port N`: the traffic manager's queue
statistics for Prometheus. The exposition over an engine's tm_queue_stats
(label sets, values); a running switch forwarding packets, scraped by
Debian's real prometheus server and read back through its HTTP API; the
options' errors (exit 2 naming the option)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from p4scope.switch.metrics import QueueStatsCollector
from tests.switch.test_use_files import (HEADER, frame, program_json,  # noqa: F401 (fixture)
                                         read_out, record)

READY_METRICS = re.compile(r"ready: .*metrics on http://127\.0\.0\.1:(\d+)/metrics")


class _Engine:
    def tm_queue_stats(self):
        return [{"port": 3, "queue": 0, "pkts": 2, "bytes": 128, "enq_pkts": 10,
                 "enq_bytes": 640, "deq_pkts": 8, "deq_bytes": 512, "peak_pkts": 5,
                 "peak_bytes": 320, "drops": {"queue_full": 4}},
                {"port": 4, "queue": 1, "pkts": 0, "bytes": 0, "enq_pkts": 1, "enq_bytes": 64,
                 "deq_pkts": 1, "deq_bytes": 64, "peak_pkts": 1, "peak_bytes": 64, "drops": {}}]

    def tm_occupancy(self, port, queue):
        return {"pkts": 2, "bytes": 128, "ingress": {7: (1, 64), 9: (1, 64)}} if port == 3 \
            else {"pkts": 0, "bytes": 0, "ingress": {}}


def _scrape(collector) -> dict:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    text = generate_latest(reg).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def _k(name, port, queue, **extra):
    return name, tuple(sorted({"switch": "device-0", "port": str(port), "queue": str(queue),
                               **extra}.items()))


def test_the_exposition_is_the_engines_queue_stats():
    dev = SimpleNamespace(lock=threading.RLock(), dataplane=SimpleNamespace(raw=_Engine()))
    s = _scrape(QueueStatsCollector(dev, "device-0"))
    assert s[_k("p4scope_queue_occupancy_bytes", 3, 0)] == 128
    assert s[_k("p4scope_queue_occupancy_packets", 3, 0)] == 2
    assert s[_k("p4scope_queue_peak_bytes", 3, 0)] == 320
    assert s[_k("p4scope_queue_peak_packets", 4, 1)] == 1
    assert s[_k("p4scope_queue_enqueued_packets_total", 3, 0)] == 10
    assert s[_k("p4scope_queue_dequeued_bytes_total", 3, 0)] == 512
    assert s[_k("p4scope_queue_drops_total", 3, 0, reason="queue_full")] == 4
    assert s[_k("p4scope_queue_ingress_occupancy_bytes", 3, 0, ingress="7")] == 64
    assert s[_k("p4scope_queue_ingress_occupancy_packets", 3, 0, ingress="9")] == 1
    assert not any(k[0] == "p4scope_queue_drops_total" and ("port", "4") in k[1] for k in s)
    # no program loaded yet: no series, no error
    empty = SimpleNamespace(lock=threading.RLock(), dataplane=None)
    assert not any(k[0].startswith("p4scope_") for k in _scrape(QueueStatsCollector(empty, "x")))


def _start(tmp_path, program_json, *target: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "p4scope.switch.daemon", "--use-files", "0",
         "-i", f"0@{tmp_path / 'a'}", "-i", f"1@{tmp_path / 'b'}", "--thrift-port", "0",
         str(program_json), "--", "--grpc-server-addr", "127.0.0.1:0", *target],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stop(proc: subprocess.Popen, sig=signal.SIGTERM) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_prometheus_scrapes_a_running_switch(tmp_path, program_json):  # noqa: F811
    from tests.metrics.metrics_procs import PROMETHEUS, query, start_prometheus

    if PROMETHEUS is None:
        pytest.skip("no prometheus binary (scripts/setup.sh installs Debian's)")
    n = 7
    frames = [frame(1, k) for k in range(n)]
    (tmp_path / "a_in.pcap").write_bytes(HEADER + b"".join(record(f, 1000 + k)
                                                           for k, f in enumerate(frames)))
    (tmp_path / "b_in.pcap").write_bytes(HEADER)
    sw = _start(tmp_path, program_json, "--metrics-port", "0")
    prom = None
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(sw.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not (m := READY_METRICS.search("".join(err))):
            assert sw.poll() is None and time.monotonic() < deadline, "".join(err)
            time.sleep(0.05)
        while len(read_out(tmp_path / "b_out.pcap")) < n:
            assert time.monotonic() < deadline, "the switch forwarded nothing"
            time.sleep(0.05)
        prom, base = start_prometheus(tmp_path, int(m.group(1)))
        sel = '{job="p4scope",switch="device-0",port="1",queue="0"}'

        def value(expr):
            r = query(base, expr)
            return float(r[0]["value"][1]) if r else None

        while value(f"p4scope_queue_enqueued_packets_total{sel}") is None:
            assert time.monotonic() < deadline + 30, prom.text()[-3000:]
            assert prom.proc.poll() is None, prom.text()[-3000:]
            time.sleep(0.2)
        assert value(f"p4scope_queue_enqueued_packets_total{sel}") == n
        assert value(f"p4scope_queue_dequeued_packets_total{sel}") == n
        assert value(f"p4scope_queue_dequeued_bytes_total{sel}") == sum(len(f) for f in frames)
        assert value(f"p4scope_queue_occupancy_packets{sel}") == 0
        assert value(f"p4scope_queue_peak_packets{sel}") >= 1
    finally:
        prom_rc = prom.stop(signal.SIGTERM) if prom is not None else 0
        sw_rc = _stop(sw)
        reader.join(timeout=5)
    assert (prom_rc, sw_rc) == (0, 0), "".join(err)


def _taken():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, s.getsockname()[1]


@pytest.mark.parametrize("target, msg", [
    (["--metrics-port", "70000"], "--metrics-port: 70000 is out of range"),
    (["--metrics-port", "x"], "--metrics-port: 'x' is not a port number"),
    (["--metrics-port", "0", "--metrics-address", "here"], "--metrics-address: 'here'"),
    (["--metrics-address", "127.0.0.2"], "--metrics-address: only with --metrics-port"),
    (["--metrics-port", "TAKEN"], "--metrics-port TAKEN: port TAKEN on 127.0.0.1 is taken"),
])
def test_bad_metrics_options_exit_2(tmp_path, program_json, target, msg):  # noqa: F811
    blocker, port = _taken()
    try:
        target = [str(port) if t == "TAKEN" else t for t in target]
        for name in "ab":
            (tmp_path / f"{name}_in.pcap").write_bytes(HEADER)
        proc = _start(tmp_path, program_json, *target)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 2, err
        assert msg.replace("TAKEN", str(port)) in err and "Traceback" not in err
    finally:
        blocker.close()


class _TracingEngine(_Engine):
    """An engine whose queue 3/0 is empty now and whose occupancy trace
    the test fills: a burst, then a smaller one under the first's peak."""

    def __init__(self):
        self.records: list[tuple[int, int, int, int]] = []  # port, queue, pkts, bytes
        self.started = 0

    def tm_queue_stats(self):
        stats = super().tm_queue_stats()
        stats[0].update(pkts=0, bytes=0)
        return stats

    def tm_trace_start(self, drops, ports, max_records):
        self.started += 1

    def tm_trace_take(self):
        rec, self.records = self.records, []
        cols = ("port", "queue", "q_pkts", "q_bytes")
        out = {c: [r[i] for r in rec] for i, c in enumerate(cols)}
        out["time_ns"] = list(range(len(rec)))
        return out


def test_max_since_the_last_scrape_sees_a_burst_under_an_earlier_peak():
    from p4scope.switch.queue_maxima import QueueMaxima

    eng = _TracingEngine()
    dev = SimpleNamespace(lock=threading.RLock(), dataplane=SimpleNamespace(raw=eng))
    coll = QueueStatsCollector(dev, "device-0", QueueMaxima(dev))
    s = _scrape(coll)  # the trace starts; before it, the engine's peaks (5 packets, 320 B)
    assert eng.started == 1
    assert s[_k("p4scope_queue_occupancy_max_packets", 3, 0)] == 5
    assert s[_k("p4scope_queue_occupancy_max_bytes", 3, 0)] == 320
    s = _scrape(coll)  # nothing since: the level now
    assert s[_k("p4scope_queue_occupancy_max_packets", 3, 0)] == 0
    eng.records = [(3, 0, k, 64 * k) for k in (1, 2, 3, 2, 1, 0)]  # a 3-packet burst, drained
    s = _scrape(coll)
    assert s[_k("p4scope_queue_occupancy_max_packets", 3, 0)] == 3  # the peak since start: 5
    assert s[_k("p4scope_queue_occupancy_max_bytes", 3, 0)] == 192
    assert s[_k("p4scope_queue_peak_packets", 3, 0)] == 5
    assert _scrape(coll)[_k("p4scope_queue_occupancy_max_packets", 3, 0)] == 0
    assert eng.started == 1
    # an engine that cannot trace: no max series, the rest as before
    plain = SimpleNamespace(lock=threading.RLock(), dataplane=SimpleNamespace(raw=_Engine()))
    s = _scrape(QueueStatsCollector(plain, "device-0", QueueMaxima(plain)))
    assert not any(k[0].startswith("p4scope_queue_occupancy_max") for k in s)
    assert s[_k("p4scope_queue_peak_packets", 3, 0)] == 5


def _metrics(port: int) -> dict:
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_a_running_switch_resets_the_max_at_each_scrape(tmp_path, program_json):  # noqa: F811
    """The real engine's trace: what a queue held shows once, at the next
    scrape, and no more; the peak since start stays."""
    n = 5
    frames = [frame(1, k) for k in range(n)]
    (tmp_path / "a_in.pcap").write_bytes(HEADER + b"".join(record(f, 1000 + k)
                                                           for k, f in enumerate(frames)))
    (tmp_path / "b_in.pcap").write_bytes(HEADER)
    sw = _start(tmp_path, program_json, "--metrics-port", "0")
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(sw.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not (m := READY_METRICS.search("".join(err))):
            assert sw.poll() is None and time.monotonic() < deadline, "".join(err)
            time.sleep(0.05)
        port = int(m.group(1))
        while len(read_out(tmp_path / "b_out.pcap")) < n:
            assert time.monotonic() < deadline, "the switch forwarded nothing"
            time.sleep(0.05)
        first = _metrics(port)
        assert first[_k("p4scope_queue_occupancy_max_packets", 1, 0)] >= 1
        assert first[_k("p4scope_queue_occupancy_max_bytes", 1, 0)] >= len(frames[0])
        second = _metrics(port)
        assert second[_k("p4scope_queue_occupancy_max_packets", 1, 0)] == 0
        assert second[_k("p4scope_queue_occupancy_max_bytes", 1, 0)] == 0
        assert second[_k("p4scope_queue_peak_packets", 1, 0)] == first[
            _k("p4scope_queue_occupancy_max_packets", 1, 0)]
    finally:
        rc = _stop(sw)
        reader.join(timeout=5)
    assert rc == 0, "".join(err)
