"""Decoding INT-MD: the metadata stack of a packet (every instruction bit,
all-ones as "not available", lengths that do not add up), a sink's
Telemetry Report v2.0 with the stack in its IPv4 inner packet, and the
collector joining the stack with the sink's own postcard into per-hop
records."""

from __future__ import annotations

import struct

import pytest

from p4scope.control import packets
from p4scope.control.apps.collector import Collector
from p4scope.control.int_md_headers import (INS_BUFFER, INS_CHECKSUM_COMPLEMENT,
                                            INS_EGRESS_TS, INS_HOP_LATENCY, INS_INGRESS_TS,
                                            INS_L1_PORTS, INS_L2_PORTS, INS_NODE_ID, INS_QUEUE,
                                            INS_TX_UTIL, IntHop, IntMdError, decode_hop,
                                            encode_hop, instruction_words, parse_int_md,
                                            with_int_md)
from p4scope.control.reports import (DOMAIN_QUEUE, EVENT_POSTCARD, ReportError, parse_report)

ALL = (INS_NODE_ID | INS_L1_PORTS | INS_HOP_LATENCY | INS_QUEUE | INS_INGRESS_TS
       | INS_EGRESS_TS | INS_L2_PORTS | INS_TX_UTIL | INS_BUFFER)
HOP = IntHop(node_id=9, ingress_port=1, egress_port=2, hop_latency_ns=345, queue_id=3,
             queue_occupancy=0xABCDE, ingress_ts_ns=1 << 40, egress_ts_ns=(1 << 40) + 345,
             l2_ingress_port=1, l2_egress_port=0x10002, tx_utilization_mbps=99_000,
             buffer_id=0, buffer_occupancy=123_456)


def flow(sport=1000, ident=0) -> bytes:
    udp = struct.pack("!HHHH", sport, 5000, 8 + 30, 0) + bytes(30)
    return (packets.ethernet("00:00:00:00:00:02", "00:00:00:00:00:01", packets.ETH_IPV4)
            + packets.ipv4("10.0.1.1", "10.0.2.2", packets.PROTO_UDP, len(udp), ident=ident) + udp)


def test_instruction_words_count_eight_byte_items_twice():
    assert instruction_words(ALL) == 12
    assert instruction_words(INS_NODE_ID | INS_INGRESS_TS | INS_CHECKSUM_COMPLEMENT) == 4
    assert instruction_words(0x0040) == 1            # a reserved bit: 4 bytes


def test_a_hop_round_trips_with_all_ones_as_not_available():
    assert decode_hop(encode_hop(HOP, ALL), ALL) == HOP
    partial = IntHop(node_id=4, queue_id=None, queue_occupancy=None)
    raw = encode_hop(partial, INS_NODE_ID | INS_QUEUE | INS_EGRESS_TS)
    assert raw == struct.pack("!I", 4) + b"\xff" * 12
    assert decode_hop(raw, INS_NODE_ID | INS_QUEUE | INS_EGRESS_TS) == IntHop(node_id=4)
    # the checksum complement (the sink recomputes the L4 checksum) is skipped
    ins = INS_NODE_ID | INS_CHECKSUM_COMPLEMENT
    assert decode_hop(struct.pack("!II", 4, 0xFFFFFFFF), ins) == IntHop(node_id=4)


def test_the_stack_reads_in_path_order():
    hops = [IntHop(node_id=n, hop_latency_ns=10 * n) for n in (1, 2, 3)]
    ins = INS_NODE_ID | INS_HOP_LATENCY
    f = with_int_md(flow(ident=77), ins, 5, hops)
    st = parse_int_md(f[14:])
    assert st.hops == hops and (st.hop_ml, st.remaining_hops) == (2, 5)
    # on the wire the newest hop is on top
    assert f[14 + 20 + 8 + 16:14 + 20 + 8 + 20] == struct.pack("!I", 3)
    assert st.flow == (0x0A000101, 0x0A000202, 17, 1000, 5000) and st.ip_id == 77
    # the packet cut right after the stack (as a report carries it) reads the same
    assert parse_int_md(f[14:14 + 20 + 8 + 16 + 24]) == st


@pytest.mark.parametrize("packet", [flow()[14:], packets.tcp_frame()[14:], b"\x45" + bytes(10)])
def test_no_int_md_is_none(packet):
    assert parse_int_md(packet) is None


@pytest.mark.parametrize("frame,what", [
    (with_int_md(flow(), INS_NODE_ID, 5, stack=bytes(12), hop_ml=2), "whole hops"),
    (with_int_md(flow(), INS_NODE_ID, 5, [HOP], shim_len=40), "shim length"),
    (with_int_md(flow(), INS_NODE_ID, 5, [HOP])[:14 + 20 + 8 + 10], "no room"),
])
def test_int_md_whose_lengths_do_not_add_up_is_an_error(frame, what):
    with pytest.raises(IntMdError, match=what):
        parse_int_md(frame[14:])


