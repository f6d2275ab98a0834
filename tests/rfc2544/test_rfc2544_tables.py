"""The RFC 2544 tables of a Mininet run of several DUTs: every table starts
with the DUT (one block of rows per DUT, in the order they ran), the
comparison has one throughput column per DUT with its notes, and the
throughput plot draws one line per DUT. Rows without a DUT (virtual time)
keep their shape."""

from __future__ import annotations

import pandas as pd

from p4scope.experiments.rfc2544 import section
from p4scope.experiments.rfc2544 import tables as tb

SHORT = "2 trial(s) where the generator fell short of the offered rate"


def results(with_dut: bool = True) -> pd.DataFrame:
    """Throughput rows as a run stores them: p4scope ran first, sizes in
    the order measured."""
    rows = []
    for dut, pct in (("p4scope", {1518: 100.0, 64: 12.0}), ("bridge", {1518: 95.0, 64: 40.0})):
        for size, value in pct.items():
            rows.append({"case_id": f"rfc2544/throughput/{size}/{dut}", "dut": dut,
                         "test": "throughput", "frame_size": size, "throughput_pct": value,
                         "throughput_fps_per_port": value * 1000, "throughput_gbps_per_port": 0.1,
                         "theory_throughput_pct": 100.0, "trials": 3,
                         "note": SHORT if (dut, size) == ("bridge", 64) else ""})
    df = pd.DataFrame(rows)
    return df if with_dut else df[df["dut"] == "p4scope"].drop(columns="dut")


def test_the_comparison_has_a_column_per_dut_and_its_notes():
    c = tb.dut_comparison(results())
    assert list(c.columns) == [
        "Frame size (B)",
        "p4scope throughput (% line rate)", "p4scope frames/s per port", "p4scope note",
        "bridge throughput (% line rate)", "bridge frames/s per port", "bridge note"]
    assert list(c["Frame size (B)"]) == [64, 1518]
    assert list(c["p4scope throughput (% line rate)"]) == [12.0, 100.0]
    assert list(c["bridge frames/s per port"]) == [40_000.0, 95_000.0]
    assert list(c["bridge note"]) == [SHORT, ""] and list(c["p4scope note"]) == ["", ""]
    assert "rfc2544_dut_comparison" in tb.all_tables(results(), None)


def test_the_throughput_table_has_a_dut_block_each():
    t = tb.throughput(results())
    assert list(t.columns[:2]) == ["DUT", "Frame size (B)"]
    assert list(zip(t["DUT"], t["Frame size (B)"])) == [
        ("p4scope", 64), ("p4scope", 1518), ("bridge", 64), ("bridge", 1518)]


def test_frame_loss_has_a_row_per_dut_and_size():
    trials = pd.DataFrame([{"dut": d, "test": "frame_loss", "frame_size": s, "value": v,
                            "loss_pct": loss}
                           for d, loss in (("bridge", 5.0), ("p4scope", 0.0))
                           for s in (1518, 64) for v in (100.0, 90.0)])
    t = tb.frame_loss(trials)
    assert list(t.columns) == ["DUT", "Frame size (B)", "100 %", "90 %"]
    assert list(zip(t["DUT"], t["Frame size (B)"])) == [
        ("bridge", 64), ("bridge", 1518), ("p4scope", 64), ("p4scope", 1518)]
    assert list(t["100 %"]) == [5.0, 5.0, 0.0, 0.0]


def test_rows_without_a_dut_keep_their_shape_and_compare_nothing():
    r = results(with_dut=False)
    assert "DUT" not in tb.throughput(r).columns
    assert tb.dut_comparison(r).empty and "rfc2544_dut_comparison" not in tb.all_tables(r, None)
    one = results()[lambda d: d["dut"] == "bridge"]
    assert tb.dut_comparison(one).empty, "one DUT: nothing to compare"


def test_the_throughput_plot_has_a_line_per_dut():
    import matplotlib.pyplot as plt

    web, fig = section._throughput_figs(tb.rows_of(results(), "throughput"), 100e6)
    assert [t.name for t in web.data] == ["line rate", "p4scope", "bridge"]
    assert [ln.get_label() for ln in fig.axes[0].lines] == ["line rate", "p4scope", "bridge"]
    plt.close(fig)
    web, fig = section._throughput_figs(tb.rows_of(results(False), "throughput"), 100e6)
    assert [t.name for t in web.data] == ["line rate", "measured throughput"]
    plt.close(fig)


def test_a_tester_that_never_could_send_gives_no_throughput():
    """Every trial short of the offered rate: the answer is 'not measured'
    (NaN), not 0 % (which says the DUT lost frames at every rate)."""
    import math

    import numpy as np

    from p4scope.experiments.rfc2544.params import Rfc2544Params
    from p4scope.experiments.rfc2544.virtual import Rfc2544Measure, plan
    from p4scope.experiments.tester.trial import Trial

    class ShortBed:
        def trial(self, streams, duration_ns, **kw):
            rows = pd.DataFrame([{"tx_frames": 10, "rx_frames": 10, "lost": 0, "misdelivered": 0,
                                  "generator_short": True, "offered_pct": 50.0, "tx_fps": 1.0,
                                  "rx_fps": 1.0, "rx_l1_bps": 1.0, "lat_min_ns": np.nan,
                                  "lat_max_ns": np.nan, "lat_avg_ns": np.nan,
                                  "duplicated": pd.NA}])
            return Trial(rows, duration_ns, 0, 100e9)

    p = Rfc2544Params(sizes=(512,), tests=("throughput", "latency"), resolution_pct=10.0).check()
    m = Rfc2544Measure(ShortBed(), p, None, lambda *a: None)
    thr, lat = plan(p, "fair")
    row = m(thr, lambda f: None)["rfc2544_results"].iloc[0]
    assert math.isnan(row["throughput_pct"])
    assert row["note"].startswith("not measured: the generator fell short in every trial")
    assert m(lat, lambda f: None)["rfc2544_results"].iloc[0]["note"].startswith("no rate passed")
