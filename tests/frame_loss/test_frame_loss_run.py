"""`p4scope run frame-loss`: Tolly's frame loss at line rate per frame size
against the reference DUT in virtual time (a non-blocking switch: nothing
lost), in the shape of Tolly's Tables 1 and 2; and a DUT whose port is
slower than line rate loses what the theory says."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


DUT = str(Path(__file__).resolve().parents[2] / "p4src" / "dut.p4")


def test_reference_dut_loses_nothing_at_line_rate(tmp_path):
    r = CliRunner().invoke(app, ["run", "frame-loss", "--sizes", "64,1518", "--trial-frames",
                                 "2000", "--program", DUT, "--results", str(tmp_path),
                                 "--run-id", "fl", "--no-progress"])
    assert r.exit_code == 0, r.output
    run = tmp_path / "fl"
    table = pd.read_csv(run / "tolly_frame_loss.csv", dtype=str)
    assert list(table.columns) == ["Frame Size (Bytes)", "64", "1518"]
    assert list(table["Frame Size (Bytes)"]) == ["p4scope pairs32 Frame Loss",
                                                 "p4scope pairs32-l3 Frame Loss",
                                                 "p4scope mesh32 Frame Loss",
                                                 "p4scope pairs6 Frame Loss"]
    assert (table[["64", "1518"]] == "0").all().all()
    fl = pd.read_parquet(run / "frame_loss.parquet").set_index("scenario")
    assert fl.loc["mesh32", "streams"].tolist() == [32 * 31] * 2
    assert (fl["tx_frames"] == fl["rx_frames"]).all() and (fl["tx_frames"] > 0).all()
    assert (fl["queued_at_end"] == 0).all()
    assert fl.loc["pairs32-l3", "layer"].tolist() == [3, 3]
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and "tolly_frame_loss" in meta["seed_tables"]
    html = (run / "report.html").read_text()
    assert "Tolly Tables 1 and 2" in html
    assert (run / "figures" / "frame_loss_per_size.png").stat().st_size > 1000


def test_a_port_at_half_rate_loses_half_of_what_it_is_sent():
    """Port pairs 1-2 at line rate, port 2 sending at 50 Gbit/s: half of
    1 -> 2 cannot leave, 2 -> 1 is untouched: 25 % of all frames."""
    from p4scope.experiments.frame_loss.measure import FrameLossMeasure, plan
    from p4scope.experiments.frame_loss.params import FrameLossParams
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import VirtualSwitch, compile_dut
    from p4scope.experiments.tester.virtual import VirtualTestbed
    from p4scope.experiments.traffic import apply_profile

    p = FrameLossParams(sizes=(512,), scenarios=("pairs2",), trial_frames=20_000).check()
    prof = default_profiles()["fair"]
    stored = []
    with VirtualSwitch(compile_dut(Path(DUT)), prof, 1, apply_profile=apply_profile) as vs:
        bed = VirtualTestbed(vs, profile=prof)
        bed.setup = lambda engine: engine.set_port_rate(2, 50_000_000_000)
        case = plan(p)[0]
        out = FrameLossMeasure(bed, p, lambda *a: stored.append(a))(case, lambda f: None)
    row = out["frame_loss"].iloc[0]
    assert row["loss_pct"] == pytest.approx(25.0, abs=0.1)
    s = out["frame_loss_streams"].set_index("tx_port")
    assert s.loc[2, "lost"] == 0 and s.loc[1, "loss_pct"] == pytest.approx(50.0, abs=0.2)


@pytest.mark.parametrize("args, message", [
    (["--sizes", "10"], "--sizes"),
    (["--scenarios", "ring8"], "--scenarios: ring8"),
    (["--scenarios", "pairs5"], "--scenarios: pairs5"),
    (["--load-pct", "0"], "--load-pct"),
    (["--trial-frames", "5"], "--trial-frames"),
    (["--profile", "fair,unfair"], "--profile"),
])
def test_bad_options_exit_2(tmp_path, args, message):
    r = CliRunner().invoke(app, ["run", "frame-loss", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []
