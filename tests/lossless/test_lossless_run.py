"""`p4scope run lossless` (seed 001's TCP + RoCEv2): a 16:1 incast of a
lossy and a lossless class into one egress of the reference DUT. With PFC
the lossless class loses nothing while the lossy class is dropped; without
PFC, or with senders that ignore the pause frames, the lossless class
loses too (what the zero-loss result depends on)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


DUT = str(Path(__file__).resolve().parents[2] / "p4src" / "dut.p4")


def test_pfc_keeps_the_lossless_class_lossless_in_a_16_to_1_incast(tmp_path):
    r = CliRunner().invoke(app, ["run", "lossless", "--flow-frames", "1000", "--program", DUT,
                                 "--results", str(tmp_path), "--run-id", "ll", "--no-progress"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "ll"
    c = pd.read_parquet(run / "lossless_classes.parquet").set_index(["pfc", "class"])
    assert c.loc[("on", "lossless"), "lost"] == 0
    assert c.loc[("on", "lossless"), "rx_frames"] == 16 * 1000
    assert c.loc[("on", "lossy"), "lost"] > 0, "the incast drops lossy traffic"
    assert c.loc[("off", "lossless"), "lost"] > 0, "without PFC the lossless class loses"
    assert c.loc[("on", "lossless"), "ecn_marked"] > 0, "RED-like ECN marks the lossless queue"
    assert c.loc[("on", "cnp"), "lost"] == 0
    # the CNPs' strict-priority queue: a frame or two of waiting at most
    assert c.loc[("on", "cnp"), "lat_max_ns"] < 400
    pause = pd.read_parquet(run / "lossless_pause.parquet")
    on = pause[pause["pfc"] == "on"]
    assert len(on) == 16 and (on["xoff_frames"] > 0).all() and (on["paused_us"] > 0).all()
    assert (on["peak_headroom_bytes"] <= on["headroom_bytes"]).all()
    assert (pause[pause["pfc"] == "off"]["paused_us"] == 0).all()
    flows = pd.read_parquet(run / "lossless_flows.parquet")
    lossy_on = flows[(flows["pfc"] == "on") & (flows["class"] == "lossy")]
    assert lossy_on["completion_us"].notna().all() and (lossy_on["completion_us"] > 0).all()
    summary = pd.read_csv(run / "lossless_summary.csv", dtype=str).set_index("Measure")
    assert list(summary.columns) == ["PFC off", "PFC on"]
    assert summary.loc["Lossless (RoCEv2, priority 3): frames lost", "PFC on"] == "0"
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and "lossless_summary" in meta["seed_tables"]
    assert meta["parameters"]["lossless"]["pfc_off_tm_config"].get("pfc") is None
    html = (run / "report.html").read_text()
    assert "A lossless class beside a lossy one" in html
    assert (run / "figures" / "lossless_loss_and_pause.png").stat().st_size > 1000


def test_senders_that_ignore_pause_make_the_lossless_class_lose():
    from p4scope.experiments.lossless.measure import LosslessMeasure, plan
    from p4scope.experiments.lossless.params import LosslessParams
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import VirtualSwitch, compile_dut
    from p4scope.experiments.tester.virtual import VirtualTestbed
    from p4scope.experiments.traffic import apply_profile

    base = default_profiles()["fair"]
    p = LosslessParams(flow_frames=300, pfc=("on",), cnp_fps=0, obey_pause=False).check()
    with VirtualSwitch(compile_dut(Path(DUT)), p.profile(base, True), 1,
                       apply_profile=apply_profile) as vs:
        out = LosslessMeasure(VirtualTestbed(vs, profile=base), p, lambda *a: None,
                              base)(plan(p)[0], lambda f: None)
    c = out["lossless_classes"].set_index("class")
    assert c.loc["lossless", "lost"] > 0
    assert c.loc["lossless", "headroom_drops"] == c.loc["lossless", "lost"]
    assert (out["lossless_flows"]["pause_frames"] == 0).all()


@pytest.mark.parametrize("args, message", [
    (["--xoff-bytes", "20000000"], "--xoff-bytes: 20000000 bytes is above the buffer"),
    (["--xon-bytes", "300000"], "--xon-bytes: 300000 bytes is above xoff_bytes"),
    (["--headroom-bytes", "2000000"], "--headroom-bytes: 2000000 bytes for each of the 16"),
    (["--pfc", "sometimes"], "--pfc"),
    (["--senders", "1"], "--senders"),
    (["--egress", "3"], "--egress 3: also a sender"),
    (["--quanta", "0"], "--quanta"),
    (["--lossy-pct", "80"], "--lossy-pct 80 + --lossless-pct 50"),
    (["--ecn-min-bytes", "2000000"], "--ecn-min-bytes"),
    (["--lossless-size", "10"], "--lossless-size"),
])
def test_bad_options_exit_2_naming_the_option(tmp_path, args, message):
    r = CliRunner().invoke(app, ["run", "lossless", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert not any(tmp_path.iterdir()), "no run folder for a refused command line"
