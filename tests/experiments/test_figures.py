"""Derived figures on hand-computed cases."""

import math

import numpy as np
import pandas as pd
import pytest

from p4scope.experiments import figures as fg
from p4scope.experiments import linerate as lr
from p4scope.experiments import theory as th


def test_jain_index():
    assert fg.jain_index([1, 1, 1, 1]) == pytest.approx(1.0)
    assert fg.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    # Tolly Table 3, Broadcom 3 ports 24-26: 50.0, 25.1, 25.0
    # (100.1)^2 / (3 * (2500 + 630.01 + 625)) = 10020.01 / 11265.03
    assert fg.jain_index([50.0, 25.1, 25.0]) == pytest.approx(10020.01 / 11265.03)
    assert math.isnan(fg.jain_index([]))
    assert math.isnan(fg.jain_index([0, 0]))
    with pytest.raises(ValueError):
        fg.jain_index([1, -1])


def test_shares_and_max_min():
    assert list(fg.shares([1, 3])) == [0.25, 0.75]
    assert fg.max_min_ratio([50.0, 10.1, 10.0]) == pytest.approx(5.0)
    assert fg.max_min_ratio([0, 1]) == math.inf
    assert math.isnan(fg.max_min_ratio([0, 0]))
    # shares 0.51 and 0.49 of two: 2% away from 1/2
    assert fg.max_share_deviation([51, 49]) == pytest.approx(0.02)


def test_gbps_layer1_and_layer2():
    # 1000 frames of 1230 B in 1 us: (1230+20)*8*1000 bits = 10 Mbit -> 10000 Gbps
    assert fg.gbps(1_230_000, 1000, 1e-6) == pytest.approx(10_000.0)
    assert fg.gbps(1_230_000, 1000, 1e-6, layer1=False) == pytest.approx(9_840.0)
    with pytest.raises(ValueError):
        fg.gbps(1, 1, 0)


def test_share_split_gap():
    # stream A: 10 frames of 1500 B, stream B: 30 frames of 100 B
    s = fg.share_split([15000, 3000], [10, 30])
    assert s.bandwidth == pytest.approx([15000 / 18000, 3000 / 18000])
    assert s.packet_rate == pytest.approx([0.25, 0.75])
    assert s.gap == pytest.approx([0.25 - 15000 / 18000, 0.75 - 3000 / 18000])


def test_peak_and_time_weighted_mean():
    t = [0, 10, 20, 30]
    v = [0, 100, 50, 0]
    assert fg.peak(t, v) == (100.0, 10.0)
    # step series: 0 on [0,10), 100 on [10,20), 50 on [20,30) -> 1500/30
    assert fg.time_weighted_mean(t, v) == pytest.approx(50.0)
    # window [5, 25]: 0*5 + 100*10 + 50*5 = 1250 over 20
    assert fg.time_weighted_mean(t, v, 5, 25) == pytest.approx(62.5)
    # window past the last sample holds the last value (0)
    assert fg.time_weighted_mean(t, v, 0, 60) == pytest.approx(1500 / 60)
    with pytest.raises(ValueError):
        fg.time_weighted_mean([1, 0], [1, 1])


def test_step_from_deltas_merges_equal_times():
    t, level = fg.step_from_deltas([0, 5, 5, 9], [100, 60, -100, -60])
    assert list(t) == [0, 5, 9]
    assert list(level) == [100, 60, 0]


def test_find_bursts_with_hysteresis():
    t = list(range(10))
    v = [0, 5, 12, 20, 15, 9, 11, 3, 12, 13]
    b = fg.find_bursts(t, v, on=10, off=5)
    assert len(b) == 2
    assert (b[0].start, b[0].end, b[0].peak, b[0].peak_time) == (2, 7, 20, 3)
    assert b[1].start == 8 and math.isnan(b[1].end) and b[1].peak == 13
    with pytest.raises(ValueError):
        fg.find_bursts(t, v, on=5, off=10)


def _bursts_one_by_one(t, v, on, off):
    """The hysteresis rule sample by sample, as the instrument applies it."""
    out, start, pk, pk_t = [], None, None, None
    for ti, vi in zip(t, v):
        if start is None:
            if vi >= on:
                start, pk, pk_t = ti, vi, ti
        elif vi < off:
            out.append((start, ti, pk, pk_t))
            start = None
        elif vi > pk:
            pk, pk_t = vi, ti
    if start is not None:
        out.append((start, math.nan, pk, pk_t))
    return out