# ----- reports ----------------------------------------------------------------------

def report(node, seq, ingress_ts, inner, *, in_type, md, domain=0, ds=b"", tracked=True):
    """A Telemetry Report v2.0 UDP payload, RepMdBits 0x7C00."""
    md_words = (len(md) + len(ds)) // 4
    inner = inner[:len(inner) & ~3]
    body = struct.pack("!II", (2 << 28) | seq, node)
    body += struct.pack("!BBBB", (1 << 4) | in_type, 2 + md_words + len(inner) // 4, md_words,
                        tracked << 5)
    body += struct.pack("!HHHH", 0x7C00, domain, 0xFFF0 if ds else 0, 0)
    return body + md + ds + inner


def baseline(ingress_port, egress_port, ingress_ts, latency=0xFFFFFFFF, queue=0xFFFFFFFF,
             egress_ts=0xFFFFFFFFFFFFFFFF):
    return struct.pack("!HHIIQQ", ingress_port, egress_port, latency, queue, ingress_ts,
                       egress_ts)


def stack_report(seq, ingress_ts, packet, node=5):
    f = with_int_md(packet, ALL, 6, [HOP])
    inner = f[14:14 + 20 + 8 + 16 + 48]
    return report(node, seq, ingress_ts, inner, in_type=4, md=baseline(1, 2, ingress_ts))


def postcard(seq, ingress_ts, packet, latency=700, node=5):
    ds = struct.pack("!BBH11I", EVENT_POSTCARD, 0, len(packet), *([0] * 11))
    md = baseline(1, 2, ingress_ts, latency, (0 << 24) | 4, ingress_ts + latency)
    return report(node, seq, ingress_ts, packet[:64], in_type=2, md=md, domain=DOMAIN_QUEUE,
                  ds=ds)


def test_a_sink_report_carries_the_stack_in_its_ipv4_inner_packet():
    r = parse_report(stack_report(0, 5000, flow()))
    assert r.int_md is not None and r.int_md.hops == [HOP]
    assert r.md.ingress_ts_ns == 5000 and r.queue is None


def test_a_sink_report_with_a_broken_stack_is_an_error():
    f = with_int_md(flow(), ALL, 6, [HOP])
    inner = f[14:14 + 20 + 8 + 16 + 40]              # cut inside the stack
    data = report(5, 0, 0, inner, in_type=4, md=baseline(1, 2, 0))
    with pytest.raises(ReportError, match="INT-MD"):
        parse_report(data)
    c = Collector()
    assert c.feed(data) is None and len(c.errors) == 1 and c.int_md_paths == []


def test_the_collector_joins_the_stack_and_the_sinks_postcard():
    c = Collector()
    a, b = flow(sport=1), flow(sport=2)
    for data in (stack_report(0, 5000, a), stack_report(1, 5100, b),
                 postcard(2, 5000, a, latency=700), postcard(3, 5100, b, latency=900),
                 postcard(4, 6000, flow(sport=3))):   # a postcard of a packet without INT-MD
        assert c.feed(data) is not None
    assert c.errors == [] and c.lost == {}
    first, second = c.int_md_paths
    assert [h.node_id for h in first.hops] == [9, 5]
    assert first.hops[0] == HOP
    sink = first.hops[-1]
    assert (sink.hop_latency_ns, sink.queue_occupancy, sink.ingress_port) == (700, 4, 1)
    assert second.hops[-1].hop_latency_ns == 900 and second.flow[3] == 2
    rows = c.int_md_hops()
    assert [(r["path"], r["hop"], r["node_id"], r["sink_hop"]) for r in rows] == [
        (0, 1, 9, False), (0, 2, 5, True), (1, 1, 9, False), (1, 2, 5, True)]
    t = c.int_md_table()
    assert list(t["hop_latency_ns"]) == [345, 700, 345, 900]


def test_alike_packets_join_in_arrival_order():
    c = Collector()
    p = flow()
    for data in (stack_report(0, 5000, p), stack_report(1, 5000, p),
                 postcard(2, 5000, p, latency=1), postcard(3, 5000, p, latency=2)):
        c.feed(data)
    assert [path.sink.hop_latency_ns for path in c.int_md_paths] == [1, 2]


def test_a_stack_whose_postcard_never_came_has_no_sink_hop():
    c = Collector()
    c.feed(stack_report(0, 5000, flow()))
    c.feed(postcard(1, 5000, flow(), node=6))          # another node's postcard
    (path,) = c.int_md_paths
    assert path.sink is None and path.hops == [HOP]
    # a long watch takes the paths and the collector forgets them
    assert c.take_int_md_paths() == [path] and c.int_md_paths == []
    c.feed(postcard(2, 5000, flow()))                  # too late to join
    assert path.sink is None and c.take_int_md_paths() == []
