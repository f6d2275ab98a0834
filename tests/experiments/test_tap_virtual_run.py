"""`p4scope run microburst --instrument tap` in virtual time, end to end:
the tables of the Mininet tap run, the DUT named in Table 4's rows, and a
report whose tap section scores the tap against the DUT's ground truth,
case by case."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner


from p4scope.cli import app  # noqa: E402

runner = CliRunner()


def test_a_run_with_the_tap_in_the_duts_path(tmp_path):
    r = runner.invoke(app, ["run", "microburst", "--instrument", "tap", "--sizes", "1518",
                            "--sizes-4to1", "none", "--profiles", "fair", "--buffer-mb", "1",
                            "--alpha", "2", "--jobs", "1", "--no-progress", "--results",
                            str(tmp_path), "--run-id", "tap"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    run = tmp_path / "tap"
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete"
    assert meta["tap"]["mode"] == "virtual" and meta["tap"]["dut"] == "p4scope"
    assert meta["parameters"]["profiles"]["fair"]["alpha"] == 2.0  # the DUT's own profile
    for t in ("tap_series", "tap_ingress", "tap_reference", "tap_bursts", "tap_errors",
              "ground_truth", "microburst", "streams"):
        assert (run / f"{t}.parquet").exists(), t
    err = pd.read_parquet(run / "tap_errors.parquet")
    assert len(err) == 2 and err["peak_within_tolerance"].astype(bool).all()
    assert (err["share_error_pp"] <= 1).all()
    micro = pd.read_parquet(run / "microburst.parquet")
    assert (micro["instrument"] == "tap").all()
    assert "p4scope fair, through the tap" in (run / "table4_microburst_mb.csv").read_text()
    html = (run / "report.html").read_text()
    assert "seen by the tap in its path" in html
    assert "The tap against the DUT&#x27;s ground truth" in html or \
        "The tap against the DUT's ground truth" in html
    assert "2 of 2 cases pass every bar" in html
    assert "What the instrument saw" not in html  # the tap's section shows what it saw


def test_a_bad_value_with_the_tap_exits_2_before_a_run_folder(tmp_path):
    r = runner.invoke(app, ["run", "microburst", "--instrument", "tap", "--profiles", "nope",
                            "--results", str(tmp_path)], env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.output
    assert "--profiles" in r.output and "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


def test_the_report_of_many_cases_draws_a_few_and_scores_all(tmp_path):
    """12 cases: the tap section draws representative ones (one panel
    each; more would not fit a page) and checks every case."""
    r = runner.invoke(app, ["run", "microburst", "--instrument", "tap", "--sizes",
                            "64,128,256", "--sizes-4to1", "none", "--buffer-mb", "0.125",
                            "--jobs", "1", "--no-progress", "--results", str(tmp_path),
                            "--run-id", "many"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    html = (tmp_path / "many" / "report.html").read_text()
    assert "representative cases of 12" in html
    assert "12 of 12 cases pass every bar" in html
