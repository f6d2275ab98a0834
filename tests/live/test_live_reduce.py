"""Series reduced on the server: one value per pixel column, the largest,
so a peak of one nanosecond survives any width; and a case digested from
its stored rows (peaks, bursts, drops) the same way live and in replay."""

import math

import numpy as np
import pandas as pd

from p4scope.experiments.live import reduce as rx
from p4scope.experiments.live.model import RunModel, digest


def test_a_one_sample_peak_survives_every_width():
    t = np.arange(0, 1_000_000, 7, dtype=float)
    v = np.full(t.size, 100.0)
    v[54321] = 9_999.0  # held for 7 ns in a million
    for px in (16, 100, 1200, 4000):
        e = rx.edges(0, 1_000_000, px)
        ts, vs = rx.step_max(t, v, e)
        assert len(ts) == len(vs) == px
        assert max(vs) == 9_999 and 1 <= sum(x == 9_999 for x in vs) <= 2  # 1 column, or 2 it straddles


def test_a_level_held_into_a_column_without_samples_counts():
    e = rx.edges(0, 200, 20)  # columns of 10 ns
    ts, vs = rx.step_max([0, 5, 55], [1, 50, 0], e)
    assert vs == [50] * 6 + [0] * 14  # 50 holds from 5 ns to 55 ns
    assert ts[:3] == [0, 10, 20]


def test_points_keep_only_columns_that_have_some():
    e = rx.edges(0, 100, 20)  # columns of 5 ns
    ts, vs = rx.point_max([1, 2, 31, 120], [5, 7, 3, 99], e)
    assert (ts, vs) == ([0, 30], [7, 3])  # 120 is outside the window


def test_widths_are_clamped():
    assert rx.edges(0, 10, 1).size - 1 == rx.MIN_PX
    assert rx.edges(0, 10, 10**9).size - 1 == rx.MAX_PX
    assert rx.edges(5, 5, 20)[-1] > 5  # an empty window gets 1 ns


def _tables(cid):
    return {
        "ground_truth": pd.DataFrame({"case_id": cid, "t_ns": [0, 10, 20], "egress_port": 31,
                                      "queue": 0, "occupancy_bytes": [0, 900, 0],
                                      "occupancy_frames": [0, 1, 0]}),
        "ground_truth_ingress": pd.DataFrame({"case_id": cid, "t_ns": [0, 10, 0, 10],
                                              "egress_port": 31, "ingress_port": [1, 1, 2, 2],
                                              "occupancy_bytes": [0, 600, 0, 300]}),
        "instrument_series": pd.DataFrame({"case_id": cid, "t_ns": [-1, 11], "egress_port": 31,
                                           "queue": 0, "kind": ["case_max", "burst_pkt"],
                                           "depth_bytes": [950, 880], "depth_frames": 1,
                                           "ingress_port": 1}),
        "burst_events": pd.DataFrame({"case_id": cid, "source": ["truth", "instrument"],
                                      "egress_port": 31, "queue": 0, "burst_id": 1,
                                      "start_ns": [5.0, 6.0], "end_ns": [15.0, math.nan],
                                      "peak": [900.0, 880.0], "unit": "bytes",
                                      "peak_ns": [10.0, math.nan]}),
        "instrument_errors": pd.DataFrame({"case_id": [cid], "peak_unit": ["bytes"],
                                           "peak_truth": [901.0], "peak_instrument": [880.0]}),
        "streams": pd.DataFrame({"case_id": cid, "tx_frames": [10, 10],
                                 "rx_frames": [3, 3], "rx_frames_total": [9, 8]}),
    }


def test_a_case_is_digested_from_its_rows_only():
    t = _tables("a")
    other = {k: v.assign(case_id="b") for k, v in t.items()}
    both = {k: pd.concat([t[k], other[k]]) for k in t}
    c = digest("a", "case a", 0, both)
    assert (c.peak_truth, c.peak_instrument) == (901.0, 880.0)  # instrument_errors' figures
    assert (c.sent, c.drops) == (20, 3)  # over the whole case (rx_frames_total)
    assert c.congested == 31 and sorted(c.ingress) == [1, 2]
    assert list(c.reports["port 31"].t) == [11]  # the register's case maximum has no time
    s = c.summary()
    assert (s["bursts_truth"], s["bursts_instrument"]) == (1, 1)
    assert s["bursts"][0]["source"] == "instrument" and s["bursts"][0]["end_ns"] is None
    assert s["span"] == [0.0, 20.0]


