"""`p4scope watch` attached to a switch that is already running: the
instrument's INT reports taken on UDP and its registers and counters read
over P4Runtime, read-only; what the JSON feed shows against what was
sent; nothing left behind. And the command line's errors (exit 2 naming
the option), and the sliding window the page draws."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live.live_procs import ROOT

CHILD = Path(__file__).with_name("watch_switch_child.py")
N = 120  # the child's frames per ingress port
FRAME = 1000


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_watch_attached_to_a_running_switch_shows_its_queue(netns_ok, tmp_path):
    from p4scope.experiments.mininet.testbed import build_dut

    dut = build_dut(tmp_path / "dut")
    ns = f"p4w-watch-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, str(CHILD), str(tmp_path),
                            str(dut.json_path), str(dut.json_path.with_suffix(".p4info.txtpb"))],
                           cwd=ROOT, capture_output=True, text=True, timeout=240)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert r.returncode == 0, r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert ns not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                    text=True).stdout
    # both stopped cleanly, nothing left running
    assert (out["watch_rc"], out["switch_rc"]) == (0, 0), out.get("watch_err")
    assert not _alive(out["watch_pid"]) and not _alive(out["switch_pid"])
    assert "P4Runtime 127.0.0.1:" in out["watch_err"] and "(read-only)" in out["watch_err"]
    assert "INT reports on udp 10.255.0.100:32766" in out["watch_err"]

    before, inf, st = out["before"], out["inflight"], out["status"]
    assert before["queues"]  # the measured port, empty before the burst
    assert max(v for q in before["queues"] for v in q["v"] if v is not None) == 0
    # the queue of port 2 as the watch shows it: the burst's peak, in bytes and packets
    (q,) = [q for q in inf["queues"] if q["name"] == "port 2 q0"]
    top_b = max(v for v in q["v"] if v is not None)
    top_p = max(v for v in q["p"] if v is not None)
    (burst,) = inf["bursts"]
    assert 20 < top_p <= 2 * N and top_b == top_p * FRAME
    assert (burst["peak_pkts"], burst["peak"]) == (top_p, top_b)
    assert st["totals"]["peak_instrument"] == top_b and st["totals"]["bursts_instrument"] == 1
    assert inf["congested"] == 2 and inf["clock"] == "wall"
    # who built it: both ingress ports, about half each, and their two flows
    shares = {c["port"]: c["share"] for c in burst["ingress"]}
    assert set(shares) == {1, 4} and all(0.35 < s < 0.65 for s in shares.values()), shares
    assert burst["flows"] == ["10.0.0.1:5001 \u2192 10.0.0.2:6000 udp",
                              "10.0.0.4:5004 \u2192 10.0.0.2:6000 udp"]
    # the instrument's counters over P4Runtime: all offered, all delivered, both shares
    assert {(p["ingress"], p["egress"], p["sent"], p["lost"]) for p in inf["drops"]} == {
        (1, 2, N, 0), (4, 2, N, 0)}
    assert sorted(s["ingress"] for s in inf["ingress"]) == [1, 4]
    assert "bytes delivered" in inf["shares_title"]
    rt, rep = st["sources"]["p4runtime"], st["sources"]["reports"]
    assert rt["read_only"] and rt["ports"] == [2] and rt["polls"] >= 2 and rt["errors"] == 0
    assert rep["received"] >= N and rep["lost"] == 0 and rep["malformed"] == 0
    # read-only: the test's controller stayed primary and wrote after the watch attached
    assert out["primary_after"] is True

    # its Prometheus endpoint, scraped once after the burst: what the page showed, and the
    # hop latency of every packet reported (port 1's postcards, the burst's packets)
    address = re.search(r"P4Runtime (127\.0\.0\.1:\d+) \(read-only\)", out["watch_err"])[1]
    m = _scraped(out["metrics"], address)
    sniffed = out["sniffed"]
    assert rep["received"] == sniffed["received"]
    per_hop: dict[tuple[int, int], list[int]] = {}
    for node, port, ns in sniffed["latency"]:
        per_hop.setdefault((node, port), []).append(ns)
    assert list(per_hop) == [(1, 2)] and len(per_hop[(1, 2)]) >= N
    lat = per_hop[(1, 2)]
    hop = {"node": "1", "port": "2", "source": "instrument"}
    assert m["p4scope_hop_latency_seconds_count", _k(hop)] == len(lat)
    assert m["p4scope_hop_latency_seconds_sum", _k(hop)] == pytest.approx(sum(lat) * 1e-9)
    assert m["p4scope_hop_latency_max_seconds", _k(hop)] == pytest.approx(max(lat) * 1e-9)
    assert m["p4scope_hop_latency_seconds_bucket", _k({**hop, "le": "+Inf"})] == len(lat)
    q = {"port": "2", "queue": "0"}
    assert m["p4scope_queue_occupancy_max_bytes", _k(q)] == top_b
    assert m["p4scope_queue_occupancy_max_packets", _k(q)] == top_p
    for i in (1, 4):
        pair = {"port": "2", "ingress": str(i)}
        assert m["p4scope_egress_ingress_packets_total", _k(pair)] == N
        assert m["p4scope_egress_ingress_bytes_total", _k(pair)] == N * FRAME
        assert m["p4scope_drops_total", _k(pair)] == 0
    b = {"port": "2", "queue": "0", "source": "instrument"}
    assert m["p4scope_bursts_total", _k(b)] == 1
    assert m["p4scope_burst_last_peak", _k({**b, "unit": "bytes"})] == burst["peak"]
    assert sniffed["bursts"] == [[2, burst["peak"]]]


def _scraped(text: str, switch: str) -> dict[tuple[str, frozenset], float]:
    """A scrape's samples by (name, labels but `switch`), every one of
    them labelled switch=`switch`."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            labels = dict(s.labels)
            assert labels.pop("switch") == switch, s
            out[s.name, _k(labels)] = s.value
    return out


