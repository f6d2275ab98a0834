"""The loss arithmetic both modes share, on hand-made records: the analyzer's loss
runs (and the frames after the last one received) are put against the link
event issued before them, outage is lost frames over the offered rate,
recovery ends when the stream is whole again (a generator stall after the
loss does not count); the kernel's link notifications are read right; a
trunk host's topology is the bond over its DUT ports."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from p4scope.experiments.lag_failover.link_changes import (IF_OPER_UP, IFLA_OPERSTATE,
                                                           RTM_NEWLINK, parse)
from p4scope.experiments.lag_failover.analysis import LostRuns, per_event
from p4scope.experiments.lag_failover.cases import plan
from p4scope.experiments.lag_failover.mininet_params import MininetLagParams
from p4scope.experiments.lag_failover.params import LagFailoverParams
from p4scope.experiments.params import ParamError
from p4scope.experiments.lag_failover.mininet_events import (LinkEvent, LossRun, lost_runs,
                                                             stream_runs)
from p4scope.experiments.tester import mininet as tester_mininet

MS = 1_000_000


def test_runs_go_to_the_event_before_them_with_outage_and_recovery():
    fps = 1000.0  # one frame a ms
    tx = {"tx_packets": 3000, "first_tx_ns": 0, "last_tx_ns": 2999 * MS}
    rx = {"max_seq": 2994, "loss_runs": [
        [500, 8, 8, 499 * MS, 508 * MS],          # 8 frames at the first event (t = 500 ms)
        [1500, 3, 3, 1499 * MS, 1700 * MS]]}      # 3 at the second, then the generator stalled
    runs = stream_runs(rx, tx, fps)
    assert [r.frames for r in runs] == [8, 3, 5]  # the last 5 never arrived
    events = [LinkEvent("A down", 11, False, 500 * MS, 500 * MS, 502 * MS, 500 * MS + 10),
              LinkEvent("A up", 11, True, 1000 * MS, 1000 * MS, 1001 * MS),
              LinkEvent("B down", 12, False, 1500 * MS, 1500 * MS, 1501 * MS),
              LinkEvent("B up", 12, True, 2990 * MS, 2990 * MS, 2991 * MS)]
    before, per = per_event(lost_runs(runs), [e.issued_ns for e in events],
                            [e.at_ns for e in events], 50 * MS, offered_fps=2 * fps)
    assert before == 0
    assert [e.lost for e in per] == [8, 0, 3, 5]
    assert per[0].outage_ns == pytest.approx(4 * MS)  # 8 frames at 2000 frames/s
    # whole again at the frame after the loss: 508 ms, from the kernel's 500 ms + 10 ns
    assert per[0].recovery_ns == pytest.approx(8 * MS - 10)
    assert per[1].recovery_ns == 0.0
    # 3 lost after 1499 ms: whole at 1503 ms on schedule, not at 1700 ms (a stall)
    assert per[2].recovery_ns == pytest.approx(2 * MS)
    assert events[1].at_ns == 1001 * MS  # no kernel time: the command's return


def test_a_stream_nothing_of_which_arrived_is_lost_whole_and_early_loss_is_before():
    tx = {"tx_packets": 10, "first_tx_ns": 5 * MS, "last_tx_ns": 14 * MS}
    (run,) = stream_runs(None, tx, 1000.0)
    assert (run.frames, run.before_ns) == (10, 5 * MS)
    ev = [LinkEvent("A down", 11, False, 0, 100 * MS, 101 * MS)]
    before, per = per_event(lost_runs([run]), [e.issued_ns for e in ev], [e.at_ns for e in ev],
                            50 * MS, 1000.0)
    assert before == 10 and per[0].lost == 0
    assert stream_runs({"max_seq": 3}, {"tx_packets": 0}, 1000.0) == []


def test_one_loss_arithmetic_for_both_modes():
    """Three frames lost 10 ns apart after an event at 80 ns: as the engine
    records them (each frame's send time) and as the analyzer reports them
    (one run after the frame received at 90 ns), the same loss, outage and
    recovery (whole again at 130 ns)."""
    frames = LostRuns.of_frames(np.array([100, 110, 120]), 10.0)
    run = lost_runs([LossRun(3, 90, 200, slot_ns=10.0)])
    for lost in (frames, run):
        before, (ev,) = per_event(lost, [80], [80], 0, offered_fps=1e9)
        assert before == 0
        assert (ev.lost, ev.outage_ns, ev.recovery_ns) == (3, 3.0, 50.0)
    # an event issued later than the frames (less the guard) does not own them
    assert per_event(frames, [105], [105], 0, 1e9)[0] == 1
    assert per_event(frames, [105], [105], 5, 1e9)[0] == 0


@pytest.mark.parametrize("params", [LagFailoverParams, MininetLagParams])
def test_both_modes_check_the_trunk_alike_and_plan_the_same_cases(params):
    with pytest.raises(ParamError, match="--members: ports repeat"):
        params(members=(11, 11)).check()
    with pytest.raises(ParamError, match="--iterations"):
        params(iterations=0).check()
    p = params(clients=(2,), policies=("l2-l4",), failover=("controller",)).check()
    assert [c.case_id for c in plan(p)] == [
        "lag-failover/throughput/l2-l4/2clients", "lag-failover/failover/l2-l4/2clients/controller"]
    assert p.events()[0][:3] == ("A down", 11, False) and p.failover_ns == 5 * p.interval_ns


def _newlink(index: int, flags: int, operstate=None) -> bytes:
    attrs = b""
    if operstate is not None:
        attrs = struct.pack("=HHB3x", 5, IFLA_OPERSTATE, operstate)
    body = struct.pack("=BxHiII", 0, 1, index, flags, 0) + attrs
    return struct.pack("=IHHII", 16 + len(body), RTM_NEWLINK, 0, 0, 0) + body


def test_link_notifications_are_read_for_their_operational_state():
    data = (_newlink(7, 0x1 | 0x10000, IF_OPER_UP) + _newlink(8, 0x1, 2)
            + _newlink(9, 0x1 | 0x10000))
    assert parse(data) == [(7, True), (8, False), (9, True)]
    assert parse(b"\x00" * 3) == []


def test_a_trunk_host_is_bonded_over_its_dut_ports():
    t = tester_mininet.tester_topology([1, 2, 11], "p4scope", trunks={11: (11, 12)})
    (h11,) = [h for h in t.hosts if h.name == "h11"]
    assert h11.bond == "l34"
    ends = sorted((l.a.node, l.b.port) for l in t.links)
    assert ends == [("h1", 1), ("h11", 11), ("h11", 12), ("h2", 2)]
    for bad in ({11: (12, 13)}, {11: (11, 2)}, {11: (11,)}, {5: (5, 6)}):
        with pytest.raises(ValueError, match="trunk of port"):
            tester_mininet.tester_topology([1, 2, 11], "p4scope", trunks=bad)
