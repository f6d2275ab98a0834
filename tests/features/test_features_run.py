"""`p4scope run features`: seed 001's throughput and latency with and
without the 24 ACL rules (a feature-invariant DUT: no difference), and
ESG's fairness with the rules on, in the seed's shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


DUT = str(Path(__file__).resolve().parents[2] / "p4src" / "dut.p4")
runner = CliRunner()


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("features")
    r = runner.invoke(app, ["run", "features", "--sizes", "64,97", "--trial-frames", "1000",
                            "--latency-trials", "2", "--fairness", "6:1@64,16:1@1280",
                            "--fairness-us", "20", "--program", DUT, "--results", str(tmp),
                            "--run-id", "f", "--no-progress"])
    assert r.exit_code == 0, r.output
    return tmp / "f"


def test_the_seed_tables_with_and_without_the_rules(small_run):
    thr = pd.read_csv(small_run / "features_throughput.csv")
    assert thr["Packet Size (B)"].tolist() == [64, 97]
    assert (thr["Throughput without rules (% line rate)"] == 100.0).all()
    assert (thr["Throughput with rules (% line rate)"] == 100.0).all()
    lat = pd.read_csv(small_run / "features_latency.csv")
    assert (lat["Latency average with rules (ns)"] > 0).all()
    meta = json.loads((small_run / "run.json").read_text())
    assert meta["status"] == "complete"
    assert len(meta["parameters"]["features"]["acl_rules"]) == 24
    assert {"features_throughput", "features_latency", "features_difference",
            "features_fairness_shares"} <= set(meta["seed_tables"])
    html = (small_run / "report.html").read_text()
    assert "ESG Figures 12 and 13" in html
    for png in ("features_fig11", "features_fairness_shares"):
        assert (small_run / "figures" / f"{png}.png").stat().st_size > 1000


def test_the_reference_dut_is_feature_invariant_in_virtual_time(small_run):
    """The rules change nothing the tester measures: every difference is 0."""
    diff = pd.read_csv(small_run / "features_difference.csv")
    assert diff["Packet Size (B)"].tolist() == [64, 97]
    assert (diff.drop(columns="Packet Size (B)") == 0).all().all(), diff.to_string()
    res = pd.read_parquet(small_run / "features_results.parquet")
    lat = res[res["test"] == "latency"].set_index(["rules", "frame_size"])
    assert lat.loc[("on", 64), "lost"] == 0 and lat.loc[("off", 64), "lost"] == 0


def test_every_rules_on_case_hits_the_permit_and_dscp_rules_and_denies_nothing(small_run):
    hits = pd.read_parquet(small_run / "features_acl_hits.parquet")
    assert set(hits["case_id"]) == {"features/throughput/on/64", "features/throughput/on/97",
                                    "features/latency/on/64", "features/latency/on/97",
                                    "features/fairness/6to1/64", "features/fairness/16to1/1280"}
    for cid, g in hits.groupby("case_id"):
        assert len(g) == 24
        assert g["action"].value_counts().to_dict() == {"set_dscp": 12, "deny": 6, "permit": 6}
        assert (g.loc[g["action"] == "deny", "packets"] == 0).all(), cid
    thr = hits[hits["case_id"] == "features/throughput/on/64"]
    # 12 streams x 1000 frames, each matched by exactly one rule
    assert thr["packets"].sum() == 12_000
    assert (thr.loc[thr["action"] != "deny", "packets"] > 0).all()


def test_fairness_shares_per_source_port(small_run):
    shares = pd.read_csv(small_run / "features_fairness_shares.csv")
    assert shares["Scenario"].tolist() == ["6-to-1", "16-to-1"]
    assert shares["Frame Size (B)"].tolist() == [64, 1280]
    six = shares.iloc[0]
    assert six[[f"Port {p} share (%)" for p in range(1, 7)]].sum() == pytest.approx(100, abs=0.1)
    assert pd.isna(six["Port 7 share (%)"])
    assert (shares["Jain's index"] > 0.95).all()
    per_port = pd.read_parquet(small_run / "features_shares.parquet")
    assert sorted(per_port.loc[per_port["n"] == 16, "ingress_port"]) == list(range(1, 17))
    assert (per_port["egress_port"] == 32).all()


@pytest.mark.parametrize("args, message", [
    (["--sizes", "32"], "--sizes"),
    (["--pairs", "1-2,2-3"], "--pairs"),
    (["--pairs", "1"], "--pairs: expected A-B"),
    (["--pairs", "1-99"], "--pairs: port 99"),
    (["--tests", "speed"], "--tests: 'speed'"),
    (["--fairness", "8to1"], "--fairness: expected N:1@SIZE"),
    (["--fairness", "1:1@64"], "--fairness"),
    (["--fairness", "8:1@20"], "--fairness 8:1@20"),
    (["--fairness-us", "0"], "--fairness-us"),
    (["--resolution-pct", "nan"], "--resolution-pct"),
    (["--trial-frames", "5"], "--trial-frames"),
    (["--latency-trials", "0"], "--latency-trials"),
    (["--profile", "fair,unfair"], "--profile"),
    (["--seed", "-1"], "--seed"),
])
def test_bad_options_exit_2(tmp_path, args, message):
    r = runner.invoke(app, ["run", "features", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_keeps_every_finished_trial(tmp_path, ctrl_c_run):
    rc, out = ctrl_c_run(["run", "features", "--sizes", "64", "--tests", "latency",
                          "--latency-trials", "1000", "--trial-frames", "5000", "--program", DUT,
                          "--results", str(tmp_path), "--run-id", "stopped", "--no-progress",
                          "--no-report"],
                         tmp_path / "stopped" / "parts" / "features_trials", timeout=60)
    assert rc == 130, out
    meta = json.loads((tmp_path / "stopped" / "run.json").read_text())
    assert meta["status"] == "partial" and "Ctrl-C" in meta["partial_reason"]
    trials = pd.read_parquet(tmp_path / "stopped" / "features_trials.parquet")
    assert len(trials) >= 2 and (trials["procedure"] == "latency").all()
