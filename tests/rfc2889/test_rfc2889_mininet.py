"""`p4scope run rfc2889 --mode mininet` (root): the suite with real traffic
through a DUT in Mininet. A short run against the Linux bridge gives every
table a software tester can give (meshes, congestion control, maximum
forwarding rate, broadcast, address caching and learning against the
kernel's learning) and says which tests it did not run and why; against
the reference DUT the address tests measure its controller's learning,
which floods when addresses come faster than it writes them; the address
reset between trials empties the bridge's forwarding database. Nothing
(namespace, interface, process) is left behind. Options of the other mode
and tests a Mininet run cannot do exit 2 before anything starts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.topologies.clean import leftovers

runner = CliRunner()
SHORT = ["--sizes", "64", "--loads", "50", "--resolution-pct", "10", "--trial-s", "0.2",
         "--ports", "4", "--max-addresses", "32", "--learn-fps", "500",
         "--learning-addresses", "20", "--learn-rate-max-fps", "2000",
         "--learn-rate-resolution-fps", "1000", "--no-progress"]


def csv(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run / f"{name}.csv")


def test_a_short_run_against_the_bridge(mininet_ok, tmp_path):
    r = runner.invoke(app, ["run", "rfc2889", "--mode", "mininet", "--dut", "bridge", *SHORT,
                            "--results", str(tmp_path), "--run-id", "br"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "br"
    assert not leftovers(run / "mininet")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["mode"] == "mininet"
    assert meta["dut"]["name"] == "bridge"
    assert set(meta["not_in_mininet"]) == {"forward_pressure", "errored_frames"}
    s = csv(run, "rfc2889_summary").set_index("Test")
    assert set(s.index) == {"full mesh", "partial mesh 1:N", "partial mesh N:N",
                            "congestion control", "maximum forwarding rate",
                            "address caching capacity", "address learning rate",
                            "broadcast forwarding"}
    trials = pd.read_parquet(run / "rfc2889_trials.parquet")
    assert "generator_short" in trials
    fwd = trials[trials["procedure"] == "forwarding"]
    # 50 % of 10 Mbit/s: the bridge forwards every frame a generator sends
    assert (fwd["tx_frames"] > 0).all() and (fwd["lost"] == 0).all(), fwd
    t = csv(run, "rfc2889_throughput")
    note = t["Note"].astype("string").fillna("")
    assert ((t["Tx Rate (%)"] > 0) | note.str.contains("generator")).all(), t.to_string()
    cc = csv(run, "rfc2889_congestion_control").iloc[0]
    assert cc["UC-Port: Tx"] > 0 and cc["Back pressure"] == "No"
    assert "no pause frames" in cc["Note"]
    b = csv(run, "rfc2889_broadcast").iloc[0]
    # a rate found, or a note that the generator fell short (the tester's limit)
    assert b["Receiving Ports"] == 3
    assert b["Tx Rate (%)"] > 0 or "generator" in str(b["Note"]), b
    ports = pd.read_parquet(run / "rfc2889_broadcast_ports.parquet")
    assert sorted(ports["rx_port"]) == [2, 3, 4] and (ports["rx_frames"] > 0).all()
    a = csv(run, "rfc2889_address_caching").iloc[0]
    # the kernel learns every address at once, and floods none
    assert a["Address Count"] == 32 and a["Monitor Port Rx Frames"] == 0
    assert a["Result"] == "Pass" and pd.isna(a["MAC Table Size"])
    assert csv(run, "rfc2889_address_learning")["64 B (f/s)"].tolist() == [2000.0]
    html = (run / "report.html").read_text()
    assert "Not run in Mininet" in html and meta["dut"]["label"] in html


def test_the_reference_dut_learns_through_its_controller(mininet_ok, tmp_path):
    r = runner.invoke(app, ["run", "rfc2889", "--mode", "mininet", "--dut", "p4scope",
                            "--tests", "address_caching,address_learning", "--ports", "3",
                            "--max-addresses", "32", "--learn-fps", "500",
                            "--learning-addresses", "50", "--line-rate", "100M",
                            "--learn-rate-max-fps", "20000",
                            "--learn-rate-resolution-fps", "5000", "--no-progress",
                            "--results", str(tmp_path), "--run-id", "p4"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "p4"
    assert not leftovers(run / "mininet")
    a = csv(run, "rfc2889_address_caching").iloc[0]
    assert a["Result"] == "Pass" and a["MAC Table Size"] == 65536
    trials = pd.read_parquet(run / "rfc2889_address_trials.parquet")
    fast = trials[(trials["test"] == "address_learning") & (trials["rate_fps"] == 20000.0)]
    # 50 addresses in 2.5 ms: the controller writes them later, so test frames flood
    assert len(fast) == 1 and fast["monitor_rx"].iloc[0] > 0 and not fast["passed"].iloc[0]
    assert trials["controller_service_ns"].isna().all()  # the virtual controller's only
    res = pd.read_parquet(run / "rfc2889_results.parquet").set_index("test")
    assert "controller's digest path" in res.loc["address_learning", "note"]


def test_the_address_reset_empties_the_bridges_table(mininet_ok, tmp_path):
    from p4scope.experiments.rfc2889.address_mininet import address_trial
    from p4scope.experiments.rfc2889.topology import address_ports
    from p4scope.experiments.tester.mininet import MininetTestbed

    def learnt(bed) -> set[str]:
        out = subprocess.run(["bridge", "fdb", "show", "br", f"{bed.switch}-br"],
                             capture_output=True, text=True, check=True).stdout
        return {line.split()[0] for line in out.splitlines() if line.startswith("02:0a:")}

    with MininetTestbed([1, 2, 3], "bridge", tmp_path, 10e6, log=lambda s: None) as bed:
        a = address_trial(bed, address_ports([1, 2, 3]), 8, 1000.0, 64)
        before = learnt(bed)
        bed.forget_addresses()
        after = learnt(bed)
        b = address_trial(bed, address_ports([1, 2, 3]), 8, 1000.0, 64)
    assert a.trial.passed() and b.trial.passed() and a.learn_rx == 8 and a.monitor_rx == 0
    assert len(before) == 8 and after == set()
    assert not leftovers(tmp_path)


def test_mininet_runs_what_a_software_tester_can_against_what_the_dut_allows():
    from p4scope.experiments.rfc2889.params import Rfc2889Params, mininet_ports, not_in_mininet

    bridge = Rfc2889Params.for_mode("mininet", dut="bridge").check()
    assert "forward_pressure" not in bridge.tests and "errored_frames" not in bridge.tests
    assert {"address_caching", "address_learning", "broadcast"} <= set(bridge.tests)
    assert bridge.rate_bps == 10e6 and bridge.trial_s == 1.0 and bridge.ports == mininet_ports()
    assert mininet_ports(1) == mininet_ports(2) == 4 and mininet_ports(64) == 16
    # a switch class of the user's: no address reset, so no address tests, saying why
    cls = Rfc2889Params.for_mode("mininet", dut="mininet.nodelib:LinuxBridge").check()
    assert not {"address_caching", "address_learning"} & set(cls.tests)
    assert "cannot reset" in not_in_mininet(cls.dut)["address_caching"]


@pytest.mark.parametrize("args, message", [
    (["--mode", "mininet", "--tests", "forward_pressure"], "--tests: forward_pressure: not run "
                                                          "in Mininet"),
    (["--mode", "mininet", "--ifg-bits", "80"], "--ifg-bits: for --mode virtual only"),
    (["--mode", "mininet", "--mac-table-size", "16"], "--mac-table-size: for --mode virtual"),
    (["--mode", "mininet", "--dut", "bridge", "--dut-rate-pct", "50"], "--dut-rate-pct"),
    (["--mode", "mininet", "--dut", "bridge,p4scope"], "--dut 'bridge,p4scope'"),
    (["--mode", "mininet", "--trial-s", "0"], "--trial-s"),
    (["--mode", "mininet", "--learn-fps", "1"], "--max-addresses 256"),
    (["--dut", "bridge"], "--dut: for --mode mininet only"),
    (["--trial-s", "1"], "--trial-s: for --mode mininet only"),
])
def test_bad_mininet_options_exit_2(tmp_path, args, message):
    r = runner.invoke(app, ["run", "rfc2889", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []
