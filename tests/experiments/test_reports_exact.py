"""Reports do not disturb the burst they measure: with the collector port's
rate and reserve (collector_port.py) a microburst buffers exactly the same
frames with a report per burst packet as with start and end reports only,
and the instrument sees the burst start and end next to the ground truth."""

import dataclasses

import pytest

from p4scope.experiments import collector_port, traffic
from p4scope.experiments.microburst import plan as mbx
from p4scope.experiments.microburst import virtual as mbv
from p4scope.experiments import testbed as tb
from p4scope.experiments.linerate import frame_time_ns
from p4scope.experiments.microburst.params import MicroburstParams
from p4scope.experiments.params import default_profiles


@pytest.fixture(scope="module")
def bench():
    profs = default_profiles(buffer_bytes=256 * 1024, cell_bytes=256)
    cases = mbx.plan(MicroburstParams(sizes_2to1=(64, 1518), sizes_4to1=()),
                     {"unfair": profs["unfair"]})
    with tb.VirtualSwitch(tb.compile_dut(), profs["unfair"], 3,
                          apply_profile=traffic.apply_profile) as vs:
        yield vs, profs["unfair"], cases[:2]


def _run(vs, prof, case, per_packet, reports=True):
    return mbv.measure_burst(vs, prof, case, lambda f: None, per_packet=per_packet,
                             reports=reports)


def test_per_packet_reports_leave_the_burst_as_it_is(bench):
    vs, prof, cases = bench
    for case in cases:
        with_all = _run(vs, prof, case, True)
        ends_only = _run(vs, prof, case, False)
        a, b = with_all["microburst"].iloc[0], ends_only["microburst"].iloc[0]
        assert a["forwarded_per_port"] == b["forwarded_per_port"]
        assert a["buffered_frames"] == b["buffered_frames"]
        assert abs(a["error_rel"]) <= 0.02
        assert a["collector_peak_frames"] == 1
        # a report for each packet that left during the burst, then its end
        series = with_all["instrument_series"]
        assert (series["kind"] == "burst_pkt").sum() > (a["expected_frames"] // 2)
        err = with_all["instrument_errors"].iloc[0]
        assert err["bursts_truth"] == err["bursts_instrument"] == 1
        assert err["peak_error_rel"] == 0
        # the engine's nanosecond egress clock: the end at the very dequeue,
        # the start within a frame time of the truth
        assert err["end_error_ns"] == 0
        assert 0 <= err["start_error_ns"] <= frame_time_ns(mbx.plan_of(case).frame_size) + 1


def test_without_the_collector_settings_reports_take_shared_buffer(bench):
    vs, prof, cases = bench
    bare = dataclasses.replace(prof, ports={})
    with pytest.raises(collector_port.ReportsTookSharedBuffer):
        _run(vs, bare, cases[0], True)


def test_polled_registers_give_the_same_burst(bench):
    """Without captured reports the instrument is read over P4Runtime at
    16 us interval ends: the burst's start and end come from the time
    registers, as exact as with reports, and the peak from the maxima."""
    vs, prof, cases = bench
    out = _run(vs, prof, cases[0], False, reports=False)
    err = out["instrument_errors"].iloc[0]
    assert err["bursts_truth"] == err["bursts_instrument"] == err["bursts_matched"] == 1
    assert err["peak_error_rel"] == 0
    assert err["end_error_ns"] == 0
    assert 0 <= err["start_error_ns"] <= frame_time_ns(mbx.plan_of(cases[0]).frame_size) + 1
    assert set(out["instrument_series"]["kind"]) == {"interval_max"}
