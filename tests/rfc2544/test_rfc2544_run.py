"""`p4scope run rfc2544` against the reference DUT in virtual time: its
figures are what the DUT's configuration predicts, its tables have the
seed shapes, bad options exit 2, and Ctrl-C in a search keeps every
finished trial."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app


ROOT = Path(__file__).resolve().parents[2]
DUT = str(ROOT / "p4src" / "dut.p4")
runner = CliRunner()


@pytest.fixture(scope="module")
def shaped_run(tmp_path_factory):
    """A DUT shaped to 40 % of line rate, every test, two sizes."""
    out = tmp_path_factory.mktemp("rfc2544")
    r = runner.invoke(app, ["run", "rfc2544", "--sizes", "128,1024", "--dut-rate-pct", "40",
                            "--latency-trials", "2", "--resolution-pct", "0.5",
                            "--buffer-mb", "1", "--program", DUT, "--results", str(out),
                            "--run-id", "shaped", "--no-progress"])
    assert r.exit_code == 0, r.output
    return out / "shaped"


def csv(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(run / f"{name}.csv")


def test_throughput_is_the_configured_limit(shaped_run):
    t = csv(shaped_run, "rfc2544_throughput")
    assert list(t["Frame size (B)"]) == [128, 1024]
    assert (t["Throughput (% line rate)"] == 40.0).all()
    assert (t["Configured limit (% line rate)"] == 40.0).all()
    assert t["Trials"].iloc[0] > 1, "a search, not a single trial"


def test_frame_loss_steps_match_the_overload(shaped_run):
    t = csv(shaped_run, "rfc2544_frame_loss").set_index("Frame size (B)")
    assert list(t.columns) == ["100 %", "90 %", "80 %", "70 %", "60 %", "50 %", "40 %", "30 %"]
    for offered in (100, 80, 60, 50):
        predicted = 100 * (1 - 40 / offered)
        assert t[f"{offered} %"].tolist() == pytest.approx([predicted] * 2, abs=0.2)
    assert (t["40 %"] == 0).all() and (t["30 %"] == 0).all()


def test_latency_is_store_and_forward_at_the_throughput_rate(shaped_run):
    t = csv(shaped_run, "rfc2544_latency")
    assert (t["Offered (% line rate)"] == 40.0).all()
    assert (t["FIFO min (ns)"] == t["Predicted FIFO min (ns)"]).all()
    assert (t["LIFO min (ns)"] < t["FIFO min (ns)"]).all()


def test_back_to_back_is_what_the_buffer_holds(shaped_run):
    t = csv(shaped_run, "rfc2544_back_to_back")
    got, want = t["Back-to-back frames"], t["Predicted frames"]
    assert ((got - want).abs() <= 0.01 * want + 2).all(), t


def test_recovery_after_an_overload(shaped_run):
    t = csv(shaped_run, "rfc2544_recovery")
    assert (t["Overload (% line rate)"] == 44.0).all()
    assert (t["Recovery time (us)"] >= 0).all()
    res = pd.read_parquet(shaped_run / "rfc2544_results.parquet")
    assert (res.loc[res["test"] == "recovery", "overload_lost"] > 0).all(), \
        "the overload phase must lose frames, or the test measured nothing"


def test_every_trial_is_stored_and_the_report_has_the_plots(shaped_run):
    trials = pd.read_parquet(shaped_run / "rfc2544_trials.parquet")
    assert set(trials["test"]) == {"throughput", "latency", "frame_loss", "back_to_back",
                                   "recovery"}
    meta = json.loads((shaped_run / "run.json").read_text())
    assert meta["status"] == "complete"
    html = (shaped_run / "report.html").read_text()
    assert "RFC 2544" in html and "rfc2544_throughput.csv" in html
    for png in ("rfc2544_throughput", "rfc2544_latency_histogram", "rfc2544_frame_loss"):
        assert (shaped_run / "figures" / f"{png}.png").stat().st_size > 1000


@pytest.mark.parametrize("args, message", [
    (["--sizes", "32"], "--sizes: frame size 32"),
    (["--pairs", "1-1"], "--pairs: port 1 is in two pairs"),
    (["--pairs", "1"], "--pairs: expected A-B"),
    (["--tests", "speed"], "--tests: speed"),
    (["--resolution-pct", "nan"], "--resolution-pct"),
    (["--tolerance-pct", "60"], "--tolerance-pct"),
    (["--dut-rate-pct", "0"], "--dut-rate-pct"),
    (["--buffer-mb", "inf"], "--buffer-mb"),
    (["--seed", "-1"], "--seed"),
])
def test_bad_options_exit_2(tmp_path, args, message):
    r = runner.invoke(app, ["run", "rfc2544", *args, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sizes, jobs", [("64", "1"), ("64,128", "2")])
def test_ctrl_c_in_a_search_keeps_every_finished_trial(tmp_path, ctrl_c_run, sizes, jobs):
    """In this process, and with two searches at once in two workers (their
    trials reach the run folder as they end)."""
    rc, out = ctrl_c_run(["run", "rfc2544", "--sizes", sizes, "--tests", "throughput",
                          "--dut-rate-pct", "30", "--resolution-pct", "0.01",
                          "--trial-frames", "400000", "--jobs", jobs, "--program", DUT,
                          "--results", str(tmp_path), "--run-id", "stopped", "--no-progress",
                          "--no-report"],
                         tmp_path / "stopped" / "parts" / "rfc2544_trials", timeout=120)
    assert rc == 130, out
    run = tmp_path / "stopped"
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "partial" and "Ctrl-C" in meta["partial_reason"]
    trials = pd.read_parquet(run / "rfc2544_trials.parquet")
    first = trials[trials["case_id"] == "rfc2544/throughput/64"]
    assert len(first) >= 2
    assert first["value"].iloc[0] == 100.0 and not first["passed"].iloc[0]
