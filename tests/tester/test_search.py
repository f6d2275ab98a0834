"""The tester's searches against DUTs whose answer is known: a model DUT
(pure, every case) and the reference DUT in virtual time with an egress
port limited by the traffic manager."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from p4scope.experiments.tester import search
from p4scope.experiments.tester.trial import Trial


def model_trial(lost: int, tx: int = 10_000, short: bool = False) -> Trial:
    rows = pd.DataFrame([{"tx_frames": tx, "rx_frames": tx - lost, "lost": lost,
                          "misdelivered": 0, "generator_short": short, "offered_pct": 0.0,
                          "tx_fps": 0.0, "rx_fps": 0.0, "rx_l1_bps": 0.0,
                          "lat_min_ns": np.nan, "lat_max_ns": np.nan, "lat_avg_ns": np.nan}])
    return Trial(rows, 1000, 0, 100e9)


def limited(limit_pct: float):
    """A DUT forwarding at most `limit_pct` of line rate: loss above it."""
    def run_at(pct: float) -> Trial:
        over = max(pct - limit_pct, 0.0) / pct
        return model_trial(int(round(10_000 * over)))
    return run_at


@pytest.mark.parametrize("limit", [100.0, 73.37, 50.0, 0.35, 12.0])
def test_binary_search_finds_the_limit_to_the_resolution(limit):
    steps = []
    r = search.throughput(limited(limit), 0.0, 0.1, each=steps.append)
    assert r.value is not None
    assert limit - 0.1 - 1e-9 <= r.value <= limit + 1e-9
    assert steps[0].value == 100.0, "the first trial is at line rate"
    assert [s.index for s in steps] == list(range(len(steps)))
    assert len(steps) <= 12, "a binary search to 0.1 % takes about log2(1000) trials"
    assert r.best is not None and r.best.passed


def test_loss_tolerance_accepts_a_little_loss():
    # 0.5 % loss allowed: 0.5 % above the limit still passes
    strict = search.throughput(limited(80.0), 0.0, 0.1).value
    loose = search.throughput(limited(80.0), 0.5, 0.1).value
    assert strict == pytest.approx(80.0)
    assert loose > strict
    assert loose == pytest.approx(80.0 / (1 - 0.005), abs=0.11)


def test_short_generator_fails_the_trial_and_says_so():
    r = search.throughput(lambda pct: model_trial(0, short=pct > 60), 0.0, 1.0)
    assert r.value == pytest.approx(60.0, abs=1.0)
    assert "generator fell short" in r.note


def test_nothing_passes():
    r = search.throughput(lambda pct: model_trial(1), 0.0, 1.0)
    assert r.value is None


def test_frame_loss_steps_until_two_clean_trials():
    offered = []
    r = search.frame_loss(lambda pct: (offered.append(pct), limited(65.0)(pct))[1])
    assert offered == [100.0, 90.0, 80.0, 70.0, 60.0, 50.0]
    assert r.value == 60.0


def test_back_to_back_finds_the_longest_clean_burst():
    r = search.back_to_back(lambda n: model_trial(max(n - 777, 0), tx=n), 10_000)
    assert r.value == 777
    r = search.back_to_back(lambda n: model_trial(0, tx=n), 500)
    assert r.value == 500 and "no loss" in r.note


def test_recovery_time_is_the_last_loss_after_the_reduction():
    tx = np.arange(0, 1000, 10)
    rx = np.ones_like(tx, bool)
    rx[[3, 50, 62]] = False  # 30 ns (before), 500 and 620 ns
    assert search.recovery_time(tx, rx, 400) == 220.0
    rx[:] = True
    assert search.recovery_time(tx, rx, 400) == 0.0


@pytest.mark.parametrize("bad", [dict(resolution_pct=0), dict(low_pct=50, high_pct=40),
                                 dict(tolerance_pct=100)])
def test_bad_search_parameters(bad):
    with pytest.raises(ValueError):
        search.throughput(limited(50), **bad)


def test_the_answer_of_a_search():
    """The rate found; NaN (not measured) when the generator fell short in
    every trial; 0 when the DUT lost frames at every rate."""
    import math

    assert search.throughput(limited(40.0), 0.0, 1.0).answer()[0] == pytest.approx(40.0)
    pct, note = search.throughput(lambda p: model_trial(0, short=True), 0.0, 10.0).answer()
    assert math.isnan(pct) and note.startswith("not measured")
    assert search.throughput(lambda p: model_trial(5), 0.0, 10.0).answer()[0] == 0.0
