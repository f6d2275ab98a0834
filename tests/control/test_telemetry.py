"""The telemetry instrument of the reference DUT, configured by the
telemetry app and read by the collector: per-(egress, ingress) counters,
burst reports exactly when the threshold is crossed (start) and when the
queue drains below the end threshold (end), the INT Telemetry Report v2.0
format, postcards, interval maxima, histograms, reports as packet-ins, and
the in-path tap.

The switch enqueues a whole batch before the port sends any of it (no line
rate), so a batch of n frames leaves n-1, n-2, ..., 0 frames behind as its
frames leave one by one: the depths at dequeue the instrument measures."""

from __future__ import annotations

import time

import pytest
from tests.control.ctl_helpers import H1, H2, H3

from p4scope.control import packets
from p4scope.control.apps.collector import Collector
from p4scope.control.apps.telemetry import Tap, Telemetry, pair_index
from p4scope.control.reports import (DOMAIN_QUEUE, EVENT_BURST_END, EVENT_BURST_PKT,
                                     EVENT_BURST_START, EVENT_INTERVAL, EVENT_POSTCARD, IN_TYPE_ETHERNET,
                                     parse_report_frame)

COLLECTOR_PORT = 9
UDP_PORT = 32766


def frame(src, size=60, sport=1000):
    return packets.udp_frame(dst_mac=H2, src_mac=src, src_ip="10.0.1.1", dst_ip="10.0.2.2",
                       sport=sport, size=size)


