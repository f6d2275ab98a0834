"""A short end-to-end run on the embedded switch: small buffer, few sizes,
short incasts; real engine, real P4Runtime, real sources and sinks."""

import json

import pandas as pd
import pytest

from p4scope.experiments import driver
from p4scope.experiments.linerate import frame_time_ns
from p4scope.experiments.fairness.params import FairnessParams
from p4scope.experiments.microburst.params import MicroburstParams
from p4scope.experiments.params import default_profiles



@pytest.fixture(scope="module")
def run(tmp_path_factory):
    req = driver.RunRequest(
        "all", default_profiles(buffer_bytes=256 * 1024, cell_bytes=256),
        {"microburst": MicroburstParams(sizes_2to1=(64, 1518), sizes_4to1=(1518,)),
         "fairness": FairnessParams(combinations=((25, 26, 27), (7, 8, 9, 10, 11, 12)),
                                    duration_ns=300_000, warmup_ns=150_000)},
        seed=3, results=tmp_path_factory.mktemp("results"), run_id="e2e", progress=False,
        report=False)  # rendering is tested from stored results in test_report.py
    return driver.execute(req, echo=lambda s: None)


def test_run_completes(run):
    assert run.outcome.complete, run.outcome.reason
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["status"] == "complete"
    for f in ("table4_microburst_mb.csv", "table3_fairness_gbps.csv", "burst_4to1_mb.csv",
              "ground_truth.parquet", "ground_truth_ingress.parquet", "instrument_series.parquet",
              "burst_events.parquet", "streams.parquet"):
        assert (run.path / f).is_file(), f


def test_microburst_matches_theory(run):
    m = pd.read_parquet(run.path / "microburst.parquet")
    assert len(m) == 2 * (2 * 2 + 1)
    assert (m["error_rel"].abs() <= 0.02).all(), m[["case_id", "buffered_frames", "expected_frames"]]
    assert (m["buffered_frames"] > 0).all()


def test_fairness_fair_and_unfair(run):
    f = pd.read_parquet(run.path / "fairness.parquet").set_index(["profile", "n"])
    assert f.loc[("fair", 3), "jain_bw"] >= 0.99
    assert f.loc[("fair", 6), "max_dev_bw"] <= 0.02
    # ports 7-12 in groups of 8 from port 1: {7, 8} and {9..12}: 25/25/12.5 x4
    assert f.loc[("unfair", 6), "jain_bw"] < 0.95
    s = pd.read_parquet(run.path / "streams.parquet")
    u = s[(s["profile"] == "unfair") & (s["n"] == 6)].set_index("ingress_port")["bw_share"]
    assert abs(u[7] - 0.25) < 0.02 and abs(u[12] - 0.125) < 0.02


def test_instrument_against_truth(run):
    e = pd.read_parquet(run.path / "instrument_errors.parquet")
    assert (e["peak_error_rel"].abs() <= 0.05).all(), e[["case_id", "peak_error_rel"]]
    # every burst starts and ends in the instrument's view as in the truth,
    # on the engine's nanosecond clock: the end at the very dequeue, the
    # start within about a frame time (of the largest frame: 1518 B)
    assert (e["bursts_matched"] == e["bursts_truth"]).all()
    assert (e["end_error_ns"] == 0).all(), e[["case_id", "end_error_ns"]]
    limit = 1.2 * frame_time_ns(1518)
    assert e["start_error_ns"].between(0, limit).all(), e[["case_id", "start_error_ns"]]
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["instrument"]["clock_step_ns"] == 1
    sh = pd.read_parquet(run.path / "instrument_shares.parquet")
    assert (sh["err_pp_bw"].abs() <= 1.0).all()


def test_runs_are_deterministic(run, tmp_path):
    """The same parameters and seed give the same frames out (the engine's
    digest of every frame that left the switch) and the same tables."""
    req = driver.RunRequest(
        "microburst", default_profiles(buffer_bytes=256 * 1024, cell_bytes=256),
        {"microburst": MicroburstParams(sizes_2to1=(64,), sizes_4to1=())}, seed=3, results=tmp_path,
        run_id="again", progress=False, report=False)
    again = driver.execute(req, echo=lambda s: None)
    a = pd.read_parquet(run.path / "microburst.parquet").set_index("case_id")
    b = pd.read_parquet(again.path / "microburst.parquet").set_index("case_id")
    common = b.index
    assert len(common) == 4 and all(a.loc[common, "sim_digest"] != "")
    assert list(a.loc[common, "sim_digest"]) == list(b["sim_digest"])
    assert list(a.loc[common, "forwarded_per_port"]) == list(b["forwarded_per_port"])