def test_find_bursts_is_the_sample_by_sample_rule():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(0, 40))
        t = np.cumsum(rng.integers(1, 5, n)).astype(float)
        v = rng.integers(0, 8, n).astype(float)  # ties and equal thresholds happen
        on = float(rng.integers(0, 8))
        off = float(rng.integers(0, int(on) + 1))
        got = [(b.start, b.end, b.peak, b.peak_time) for b in fg.find_bursts(t, v, on, off)]
        want = _bursts_one_by_one(t, v, on, off)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g[0] == w[0] and g[2:] == w[2:]
            assert g[1] == w[1] or (math.isnan(g[1]) and math.isnan(w[1]))


def test_reduce_series_keeps_peak_and_troughs():
    rng = np.random.default_rng(1)
    t = np.arange(100_000, dtype=float)
    v = rng.random(t.size)
    v[54_321] = 7.0
    v[12_345] = -3.0
    rt, rv = fg.reduce_series(t, v, 600)
    assert len(rt) <= 600 + 2
    assert 7.0 in rv and -3.0 in rv
    assert np.all(np.diff(rt) > 0)
    assert rt[-1] == t[-1]
    same_t, same_v = fg.reduce_series([1, 2], [3, 4], 10)
    assert list(same_v) == [3, 4]


def _reduce_bin_by_bin(t, v, max_points):
    """reduce_series' rule spelt out: per run of samples in one time bin,
    its first sample and its first maximum and first minimum (argmax)."""
    nbins = max_points // 3
    b = np.minimum(((t - t[0]) / (t[-1] - t[0]) * nbins).astype(np.int64), nbins - 1)
    keep = np.zeros(t.size, dtype=bool)
    s = 0
    for e in [*np.flatnonzero(b[1:] != b[:-1]) + 1, t.size]:
        keep[[s, s + np.argmax(v[s:e]), s + np.argmin(v[s:e])]] = True
        s = e
    keep[-1] = True
    return t[keep], v[keep]


@pytest.mark.parametrize("points_per_bin", [2, 40, 1000])
def test_reduce_series_keeps_each_bins_first_max_and_min(points_per_bin):
    rng = np.random.default_rng(points_per_bin)
    for trial in range(60):
        n = 301 + 100 * points_per_bin + trial  # 100 bins
        t = np.sort(rng.integers(0, 10 * n, n)).astype(float)
        v = rng.integers(0, 1 + trial % 9, n).astype(float)  # ties: the first one is kept
        if trial % 4 == 0:
            v[rng.integers(0, n, 3)] = np.nan
        got, want = fg.reduce_series(t, v, 300), _reduce_bin_by_bin(t, v, 300)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1], equal_nan=True)


def test_tolly_absorption_example():
    # seed 000: 82,000 frames from each of two ports, 81,863 + 81,845
    # forwarded: buffered 81,708 frames, 4.99 MB at 64 B
    a = fg.absorption([81_863, 81_845], 82_000, 64)
    assert a.forwarded == 163_708
    assert a.buffered_frames == 81_708
    assert a.buffered_bytes == 81_708 * 64
    assert round(a.buffered_mb, 2) == 4.99
    with pytest.raises(ValueError):
        fg.absorption([1], 0, 64)


def test_instrument_errors():
    assert fg.relative_error(105, 100) == pytest.approx(0.05)
    assert math.isnan(fg.relative_error(1, 0))
    e = fg.share_error_pp([30, 70], [0.25, 0.75])
    assert e == pytest.approx([5.0, -5.0])
    truth = [fg.Burst(100, 200, 50, 150), fg.Burst(300, 400, 60, 350), fg.Burst(900, 950, 5, 920)]
    meas = [fg.Burst(310, 390, 57, 340), fg.Burst(102, 205, 49, 151)]
    m = fg.match_bursts(truth, meas)
    assert m[0].measured is meas[1] and m[0].start_error == 2 and m[0].end_error == 5
    assert m[1].measured is meas[0] and m[1].peak_error == pytest.approx(-0.05)
    assert m[2].measured is None and math.isnan(m[2].start_error)


