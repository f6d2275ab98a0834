"""The mininet testbed's trial from p4scope-trafgen reports (no network
needed): the virtual testbed's columns, loss that duplicates cannot hide,
misdelivery, percentiles from the histogram, generator shortfall, and
system recovery read from the analyzer's per-interval counts."""

from __future__ import annotations

import math

import pytest

from p4scope.experiments.tester.streams import Rate, Stream
from p4scope.experiments.tester.trafgen_trial import loss_end_from_series, trial_from_reports
from p4scope.experiments.tester.trial import stream_rows

EDGES = [1000, 2000, 5000, 10000]  # bins [0,1us) [1,2) [2,5) [5,10) [10,inf)
LINE = 100e6


def sent(*streams):
    return {"streams": [{"id": i, "tx_packets": n, "tx_bytes": n * size, "first_tx_ns": 0,
                         "last_tx_ns": 1, "rate_pps": 1.0} for i, n, size in streams]}


def rx_stream(i, packets, size, dups=0, hist=(0, 0, 0, 0, 0), reordered=0):
    return {"id": i, "rx_packets": packets, "rx_bytes": packets * size,
            "unique": packets - dups, "duplicates": dups, "reordered": reordered, "late": 0,
            "max_reorder_distance": 0, "first_rx_ns": 0, "last_rx_ns": 10**9,
            "latency_ns": {"min": 1500, "avg": 3000.0, "max": 12000, "jitter": 250.0},
            "histogram": list(hist), "series_packets": [packets], "series_bytes": [0]}


def received(*streams):
    return {"hist_edges_ns": EDGES, "interval_ns": 10**9, "origin_ns": 0,
            "streams": list(streams)}


def test_columns_and_counts_are_the_virtual_testbeds():
    streams = [Stream(1, 2, Rate.pct(10), 512), Stream(2, 1, Rate.pct(10), 512)]
    n = int(0.1 * LINE / ((512 + 20) * 8)) + 1  # one second at 10 %
    t = trial_from_reports(
        streams, [1, 2], [sent((1, n, 512)), sent((2, n, 512))],
        {2: received(rx_stream(1, n, 512, hist=(0, n - 40, 30, 5, 5))),
         1: received(rx_stream(2, n - 5, 512, hist=(0, n - 5, 0, 0, 0)))},
        LINE, 10**9, 10**8)
    engine_like = stream_rows(streams, [{"stream": 1, "tx_frames": 1, "tx_bytes": 1}],
                              [1, 2], LINE, 10**9)
    assert list(t.streams.columns) == list(engine_like.columns)
    s = t.streams.set_index("stream")
    assert s.loc[1, "tx_frames"] == s.loc[1, "rx_frames"] == n and s.loc[1, "lost"] == 0
    assert s.loc[2, "lost"] == 5 and s.loc[2, "loss_pct"] == pytest.approx(500 / n)
    assert not s["generator_short"].any()
    assert s.loc[1, "lat_min_ns"] == 1500 and s.loc[1, "jitter_ns"] == 250.0
    # percentiles: the upper edge of the bin holding them; the open last bin is NaN
    assert s.loc[1, "lat_p50_ns"] == 2000 and s.loc[1, "lat_p99_ns"] == 5000
    assert math.isnan(s.loc[1, "lat_p999_ns"])
    # LIFO: FIFO less the frame's time at the tester's line rate
    assert s.loc[1, "lifo_min_ns"] == pytest.approx(1500 - 512 * 8e9 / LINE)
    assert t.queued_at_end == 0 and "not observable" in t.info["queued_at_end"]
    h = t.histogram[t.histogram["stream"] == 1]
    assert h["frames"].sum() == n and list(h["lo_ns"][:2]) == [0.0, 1000.0]
    assert t.passed(0.0) is False and t.loss_frames == 5


def test_duplicates_do_not_hide_loss_and_misdelivery_counts():
    streams = [Stream(1, 2, Rate.pct(1), 64)]
    t = trial_from_reports(streams, [1], [sent((1, 100, 64))],
                           {2: received(rx_stream(1, 100, 64, dups=3, reordered=2)),
                            3: received(rx_stream(1, 7, 64))}, LINE, 10**9, 0)
    s = t.streams.iloc[0]
    assert s["rx_frames"] == 100 and s["lost"] == 3 and s["duplicated"] == 3
    assert s["reordered"] == 2 and s["misdelivered"] == 7
    assert not t.passed(5.0), "frames delivered to the wrong port fail a trial"


def test_nothing_received_and_a_short_generator():
    streams = [Stream(1, 2, Rate.pct(50), 64)]
    offered = 0.5 * LINE / (84 * 8)
    t = trial_from_reports(streams, [1], [sent((1, int(0.9 * offered), 64))],
                           {2: received()}, LINE, 10**9, 0)
    s = t.streams.iloc[0]
    assert s["rx_frames"] == 0 and s["lost"] == s["tx_frames"] and s["loss_pct"] == 100.0
    assert bool(s["generator_short"]) and t.generator_short
    assert s["tx_fps"] == pytest.approx(0.9 * offered, rel=1e-3)
    assert math.isnan(s["lat_avg_ns"]) and math.isnan(s["lat_p50_ns"])


def test_recovery_from_interval_counts():
    ms = 10**6
    fps = 1000.0  # one frame a millisecond, sent from t = 0 for 200 ms
    series = [10] * 20
    assert loss_end_from_series(series, 10 * ms, 0, 0, 200, fps, 0) == 0.0
    # 30 frames lost in the first 40 ms: the loss ended in the 4th interval
    lossy = [2, 3, 2, 3] + [10] * 16
    assert loss_end_from_series(lossy, 10 * ms, 0, 0, 200, fps, 30) == 40 * ms
    # 10 lost in the first 20 ms, then 20 frames delayed by a queue: the loss ended at 20 ms
    delayed = [5, 5, 0, 0, 30] + [10] * 15
    assert loss_end_from_series(delayed, 10 * ms, 0, 0, 200, fps, 10) == 20 * ms
    # loss that went on until 120 ms, while a queue delayed the first frames
    mixed = [0, 0, 0, 30, 5, 5, 5, 5, 5, 5, 5, 5] + [10] * 8
    assert loss_end_from_series(mixed, 10 * ms, 0, 0, 200, fps, 50) == 120 * ms
    # the analyzer started an interval before the stream: times are from its first frame
    assert loss_end_from_series([0] + lossy, 10 * ms, -10 * ms, 0, 200, fps, 30) == 40 * ms
