"""INT-MD v2.1 on the reference DUT (p4src/include/int_md.p4), configured by
the IntMd app: the source starts the header and adds its hop, a transit
pushes its hop on top, the sink strips INT-MD and reports the stack and
its own hop; malformed INT-MD (bad length, unknown version, hop count
exhausted, instructions a hop cannot follow, another shim type) is
forwarded without this hop's metadata, never dropped, and counted."""

from __future__ import annotations

import struct

import pytest
from tests.control.ctl_helpers import H1, H2

from p4scope.control import packets
from p4scope.control.apps.collector import Collector
from p4scope.control.apps.int_md import ALL_INSTRUCTIONS, IntMd
from p4scope.control.apps.telemetry import Telemetry
from p4scope.control.int_md_headers import (INS_HOP_LATENCY, INS_NODE_ID, INS_QUEUE, IntHop,
                                            parse_int_md, udp_checksum_ok, with_int_md,
                                            with_udp_checksum, without_int_md)
from p4scope.control.reports import IN_TYPE_IPV4, parse_report_frame

COLLECTOR_PORT = 9
UDP_PORT = 32766
NODE = 7
EARLIER = [IntHop(node_id=1, ingress_port=3, egress_port=4, hop_latency_ns=120, queue_id=0,
                  queue_occupancy=2, ingress_ts_ns=1000, egress_ts_ns=1120, l2_ingress_port=3,
                  l2_egress_port=4, tx_utilization_mbps=400, buffer_id=0, buffer_occupancy=512),
           IntHop(node_id=2, ingress_port=1, egress_port=2, hop_latency_ns=80, queue_id=1,
                  queue_occupancy=0, ingress_ts_ns=2000, egress_ts_ns=2080, l2_ingress_port=1,
                  l2_egress_port=0x10003, tx_utilization_mbps=0, buffer_id=0,
                  buffer_occupancy=0)]


def flow(size=100, dport=5000, checksum=False) -> bytes:
    f = packets.udp_frame(dst_mac=H2, src_mac=H1, src_ip="10.0.1.1", dst_ip="10.0.2.2", sport=1000,
                    dport=dport, size=size, payload=bytes(range(40)))
    return with_udp_checksum(f) if checksum else f


@pytest.fixture
def md(switch, dut):
    """Port 1 -> 2 bridged, reports to port 9, INT-MD on as node 7."""
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    Telemetry(dut).collector(COLLECTOR_PORT, switch_ip="10.255.0.1", collector_ip="10.255.0.100",
                             collector_mac="02:00:00:00:00:64", udp_port=UDP_PORT,
                             node_id=NODE, snaplen=64)
    m = IntMd(dut)
    m.node(NODE)
    return m


def split(outs):
    """(frames out of port 2, reports out of the collector port)."""
    assert all(p in (2, COLLECTOR_PORT) for p, _ in outs), outs
    return ([d for p, d in outs if p == 2],
            [parse_report_frame(d, UDP_PORT) for p, d in outs if p == COLLECTOR_PORT])


def test_source_starts_int_md_with_its_own_hop(switch, md):
    md.source(dst="10.0.2.0/24", dport=(5000, 5999), max_hops=5)
    f = flow(checksum=True)
    (out,), reports = split(switch.send(1, f))
    assert reports == []
    st = parse_int_md(out[14:])
    assert (st.version, st.hop_ml, st.remaining_hops, st.instructions) == (2, 12, 4,
                                                                           ALL_INSTRUCTIONS)
    assert not (st.discard or st.hops_exceeded or st.mtu_exceeded)
    assert st.original_dport == 5000 and st.flow[3:] == (1000, 5000)
    (hop,) = st.hops
    assert (hop.node_id, hop.ingress_port, hop.egress_port) == (NODE, 1, 2)
    assert (hop.l2_ingress_port, hop.l2_egress_port, hop.queue_occupancy) == (1, 2, 0)
    assert hop.hop_latency_ns == hop.egress_ts_ns - hop.ingress_ts_ns >= 0
    assert hop.buffer_id == 0 and hop.tx_utilization_mbps is not None
    # every byte as the spec lays it out: lengths, IPv4 and UDP checksums
    assert out == with_int_md(f, ALL_INSTRUCTIONS, 4, [hop])
    assert udp_checksum_ok(out)
    # a flow off the watchlist passes unchanged
    other = flow(dport=80)
    assert split(switch.send(1, other)) == ([other], [])


