"""The tester's suites with --jobs: cases measured in worker processes,
each with its own switch, give the tables one process gives, row for row,
including the cases that use what an earlier case measured (a chain:
RFC 2544's latency, back-to-back and recovery at the throughput of their
size, RFC 2889's maximum forwarding rate from its full mesh, the features
latency at the throughput with the same rules)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from tests.experiments.runner_workers import run_processes

ROOT = Path(__file__).resolve().parents[2]
DUT = str(ROOT / "p4src" / "dut.p4")
runner = CliRunner()

SUITES = {
    "rfc2544": ["--sizes", "64,1518", "--latency-trials", "2", "--resolution-pct", "1",
                "--buffer-mb", "1", "--dut-rate-pct", "60"],
    "rfc2889": ["--sizes", "64,512", "--tests",
                "full_mesh,max_forwarding_rate,congestion_control,partial_mesh_1n",
                "--resolution-pct", "5", "--loads", "50,100"],
    "features": ["--sizes", "64,97", "--latency-trials", "2", "--resolution-pct", "1",
                 "--trial-frames", "2000", "--fairness", "3:1@64", "--fairness-us", "20"],
    "lag-hash": ["--streams", "1,4,8", "--runs", "2", "--duration-us", "400",
                 "--warmup-us", "100"],
}


def _run(tmp_path: Path, suite: str, jobs: int) -> Path:
    r = runner.invoke(app, ["run", suite, *SUITES[suite], "--program", DUT, "--jobs", str(jobs),
                            "--results", str(tmp_path), "--run-id", f"jobs{jobs}",
                            "--no-progress", "--no-report"])
    assert r.exit_code == 0, r.output
    return tmp_path / f"jobs{jobs}"


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_workers_measure_the_same_tables_as_one_process(tmp_path, suite):
    one, two = _run(tmp_path, suite, 1), _run(tmp_path, suite, 2)
    tables = sorted(p.name for p in one.glob("*.parquet"))
    assert tables == sorted(p.name for p in two.glob("*.parquet"))
    assert len(tables) > 2
    for name in tables:
        a, b = pd.read_parquet(one / name), pd.read_parquet(two / name)
        if name == "cases.parquet":
            a, b = a.drop(columns="wall_s"), b.drop(columns="wall_s")
        pd.testing.assert_frame_equal(a, b, obj=name)
    csvs = sorted(p.name for p in one.glob("*.csv"))
    assert csvs and csvs == sorted(p.name for p in two.glob("*.csv"))
    for name in csvs:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert not run_processes(), "no worker left behind"


@pytest.mark.parametrize("jobs", ["0", "257", "x"])
def test_jobs_out_of_range_exits_2_naming_the_option(tmp_path, jobs):
    r = runner.invoke(app, ["run", "rfc2544", "--jobs", jobs, "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "--jobs" in r.output
    assert list(tmp_path.iterdir()) == []


def test_jobs_is_refused_in_mininet_mode(tmp_path):
    r = runner.invoke(app, ["run", "rfc2544", "--mode", "mininet", "--jobs", "2",
                            "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "--jobs" in r.output


def test_a_dask_cluster_measures_the_same_tables(tmp_path):
    """--cluster local:2: the suite's cases (a chain among them) measured
    by Dask workers come back as one process measures them."""
    one = _run(tmp_path, "rfc2544", 1)
    r = runner.invoke(app, ["run", "rfc2544", *SUITES["rfc2544"], "--program", DUT,
                            "--cluster", "local:2", "--results", str(tmp_path),
                            "--run-id", "dask", "--no-progress", "--no-report"])
    assert r.exit_code == 0, r.output
    assert "on 2 Dask workers (local:2)" in r.output
    dask = tmp_path / "dask"
    for name in ("rfc2544_results.parquet", "rfc2544_trials.parquet"):
        pd.testing.assert_frame_equal(pd.read_parquet(one / name), pd.read_parquet(dask / name),
                                      obj=name)
    assert "cluster" in (dask / "run.json").read_text()
    assert not run_processes(), "no worker left behind"


def test_cluster_is_refused_through_a_chain_of_switches(tmp_path):
    r = runner.invoke(app, ["run", "rfc2889", "--chain", "2", "--cluster", "local:2",
                            "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "--cluster" in r.output and "--chain" in r.output

