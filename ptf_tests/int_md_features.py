"""Layer 3 for INT-MD v2.1 (p4src/include/int_md.p4): the DUT as source,
transit and sink, configured through the IntMd app.

    run_source(in_port, out)                 header + this hop's metadata added
    run_transit(in_port, out)                hop pushed on top; E bit when exhausted
    run_sink(in_port, out, collector)        INT-MD stripped; stack and own hop reported

Frames are compared byte for byte with what the INT-MD writer of
p4scope.control (int_md_headers) makes of the packet sent, with this
hop's metadata as the DUT measured it (read from the frame and checked
on its own: node, ports, latency = egress - ingress timestamp): so every
length, the IPv4 and the UDP checksum (scapy's UDP packets have one) are
checked, on BMv2 as on p4scope's switch.
"""

from __future__ import annotations

from p4scope.control.apps.collector import Collector
from p4scope.control.apps.int_md import ALL_INSTRUCTIONS, IntMd
from p4scope.control.int_md_headers import (IntHop, parse_int_md, udp_checksum_ok, with_int_md,
                                            without_int_md)
from p4scope.control.reports import IN_TYPE_IPV4, parse_report_frame

from dut_base import host_ip, host_mac, udp_packet
from tel_features import COLLECTOR_UDP, DST, NODE_ID, TelemetryTest

MAX_HOPS = 8
EARLIER = [IntHop(node_id=101, ingress_port=5, egress_port=6, hop_latency_ns=1500, queue_id=0,
                  queue_occupancy=3, ingress_ts_ns=10_000, egress_ts_ns=11_500,
                  l2_ingress_port=5, l2_egress_port=6, tx_utilization_mbps=250, buffer_id=0,
                  buffer_occupancy=4096),
           IntHop(node_id=102, ingress_port=2, egress_port=1, hop_latency_ns=700, queue_id=0,
                  queue_occupancy=0, ingress_ts_ns=20_000, egress_ts_ns=20_700,
                  l2_ingress_port=2, l2_egress_port=0x10001, tx_utilization_mbps=0,
                  buffer_id=None, buffer_occupancy=None)]
"""Two hops before the DUT, as an upstream source and transit wrote them."""