def test_transit_pushes_its_hop_on_top_of_the_stack(switch, md):
    f = with_int_md(flow(checksum=True), ALL_INSTRUCTIONS, 6, EARLIER)
    (out,), _ = split(switch.send(1, f))
    st = parse_int_md(out[14:])
    assert st.remaining_hops == 5 and len(st.hops) == 3
    assert st.hops[:2] == EARLIER
    mine = st.hops[2]
    assert (mine.node_id, mine.ingress_port, mine.egress_port) == (NODE, 1, 2)
    assert out == with_int_md(flow(checksum=True), ALL_INSTRUCTIONS, 5, EARLIER + [mine])
    assert udp_checksum_ok(out)
    assert md.malformed() == dict.fromkeys(md.malformed(), 0)


def test_transit_adds_only_what_the_bitmap_asks_for(switch, md):
    ins = INS_NODE_ID | INS_QUEUE | INS_HOP_LATENCY
    earlier = [IntHop(node_id=1, hop_latency_ns=5, queue_id=0, queue_occupancy=9)]
    f = with_int_md(flow(), ins, 3, earlier)
    (out,), _ = split(switch.send(1, f))
    st = parse_int_md(out[14:])
    assert st.hop_ml == 3 and [h.node_id for h in st.hops] == [1, NODE]
    assert st.hops[1].ingress_port is None and st.hops[1].queue_occupancy == 0
    assert len(out) == len(f) + 12


def test_sink_strips_int_md_and_reports_every_hop(switch, md):
    md.sink_port(2)
    original = flow(checksum=True)
    f = with_int_md(original, ALL_INSTRUCTIONS, 6, EARLIER)
    outs = switch.send(1, f)
    (out,), reports = split(outs)
    assert out == without_int_md(f) == original            # port, lengths, checksums back
    stack_report, postcard = sorted(reports, key=lambda r: r.seq)
    assert (stack_report.rep_type, stack_report.in_type, stack_report.node_id) == (
        1, IN_TYPE_IPV4, NODE)
    assert stack_report.tracked and not stack_report.intermediate
    assert stack_report.inner == f[14:14 + 20 + 8 + 4 + 12 + 2 * 12 * 4]  # IPv4 to stack end
    assert stack_report.int_md.hops == EARLIER
    assert (stack_report.md.ingress_port, stack_report.md.egress_port) == (1, 2)
    assert stack_report.md.ingress_ts_ns == postcard.md.ingress_ts_ns
    assert stack_report.md.hop_latency_ns == 0xFFFFFFFF      # not known at ingress
    # the sink's own hop: a postcard about the packet it forwards (taken
    # before the checksums are updated: the UDP checksum is the INT-MD one's)
    assert postcard.queue is not None
    assert postcard.inner[:40] + postcard.inner[42:] == original[:40] + original[42:64]

    c = Collector(udp_port=UDP_PORT)
    assert c.feed_frames(d for p, d in outs if p == COLLECTOR_PORT) == 2
    (path,) = c.int_md_paths
    assert [h.node_id for h in path.hops] == [1, 2, NODE]
    assert path.hops[-1].hop_latency_ns == postcard.md.hop_latency_ns
    assert path.flow[3:] == (1000, 5000)


def test_sink_honours_the_discard_bit(switch, md):
    md.sink_port(2)
    f = with_int_md(flow(), ALL_INSTRUCTIONS, 6, EARLIER, d=1)
    data, reports = split(switch.send(1, f))
    assert data == [] and [r.int_md.discard for r in reports if r.int_md] == [True]