@pytest.fixture
def tel(dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    t = Telemetry(dut)
    t.collector(COLLECTOR_PORT, switch_ip="10.255.0.1", collector_ip="10.255.0.100",
                collector_mac="02:00:00:00:00:64", udp_port=UDP_PORT, node_id=7, snaplen=64)
    return t


def reports(outs):
    return [parse_report_frame(d, UDP_PORT) for p, d in outs if p == COLLECTOR_PORT]


def data(outs, port=2):
    return [d for p, d in outs if p == port]


def test_pair_counters_add_up_to_what_was_sent(switch, dut, tel):
    sizes = {1: 100, 3: 200}
    batch = [(1, frame(H1, 100))] * 7 + [(3, frame(H3, 200))] * 5
    switch.send_many(batch)
    pairs = tel.pairs([2], [1, 3])
    offered = tel.pairs([2], [1, 3], counter="tel_offered")
    assert pairs[(2, 1)].packets == 7 and pairs[(2, 1)].bytes == 7 * sizes[1]
    assert pairs[(2, 3)].packets == 5 and pairs[(2, 3)].bytes == 5 * sizes[3]
    assert offered == pairs
    eg = dut.counter("egress_port_counter")[2]
    assert eg.packets == sum(v.packets for v in pairs.values())
    assert eg.bytes == sum(v.bytes for v in pairs.values())


def test_offered_minus_delivered_is_what_the_queue_dropped(switch, dut, tel):
    switch.engine.set_queue_depth(10, 2)
    batch = []
    for i in range(30):
        batch.append((1 if i % 3 else 3, frame(H1 if i % 3 else H3)))
    outs = switch.send_many(batch)
    delivered = tel.pairs([2], [1, 3])
    offered = tel.pairs([2], [1, 3], counter="tel_offered")
    assert sum(v.packets for v in offered.values()) == 30
    assert sum(v.packets for v in delivered.values()) == len(data(outs)) == 10
    for k in offered:
        assert offered[k].packets >= delivered[k].packets


def test_burst_reported_when_and_only_when_threshold_is_crossed(switch, dut, tel):
    tel.port(2, burst_threshold=8)
    col = Collector(UDP_PORT)

    # 8 frames at once leave 7..0 behind, never 8: no report
    outs = switch.send(1, *[frame(H1)] * 8)
    assert len(data(outs)) == 8 and reports(outs) == []
    assert tel.bursts(2) == 0

    # 12 frames from two ports leave 11..0 behind: the frames leaving 11..8
    # behind build the burst, the one leaving 7 ends it, then nothing
    batch = [(1 if i % 2 else 3, frame(H1 if i % 2 else H3, sport=i)) for i in range(12)]
    outs = switch.send_many(batch)
    reps = reports(outs)
    col.feed_frames(d for p, d in outs if p == COLLECTOR_PORT)
    assert [r.queue.deq_qdepth for r in reps] == [11, 10, 9, 8, 7]
    assert [r.queue.enq_qdepth for r in reps] == [0, 1, 2, 3, 4]
    assert reps[0].queue.events == EVENT_BURST_START | EVENT_BURST_PKT
    assert all(r.queue.events == EVENT_BURST_PKT for r in reps[1:4])
    assert reps[4].queue.events == EVENT_BURST_END
    assert all(r.congested and not r.tracked for r in reps)
    assert [r.queue.burst_pkts for r in reps] == [1, 2, 3, 4, 4]
    assert {r.queue.burst_id for r in reps} == {1}
    assert tel.bursts(2) == 1
    # the end report is about the fifth frame to leave, the rest say nothing
    sent = [f for _, f in batch]
    assert [r.inner for r in reps] == [f[:60] for f in sent[:5]]

    (b,) = col.bursts()
    assert (b.port, b.burst_id, b.packets, b.complete) == (2, 1, 4, True)
    assert b.peak_pkts == 12  # held just before the first frame left
    assert b.start_ns <= b.end_ns
    assert b.by_ingress == {1: 2, 3: 2} and b.bytes == 4 * 60
    assert len(b.flows) == 4

    # the burst has ended: a frame through the empty queue says nothing
    assert reports(switch.send(1, frame(H1))) == []
    assert tel.bursts(2) == 1


def test_burst_end_waits_for_the_end_threshold(switch, dut, tel):
    """Hysteresis: between the end threshold and the threshold a burst goes
    on; it ends at the first dequeue that leaves less than the end threshold
    behind, and only a dequeue leaving the threshold behind starts another."""
    tel.port(2, burst_threshold=6, burst_end=3)
    reps = reports(switch.send(1, *[frame(H1)] * 8))      # leave 7..0 behind
    assert [(r.queue.deq_qdepth, r.queue.events) for r in reps] == [
        (7, EVENT_BURST_START | EVENT_BURST_PKT), (6, EVENT_BURST_PKT), (5, EVENT_BURST_PKT),
        (4, EVENT_BURST_PKT), (3, EVENT_BURST_PKT), (2, EVENT_BURST_END)]
    # 6 frames leave 5..0: above the end threshold but never the threshold
    assert reports(switch.send(1, *[frame(H1)] * 6)) == []
    reps = reports(switch.send(1, *[frame(H1)] * 7))      # leave 6..0: a second burst
    assert [r.queue.events for r in reps] == [EVENT_BURST_START | EVENT_BURST_PKT] + \
        [EVENT_BURST_PKT] * 3 + [EVENT_BURST_END]
    assert {r.queue.burst_id for r in reps} == {2} and tel.bursts(2) == 2


def test_burst_start_and_end_only(switch, dut, tel):
    tel.port(2, burst_threshold=4, burst_end=2, report_burst_packets=False)
    outs = switch.send(1, *[frame(H1)] * 10)             # leave 9..0 behind
    reps = reports(outs)
    assert [(r.queue.events, r.queue.deq_qdepth) for r in reps] == [
        (EVENT_BURST_START, 9), (EVENT_BURST_END, 1)]
    assert reps[1].queue.burst_pkts == 8                 # left 9..2 behind
    assert reports(switch.send(1, frame(H1))) == []


def test_int_report_format(switch, dut, tel):
    tel.port(2, burst_threshold=1)
    f1 = frame(H1, size=60, sport=1)
    f2 = frame(H1, size=300, sport=2)
    outs = switch.send(1, f1, f2)
    # f1 leaves f2 behind (the burst starts), f2 leaves nothing (it ends)
    _, raw = [d for p, d in outs if p == COLLECTOR_PORT]
    r = parse_report_frame(raw, UDP_PORT)
    assert r.queue.events == EVENT_BURST_END
    # outer headers
    eth = packets.parse_frame(raw)
    assert eth.dst_mac == 0x020000000064 and eth.ip_checksum_ok
    assert eth.ip_src == 0x0AFF0001 and eth.ip_dst == 0x0AFF0064 and eth.dport == UDP_PORT
    # group, individual and main headers
    assert (r.node_id, r.hw_id, r.rep_type, r.in_type) == (7, 0, 1, IN_TYPE_ETHERNET)
    assert r.md_length == 7 + 12 and r.rep_md_bits == 0x7C00
    assert r.domain_id == DOMAIN_QUEUE and r.ds_md_bits == 0xFFF0
    # inner packet: the reported frame's first 64 bytes
    assert r.inner == f2[:64]
    assert r.report_length == (8 + r.md_length * 4 + 64) // 4
    assert len(raw) == 14 + 20 + 8 + 12 + r.report_length * 4
    # baseline metadata
    assert (r.md.ingress_port, r.md.egress_port, r.md.queue_occupancy) == (1, 2, 1)
    assert r.md.egress_ts_ns >= r.md.ingress_ts_ns
    assert r.md.hop_latency_ns == r.md.egress_ts_ns - r.md.ingress_ts_ns
    assert r.queue.enq_qdepth == 1 and r.queue.deq_qdepth == 0
    assert r.queue.frame_bytes == 300
    # sequence numbers count reports
    r2 = reports(switch.send(1, f1, f2))[0]
    assert r2.seq == r.seq + 1


def test_short_packet_inner_is_cut_to_whole_words(switch, dut, tel):
    tel.port(2, burst_threshold=1)
    f = frame(H1, size=62)
    reps = reports(switch.send(1, f, f))
    assert [r.inner for r in reps] == [f[:60]] * 2


def test_postcards_for_watched_flows(switch, dut, tel):
    tel.watch(dst="10.0.2.0/24", dport=(80, 80))
    outs = switch.send(1, frame(H1), packets.udp_frame(dst_mac=H2, src_mac=H1, dport=81))
    reps = reports(outs)
    assert len(reps) == 1
    assert reps[0].tracked and not reps[0].congested
    assert reps[0].queue.events == EVENT_POSTCARD
    assert packets.parse_frame(reps[0].inner).dport == 80


def test_interval_maxima_are_reported(switch, dut, tel):
    tel.port(2, interval_log2_us=0, report_intervals=True)
    switch.send(1, *[frame(H1)] * 6)
    time.sleep(0.002)
    reps = reports(switch.send(1, frame(H1)))
    assert len(reps) == 1 and reps[0].queue.events == EVENT_INTERVAL
    # the queue held all 6 just before the first left (depth left + itself)
    assert reps[0].queue.interval_max_pkts == 6
    assert reps[0].queue.interval_max_bytes == 6 * 60


def test_occupancy_histogram(switch, dut, tel):
    tel.port(2, histogram_shift=2)
    switch.send(1, *[frame(H1, size=100)] * 12)
    hist = tel.histogram(2)
    assert [(b, p) for b, p, _ in hist if p] == [(0, 4), (1, 4), (2, 4)]
    assert hist[0][2] == 400


def test_reports_reach_the_controller_as_packet_ins(switch, dut, tel):
    dut.clone_session(500, 255)
    tel.port(2, burst_threshold=2)
    switch.send(1, *[frame(H1)] * 4)
    col = Collector(UDP_PORT)
    for pin in dut.packet_ins(timeout=2):
        col.feed_packet_in(pin)
    deadline = time.monotonic() + 2
    while len(col.reports) < 3 and time.monotonic() < deadline:
        for pin in dut.packet_ins(timeout=0.2):
            col.feed_packet_in(pin)
    # leaving 3 and 2 behind: the burst; leaving 1: its end
    assert [s.deq_qdepth for s in col.samples] == [3, 2, 1]
    assert col.bursts()[0].complete
    assert col.errors == [] and col.lost == {}


def test_no_reports_without_a_collector(switch, dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    t = Telemetry(dut)
    t.port(2, burst_threshold=1)
    dut.clone_session(500, COLLECTOR_PORT)
    outs = switch.send(1, *[frame(H1)] * 4)
    assert [p for p, _ in outs] == [2, 2, 2, 2]


def test_collector_tables(switch, dut, tel):
    pd = pytest.importorskip("pandas")
    tel.port(2, burst_threshold=2)
    col = Collector(UDP_PORT)
    col.feed_frames(d for p, d in switch.send(1, *[frame(H1)] * 5) if p == COLLECTOR_PORT)
    col.poll_counters(dut, "tel_delivered", [pair_index(2, 1)])
    t = col.tables()
    assert isinstance(t["queue_samples"], pd.DataFrame)
    assert list(t["queue_samples"]["deq_qdepth"]) == [4, 3, 2, 1]
    assert list(t["queue_samples"]["held_pkts"]) == [5, 4, 3, 2]
    assert t["counters"]["packets"].tolist() == [5]
    assert t["bursts"]["packets"].tolist() == [3]
    lean = col.tables(flows=False)["queue_samples"]
    pd.testing.assert_frame_equal(lean, t["queue_samples"].drop(columns="flow"))


# ----- the in-path tap ---------------------------------------------------------------

def test_tap_counts_both_directions_and_samples_occupancy(switch, tap_sw):
    tap = Tap(tap_sw)
    tap.in_path(tester_tx=1, dut_in=2, dut_out=3, tester_rx=4)
    Telemetry(tap_sw).collector(COLLECTOR_PORT, switch_ip="10.255.0.2",
                                collector_ip="10.255.0.100", udp_port=UDP_PORT, node_id=9)
    tap.sampling(every_frame=True)
    col = Collector(UDP_PORT)

    outs = switch.send(1, *[frame(H1, 100)] * 5)          # 5 frames into the DUT
    assert [p for p, _ in outs if p != COLLECTOR_PORT] == [2] * 5
    outs += switch.send(3, *[frame(H3, 100)] * 2)         # 2 came back out
    col.feed_frames(d for p, d in outs if p == COLLECTOR_PORT)
    assert [p for p, _ in outs if p not in (COLLECTOR_PORT, 2)] == [4, 4]

    to_dut, from_dut = tap.totals()
    assert (to_dut.packets, to_dut.bytes, from_dut.packets, from_dut.bytes) == (5, 500, 2, 200)
    occ = [o for _, o in col.occupancy()]
    assert occ == [100, 200, 300, 400, 500, 400, 300]
    last = col.tap[-1]
    assert (last.direction, last.pkts_to_dut, last.pkts_from_dut) == (1, 5, 2)
    assert all(r.node_id == 9 and r.tap is not None for r in col.reports)


def test_tap_interval_sampling(switch, tap_sw):
    tap = Tap(tap_sw)
    tap.in_path(1, 2, 3, 4)
    Telemetry(tap_sw).collector(COLLECTOR_PORT, switch_ip="10.255.0.2",
                                collector_ip="10.255.0.100", udp_port=UDP_PORT)
    tap.sampling(every_frame=False, interval_log2_us=20)   # ~1 s intervals
    outs = switch.send(1, *[frame(H1)] * 5)
    assert len(reports(outs)) == 1                           # first frame of the interval
    assert len(reports(switch.send(3, frame(H3)))) == 1       # the other direction's first


def test_postcards_carry_depth_at_dequeue_and_time_in_queue(switch, dut, tel):
    switch.engine.set_queue_rate(2, 1000)          # 1 ms per packet on port 2
    tel.watch(dst="10.0.2.0/24")
    reps = reports(switch.send(1, *[frame(H1, sport=i) for i in range(4)]))
    q = [r.queue for r in reps]
    assert [x.enq_qdepth for x in q] == [0, 1, 2, 3]
    assert [x.deq_qdepth for x in q] == [3, 2, 1, 0]
    waits = [x.queue_time_ns for x in q]
    gaps = [b - a for a, b in zip(waits, waits[1:])]
    assert all(abs(g - 1_000_000) <= 2_000 for g in gaps), waits
    assert all(r.md.hop_latency_ns >= x.queue_time_ns for r, x in zip(reps, q))