class IntMdTest(TelemetryTest):
    """The DUT is INT-MD node NODE_ID (its reports' node id too)."""

    def setUp(self) -> None:
        super().setUp()
        self.int_md = IntMd(self.sw)
        self.int_md.node(NODE_ID)

    def flow(self, dport: int = 5000, size: int = 120) -> bytes:
        return bytes(udp_packet(1, DST, size=size, sport=4321, dport=dport))

    def receive_frame(self, port: int) -> bytes:
        got = self.receive(port)
        self.assertIsNotNone(got, f"nothing out of port {port}")
        return got[1]

    def check_own_hop(self, hop: IntHop, in_port: int, out: int) -> None:
        """What the DUT must have written about itself."""
        self.assertEqual((hop.node_id, hop.ingress_port, hop.egress_port), (NODE_ID, in_port, out))
        self.assertEqual((hop.l2_ingress_port, hop.l2_egress_port), (in_port, out))
        self.assertEqual(hop.queue_id, 0)
        self.assertIsNotNone(hop.queue_occupancy)
        self.assertLessEqual(hop.ingress_ts_ns, hop.egress_ts_ns)
        self.assertEqual(hop.hop_latency_ns, hop.egress_ts_ns - hop.ingress_ts_ns)
        self.assertIsNotNone(hop.tx_utilization_mbps)

    # ----- scenarios --------------------------------------------------------------------

    def run_source(self, in_port: int, out: int) -> None:
        """A watched UDP flow gets the shim, the INT-MD header (version 2,
        every instruction, remaining hops MAX_HOPS - 1) and this hop's
        metadata; its destination port moves into the shim; a flow off the
        watchlist passes unchanged."""
        self.bridge_to(host_mac(DST), out)
        self.int_md.source(dst=f"{host_ip(DST)}/32", dport=(5000, 5999), max_hops=MAX_HOPS)
        pkt = self.flow()
        self.send(in_port, pkt)
        frame = self.receive_frame(out)
        st = parse_int_md(frame[14:])
        self.assertIsNotNone(st, "no INT-MD in the frame")
        self.assertEqual((st.version, st.instructions, st.hop_ml, st.remaining_hops),
                         (2, ALL_INSTRUCTIONS, 12, MAX_HOPS - 1))
        self.assertFalse(st.discard or st.hops_exceeded or st.mtu_exceeded)
        self.assertEqual(st.original_dport, 5000)
        self.assertEqual(len(st.hops), 1)
        self.check_own_hop(st.hops[0], in_port, out)
        self.assertEqual(frame, with_int_md(pkt, ALL_INSTRUCTIONS, MAX_HOPS - 1, st.hops))
        self.assertTrue(udp_checksum_ok(frame))
        other = self.flow(dport=80)
        self.send(in_port, other)
        self.expect(other, out)
        self.expect_nothing()

    def run_transit(self, in_port: int, out: int) -> None:
        """An INT-MD packet leaves with this hop's metadata on top of the
        stack and the remaining hop count one lower; with none left it
        leaves unchanged but for the E bit."""
        self.bridge_to(host_mac(DST), out)
        pkt = with_int_md(self.flow(), ALL_INSTRUCTIONS, 6, EARLIER)
        self.send(in_port, pkt)
        frame = self.receive_frame(out)
        st = parse_int_md(frame[14:])
        self.assertEqual(st.remaining_hops, 5)
        self.assertEqual(st.hops[:2], EARLIER)
        self.assertEqual(len(st.hops), 3)
        self.check_own_hop(st.hops[2], in_port, out)
        self.assertEqual(frame, with_int_md(self.flow(), ALL_INSTRUCTIONS, 5, st.hops))

        exhausted = with_int_md(self.flow(), ALL_INSTRUCTIONS, 0, EARLIER)
        self.send(in_port, exhausted)
        self.expect(with_int_md(self.flow(), ALL_INSTRUCTIONS, 0, EARLIER, e=1), out)
        self.assertEqual(self.int_md.malformed()["hops_exhausted"], 1)
        self.expect_nothing()

    def run_sink(self, in_port: int, out: int, collector: int) -> None:
        """At a sink port INT-MD is stripped (the flow's port, lengths and
        checksum back as the source found them) and reported: the stack
        (Telemetry Report v2.0, InType IPv4, the packet up to the end of
        the stack) and this hop (a postcard with the same ingress time),
        which the collector joins into the whole path."""
        self.bridge_to(host_mac(DST), out)
        self.setup_collector(collector)
        self.int_md.sink_port(out)
        original = self.flow()
        pkt = with_int_md(original, ALL_INSTRUCTIONS, 6, EARLIER)
        self.send(in_port, pkt)
        self.expect(original, out)
        self.assertEqual(without_int_md(pkt), original)
        frames = self.receive_n(collector, 2)
        self.assertEqual(len(frames), 2, "a stack report and the sink's own postcard")
        stack, own = sorted((parse_report_frame(f, COLLECTOR_UDP) for f in frames),
                            key=lambda r: r.seq)
        self.assertEqual((stack.rep_type, stack.in_type, stack.node_id), (1, IN_TYPE_IPV4, NODE_ID))
        self.assertTrue(stack.tracked and not stack.intermediate)
        self.assertEqual(stack.inner, pkt[14:14 + 20 + 8 + 4 + 12 + 2 * 48])
        self.assertEqual(stack.int_md.hops, EARLIER)
        self.assertEqual((stack.md.ingress_port, stack.md.egress_port), (in_port, out))
        self.assertEqual(stack.md.ingress_ts_ns, own.md.ingress_ts_ns)
        self.assertIsNotNone(own.queue)
        collector_app = Collector(udp_port=COLLECTOR_UDP)
        self.assertEqual(collector_app.feed_frames(frames), 2, collector_app.errors)
        (path,) = collector_app.int_md_paths
        self.assertEqual([h.node_id for h in path.hops], [101, 102, NODE_ID])
        self.assertEqual(path.hops[-1].hop_latency_ns, own.md.hop_latency_ns)
        self.expect_nothing()