def test_line_rate():
    assert lr.frame_time_ns(64) == pytest.approx(6.72)
    assert lr.frames_per_second(64) == pytest.approx(148_809_523.8, rel=1e-9)
    assert lr.mix_mean_size(lr.TOLLY_IMIX) == pytest.approx(
        (64 * 55 + 78 * 5 + 576 * 17 + 1518 * 23) / 100)
    assert lr.l1_bits(64, 1) == 672
    with pytest.raises(ValueError):
        lr.mix_mean_size({64: 0})


def test_theory():
    # alpha 1: a single congested queue gets half the buffer
    assert th.dt_queue_limit(16e6, 1.0) == pytest.approx(8e6)
    assert th.dt_queue_limit(16e6, 2.0, congested=2, reserved_bytes=1000) == pytest.approx(
        1000 + 32e6 / 5)
    assert th.frame_footprint(60, 256) == 256
    assert th.frame_footprint(300, 256) == 512
    assert th.frame_footprint(60) == 60
    assert th.limit_frames(8e6, 60) == 133_333
    assert th.burst_absorption_frames(1000, 2, 600) == 600
    assert th.burst_absorption_frames(1000, 4, 600) == 1000
    assert th.burst_frames_needed(1000, 2) == 1500
    assert th.burst_frames_needed(1000, 4) == 500
    # 8 MB at a net 100 Gbit/s: 640 us
    assert th.fill_time_ns(8e6, 2, 100e9) == pytest.approx(640_000)


def test_step_at_and_bin_max():
    t = [10, 20, 30]
    v = [5, 1, 7]
    assert list(fg.step_at(t, v, [0, 10, 15, 25, 99])) == [0, 5, 5, 1, 7]
    # bins [0,10) [10,20) [20,30) [30,40): 0; 5; max(1 at start... 5 holds until 20) -> 1; 7
    assert list(fg.bin_max_step(t, v, [0, 10, 20, 30, 40])) == [0, 5, 1, 7]
    # one wide bin sees the peak
    assert list(fg.bin_max_step(t, v, [0, 40])) == [7]
    # a bin starting inside a high step keeps the level holding there
    assert list(fg.bin_max_step(t, v, [12, 18])) == [5]


def test_dt_admitted_frames_matches_a_direct_count():
    for B, a, c in ((1000, 1.0, 100), (16 * 2**20, 1.0, 256), (10_000, 2.0, 64), (5000, 0.5, 300)):
        q = k = 0
        while q + c <= a * (B - q):
            q += c
            k += 1
        assert th.dt_admitted_frames(B, a, c) == k, (B, a, c)
    assert th.dt_admitted_frames(1000, 1.0, 100, reserved_bytes=300) == 5 + 3


def test_dt_admitted_frames_with_voqs():
    # two VOQs, alpha 1, 9000 B in 100 B cells: each settles at B/3 -> 30 + 30
    assert th.dt_admitted_frames(9000, 1.0, 100, voqs=2) == 60
    # 16 MiB in 256 B cells, 2:1 -> two thirds of 65536 cells
    assert th.dt_admitted_frames(16 * 2**20, 1.0, 256, voqs=2) == 43691
    # four VOQs hold 4/5 of the buffer
    assert th.dt_admitted_frames(10_000, 1.0, 100, voqs=4) == 80


def test_arbitrated_shares_reproduce_table3_shapes():
    # ports 8-13 with groups of 8 from port 1: {8} and {9..13}
    s = th.arbitrated_shares([0, 1, 1, 1, 1, 1])
    assert s == pytest.approx([0.5, 0.1, 0.1, 0.1, 0.1, 0.1])
    # ports 7-12: {7, 8} and {9..12}
    assert th.arbitrated_shares([0, 0, 1, 1, 1, 1]) == pytest.approx([0.25, 0.25] + [0.125] * 4)
    assert th.arbitrated_shares([1, 2, 3]) == pytest.approx([1 / 3] * 3)
    assert th.arbitrated_shares([]) == []


