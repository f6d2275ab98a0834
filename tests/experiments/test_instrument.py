"""The instrument's readings turned into series and bursts (no switch)."""

import math

import pytest

from p4scope.experiments import instrument


class _Poller(instrument.RegisterPoller):
    """A poller whose register reads come from a list (no switch)."""

    def __init__(self, reads):
        self.egress = 31
        self.interval_ns = 16_000
        self.rows = []
        self._reads = iter(reads)

    def _read(self):
        return next(self._reads)


def _r(iv, mx, bid, bp):
    return {"tel_interval_id": iv, "tel_interval_max_pkts": mx, "tel_interval_max_bytes": mx * 100,
            "tel_burst_id": bid, "tel_burst_pkts": bp}


def test_polled_interval_maxima_and_bursts():
    p = _Poller([
        _r(1, 5, 0, 0),      # t=16us: interval 0 ended, max 5, no burst
        _r(2, 50, 1, 10),    # t=32us: burst 1 on
        _r(3, 80, 1, 40),    # t=48us
        _r(3, 80, 1, 40),    # t=64us: interval 3 not refreshed -> nothing left the port
        _r(5, 20, 1, 0),     # t=80us: burst 1 over
        _r(6, 60, 3, 5),     # t=96us: bursts 2 (short, unseen) and 3 began
    ])
    for k in range(1, 7):
        p.poll(k * 16_000)
    seen = p.seen("c", "bytes")
    s = seen.series
    assert list(s["t_ns"]) == [0, 16_000, 32_000, 48_000, 64_000, 80_000]
    assert list(s["depth_bytes"]) == [500, 5000, 8000, 0, 2000, 6000]
    assert seen.peak(31) == 8000
    b = seen.bursts
    assert list(b["burst_id"]) == [1, 3]
    assert (b["start_ns"].iloc[0], b["end_ns"].iloc[0], b["peak"].iloc[0]) == (32_000, 80_000, 8000)
    assert b["start_ns"].iloc[1] == 96_000 and math.isnan(b["end_ns"].iloc[1])
    assert seen.peak(31, "frames") == 80


def test_error_row_matches_first_burst():
    import pandas as pd

    truth = pd.DataFrame([{"start_ns": 10.0, "end_ns": 90.0, "peak": 100.0, "peak_ns": 50.0}])
    seen = pd.DataFrame([{"start_ns": 30.0, "end_ns": float("nan"), "peak": 99.0,
                          "peak_ns": 60.0}])
    row = instrument.error_row("c", "microburst", "fair", "bytes", 100.0, 99.0, truth, seen)
    assert row["peak_error_rel"] == pytest.approx(-0.01)
    assert row["start_error_ns"] == 20.0 and math.isnan(row["end_error_ns"])
    assert row["bursts_matched"] == 1
