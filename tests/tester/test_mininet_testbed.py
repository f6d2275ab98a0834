"""The `mininet` testbed (root): real traffic from tester hosts through a
DUT in Mininet, with the virtual testbed's trial() API. Counters through
the Linux bridge are exact at a low rate, a search against the bridge and
against an htb-shaped link finds what the link allows, a Mininet switch
class of the user's is a DUT, `p4scope run rfc2544 --mode mininet` gives
a throughput per size for the bridge and the reference DUT (and both in
one run, compared in one table; a DUT not installed skipped, saying why),
and nothing (namespace, interface, process) is left behind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.tester import search
from p4scope.experiments.tester.streams import Rate, Stream, pair
from p4scope.experiments.tester.trial import stream_rows
from p4scope.topologies.clean import ifindex, leftovers

from p4scope.experiments.tester.mininet import MininetTestbed

pytestmark = pytest.mark.usefixtures("mininet_ok")
runner = CliRunner()
S = 10**9


@pytest.fixture(scope="module")
def bridge(mininet_ok, tmp_path_factory):
    d = tmp_path_factory.mktemp("bridge")
    with MininetTestbed([1, 2, 3], "bridge", d, 100e6) as bed:
        yield bed
    assert not leftovers(d)


def test_trial_through_the_bridge_counts_every_frame(bridge):
    t = bridge.trial(pair(1, 2, 256, 5.0) + [Stream(3, 1, Rate.pct(2.0), 1518)], S // 2)
    s = t.streams
    virtual = stream_rows([Stream(1, 2)], [{"stream": 1, "tx_frames": 1, "tx_bytes": 64}], [1],
                          100e6, 1)
    assert list(s.columns) == list(virtual.columns)
    offered = 0.05 * 100e6 / ((256 + 20) * 8) * 0.5  # frames in half a second at 5 %
    # on a busy machine the generator may send less than asked (the trial
    # says so); what it sent must all arrive
    short = bool(s["generator_short"].any())
    assert (s["tx_frames"] > 0).all()
    assert short or s["tx_frames"].iloc[0] >= int(offered)
    assert list(s["rx_frames"]) == list(s["tx_frames"]) and t.loss_frames == 0
    assert (s["misdelivered"] == 0).all() and (s["duplicated"] == 0).all()
    assert t.passed(0.0)
    assert (s["rx_bytes"] == s["tx_frames"] * [256, 256, 1518]).all()
    assert (s["lat_min_ns"] > 0).all() and (s["lat_min_ns"] <= s["lat_avg_ns"]).all()
    assert (s["lat_p50_ns"] >= s["lat_min_ns"]).all()
    assert t.histogram.groupby("stream")["frames"].sum().tolist() == list(s["rx_frames"])
    assert t.info["dut"] == "bridge" and t.queued_at_end == 0


def test_fresh_counters_every_trial(bridge):
    """Each trial uses new generator and analyzer processes: a burst of 500
    frames counts 500, however many trials came before."""
    for _ in range(2):
        t = bridge.trial([Stream(2, 3, Rate.pct(10), 64, frames=500)], S // 10)
        assert t.tx_frames == 500 and t.rx_frames == 500


def test_throughput_search_against_the_bridge(bridge):
    steps = []
    r = search.throughput(lambda pct: bridge.trial(pair(1, 2, 1518, pct), S // 4), 0.0, 5.0,
                          each=steps.append)
    assert r.value is not None and r.value >= 50.0
    assert steps and all(st.trial.tx_frames > 0 for st in steps)


def test_search_lands_near_an_htb_shaped_link(tmp_path):
    """Every link shaped to 50 Mbit/s (20 packets queued) on 100 Mbit/s tester
    ports: 1518-byte frames pass up to 50 * 1538 / 1514 = 50.8 % of line rate."""
    with MininetTestbed([1, 2], "bridge", tmp_path, 100e6, link_bw_bps=50_000_000,
                        link_queue=20) as bed:
        r = search.throughput(lambda pct: bed.trial([Stream(1, 2, Rate.pct(pct), 1518)], S // 2),
                              0.0, 2.0)
    assert r.value is not None and 45.0 <= r.value <= 56.0, (r.value, r.note)
    assert not leftovers(tmp_path)


def test_a_users_mininet_switch_class_is_a_dut(tmp_path):
    with MininetTestbed([1, 2], "mininet.nodelib:LinuxBridge", tmp_path, 100e6) as bed:
        t = bed.trial(pair(1, 2, 128, 2.0), S // 4)
        name = bed.switch
        assert ifindex(name) is not None, "Mininet's LinuxBridge names its bridge after the switch"
    assert t.rx_frames == t.tx_frames > 0
    topo = json.loads((tmp_path / "net" / "topology.json").read_text())
    assert topo["switches"][0]["class"] == "mininet.nodelib:LinuxBridge"
    assert ifindex(name) is None and not leftovers(tmp_path)


def rfc2544(tmp_path: Path, dut: str, run_id: str, sizes: str = "64,1518",
            output: Optional[list[str]] = None):
    r = runner.invoke(app, ["run", "rfc2544", "--mode", "mininet", "--dut", dut,
                            "--sizes", sizes, "--tests", "throughput", "--trial-s", "0.3",
                            "--line-rate", "20M", "--resolution-pct", "5",
                            "--results", str(tmp_path), "--run-id", run_id, "--no-progress"])
    assert r.exit_code == 0, r.output
    if output is not None:
        output.append(r.output)
    run = tmp_path / run_id
    assert not leftovers(run / "mininet")
    return run, pd.read_csv(run / "rfc2544_throughput.csv")


@pytest.mark.parametrize("dut", ["bridge", "p4scope"])
def test_rfc2544_throughput_in_mininet(tmp_path, dut):
    run, t = rfc2544(tmp_path, dut, f"mn-{dut}")
    assert list(t["Frame size (B)"]) == [64, 1518]
    assert ((t["Throughput (% line rate)"] > 0) & (t["Throughput (% line rate)"] <= 100)).all()
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["mode"] == "mininet"
    assert meta["testbed"] == "mininet" and meta["dut"]["name"] == dut
    assert meta["parameters"]["rfc2544"]["rate_bps"] == 20e6
    html = (run / "report.html").read_text()
    assert meta["dut"]["label"] in html


def test_rfc2544_compares_several_duts_in_one_run(tmp_path):
    """--dut bridge,p4scope: one run folder, the bridge then the reference
    DUT, each on its own testbed; one table compares their throughput."""
    run, t = rfc2544(tmp_path, "bridge,p4scope", "two", sizes="512,1518")
    assert list(zip(t["DUT"], t["Frame size (B)"])) == [
        ("bridge", 512), ("bridge", 1518), ("p4scope", 512), ("p4scope", 1518)]
    cmp = pd.read_csv(run / "rfc2544_dut_comparison.csv")
    assert list(cmp["Frame size (B)"]) == [512, 1518]
    for dut in ("bridge", "p4scope"):
        pct = cmp[f"{dut} throughput (% line rate)"]
        assert ((pct > 0) & (pct <= 100)).all(), cmp
        assert (cmp[f"{dut} frames/s per port"] > 0).all() and f"{dut} note" in cmp
        assert (run / "mininet" / dut / "net").is_dir()
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["skipped"] == {}
    assert [d["name"] for d in meta["duts"]] == ["bridge", "p4scope"]
    cases = pd.read_parquet(run / "cases.parquet")
    assert list(cases["case_id"]) == [f"rfc2544/throughput/{s}/{d}" for d in ("bridge", "p4scope")
                                      for s in (512, 1518)]
    assert set(pd.read_parquet(run / "rfc2544_trials.parquet")["dut"]) == {"bridge", "p4scope"}
    html = (run / "report.html").read_text()
    assert "rfc2544_dut_comparison.csv" in html and "DUTs: bridge, p4scope" in html
    assert all(d["label"] in html for d in meta["duts"])


def test_rfc2544_skips_a_dut_not_installed(tmp_path):
    from p4scope.experiments.mininet.testbed import bmv2_missing

    why = bmv2_missing()
    if why is None:
        pytest.skip("BMv2 is installed here")
    out: list[str] = []
    run, t = rfc2544(tmp_path, "bridge,bmv2", "skip", sizes="512", output=out)
    assert list(t["DUT"]) == ["bridge"]
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["skipped"] == {"bmv2": why}
    assert [d["name"] for d in meta["duts"]] == ["bridge"]
    assert f"skipping the bmv2 DUT: {why}" in out[0]
    assert "Skipped <b>bmv2</b>" in (run / "report.html").read_text()


@pytest.mark.parametrize("args, message, code", [
    (["--dut", "nosuch"], "--dut 'nosuch'", 2),
    (["--dut", "bridge,nosuch"], "--dut 'nosuch'", 2),
    (["--dut", "bridge,p4scope,bridge"], "--dut: bridge is named twice", 2),
    (["--dut", " , "], "--dut: no DUT named", 2),
    (["--dut", "p4scope,bridge", "--dut-rate-pct", "50"], "not bridge", 2),
    (["--dut", "json:dumps"], "not a Mininet switch class", 2),
    (["--dut", "bridge", "--dut-rate-pct", "50"], "needs a P4 DUT", 2),
    (["--buffer-mb", "4"], "--buffer-mb: for --mode virtual only", 2),
    (["--line-rate", "fast"], "--line-rate", 2),
    (["--link-queue", "10"], "--link-queue: the queue of a shaped link", 2),
    (["--trial-s", "0"], "--trial-s", 2),
])
def test_bad_mininet_options(tmp_path, args, message, code):
    r = runner.invoke(app, ["run", "rfc2544", "--mode", "mininet", *args,
                            "--results", str(tmp_path)])
    assert r.exit_code == code, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []


def test_mininet_options_are_refused_in_virtual_time(tmp_path):
    r = runner.invoke(app, ["run", "rfc2544", "--dut", "bridge", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "--dut: for --mode mininet only" in r.output


def test_bmv2_not_installed_exits_3(tmp_path):
    from p4scope.experiments.mininet.testbed import bmv2_missing

    if bmv2_missing() is None:
        pytest.skip("BMv2 is installed here")
    r = runner.invoke(app, ["run", "rfc2544", "--mode", "mininet", "--dut", "bmv2",
                            "--results", str(tmp_path)])
    assert r.exit_code == 3 and "not installed" in r.output
    assert list(tmp_path.iterdir()) == []