def test_groundtruth_from_an_engine_trace():
    """A hand-made trace: two frames of 100 B from ports 1 and 2 enqueued at
    0 and 10 ns, dequeued at 20 and 40 ns (q_bytes after each change)."""
    from p4scope.experiments import groundtruth as gt

    cols = {"time_ns": [0, 10, 20, 40], "port": [31] * 4, "queue": [0] * 4,
            "ingress": [1, 2, 1, 2], "kind": [0, 0, 1, 1], "q_pkts": [1, 2, 1, 0],
            "q_bytes": [100, 200, 100, 0], "in_pkts": [1, 1, 0, 0],
            "in_bytes": [100, 100, 0, 0]}
    t = gt.analyse("c", gt.trace_frame(cols), burst_on=150, burst_off=50, window=(0, 40))
    assert t.peak_of(31) == (200.0, 10.0)
    assert t.peak_of(31, "frames") == (2.0, 10.0)
    # 100 B for 10 ns, 200 B for 10 ns, 100 B for 20 ns over 40 ns
    assert t.mean_of(31) == pytest.approx((1000 + 2000 + 2000) / 40)
    assert t.mean_of(31, window=True) == pytest.approx(125.0)
    assert list(t.bursts[["start_ns", "end_ns"]].iloc[0]) == [10.0, 40.0]
    ing = t.by_ingress.set_index(["ingress_port", "t_ns"])["occupancy_bytes"]
    assert ing[(1, 20)] == 0 and ing[(2, 10)] == 100
    with pytest.raises(ValueError):
        gt.trace_frame({"time_ns": []})


def test_groundtruth_peak_counts_a_frame_that_left_in_the_same_nanosecond():
    """At 10 ns a frame is enqueued, then one dequeued: the queue held
    300 B for a moment (the series keeps the 200 B after both)."""
    from p4scope.experiments import groundtruth as gt

    cols = {"time_ns": [0, 5, 10, 10, 30, 40], "port": [31] * 6, "queue": [0] * 6,
            "ingress": [1] * 6, "kind": [0, 0, 0, 1, 1, 1], "q_pkts": [1, 2, 3, 2, 1, 0],
            "q_bytes": [100, 200, 300, 200, 100, 0], "in_pkts": [1, 2, 3, 2, 1, 0],
            "in_bytes": [100, 200, 300, 200, 100, 0]}
    t = gt.analyse("c", gt.trace_frame(cols), burst_on=150, burst_off=150)
    assert t.peak_of(31) == (300.0, 10.0)
    assert t.peak_of(31, "frames") == (3.0, 10.0)
    occ = t.occupancy.set_index("t_ns")["occupancy_bytes"]
    assert occ[10] == 200


def test_subplot_lines_land_on_their_subplot():
    """A vertical line spans its own subplot's height, a horizontal one its
    width, as add_vline/add_hline draw them."""
    from plotly.subplots import make_subplots

    from p4scope.experiments.plots_web import subplot_lines

    fig = make_subplots(rows=2, cols=2)
    subplot_lines(fig, [("x", 5.0, 2, 1, dict(dash="dot")), ("y", 0.5, 1, 2, dict(width=1))])
    v, h = fig.layout.shapes
    assert (v.xref, v.yref, v.x0, v.x1, v.y0, v.y1, v.line.dash) == ("x3", "y3 domain", 5, 5, 0, 1, "dot")
    assert (h.xref, h.yref, h.x0, h.x1, h.y0, h.y1, h.line.width) == ("x2 domain", "y2", 0, 1, 0.5, 0.5, 1)
    ref = make_subplots(rows=2, cols=2)
    ref.add_vline(x=5.0, row=2, col=1, line_dash="dot", exclude_empty_subplots=False)
    assert (ref.layout.shapes[0].xref, ref.layout.shapes[0].yref) == (v.xref, v.yref)


def test_rows_of_a_case_are_what_filtering_the_table_gives():
    """plotdata.by_case: each case's rows, index labels and dtypes as a
    filter on case_id gives them, whether the case's rows are together
    (a table written case by case) or spread; an unknown case, an empty
    table and missing case ids give no rows."""
    from p4scope.experiments import plotdata as pdt

    df = pd.DataFrame({"case_id": ["a", "a", "b", "c", "b", None, "a"],
                       "t_ns": [1, 2, 3, 4, 5, 6, 7]}, index=[10, 11, 12, 13, 14, 15, 16])
    for table in (df, df.iloc[:2], df.astype({"case_id": "str"})):
        rows = pdt.by_case(table)
        for cid in ("a", "b", "c", "zz"):
            pd.testing.assert_frame_equal(rows(cid), table[table["case_id"] == cid])
    assert list(pdt.by_case(df)("a").index) == [10, 11, 16]
    empty = pdt.by_case(df.iloc[0:0])("a")
    assert empty.empty and list(empty.columns) == ["case_id", "t_ns"]
