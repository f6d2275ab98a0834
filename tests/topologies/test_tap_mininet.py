"""`p4scope run microburst --instrument tap --dut bridge --mode mininet`
(root): the tap (p4src/tap.p4 in p4scope switch) on every link of a Linux
bridge infers the bridge's egress queue during a 2:1 burst; the report
shows it next to the qdisc's own backlog with the error table, the
inferred peak is within the stated tolerance of the qdisc's, the drops it
counts are the tester's losses, and the run leaves nothing behind."""

from __future__ import annotations

import re
import subprocess

import pandas as pd
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.tap import scoring
from p4scope.topologies.clean import leftovers


FRAME = 1518 - 4  # the bytes a qdisc (and the tap) count per frame


def test_the_tap_infers_a_bridges_queue_next_to_its_qdisc(mininet_ok, tmp_path):
    r = CliRunner().invoke(app, [
        "run", "microburst", "--instrument", "tap", "--dut", "bridge", "--mode", "mininet",
        "--sizes", "1518", "--sizes-4to1", "none", "--queue-packets", "60",
        "--results", str(tmp_path), "--run-id", "tap", "--no-progress"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "tap"
    try:
        micro = pd.read_parquet(run / "microburst.parquet").iloc[0]
        assert (micro["dut"], micro["instrument"]) == ("bridge", "tap")
        err = pd.read_parquet(run / "tap_errors.parquet")
        assert len(err) == 1, err
        e = err.iloc[0]
        # the queue filled: 60 frames in the pfifo, read by tc
        assert e["peak_reference_bytes"] >= 50 * FRAME, e
        tol = scoring.peak_tolerance(e["peak_reference_bytes"], FRAME)
        assert tol == max(0.05 * e["peak_reference_bytes"], 2 * FRAME)
        assert abs(e["peak_tap_bytes"] - e["peak_reference_bytes"]) <= tol, e
        assert e["peak_within_tolerance"]
        # at the qdisc's own read times the two agree to a few frames (a read takes
        # milliseconds, and a busy machine leaves gaps between reads: the time-weighted
        # means differ by what the qdisc missed in them, so they are not compared here)
        assert e["mae_at_samples_bytes"] <= 3 * FRAME, e
        # every frame reported; what the DUT dropped is what the tester lost
        assert e["reports"] >= 2 * micro["sent_total"] - micro["lost_frames"]
        assert e["reports_lost"] == 0
        assert e["drops_tap_frames"] == e["drops_tester_frames"] == micro["lost_frames"] > 0
        series = pd.read_parquet(run / "tap_series.parquet")
        ref = pd.read_parquet(run / "tap_reference.parquet")
        assert series["valid"].all() and series["occupancy_bytes"].max() == e["peak_tap_bytes"]
        assert len(ref) > 20 and ref["backlog_bytes"].max() == e["peak_reference_bytes"]
        bursts = pd.read_parquet(run / "tap_bursts.parquet")
        tap_b = bursts[bursts["source"] == "tap"].iloc[0]
        assert set(re.findall(r"(\d) \(", tap_b["culprits"])) == {"1", "2"}
        html = (run / "report.html").read_text()
        assert "Microburst through the Linux bridge, seen by the tap in its path" in html
        assert "backlog (sampled)" in html and "tap: inferred" in html
        assert "peak, qdisc (B)" in html and "peak within tolerance" in html
        assert "Clock and sampling." in html
        assert (run / "figures" / "tap_occupancy.png").exists()
        assert "Linux bridge" in (run / "table4_microburst_mb.csv").read_text()
    finally:
        assert leftovers(run) == []


def test_the_capture_sees_what_a_switch_sends_not_what_it_receives(netns_ok, tmp_path):
    """topologies.capture on a veth pair in the root namespace: frames sent
    on one end are kept with a kernel timestamp, frames arriving are not."""
    import socket
    import time

    from p4scope.topologies.capture import OutgoingCapture

    a, b = f"p4tc{tmp_path.name[-4:]}a", f"p4tc{tmp_path.name[-4:]}b"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    try:
        for i in (a, b):
            subprocess.run(["ip", "link", "set", i, "up"], check=True)
        tx_a = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx_a.bind((a, 0))
        tx_b = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx_b.bind((b, 0))
        frame = bytes.fromhex("02000000aaaa02000000bbbb88b5") + bytes(46)
        with OutgoingCapture(a) as cap:
            t0 = time.time_ns()
            tx_a.send(frame)
            tx_b.send(frame[:13] + b"\x01" + frame[14:])  # arrives on a: not kept
            deadline = time.monotonic() + 2
            got: list = []
            while time.monotonic() < deadline and not got:
                time.sleep(0.05)
                got += cap.take()
            time.sleep(0.1)
            got += cap.take()
        tx_a.close()
        tx_b.close()
        # the kernel's own frames on a fresh veth (IPv6 MLD, ...) are not the test's
        ours = [(t, f) for t, f in got if f[12:14] == b"\x88\xb5"]
        assert [f for _, f in ours] == [frame]
        assert t0 - 1e9 < ours[0][0] < time.time_ns()
    finally:
        subprocess.run(["ip", "link", "delete", a], capture_output=True)


def test_the_tap_around_p4scopes_reference_dut(mininet_ok, tmp_path):
    """The second DUT: the reference DUT in p4scope switch, configured by
    the fabric controller behind the tap (learning through it)."""
    from p4scope.experiments.microburst import mininet as M
    from p4scope.experiments.microburst.tap import execute_tap_microburst

    p = M.MnBurstParams(sizes_2to1=(1518,), sizes_4to1=(), queue_packets=60)
    res = execute_tap_microburst(p, "p4scope", tmp_path, "tap-p4", progress=False, report=False,
                                 echo=lambda s: None)
    try:
        assert res.outcome.complete, res.outcome
        micro = pd.read_parquet(res.path / "microburst.parquet").iloc[0]
        assert micro["case_id"].endswith("/1518B/p4scope") and micro["dut"] == "p4scope"
        err = pd.read_parquet(res.path / "tap_errors.parquet")
        seen = err[err["reference_burst"]]
        assert len(seen) == 1, err
        e = seen.iloc[0]
        assert e["peak_reference_bytes"] >= 50 * FRAME, e
        # the switch's own queue is the tap's and not the qdisc's: the tap reads as much or more
        assert e["peak_within_tolerance"] and e["peak_tap_bytes"] >= e["peak_reference_bytes"], e
        assert e["drops_tap_frames"] == e["drops_tester_frames"] == micro["lost_frames"] > 0
    finally:
        assert leftovers(res.path) == []
