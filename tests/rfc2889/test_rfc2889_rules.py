"""RFC 2889's plan, pass/fail rules and tables on hand-made numbers: no
switch runs here."""

from __future__ import annotations

import pandas as pd
import pytest

from p4scope.experiments.params import ParamError
from p4scope.experiments.rfc2889 import tables as tb
from p4scope.experiments.rfc2889 import verdicts
from p4scope.experiments.rfc2889.controller import Watch
from p4scope.experiments.rfc2889.measure import plan
from p4scope.experiments.rfc2889.params import NOT_MEASURED, TESTS, Rfc2889Params
from p4scope.experiments.rfc2889.topology import (congestion_ports, congestion_streams,
                                                  mesh_streams)


def test_forwarding_passes_only_without_loss_or_misdelivery():
    assert verdicts.forwarding_passed(1000, 1000)
    assert not verdicts.forwarding_passed(1000, 999)
    assert not verdicts.forwarding_passed(1000, 1000, misdelivered=1)
    assert verdicts.forwarding_passed(1000, 999, tolerance_pct=0.1)
    assert verdicts.loss_pct(400, 300) == 25.0 and verdicts.loss_pct(0, 0) == 0.0


def test_a_search_fails_when_nothing_passed():
    assert verdicts.search_result(33.0) == verdicts.PASS
    assert verdicts.search_result(None) == verdicts.FAIL
    assert verdicts.search_result(0.0) == verdicts.FAIL


def test_congestion_fails_on_head_of_line_blocking_and_reports_back_pressure():
    # the seed's 64 B row: the uncongested port loses nothing, the congested a third
    assert verdicts.congestion_result(22321429, 22321429) == verdicts.PASS
    assert not verdicts.head_of_line_blocking(22321429, 22321429)
    # the seed's 1518 B row: the uncongested port lost frames
    assert verdicts.congestion_result(1219116, 1194263) == verdicts.FAIL
    assert verdicts.head_of_line_blocking(1219116, 1194263)
    assert verdicts.back_pressure(sent=9000, offered=10000)
    assert not verdicts.back_pressure(sent=10000, offered=10000)
    assert not verdicts.back_pressure(sent=9990, offered=10000)  # within a generator's margin


def test_address_trials_fail_on_flooding_or_a_missing_frame():
    assert verdicts.address_passed(1500, 1500, 0)
    assert not verdicts.address_passed(1500, 1500, 1)       # flooded to the monitor port
    assert not verdicts.address_passed(1500, 1499, 0)       # a test frame did not arrive
    assert not verdicts.address_passed(0, 0, 0)             # nothing was sent: no verdict to give


def test_broadcast_needs_every_frame_on_every_port():
    assert verdicts.broadcast_passed(100, [100, 100, 100])
    assert not verdicts.broadcast_passed(100, [100, 99, 100])
    assert not verdicts.broadcast_passed(100, [100, 100], echoed=1)


def test_a_test_fails_when_any_size_failed():
    assert verdicts.overall([verdicts.PASS, verdicts.PASS]) == verdicts.PASS
    assert verdicts.overall([verdicts.PASS, verdicts.FAIL, verdicts.PASS]) == verdicts.FAIL
    assert verdicts.overall([verdicts.NONE, verdicts.NONE]) == verdicts.NONE


def test_the_plan_runs_the_full_mesh_before_the_maximum_forwarding_rate():
    p = Rfc2889Params(sizes=(64, 1518), learning_addresses=(100, 500)).check()
    ids = [c.case_id for c in plan(p)]
    assert ids.index("rfc2889/full_mesh/1518") < ids.index("rfc2889/max_forwarding_rate/64")
    assert "rfc2889/address_learning/64/100" in ids and "rfc2889/address_learning/64/500" in ids
    assert "rfc2889/address_caching/64" in ids and "rfc2889/address_caching/1518" not in ids
    assert {c.params["test"] for c in plan(p)} == set(TESTS)
    assert not any(t in i for i in ids for t in NOT_MEASURED)


@pytest.mark.parametrize("kw, option", [
    ({"ifg_bits": 96}, "--ifg-bits 96"),
    ({"dut_ifg_bits": 90}, "--dut-ifg-bits 90: whole bytes"),
    ({"dut_mtu": 45}, "--dut-mtu 45"),
    ({"tests": ("errored_frames",), "sizes": (64, 1519)}, r"--sizes 1519: .*\(1518 B at --dut-mtu 1500\)"),
    ({"tests": ("congestion_control",), "ports": 3}, "--ports 3"),
    ({"ports": 64}, "--ports"),
    ({"loads": (0.0,)}, "--loads"),
    ({"trial_frames": 1000, "trial_us": 5.0}, "--trial-frames and --trial-us"),
    ({"learn_fps": 2e8}, "--learn-fps"),
    ({"mac_table_size": 1}, "--mac-table-size"),
])
def test_bad_parameters_name_their_option(kw, option):
    with pytest.raises(ParamError, match=option):
        Rfc2889Params(**kw).check()


