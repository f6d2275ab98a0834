"""The tap in the path of another switch, in virtual time (issue 18): the
reference DUT with its own traffic-manager profile and a tap switch
(p4src/tap.p4) on each of its links, in one engine Fabric; what the taps'
reports say of the DUT's egress queue against the DUT's own ground truth.
Bars: peak within 1 % or one frame, shares within 1 pp, start and end
within one frame time, the drops
equal; the links' time taken off; lost reports marked, never filled in."""

from __future__ import annotations

import dataclasses

import pytest


from p4scope.experiments import testbed as tb  # noqa: E402
from p4scope.experiments import traffic  # noqa: E402
from p4scope.experiments.linerate import frame_time_ns  # noqa: E402
from p4scope.experiments.microburst import plan as mbx  # noqa: E402
from p4scope.experiments.microburst import tap_virtual as mtv  # noqa: E402
from p4scope.experiments.microburst.params import MicroburstParams  # noqa: E402
from p4scope.experiments.params import EngineOptions  # noqa: E402
from p4scope.experiments.tap import truth as tt  # noqa: E402
from p4scope.experiments.tap import virtual as tv  # noqa: E402
from p4scope.experiments.tap import virtual_run as vr  # noqa: E402


@pytest.fixture(scope="module")
def programs():
    return tb.compile_dut(), tb.compile_dut(vr.TAP_SOURCE)


def dut_profile(buffer_mb: float = 1.0, alpha: float = 1.0):
    return EngineOptions(buffer_mb, alpha, 256, 1).profiles("fair")["fair"]


def cases(prof, sizes=(1518,), sizes_4to1=()):
    mb = MicroburstParams(sizes_2to1=sizes, sizes_4to1=sizes_4to1,
                          combos_2to1=(("Test 1", (1, 2)),)).check()
    return mbx.plan(mb, {prof.name: prof})


def measured(programs, prof, cs, **kw):
    dut, tap = programs
    ports, flows = vr.fabric_ports(cs)
    with tv.TappedDut(dut, tap, prof, ports, flows, seed=1,
                      apply_profile=traffic.apply_profile, **kw) as td:
        return [mtv.measure(td, prof, c, lambda f: None) for c in cs]


def assert_within_the_bars(tables, case):
    bp = mbx.plan_of(case)
    frame = bp.frame_size - 4
    err = tables["tap_errors"]
    assert len(err) == 1, err  # one burst, seen by both
    r = err.iloc[0]
    truth_peak = r["peak_reference_bytes"]
    assert truth_peak == tables["microburst"].iloc[0]["peak_truth_bytes"]
    assert abs(r["peak_tap_bytes"] - truth_peak) <= max(0.01 * truth_peak, frame)
    assert r["share_error_pp"] <= 1.0
    slack = frame_time_ns(bp.frame_size)
    assert abs(r["start_error_ns"]) <= slack and abs(r["end_error_ns"]) <= slack
    assert r["time_tolerance_ns"] == slack
    assert r["drops_tap_frames"] == r["drops_truth_frames"] == r["drops_tester_frames"] > 0
    assert r["reports_lost"] == 0 and r["collector_drops"] == 0
    assert r["tap_queue_peak_frames"] <= 1  # the tap is a wire: it holds no queue
    assert tt.state(tt.case_checks(err).iloc[0]["all_pass"]) is True


@pytest.mark.parametrize("sizes, sizes_4to1", [((64, 1518), ()), ((), (512,))])
def test_the_taps_see_the_duts_queue_within_the_bars(programs, sizes, sizes_4to1):
    prof = dut_profile()
    cs = cases(prof, sizes, sizes_4to1)
    for tables, case in zip(measured(programs, prof, cs), cs):
        assert_within_the_bars(tables, case)
        # the shares: each ingress port's part of the queue, as the truth has it
        r = tables["tap_errors"].iloc[0]
        k = len(mbx.plan_of(case).ingress)
        assert r["shares_tap"].count(":") == k


def test_the_queue_measured_is_the_duts_with_its_own_profile(programs):
    """Two DUT profiles, the same taps: the inferred peak follows the DUT's
    buffer (2:1 holds 2/3 of it with alpha 1, 1/2 with alpha 1/2)."""
    peaks = {}
    for alpha in (1.0, 0.5):
        prof = dataclasses.replace(dut_profile(1.0, alpha), name=f"a{alpha:g}")
        cs = cases(prof)
        tables = measured(programs, prof, cs)[0]
        assert_within_the_bars(tables, cs[0])
        peaks[alpha] = tables["tap_errors"].iloc[0]["peak_tap_bytes"]
        assert tables["microburst"].iloc[0]["dut"] == "p4scope"
    assert peaks[0.5] / peaks[1.0] == pytest.approx((1 / 2) / (2 / 3), rel=0.02)
    assert tv.TAP_PROFILE.buffer_bytes != dut_profile().buffer_bytes


def test_the_links_time_is_taken_off(programs):
    """With 2 us of wire between each tap and the DUT, the reports on the
    tap's own clock count the frames on the links as queued (the raw
    peak is far off); moved to the DUT's side of the links they are not."""
    prof = dut_profile()
    cs = cases(prof)
    tables = measured(programs, prof, cs, delay_ns=2000)[0]
    assert_within_the_bars(tables, cs[0])
    r = tables["tap_errors"].iloc[0]
    assert r["link_ns"] == 2123
    assert r["peak_raw_error_bytes"] > 10 * 1514


def test_lost_reports_are_marked_not_filled_in(programs):
    """A slow collector port with a short queue drops reports: the counts
    of the next report say how many, the tap's series is unknown (NaN)
    there, and the bursts it touches get no verdict."""
    prof = dut_profile()
    cs = cases(prof)
    tables = measured(programs, prof, cs, collector_rate_bps=12e9, collector_queue_frames=64)[0]
    r = tables["tap_errors"].iloc[0]
    assert r["collector_drops"] > 0
    assert 0 < r["reports_lost"] <= r["collector_drops"]
    s = tables["tap_series"]
    unknown = s[~s["valid"].astype(bool)]
    assert len(unknown) and unknown["occupancy_bytes"].isna().all()
    assert bool(r["lost_reports"])
    for c in tt.CHECKS:
        assert tt.state(r[c]) is None, c
    assert tt.state(tt.case_checks(tables["tap_errors"]).iloc[0]["all_pass"]) is None
