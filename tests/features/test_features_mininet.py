"""`p4scope run features --mode mininet` (root): seed 001's rules written
over P4Runtime into the reference DUT in p4scope switch really act on real
traffic (a deny rule drops, the counters count, rules-off trials run
without them), and a short run ends in the seed tables and the report,
leaving no namespace, interface or process behind. Options of the other
mode, a DUT that cannot take the rules and bad Mininet values exit 2
before anything starts; Mininet's default pairs follow the cores."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments.features.params import ESG_PAIRS, mininet_pairs
from p4scope.experiments.features.rules import esg_rules, rewrite_ports
from p4scope.topologies.clean import leftovers

runner = CliRunner()
S = 10**9


def test_mininet_pairs_follow_the_cores_and_the_rules_stay_24():
    assert mininet_pairs(1) == mininet_pairs(2) == ((1, 2),)
    assert mininet_pairs(4) == ((1, 2), (7, 8))
    assert mininet_pairs(64) == ESG_PAIRS
    rules = esg_rules(((1, 2),)).rules
    assert len(rules) == 24
    dscp_ports = [r.ingress_port for r in rules if r.action == "set_dscp"]
    assert sorted(set(dscp_ports)) == [1, 7, 13, 19, 25, 31] and len(dscp_ports) == 12
    assert 2 not in rewrite_ports(((1, 2),))  # a pair's second port is never rewritten
    assert rewrite_ports(((7, 8), (1, 2))) == [7, 1, 13, 19, 25, 31]


def test_a_deny_rule_drops_in_mininet_and_rules_off_takes_them_out(mininet_ok, tmp_path):
    from p4scope.experiments.features.rules import RuleInstaller, test_streams
    from p4scope.experiments.tester.mininet import MininetTestbed
    from p4scope.experiments.tester.streams import Rate, Stream

    installer = RuleInstaller(esg_rules(((1, 2),)))
    tftp = Stream(2, 1, Rate.pct(5.0), 64, name="tftp", headers={"dport": 69})
    streams = test_streams(1, 2, 5.0, 64, vary=False) + [tftp]
    with MininetTestbed([1, 2], "p4scope", tmp_path, 10e6) as bed:
        bed.setup_switch = installer
        on = bed.trial(streams, S * 3 // 10)
        hits = {(h["action"], h["match"]): h["packets"] for h in installer.hits()}
        bed.setup_switch = None
        off = bed.trial(streams, S * 3 // 10)
        left = bed.controller_switch().table("acl").entries()
    s = on.streams.set_index("name")
    assert s.loc["tftp", "tx_frames"] > 0 and s.loc["tftp", "rx_frames"] == 0
    assert hits[("deny", "udp dport 69")] == s.loc["tftp", "tx_frames"]
    test = s.drop(index="tftp")
    assert (test["rx_frames"] == test["tx_frames"]).all() and test["tx_frames"].gt(0).all()
    # port 1's frames, one stream per UDP port, meet its two DSCP rewrite rules
    rewritten = sum(v for (a, m), v in hits.items() if a == "set_dscp" and m.startswith("in 1 "))
    assert rewritten == test["tx_frames"].sum()
    assert sum(v for (a, _), v in hits.items() if a == "permit") == 0
    assert off.rx_frames == off.tx_frames > 0  # the rules were taken out: TFTP passes
    assert left == []
    assert not leftovers(tmp_path)


def test_a_short_features_run_in_mininet(mininet_ok, tmp_path):
    r = runner.invoke(app, ["run", "features", "--mode", "mininet", "--sizes", "64",
                            "--pairs", "1-2", "--latency-trials", "1", "--trial-s", "0.2",
                            "--resolution-pct", "10", "--fairness", "2:1@1280",
                            "--results", str(tmp_path), "--run-id", "mn", "--no-progress"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "mn"
    assert not leftovers(run / "mininet")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["mode"] == "mininet"
    assert meta["testbed"] == "mininet" and meta["dut"]["name"] == "p4scope"
    par = meta["parameters"]["features"]
    assert par["rate_bps"] == 10e6 and par["trial_s"] == 0.2 and "trial_frames" not in par
    assert len(par["acl_rules"]) == 24

    thr = pd.read_csv(run / "features_throughput.csv")
    assert thr["Packet Size (B)"].tolist() == [64]
    for rules in ("without", "with"):
        pct = thr[f"Throughput {rules} rules (% line rate)"]
        note = thr[f"Note {rules} rules"].astype("string").fillna("")
        # a busy machine may hold the generator back: then the note says so
        assert ((pct > 0) & (pct <= 100)).all() or note.str.contains("generator").all(), \
            thr.to_string()
    lat = pd.read_csv(run / "features_latency.csv")
    measured = thr["Throughput with rules (% line rate)"] > 0
    assert (lat.loc[measured, "Latency average with rules (ns)"] > 0).all(), lat.to_string()
    assert (run / "features_difference.csv").exists()

    hits = pd.read_parquet(run / "features_acl_hits.parquet")
    trials = pd.read_parquet(run / "features_trials.parquet")
    assert set(hits["case_id"]) == {"features/throughput/on/64", "features/latency/on/64",
                                    "features/fairness/2to1/1280"}
    for cid, g in hits.groupby("case_id"):
        last = trials[trials["case_id"] == cid].iloc[-1]
        assert len(g) == 24 and (g.loc[g["action"] == "deny", "packets"] == 0).all()
        # every frame the DUT took in met exactly one rule (the counts are the last trial's)
        assert last["rx_frames"] <= g["packets"].sum() <= last["tx_frames"], cid

    shares = pd.read_csv(run / "features_fairness_shares.csv")
    assert shares["Scenario"].tolist() == ["2-to-1"]
    assert shares[["Port 1 share (%)", "Port 2 share (%)"]].sum(axis=1).iloc[0] == \
        pytest.approx(100, abs=0.1)
    fair = pd.read_parquet(run / "features_fairness.parquet")
    # the egress port sends at line rate (the DUT's queue rate): 2:1 overloads it
    assert fair["rx_frames"].iloc[0] < fair["tx_frames"].iloc[0]
    html = (run / "report.html").read_text()
    assert "seed 001) — Mininet" in html and meta["dut"]["label"] in html


@pytest.mark.parametrize("args, message", [
    (["--mode", "mininet", "--dut", "bridge"], "--dut 'bridge': the ACL rules need"),
    (["--mode", "mininet", "--trial-frames", "500"], "--trial-frames: for --mode virtual"),
    (["--mode", "mininet", "--fairness-us", "50"], "--fairness-us: for --mode virtual"),
    (["--mode", "mininet", "--line-rate", "fast"], "--line-rate"),
    (["--mode", "mininet", "--trial-s", "0"], "--trial-s"),
    (["--dut", "bmv2"], "--dut: for --mode mininet only"),
    (["--trial-s", "1"], "--trial-s: for --mode mininet only"),
])
def test_bad_mininet_options_exit_2(tmp_path, args, message):
    r = runner.invoke(app, ["run", "features", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []


def test_bmv2_not_installed_exits_3(mininet_ok, tmp_path):
    from p4scope.experiments.mininet.testbed import bmv2_missing

    if bmv2_missing() is None:
        pytest.skip("BMv2 is installed here")
    r = runner.invoke(app, ["run", "features", "--mode", "mininet", "--dut", "bmv2",
                            "--results", str(tmp_path)])
    assert r.exit_code == 3 and "not installed" in r.output
    assert list(tmp_path.iterdir()) == []