def _k(labels: dict[str, str]) -> frozenset:
    return frozenset(labels.items())


def _udp_taken():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


def _free_tcp_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_watch_options_errors_exit_2_naming_the_option(stored_run, served, tmp_path):
    blocker, taken = _udp_taken()
    nobody = _free_tcp_port()
    try:
        cases = [
            ([], "give RUN_DIR"),
            (["--reports", "here:99"], "--reports here:99: give PORT or ADDRESS:PORT"),
            (["--reports", "70000"], "--reports 70000"),
            (["--reports", str(taken)], f"--reports {taken}: cannot listen there"),
            (["--switch", f"127.0.0.1:{nobody}"],
             f"--switch 127.0.0.1:{nobody}: no P4Runtime server answers there"),
            (["--reports", "5000", "--poll", "0"], "--poll 0"),
            (["--reports", "5000", "--window", "0.5"], "--window 0.5"),
            (["--reports", "5000", "--device-id", "3"], "--poll, --device-id: only with --switch"),
            ([str(stored_run), "--switch", "127.0.0.1:9559"], "--switch: watch a running switch"),
        ]
        for args, msg in cases:
            w = served("watch", *args)
            assert w.wait(60) == 2, (args, "".join(w.err))
            err = "".join(w.err)
            assert msg in err and "Traceback" not in err, (args, err)
    finally:
        blocker.close()


def test_the_window_keeps_the_largest_per_column_and_blanks_the_unmeasured():
    from p4scope.experiments.live.rolling import Rolling
    from p4scope.experiments.live.switch_model import SwitchModel

    r = Rolling(4, 10)
    for t, v in ((1, 5.0), (3, 9.0), (12, 2.0), (35, 1.0)):
        r.add(t, v)
    assert r.series(39) == ([0, 10, 20, 30], [9.0, 2.0, None, 1.0])  # 20..29: nothing measured
    r.add(41, 7.0)  # the window slides: column 0 leaves it
    assert r.series(41) == ([10, 20, 30, 40], [2.0, None, 1.0, 7.0])
    r.add(5, 100.0)  # older than the window: ignored
    assert 100.0 not in r.series(41)[1]
    s = Rolling(3, 10, "sum")
    s.add(1, 2.0)
    s.add(2, 3.0)
    assert s.series(20)[1] == [5.0, None, None]

    now = [0]
    m = SwitchModel("sw", window_s=30e-9, columns=3, clock=lambda: now[0])  # 10 ns columns
    m.sample(2, 0, 5, 3000, 3)
    m.left_port("delivered", 2, 1, 5, 600)
    m.left_port("delivered", 2, 4, 5, 400)
    m.left_port("reported", 2, 9, 5, 999)  # the counter's figures win over the reports'
    now[0] = 25
    d = m.inflight_series(-1)
    assert d["queues"] == [{"name": "port 2 q0", "t": [0, 10, 20], "v": [3000.0, None, None],
                            "p": [3.0, None, None]}]
    assert d["congested"] == 2 and [s["ingress"] for s in d["ingress"]] == [1, 4]
    assert m.inflight_series(d["version"]) is None  # nothing new
    m.touch()
    assert m.inflight_series(d["version"]) is not None  # the window slid
    assert m.status()["totals"]["peak_instrument_pkts"] == 3.0
    m.end("stopped")
    assert m.ended and m.status()["state"] == "stopped"
