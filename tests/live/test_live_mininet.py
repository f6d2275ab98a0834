"""`p4scope run microburst --mode mininet --live` (root, Mininet): while the
run goes, the dashboard's JSON feed shows the receiver link's queue
filling and the burst it makes, who built it, the frames its queue
dropped, the DUT's instrument read alongside; after the run it lingers
with the final window until Ctrl-C, and the run leaves nothing behind.
A taken or bad --live-port exits 2 naming it before anything starts. And
how the window puts an instrument's burst on the counters (no root)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.request

import pandas as pd

QUEUE = 60  # packets the receiver link's queue holds


MININET = ["run", "microburst", "--mode", "mininet", "--sizes", "1518", "--sizes-4to1", "none",
           "--queue-packets", str(QUEUE), "--no-report", "--no-progress"]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.load(r)


def _link(d: dict, port: int) -> dict:
    """The series of the link of switch port `port` ({} before its first read)."""
    qs = [q for q in d["queues"] if q["name"].startswith(f"port {port} link")]
    assert len(qs) <= 1, d["queues"]
    return qs[0] if qs else {"p": []}


def _top(values: list) -> float:
    return max((v for v in values if v is not None), default=0)


def _left_behind(run) -> list[str]:
    """What the run's testbeds recorded and is still there."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    out = []
    for path in (run / "mininet").glob("*/manifest.json"):
        m = json.loads(path.read_text())
        if m["state"] != "cleaned":
            out.append(f"{path}: {m['state']}")
        out += [n for n in m["namespaces"] if n in ns.split()]
        out += [i["name"] for i in m["interfaces"] if f" {i['name']}@" in links
                or f" {i['name']}:" in links]
        for p in m["processes"]:
            try:
                with open(f"/proc/{p['pid']}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[19]) == p["start"]:
                        out.append(f"{p['what']} (pid {p['pid']})")
            except FileNotFoundError:
                pass
    return out


def test_a_mininet_microburst_shown_live(mininet_ok, tmp_path, served):
    s = served(*MININET, "--live", "--live-linger", "120", "--results", str(tmp_path),
               "--run-id", "mn")
    url = s.url(120)
    top, bursts, shown_running = 0.0, [], 0
    deadline = time.monotonic() + 120
    while not any("dashboard stays at" in line for line in s.err):  # polled as the run goes
        assert s.proc.poll() is None and time.monotonic() < deadline, "".join(s.err)
        st, d = _get(url + "api/status"), _get(url + "api/inflight")
        if st["state"] == "running" and d:
            shown_running += 1
            top = max(top, _top(_link(d, 3)["p"]))
            bursts += [b for b in d["bursts"] if b["source"] == "link queue"]
        time.sleep(0.1)
    # during the run: the receiver link's queue filled, and its burst showed
    assert shown_running >= 5 and top >= QUEUE // 2, (shown_running, top)
    assert bursts and {b["egress_port"] for b in bursts} == {3}

    st, d = _get(url + "api/status"), _get(url + "api/inflight")  # lingering: the final window
    assert (st["state"], st["done"], st["planned"], st["clock"]) == ("complete", 1, 1, "wall")
    (b,) = [b for b in d["bursts"] if b["source"] == "link queue"]
    assert QUEUE // 2 <= b["peak_pkts"] <= QUEUE and b["end_ns"] > b["start_ns"]
    assert b["peak_pkts"] == st["totals"]["peak_truth_pkts"] == _top(_link(d, 3)["p"])
    assert st["totals"]["bursts_truth"] == 1 and b["frames"] > QUEUE
    # who built it: both senders, about half each (the instrument's delivered bytes)
    shares = {c["port"]: c["share"] for c in b["ingress"]}
    assert set(shares) == {1, 2} and all(0.3 < x < 0.7 for x in shares.values()), shares
    # the receiver's link dropped what the run found lost (give or take the frames
    # the switch sent again when the link's queue refused them)
    mb = pd.read_parquet(tmp_path / "mn" / "microburst.parquet").iloc[0]
    (drops,) = [p for p in d["drops"] if p["egress"] == 3 and p["ingress"] == "all"]
    assert mb["lost_frames"] > 0 and abs(drops["lost"] - mb["lost_frames"]) <= 0.2 * mb["lost_frames"]
    assert st["totals"]["drops"] == drops["lost"]
    # the DUT's instrument, read alongside: its reports and counters, read-only
    assert "DUT port 3 q0" in [r["name"] for r in d["reports"]]
    rep, rt = st["sources"]["reports"], st["sources"]["p4runtime"]
    assert rep["received"] > 0 and rep["malformed"] == 0
    assert rt["read_only"] and rt["polls"] > 0 and rt["errors"] == 0 and 3 in rt["ports"]
    assert {(p["ingress"], p["egress"]) for p in d["drops"] if p["ingress"] != "all"} >= {
        (1, 3), (2, 3)}

    assert s.stop(signal.SIGINT) == 0  # Ctrl-C ends the linger; the run was complete
    err = "".join(s.err)
    assert "Traceback" not in err and "warning" not in err, err
    assert not _left_behind(tmp_path / "mn")


def test_a_mininet_runs_bad_or_taken_live_port_exits_2(served, tmp_path):
    blocker = socket.socket()
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    taken = blocker.getsockname()[1]
    try:
        for args, msg in (([f"--live-port={taken}", "--live"], f"--live-port {taken}: port "),
                          (["--live-port", "70000", "--live"], "--live-port 70000"),
                          (["--live-linger", "5"], "--live-linger: only with --live")):
            r = served(*MININET, "--results", str(tmp_path), *args)
            assert r.wait(60) == 2, args
            err = "".join(r.err)
            assert msg in err and "Traceback" not in err, (args, err)
            assert not any(tmp_path.iterdir())  # nothing started
    finally:
        blocker.close()


def test_the_testbed_window_puts_the_instruments_bursts_on_its_counters():
    """An instrument's burst reported at its start and end only: its peak is
    the most the queue's interval maxima show meanwhile, who built it the
    bytes each ingress port had delivered; the shares span the columns
    between two reads of the counters; the links' queues are the page's
    queues, the instrument's its points."""
    from p4scope.experiments.live.testbed_model import TestbedRunModel

    ms = 1_000_000
    now = [0]
    m = TestbedRunModel(window_s=3.0, clock=lambda: now[0])  # 300 columns of 10 ms
    m.links.name(3, 0, "port 3 link (s1-eth3)")
    m.links.sample(3, 0, 100 * ms, 90_000, 60)
    m.dut.sample(3, 0, 120 * ms, 9_000, 6)  # interval maxima: in the burst, and after it
    m.dut.sample(3, 0, 400 * ms, 30_000, 20)
    m.dut.left_port("delivered", 3, 1, 205 * ms, 3000)  # two reads of the counters
    m.dut.left_port("delivered", 3, 2, 205 * ms, 1000)
    m.dut.set_bursts([{"source": "instrument", "egress_port": 3, "queue": 0, "burst_id": 1,
                       "start_ns": 110.0 * ms, "end_ns": 250.0 * ms, "peak_ns": None, "peak": 1500.0,
                       "peak_pkts": 1.0, "unit": "bytes", "frames": 40.0, "ingress": [
                           {"port": 1, "amount": 1.0, "share": 1.0, "unit": "packets reported"}],
                       "flows": ["only the first packet's"]}], 1)
    now[0] = 1000 * ms
    d = m.inflight_series(-1)
    assert [q["name"] for q in d["queues"]] == ["port 3 link (s1-eth3)"]
    assert [r["name"] for r in d["reports"]] == ["DUT port 3 q0"] and d["congested"] == 3
    (b,) = d["bursts"]
    assert (b["peak"], b["peak_pkts"]) == (9_000, 6)  # not the 20 packets long after it
    assert [(c["port"], c["share"]) for c in b["ingress"]] == [(1, 0.75), (2, 0.25)]
    assert b["flows"] == []
    ing = {s["ingress"]: s["v"] for s in d["ingress"]}
    col = d["ingress"][0]["t"].index(200 * ms)
    assert [ing[1][k] for k in range(col - 4, col + 2)] == [0.0] + [3000.0] * 4 + [0.0]
    assert m.inflight_series(d["version"]) is None
    st = m.status()
    assert st["totals"]["peak_truth_pkts"] == 60 and st["totals"]["peak_instrument_pkts"] == 20
    assert st["clock"] == "wall" and st["virtual_ns"] is None
