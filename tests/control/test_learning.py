"""L2 bridging on the reference DUT with the learning app: digests in,
entries out, flooding through multicast groups, station moves, ageing."""

from __future__ import annotations

import time

from tests.control.ctl_helpers import BCAST, H1, H2, H3, frame, ports_of

from p4scope.control import packets
from p4scope.control.values import to_int
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.learning import L2Learning


def setup_bridge(sw, ports=(1, 2, 3, 4), ageing_s=300.0):
    Flooding(sw).domain(list(ports))
    return L2Learning(sw, ageing_s=ageing_s).start()


def test_unknown_source_is_learnt_and_next_frame_is_forwarded(switch, dut):
    learn = setup_bridge(dut)
    # H1 -> H2: both unknown: flooded to every other port, digest for H1
    assert ports_of(switch.send(1, frame(H1, H2))) == [2, 3, 4]
    assert learn.handle(timeout=2) == 1
    assert learn.macs == {to_int(H1): 1}
    # H2 -> H1: H1 known now: forwarded to port 1 only; H2 learnt on 2
    assert ports_of(switch.send(2, frame(H2, H1))) == [1]
    assert learn.handle(timeout=2) == 1
    # H1 -> H2 is now unicast
    out = switch.send(1, frame(H1, H2))
    assert ports_of(out) == [2]
    assert out[0][1] == frame(H1, H2)
    # no more digests: both sources are known on their ports
    assert learn.handle(timeout=0.2) == 0
    assert learn.stats.learnt == 2


def test_broadcast_is_flooded_except_to_its_ingress_port(switch, dut):
    setup_bridge(dut, ports=(1, 2, 3))
    assert ports_of(switch.send(2, packets.l2_frame(BCAST, H2))) == [1, 3]


def test_flood_groups_per_port(switch, dut):
    fl = Flooding(dut)
    fl.domain([1, 2, 3, 4])
    fl.domain([5, 6, 7], group=2, ports_use_it=True)
    assert ports_of(switch.send(5, packets.l2_frame(BCAST, H1))) == [6, 7]
    assert ports_of(switch.send(1, packets.l2_frame(BCAST, H2))) == [2, 3, 4]


def test_no_flood_group_drops_and_counts(switch, dut):
    fl = Flooding(dut)
    fl.defaults(flood_group=0)
    assert switch.send(1, frame(H1, H2)) == []
    # reason 9 (DROP_NO_FLOOD) << 9 | port 1
    assert dut.counter("drop_counter")[(9 << 9) | 1].packets == 1


def test_station_move_relearns(switch, dut):
    learn = setup_bridge(dut)
    switch.send(1, frame(H1, H2))
    learn.handle(timeout=2)
    switch.send(3, frame(H1, H2))          # H1 moved to port 3
    assert learn.handle(timeout=2) == 1
    assert learn.stats.moved == 1
    assert ports_of(switch.send(2, frame(H2, H1))) == [3]


def test_ageing_removes_idle_entries(switch, dut):
    learn = setup_bridge(dut, ageing_s=0.2)
    switch.send(1, frame(H1, H2))
    learn.handle(timeout=2)
    assert ports_of(switch.send(2, frame(H2, H1))) == [1]
    learn.handle(timeout=2)                # H2 learnt
    deadline = time.monotonic() + 5
    while learn.stats.aged < 2 and time.monotonic() < deadline:
        learn.handle(timeout=0.1)
    assert learn.stats.aged == 2 and learn.macs == {}
    assert len(dut.table("smac")) == 0 and len(dut.table("dmac")) == 0
    # H1 is unknown again: flooded
    assert ports_of(switch.send(3, frame(H3, H1))) == [1, 2, 4]


def test_lag_member_learning_forwards_to_the_lag(switch, dut):
    from p4scope.control.apps.lag import Lags

    lags = Lags(dut)
    lags.create(1, [3, 4])
    Flooding(dut).domain([1, 2, 3])
    learn = L2Learning(dut, lag_of_port=lags.lag_of_port()).start()
    switch.send(3, frame(H3, H1))
    learn.handle(timeout=2)
    out = switch.send(1, frame(H1, H3))
    assert len(out) == 1 and out[0][0] in (3, 4)
