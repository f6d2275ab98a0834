"""The tap's reports on the DUT's clock, to the nanosecond (issue 18): a
frame leaves on a link from the nanosecond its switch's trace dequeues it
(the engine's Fabric), and the tap counts when its own port towards the
DUT sent each frame going in (tap.virtual tap_sent_ns), so every frame
the taps report lands exactly where the DUT's ground truth has it, and
burst start and end are within one frame time with no rounding slack."""

from __future__ import annotations

import numpy as np
import pytest

from p4scope.experiments.tap import truth as tt
from p4scope.experiments.tap import virtual as tv
from p4scope.experiments.tap import virtual_run as vr
from p4scope.experiments.tap.inference import FROM, TOWARDS, TapFrame
from tests.experiments.tap_burst import burst_through_taps


def frame(t: int, direction: int = TOWARDS, node: int = 0x101, size: int = 1514) -> TapFrame:
    return TapFrame(t, 0, direction, 1, size, b"k", 0, 0, 0, 0, node)


def test_the_taps_port_sends_a_frame_late_only_while_it_sends_the_one_before():
    """1514 B at 100 Gb/s is 123.04 ns on the wire: a port idle until the
    first frame starts it at its stamp (123, whole ns); the ones behind it
    follow at exact picoseconds (246.04, 369.08 ns), after the next
    frames' stamps (246, 369): each goes a nanosecond late. After a pause
    the port starts at the stamp again; each tap (node) has its own port;
    frames coming out of the DUT are not the tap's to send."""
    fs = [frame(123), frame(246), frame(369), frame(10_000), frame(246, node=0x102),
          frame(300, FROM)]
    sent = tv.tap_sent_ns(fs, 100e9)
    assert sent == {0: 123, 1: 247, 2: 370, 3: 10_000, 4: 246}
    assert tv.tap_held(fs, 100e9) == 2
    got = tv.on_dut_clock(fs, 100e9)
    assert [g.time_ns for g in got] == [246, 370, 493, 10_123, 369, 177]


@pytest.fixture(scope="module")
def programs():
    pytest.importorskip("p4scope_dataplane")
    from p4scope.experiments import testbed as tb

    return tb.compile_dut(), tb.compile_dut(vr.TAP_SOURCE)


@pytest.mark.parametrize("frame_size", [64, 1518, 9216])
def test_every_report_lands_on_the_nanosecond_of_the_duts_record(programs, frame_size):
    from p4scope.experiments.linerate import frame_time_ns
    from p4scope.experiments.tap import placement as pl
    from p4scope.experiments.tap.frames import tap_frames

    burst = burst_through_taps(*programs, frame_size)
    case, bp, cols, ports = burst.case, burst.plan, burst.trace, burst.ports
    seen, _, _ = tap_frames(burst.captured, pl.REPORT_UDP_PORT)
    on_dut = tv.on_dut_clock(seen, bp.rate_bps)
    mine = cols["port"] == bp.egress
    kind = cols["kind"]
    for p in bp.ingress:
        came = np.sort(cols["time_ns"][mine & (cols["ingress"] == p) & (kind != tt.DEQ)])
        tapped = np.sort([f.time_ns for f in on_dut if f.direction == TOWARDS and f.tap_port == p])
        assert len(came) == bp.burst_frames
        assert (tapped == came).all(), "a frame going in off the DUT's record"
    left = np.sort(cols["time_ns"][mine & (kind == tt.DEQ)])
    out = np.sort([f.time_ns for f in on_dut if f.direction == FROM])
    assert len(left) > 0 and (out == left).all(), "a frame coming out off the DUT's record"
    # and the bars: start and end within one frame time exactly
    from p4scope.experiments.tap.inference import infer

    inf = infer(on_dut, tv.wiring(ports))
    ftime = frame_time_ns(bp.frame_size, bp.rate_bps)
    rows = tt.score(case.case_id, bp.egress, inf, tt.port_truth(cols, bp.egress),
                    bp.burst_on("bytes"), bp.burst_off("bytes"), bp.frame_size - 4, ftime)
    assert len(rows) == 1
    r = rows[0]
    assert r["time_tolerance_ns"] == ftime
    assert r["start_within_tolerance"] and r["end_within_tolerance"]
    assert abs(r["start_error_ns"]) < ftime and abs(r["end_error_ns"]) < ftime
