"""Trials on the virtual testbed: counters exact, latency as the clock
says, an overload shows as loss, a search finds a limit the traffic
manager sets."""

from __future__ import annotations

import pytest

from p4scope.experiments.linerate import frame_time_ns, frames_per_second
from p4scope.experiments.tester import search
from p4scope.experiments.tester.streams import Rate, Stream, StreamError, pair
from p4scope.experiments.tester.virtual import VirtualTestbed, trial_frames


@pytest.mark.parametrize("size", [64, 1518])
def test_port_pair_at_line_rate_counts_exactly(virtual_switch, size):
    tb = VirtualTestbed(virtual_switch)
    t = tb.trial(pair(1, 2, size, 100.0), 100_000, records=True)
    s = t.streams
    # 100 us at line rate: floor(100 us x frames/s) + the frame started at 0
    expected = int(100e-6 * frames_per_second(size)) + 1
    assert list(s["tx_frames"]) == [expected, expected]
    assert list(s["rx_frames"]) == [expected, expected]
    assert list(s["rx_bytes"]) == [expected * size] * 2
    assert t.loss_frames == 0 and t.queued_at_end == 0 and t.passed(0.0)
    assert (s["duplicated"] == 0).all() and (s["reordered"] == 0).all()
    # uncongested store-and-forward: FIFO = the frame's time in (preamble
    # included), to the engine's 1 ns clock; LIFO = FIFO less the frame
    t_in = (size + 8) * 8 / 100
    assert s["lat_min_ns"].iloc[0] == pytest.approx(t_in, abs=1.0)
    assert s["lat_p99_ns"].iloc[0] == s["lat_max_ns"].iloc[0]
    assert s["lifo_avg_ns"].iloc[0] == pytest.approx(s["lat_avg_ns"].iloc[0] - size * 8 / 100)
    assert t.histogram.groupby("stream")["frames"].sum().tolist() == [expected, expected]


def test_overload_is_loss_not_hidden_by_the_buffer(virtual_switch):
    """Two ports into one at 60 % each: 20 % of what is sent cannot leave;
    whatever the buffer holds at the end counts as not forwarded."""
    tb = VirtualTestbed(virtual_switch)
    streams = [Stream(1, 3, Rate.pct(60), 512), Stream(2, 3, Rate.pct(60), 512)]
    t = tb.trial(streams, 200_000)
    assert t.loss_pct == pytest.approx(100 * (1 - 100 / 120), abs=0.5)
    assert t.queued_at_end > 0
    assert not t.passed(0.0)


def test_search_finds_a_rate_limit_set_by_the_traffic_manager(virtual_switch):
    tb = VirtualTestbed(virtual_switch)
    tb.setup = lambda engine: engine.set_port_rate(2, 37_000_000_000)
    size = 256
    duration = int(trial_frames(0.1) / frames_per_second(size) * 1e9)
    r = search.throughput(lambda pct: tb.trial([Stream(1, 2, Rate.pct(pct), size)], duration),
                          0.0, 0.1)
    assert r.value == pytest.approx(37.0, abs=0.1 + 1e-9)


def test_streams_are_checked():
    with pytest.raises(StreamError, match="frame size 40"):
        Stream(1, 2, Rate.pct(10), 40)
    with pytest.raises(StreamError, match="above its line rate"):
        Rate.pct(120)
    with pytest.raises(StreamError, match="positive and finite"):
        Rate(float("nan"), "bps")


def test_full_mesh_streams_take_turns_on_each_port(virtual_switch):
    """Four ports in a full mesh at line rate: each port's three streams
    interleave on its wire, every egress port gets exactly line rate, and
    the switch forwards everything."""
    from p4scope.experiments.tester.streams import full_mesh

    ports = [1, 2, 3, 4]
    streams = full_mesh(ports, 256, 100.0)
    assert len(streams) == 12
    starts = sorted(s.start_ns for s in streams if s.tx_port == 1)
    assert starts == [0, round(frame_time_ns(256)), round(2 * frame_time_ns(256))]
    # port i sends to i+1, i+2, i+3 in turn: each egress port's sources
    # arrive in different turns, one frame per frame time
    assert [(s.tx_port, s.rx_port) for s in streams if s.start_ns == 0] == [(1, 2), (2, 3),
                                                                            (3, 4), (4, 1)]
    t = VirtualTestbed(virtual_switch).trial(streams, 50_000)
    assert t.loss_frames == 0 and t.queued_at_end == 0
    per_port = t.streams.groupby("tx_port")["tx_frames"].sum()
    assert (abs(per_port - 50e-6 * frames_per_second(256)) <= 3).all()


def test_routed_port_pair_forwards_at_line_rate(virtual_switch):
    """Layer 3: frames sent to the router MAC, routed on their IPv4
    destination, all reach the right port."""
    tb = VirtualTestbed(virtual_switch, routed=True)
    t = tb.trial(pair(1, 2, 128, 100.0), 20_000)
    assert t.tx_frames > 0 and t.loss_frames == 0 and t.passed(0.0)
    assert (t.streams["rx_frames"] == t.streams["tx_frames"]).all()