def test_the_meshes_offer_what_rfc_2889_asks():
    ports = [1, 2, 3, 4]
    per_port = lambda ss: {p: sum(s.rate.value for s in ss if s.tx_port == p)  # noqa: E731
                           for p in ports}
    into = lambda ss: {p: sum(s.rate.value for s in ss if s.rx_port == p)  # noqa: E731
                       for p in ports}
    full = mesh_streams("full_mesh", ports, 64, 60.0, 100e9)
    assert len(full) == 12 and all(v == pytest.approx(60.0) for v in per_port(full).values())
    one_n = mesh_streams("partial_mesh_1n", ports, 64, 60.0, 100e9)
    assert per_port(one_n) == pytest.approx({1: 60.0, 2: 60.0, 3: 60.0, 4: 60.0})
    assert into(one_n) == pytest.approx({1: 180.0, 2: 20.0, 3: 20.0, 4: 20.0})
    # the three ports sending to port 1 take turns within a frame time: no bursts
    starts = sorted(s.start_ns for s in one_n if s.rx_port == 1)
    assert len(set(starts)) == 3 and starts[-1] < (64 + 20) * 8 / 100 / 0.6  # one frame time
    n_n = mesh_streams("partial_mesh_nn", ports, 64, 60.0, 100e9)
    assert {(s.tx_port, s.rx_port) for s in n_n} == {(1, 3), (1, 4), (2, 3), (2, 4), (3, 1),
                                                     (3, 2), (4, 1), (4, 2)}
    assert into(n_n) == pytest.approx({p: 60.0 for p in ports})


def test_congestion_overloads_one_port_by_half():
    c = congestion_ports([1, 2, 3, 4])
    ss = congestion_streams(c, 64, 100.0, 100e9)
    load = {p: sum(s.rate.value for s in ss if s.rx_port == p) for p in (3, 4)}
    assert load == {3: 50.0, 4: 150.0}
    assert sum(s.rate.value for s in ss if s.tx_port == 1) == 100.0


def test_the_controller_stops_after_each_learning_frame():
    w = Watch(start_ns=1000, period_ns=500.0, count=3, delay_ns=10)
    assert [w.next_stop(t) for t in (0, 1010, 1500, 2009, 2010)] == [1010, 1510, 1510, 2010, None]


def _results() -> pd.DataFrame:
    rows = [
        {"test": "full_mesh", "frame_size": 64, "result": "Pass"},
        {"test": "full_mesh", "frame_size": 1518, "result": "Fail"},
        {"test": "max_forwarding_rate", "frame_size": 64, "result": "-"},
        {"test": "address_learning", "frame_size": 64, "addresses": 100,
         "learning_rate_fps": 2400.0, "result": "Pass"},
        {"test": "address_learning", "frame_size": 64, "addresses": 500,
         "learning_rate_fps": 0.0, "result": "Fail"},
    ]
    return pd.DataFrame(rows)


def test_the_summary_is_xena_style():
    s = tb.summary(_results()).set_index("Test")
    assert s.loc["full mesh", "Result"] == "Fail"
    assert s.loc["full mesh", "Detail"] in ("1 Pass, 1 Fail", "1 Fail, 1 Pass")
    assert s.loc["maximum forwarding rate", "Result"] == "-"
    assert s.loc["address learning rate", "Result"] == "Fail"


def test_the_learning_rate_table_is_address_counts_by_frame_size():
    t = tb.address_learning(_results())
    assert list(t.columns) == ["Address Count", "64 B (f/s)"]
    assert t["Address Count"].tolist() == [100, 500]
    assert t["64 B (f/s)"].tolist() == [2400.0, 0.0]


def test_the_forwarding_table_has_the_seeds_shape():
    trials = pd.DataFrame([
        {"procedure": "forwarding", "topology": "full_mesh", "frame_size": s, "value": v,
         "rx_pct": v * (1 - loss / 100), "loss_pct": loss}
        for s in (64, 1518) for v, loss in ((10.0, 0.0), (100.0, 50.0))])
    t = tb.forwarding(trials)
    assert list(t.columns) == ["Topology", "Tx Rate (%)", "64 B Rx Rate (%)",
                               "64 B Loss Rate (%)", "1518 B Rx Rate (%)",
                               "1518 B Loss Rate (%)"]
    assert t["Tx Rate (%)"].tolist() == [10.0, 100.0]
    assert t["64 B Rx Rate (%)"].tolist() == [10.0, 50.0]