def test_the_model_totals_what_its_cases_say():
    m = RunModel("live")
    assert m.status()["state"] == "starting"
    m.add_case(digest("a", "a", 0, _tables("a")))
    m.add_case(digest("b", "b", 1, {k: v.assign(case_id="b") for k, v in _tables("b").items()}))
    m.end(True)
    st = m.status()
    assert st["state"] == "complete" and st["done"] == 2
    assert st["totals"] == {"peak_truth": 901.0, "peak_instrument": 880.0, "peak_unit": "bytes",
                            "peak_truth_pkts": 1.0, "peak_instrument_pkts": 1.0,
                            "bursts_truth": 2, "bursts_instrument": 2, "drops": 6, "sent": 40}


def test_the_case_in_flight_keeps_its_peak_as_columns_widen():
    from p4scope.experiments.live.inflight import Columns, InFlight

    c = Columns(n=16, width_ns=10)
    c.add(np.array([0, 5, 12]), np.array([1.0, 70.0, 3.0]))
    c.add(np.array([400, 1000]), np.array([9.0, 0.0]))  # outgrows 160 ns: 10 -> 80 ns columns
    assert c.w == 80
    t, v = c.series(1000)
    assert t[:2] == [0, 80] and v[0] == 70 and max(v) == 70
    assert v[1:5] == [3, 3, 3, 3] and v[5] == 9 and v[-1] == 9  # levels held, then 0 at 1000
    f = InFlight("c", "case c", 0)
    piece = {"time_ns": np.array([1, 2, 3, 4]), "port": np.array([31, 31, 31, 31]),
             "queue": np.zeros(4, int), "ingress": np.array([1, 2, 1, 2]),
             "kind": np.array([0, 0, 2, 1]), "q_bytes": np.array([100, 200, 999, 100]),
             "in_bytes": np.array([100, 100, 999, 0])}
    f.add(5000, piece)
    d = f.series()
    assert d["virtual_ns"] == 5000 and d["congested"] == 31
    assert max(d["queues"][0]["v"]) == 200  # the drop record (kind 2) left out
    assert sorted(s["ingress"] for s in d["ingress"]) == [1, 2]


def test_replay_reads_a_killed_runs_parts_and_runs_without_queue_tables(tmp_path):
    from p4scope.experiments import rundir as rd
    from p4scope.experiments.live.model import from_run_dir

    run = rd.RunDir.create(tmp_path, "g", run_id="killed")
    run.start({"experiment": "microburst", "cases": {"planned": 3, "done": 0}})
    for k in _tables("a"):
        run.add_part(k, _tables("a")[k])
    run.add_part("cases", pd.DataFrame([{"case_id": "a", "label": "case a", "status": "complete",
                                         "wall_s": 0.5}]))
    m = from_run_dir(run.path)  # never consolidated: SIGKILL left parts/
    st = m.status()
    assert (st["mode"], st["state"], st["planned"], st["done"]) == ("replay", "partial", 3, 1)
    assert st["totals"]["peak_truth"] == 901.0 and m.case("a").series()["queues"]
    bare = rd.RunDir.create(tmp_path, "g", run_id="rfc")  # a run with no queue tables at all
    bare.start({"experiment": "rfc2544"})
    bare.add_part("cases", pd.DataFrame([{"case_id": "x", "label": "x", "status": "complete",
                                          "wall_s": 1.0}]))
    bare.finish(True)
    m = from_run_dir(bare.path)
    s = m.case("x").series(px=50)
    assert m.status()["state"] == "complete" and s["queues"] == [] and s["ingress"] == []
    assert m.status()["totals"]["peak_truth"] is None  # shown as –, not as 0
