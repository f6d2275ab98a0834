"""The tap's inferred queue scored against a sampled reference, on
hand-made series: peaks, time-weighted means, the tap read as the
reference reads, start/end, and no verdict where the reference saw nothing."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from p4scope.experiments.tap import scoring

SERIES = pd.DataFrame({"t_ns": [0, 100, 200, 300, 400],
                       "occupancy_bytes": [0.0, 1000.0, 3000.0, 1000.0, 0.0]})
BURSTS = pd.DataFrame([{"burst_id": 1, "start_ns": 100.0, "end_ns": 400.0, "peak_bytes": 3000.0,
                        "peak_ns": 200.0, "lost_reports": False}])
REF_T = np.arange(0, 500, 50, dtype=float)


def _score(ref_v, frame=500.0):
    (row,) = scoring.score("c", 3, SERIES, BURSTS, REF_T, np.asarray(ref_v, float), 50.0,
                           800.0, 500.0, frame)
    return row


def test_a_reference_that_agrees_scores_no_error():
    ref = [0, 0, 1000, 1000, 3000, 3000, 1000, 1000, 0, 0]
    r = _score(ref)
    assert (r["peak_tap_bytes"], r["peak_reference_bytes"], r["peak_error_bytes"]) == (3000, 3000, 0)
    assert r["reference_burst"] and r["peak_within_tolerance"]
    assert r["mean_tap_bytes"] == pytest.approx(5000 / 3)
    assert r["mean_reference_bytes"] == pytest.approx(5000 / 3)
    assert r["mean_error_rel"] == pytest.approx(0) and r["mean_error_at_samples_rel"] == pytest.approx(0)
    assert r["mae_at_samples_bytes"] == 0
    assert (r["start_error_ns"], r["end_error_ns"]) == (0, 0)
    assert r["reference_samples"] == 7 and r["reference_max_gap_ns"] == 50


def test_errors_are_the_taps_minus_the_references():
    ref = [0, 0, 1000, 1000, 2000, 2000, 1000, 1000, 0, 0]  # the reference reads 1000 less at the top
    r = _score(ref)
    assert r["peak_error_bytes"] == 1000 and r["peak_error_rel"] == pytest.approx(0.5)
    assert r["peak_tolerance_bytes"] == 1000  # two frames of 500 B: more than 5 % of 2000
    assert r["peak_within_tolerance"]
    assert not _score(ref, frame=400.0)["peak_within_tolerance"]
    assert r["mean_reference_bytes"] == pytest.approx(4000 / 3)
    assert r["mean_error_bytes"] == pytest.approx(1000 / 3)
    # 9 samples within a period of the burst (50..450), 2 of them 1000 off
    assert r["mae_at_samples_bytes"] == pytest.approx(2000 / 9)


def test_a_burst_the_reference_never_saw_has_no_verdict():
    r = _score([0] * 10)
    assert not r["reference_burst"] and r["peak_within_tolerance"] is None
    assert r["peak_reference_bytes"] == 0 and math.isnan(r["start_error_ns"])


def test_the_tolerance_is_five_percent_or_two_frames():
    assert scoring.peak_tolerance(100_000, 1514) == 5000
    assert scoring.peak_tolerance(30_000, 1514) == 3028


def test_the_references_bursts_use_the_taps_thresholds():
    rows = scoring.reference_burst_rows("c", 3, REF_T, np.array(
        [0, 0, 1000, 1000, 3000, 3000, 1000, 1000, 0, 0], float), 800.0, 500.0)
    assert [(r["start_ns"], r["peak_ns"], r["end_ns"], r["peak_bytes"]) for r in rows] == [
        (100.0, 200.0, 400.0, 3000.0)]
    assert rows[0]["source"] == "reference"
