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


def _r(iv, mx, bid, bp, start=0, end=0):
    return {"tel_interval_id": iv, "tel_interval_max_pkts": mx, "tel_interval_max_bytes": mx * 100,
            "tel_burst_id": bid, "tel_burst_pkts": bp, "tel_burst_start_ns": start,
            "tel_burst_end_ns": end}


def test_polled_interval_maxima_and_bursts():
    p = _Poller([
        _r(1, 5, 0, 0),                      # t=16us: interval 0 ended, max 5, no burst
        _r(2, 50, 1, 10, 20_000),            # t=32us: burst 1 on since 20us
        _r(3, 80, 1, 40, 20_000),            # t=48us
        _r(3, 80, 1, 40, 20_000),            # t=64us: interval 3 not refreshed: port idle
        _r(5, 20, 1, 0, 20_000, 70_500),     # t=80us: burst 1 ended at 70.5us
        _r(6, 60, 3, 5, 90_000, 83_000),     # t=96us: bursts 2 (unseen) and 3 began
        _r(7, 10, 3, 0, 90_000, 100_000),    # t=112us: burst 3 ended
        _r(8, 70, 5, 2, 120_000, 115_000),   # t=128us: burst 5 on
        _r(9, 30, 6, 0, 135_000, 140_000),   # t=144us: 5 ended, 6 began and ended
    ])
    for k in range(1, 10):
        p.poll(k * 16_000)
    seen = p.seen("c", "bytes")
    s = seen.series
    assert list(s["t_ns"]) == [k * 16_000 for k in range(9)]
    assert list(s["depth_bytes"]) == [500, 5000, 8000, 0, 2000, 6000, 1000, 7000, 3000]
    assert seen.peak(31) == 8000
    b = seen.bursts
    assert list(b["burst_id"]) == [1, 3, 5, 6]
    assert list(b["start_ns"]) == [20_000, 90_000, 120_000, 135_000]
    # burst 5's own end was overwritten by 6's: it lasted until 6 began at the latest
    assert list(b["end_ns"]) == [70_500, 100_000, 135_000, 140_000]
    assert (b["peak"].iloc[0], b["peak_ns"].iloc[0]) == (8000, 32_000)
    assert seen.peak(31, "frames") == 80


def test_polled_burst_still_open():
    p = _Poller([_r(1, 5, 0, 0), _r(2, 50, 1, 10, 20_000, 0)])
    p.poll(16_000)
    p.poll(32_000)
    b = p.seen("c", "frames").bursts
    assert b["start_ns"].iloc[0] == 20_000 and math.isnan(b["end_ns"].iloc[0])
    assert b["peak"].iloc[0] == 50


def test_error_row_matches_first_burst():
    import pandas as pd

    truth = pd.DataFrame([{"start_ns": 10.0, "end_ns": 90.0, "peak": 100.0, "peak_ns": 50.0}])
    seen = pd.DataFrame([{"start_ns": 30.0, "end_ns": float("nan"), "peak": 99.0,
                          "peak_ns": 60.0}])
    row = instrument.error_row("c", "microburst", "fair", "bytes", 100.0, 99.0, truth, seen)
    assert row["peak_error_rel"] == pytest.approx(-0.01)
    assert row["start_error_ns"] == 20.0 and math.isnan(row["end_error_ns"])
    assert row["bursts_matched"] == 1


class _Reports:
    """A collector's tables (what from_collector reads), without a switch."""

    def __init__(self, samples, intervals):
        import pandas as pd

        self.lost, self.errors = {1: 2}, ["bad"]
        self._t = {"queue_samples": pd.DataFrame(samples), "intervals": pd.DataFrame(intervals),
                   "bursts": pd.DataFrame([], columns=["port", "burst_id", "start_ns", "end_ns",
                                                       "peak_bytes", "peak_pkts", "packets"])}

    def tables(self, flows=True):
        return self._t


def test_series_by_port_and_time_samples_before_intervals_that_tie():
    samples = {"egress_ns": [5_000, 1_000, 2_000, 3_000], "egress_port": [2, 1, 1, 1],
               "queue_id": [0, 0, 1, 0], "held_bytes": [50, 10, 20, 30], "held_pkts": [5, 1, 2, 3],
               "ingress_port": [7, 8, 9, 8], "hop_latency_ns": [100, 200, 300, 400]}
    intervals = {"interval": [2, 0, 1], "port": [1, 1, 2], "max_bytes": [21, 11, 99],
                 "max_pkts": [2, 1, 9]}
    seen = instrument.from_collector("c/1", _Reports(samples, intervals), 0)
    s = seen.series
    assert list(s.columns) == instrument.SERIES_COLUMNS and list(s.index) == list(range(7))
    assert s.to_dict("list") == {
        "case_id": ["c/1"] * 7,
        "t_ns": [0, 1_000, 2_000, 2_000, 3_000, 1_000, 5_000],
        "egress_port": [1, 1, 1, 1, 1, 2, 2],
        "queue": [0, 0, 1, 0, 0, 0, 0],
        "kind": ["interval_max", "burst_pkt", "burst_pkt", "interval_max", "burst_pkt",
                 "interval_max", "burst_pkt"],
        "depth_bytes": [11, 10, 20, 21, 30, 99, 50],
        "depth_frames": [1, 1, 2, 2, 3, 9, 5],
        "ingress_port": [-1, 8, 9, -1, 8, -1, 7],
        "hop_latency_ns": [-1, 200, 300, -1, 400, -1, 100]}
    assert all(str(t) == "int64" for t in s.dtypes.iloc[1:].drop("kind"))
    assert (seen.lost_reports, seen.errors) == (2, 1) and seen.bursts.empty
    only_intervals = instrument.from_collector("c/1", _Reports({k: [] for k in samples}, intervals), 0)
    assert list(only_intervals.series["kind"]) == ["interval_max"] * 3
    nothing = instrument.from_collector("c/1", _Reports({k: [] for k in samples},
                                                        {k: [] for k in intervals}), 0)
    assert nothing.series.empty and list(nothing.series.columns) == instrument.SERIES_COLUMNS