def test_udp_checksum_of_zero_stays_zero(switch, md):
    md.source(dst="10.0.2.0/24")
    (out,), _ = split(switch.send(1, flow(checksum=False)))
    assert struct.unpack("!H", out[40:42]) == (0,)


def test_without_int_md_configured_int_md_packets_pass_unchanged(switch, dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    f = with_int_md(flow(), ALL_INSTRUCTIONS, 0, EARLIER)
    assert switch.send(1, f) == [(2, f)]
    IntMd(dut).sink_port(2)                # no node id: INT-MD off, no role
    assert switch.send(1, f) == [(2, f)]


# ----- malformed INT-MD: forwarded as it came (E bit aside), counted --------------------

def _shim_len(n):
    return with_int_md(flow(), ALL_INSTRUCTIONS, 6, EARLIER, shim_len=n)


MALFORMED = {
    "shim length below the header's 3 words": (_shim_len(2), "bad_length"),
    "shim length past the packet": (_shim_len(200), "bad_length"),
    "version 1": (with_int_md(flow(), ALL_INSTRUCTIONS, 6, EARLIER, version=1), "bad_version"),
    "version 3": (with_int_md(flow(), ALL_INSTRUCTIONS, 6, EARLIER, version=3), "bad_version"),
    "reserved instruction bit": (with_int_md(flow(), INS_NODE_ID | 0x0040, 6,
                                             stack=b"\0" * 16), "bad_instructions"),
    "Hop ML not the bitmap's": (with_int_md(flow(), INS_NODE_ID, 6, hop_ml=2,
                                            stack=b"\0" * 8), "bad_instructions"),
    "a destination-type shim": (flow(dport=32767)[:42] + bytes([0x24, 3, 0x13, 0x88])
                                + bytes(12) + flow()[42:], "not_int_md"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_int_md_is_forwarded_without_metadata(switch, md, case):
    frame, reason = MALFORMED[case]
    before = md.malformed()
    (out,), reports = split(switch.send(1, frame))
    assert out == frame and reports == []
    after = md.malformed()
    assert {k: after[k] - before[k] for k in after} == {
        k: int(k == reason) for k in after}


def test_hop_count_exhausted_sets_the_e_bit(switch, md):
    f = with_int_md(flow(checksum=True), ALL_INSTRUCTIONS, 0, EARLIER)
    (out,), _ = split(switch.send(1, f))
    assert out == with_int_md(flow(checksum=True), ALL_INSTRUCTIONS, 0, EARLIER, e=1)
    assert parse_int_md(out[14:]).hops_exceeded and udp_checksum_ok(out)
    assert md.malformed()["hops_exhausted"] == 1
    # once set, it stays set and the packet passes on unchanged
    (again,), _ = split(switch.send(1, out))
    assert again == out


def test_a_sink_forwards_malformed_int_md_and_reports_nothing(switch, md):
    md.sink_port(2)
    bad = _shim_len(200)
    assert split(switch.send(1, bad)) == ([bad], [])
    # an unknown version is still delimited by its shim: stripped, not reported
    v3 = with_int_md(flow(), ALL_INSTRUCTIONS, 6, EARLIER, version=3)
    assert split(switch.send(1, v3)) == ([flow()], [])
    assert md.malformed()["bad_length"] == 1 and md.malformed()["bad_version"] == 1


def test_too_short_for_the_int_md_header_is_forwarded(switch, md, dut):
    # a UDP frame to the INT-MD port ending before shim + header
    dut.table("port_config").insert({"ingress_port": 1}, "set_port_config", flood_group=1,
                                    min_frame=40, max_frame=9212)
    udp = struct.pack("!HHHH", 1000, 32767, 18, 0) + bytes(10)
    f = (packets.ethernet(H2, H1, packets.ETH_IPV4) + packets.ipv4("10.0.1.1", "10.0.2.2", packets.PROTO_UDP, len(udp))
         + udp)
    assert len(f) == 52
    (out,), _ = split(switch.send(1, f))
    assert out == f and md.malformed()["bad_length"] == 1
