"""The telemetry instrument: report format, per-ingress counters, queue
depth under congestion, burst detection, reports to the controller."""

import ipaddress
import logging
import time
from collections import Counter

from ptf.testutils import group

from p4scope.control import packets as P
from p4scope.control.apps.collector import Collector
from p4scope.control.reports import (DOMAIN_QUEUE, EVENT_BURST_END, EVENT_BURST_START,
                                     EVENT_POSTCARD, parse_report_frame)

from dut_base import host_ip, host_mac, udp_packet
from dut_features import (COLLECTOR_IP, COLLECTOR_MAC, COLLECTOR_UDP, NODE_ID, REPORT_MD_BITS,
                          SNAPLEN, SWITCH_IP, SWITCH_MAC, TelemetryTest, mac_int)

HIST_BINS = 16


@group("telemetry")
class ReportFormat(TelemetryTest):
    """A watched flow's packet leaves a postcard: an INT Telemetry Report
    v2.0 over UDP to the collector, every header field as specified, the
    reported packet's first bytes inside; numbered one by one."""

    def runTest(self):
        p = self.need_ports(4)
        src, out, coll = p[0], p[2], p[3]
        self.add_bridging_entry(host_mac(3), out)
        self.setup_collector(coll)
        self.telemetry.watch(dst=f"{host_ip(3)}/32", proto=17, dport=(5000, 5999))
        seqs = []
        for i, size in enumerate((100, 61, 300)):
            pkt = udp_packet(1, 3, size=size, dport=5000 + i)
            self.send(src, pkt)
            self.expect(pkt, out)
            mask = self.report_mask(bytes(pkt), src, out, EVENT_POSTCARD, len(pkt), tracked=True)
            got = self.receive(coll)
            self.assertIsNotNone(got, "no report")
            frame = got[1]
            self.assertTrue(mask.pkt_match(frame), f"report differs from the expected one:\n"
                                                   f"{mask}\ngot {frame.hex()}")
            r = parse_report_frame(frame, COLLECTOR_UDP)
            self.assertEqual((r.node_id, r.rep_type, r.domain_id, r.rep_md_bits),
                             (NODE_ID, 1, DOMAIN_QUEUE, REPORT_MD_BITS))
            self.assertEqual((r.md.ingress_port, r.md.egress_port), (src, out))
            self.assertTrue(r.tracked and not r.dropped and not r.congested)
            self.assertEqual(r.queue.events, EVENT_POSTCARD)
            self.assertEqual(r.queue.frame_bytes, len(pkt))
            self.assertEqual(r.inner, bytes(pkt)[:min(SNAPLEN, len(pkt)) & ~3])
            self.assertLessEqual(r.md.ingress_ts_ns, r.md.egress_ts_ns)
            self.assertEqual(r.md.hop_latency_ns,
                             (r.md.egress_ts_ns - r.md.ingress_ts_ns) & 0xFFFFFFFF)
            outer = P.parse_frame(frame)
            self.assertTrue(outer.ip_checksum_ok, "report IPv4 header checksum")
            self.assertEqual((outer.src_mac, outer.dst_mac),
                             (mac_int(SWITCH_MAC), mac_int(COLLECTOR_MAC)))
            self.assertEqual((outer.ip_src, outer.ip_dst),
                             (int(ipaddress.IPv4Address(SWITCH_IP)),
                              int(ipaddress.IPv4Address(COLLECTOR_IP))))
            seqs.append(r.seq)
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))),
                         "report sequence numbers must count up by one")
        unwatched = udp_packet(1, 3, dport=80)
        self.send(src, unwatched)
        self.expect_on(unwatched, [out])                  # and no report


@group("telemetry")
class IngressCounters(TelemetryTest):
    """Per (egress, ingress) counters: offered before the queue, delivered
    after it, each ingress port's packets and bytes exactly as sent, and
    they add up to the egress port's count."""

    SENT = {0: 7, 1: 5}

    def runTest(self):
        p = self.need_ports(3)
        out = p[2]
        ins = [p[i] for i in self.SENT]
        self.add_bridging_entry(host_mac(3), out)
        offered0 = self.telemetry.pairs([out], ins, "tel_offered")
        delivered0 = self.telemetry.pairs([out], ins, "tel_delivered")
        egress0 = self.port_counts("egress_port_counter", [out])[out]
        frames, want = [], {}
        for idx, n in self.SENT.items():
            for k in range(n):
                f = bytes(udp_packet(idx + 1, 3, size=80 + 8 * k, sport=idx * 100 + k))
                frames.append((p[idx], f))
                pk, by = want.get(p[idx], (0, 0))
                want[p[idx]] = (pk + 1, by + len(f))
        for port, f in frames:
            self.send(port, f)
        got = self.receive_n(out, len(frames))
        self.assertEqual(sorted(got), sorted(f for _, f in frames))
        self.expect_nothing()
        offered = self.telemetry.pairs([out], ins, "tel_offered")
        delivered = self.telemetry.pairs([out], ins, "tel_delivered")
        for port in ins:
            key = (out, port)
            for name, now, then in (("offered", offered, offered0),
                                    ("delivered", delivered, delivered0)):
                d = (now[key].packets - then[key].packets, now[key].bytes - then[key].bytes)
                self.assertEqual(d, want[port], f"tel_{name}[{out} <- {port}]")
        egress = self.port_counts("egress_port_counter", [out])[out]
        self.assertEqual(egress[0] - egress0[0], sum(n for n, _ in want.values()))
        self.assertEqual(egress[1] - egress0[1], sum(b for _, b in want.values()))


class CongestionTest(TelemetryTest):
    """Two ingress ports send to one egress port whose queue is served at
    RATE packets/s (set over the run-time Thrift API), so the queue builds
    while a burst arrives faster than that."""

    RATE = 100

    def congest(self, burst: int, in_ports, out: int, dport: int = 5000) -> list[bytes]:
        """Sends `burst` frames back to back, alternating `in_ports`, and
        returns them once all have left by `out`."""
        frames = [(in_ports[i % len(in_ports)],
                   bytes(udp_packet(1 + i % len(in_ports), 3, sport=40000 + i, dport=dport)))
                  for i in range(burst)]
        self.send_burst(frames)
        got = self.receive_n(out, burst, timeout=burst / self.RATE + 3.0)
        self.assertEqual(len(got), burst, "frames lost in the rate-limited queue")
        return [f for _, f in frames]


@group("telemetry")
class QueueDepthGrows(CongestionTest):
    """Under congestion of a rate-limited queue the depth each packet sees
    at enqueue grows; the postcards' depths and the occupancy histogram
    (a P4Runtime counter) agree packet for packet."""

    BURST = 24
    MIN_PEAK = 4

    def runTest(self):
        p = self.need_ports(4)
        out, coll = p[2], p[3]
        self.add_bridging_entry(host_mac(3), out)
        self.setup_collector(coll)
        self.telemetry.watch(dst=f"{host_ip(3)}/32")
        self.telemetry.port(out, histogram_shift=0)
        self.set_queue(out, rate_pps=self.RATE)
        hist0 = self.telemetry.histogram(out)
        self.congest(self.BURST, p[:2], out)
        reports = self.queue_reports(self.reports_from(coll, self.BURST))
        self.assertEqual(len(reports), self.BURST, "one postcard per packet")
        self.expect_nothing()
        depths = [r.queue.enq_qdepth for r in sorted(reports, key=lambda r: r.seq)]
        logging.info("QueueDepthGrows: depths at enqueue %s", depths)
        for i, depth in enumerate(depths):
            self.assertLessEqual(depth, i, "deeper than the packets sent before it")
        hist = {b: n for b, n, _ in self.telemetry.histogram(out)}
        hist0 = {b: n for b, n, _ in hist0}
        seen = Counter(min(d, HIST_BINS - 1) for d in depths)
        for b in range(HIST_BINS):
            self.assertEqual(hist.get(b, 0) - hist0.get(b, 0), seen.get(b, 0),
                             f"tel_occupancy_hist bin {b}")
        with self.known_gap("wallclock_queue"):
            self.assertGreaterEqual(max(depths), self.MIN_PEAK, f"depths seen: {depths}")
            self.assertTrue(any(r.queue.queue_time_ns > 0 for r in reports),
                            "no packet waited in the queue")


@group("telemetry")
class BurstReports(CongestionTest):
    """Burst reports appear when, and only when, the queue crosses the
    threshold: none while packets trickle through; under congestion a
    BURST_START at a depth >= the threshold, a BURST_END once the queue is
    below the end threshold, and the burst counter agrees."""

    THRESHOLD = 3
    END = 1
    BURST = 20

    def runTest(self):
        p = self.need_ports(4)
        out, coll = p[2], p[3]
        self.add_bridging_entry(host_mac(3), out)
        self.setup_collector(coll)
        self.telemetry.port(out, burst_threshold=self.THRESHOLD, burst_end=self.END,
                            report_burst_packets=False)
        self.set_queue(out, rate_pps=self.RATE)
        bursts0 = self.telemetry.bursts(out)
        for i in range(8):                                # one at a time: never a queue
            pkt = udp_packet(1, 3, sport=30000 + i)
            self.send(p[0], pkt)
            self.expect(pkt, out)
        self.expect_nothing()
        self.assertEqual(self.telemetry.bursts(out), bursts0, "a burst without congestion")

        self.congest(self.BURST, p[:2], out)
        time.sleep(0.05)
        tail = udp_packet(1, 3, sport=31000)              # the queue has drained
        self.send(p[0], tail)
        self.expect(tail, out)
        reports = self.queue_reports(self.reports_from(coll))
        self.expect_nothing()
        events = [(r.queue.burst_id, r.queue.events, r.queue.enq_qdepth)
                  for r in sorted(reports, key=lambda r: r.seq)]
        logging.info("BurstReports: (burst id, events, depth) %s", events)
        starts = [e for e in events if e[1] == EVENT_BURST_START]
        ends = [e for e in events if e[1] == EVENT_BURST_END]
        self.assertEqual(len(starts) + len(ends), len(events), f"other events: {events}")
        for bid, ev, depth in events:
            if ev == EVENT_BURST_START:
                self.assertGreaterEqual(depth, self.THRESHOLD, f"started below: {events}")
            else:
                self.assertLess(depth, self.END, f"ended at or above the end: {events}")
        kinds = [ev for _, ev, _ in events]
        self.assertEqual(kinds, [EVENT_BURST_START, EVENT_BURST_END] * len(starts),
                         f"starts and ends must alternate: {events}")
        ids = [bid for bid, ev, _ in events if ev == EVENT_BURST_START]
        self.assertEqual(ids, list(range(ids[0], ids[0] + len(ids))) if ids else [])
        self.assertEqual([bid for bid, ev, _ in events if ev == EVENT_BURST_END], ids)
        self.assertEqual(self.telemetry.bursts(out) - bursts0, len(starts))
        with self.known_gap("wallclock_queue"):
            self.assertTrue(starts, f"no BURST_START: the queue never reached "
                                    f"{self.THRESHOLD} packets")


@group("telemetry")
class ReportsToController(TelemetryTest):
    """With the CPU port as the collector port, reports reach the
    controller as packet-ins and the collector app reads them."""

    def runTest(self):
        p = self.need_ports(3)
        out = p[2]
        self.add_bridging_entry(host_mac(3), out)
        self.setup_collector(self.cpu_port)
        self.telemetry.watch(dst=f"{host_ip(3)}/32")
        pkts = [udp_packet(1, 3, sport=50000 + i) for i in range(3)]
        for pkt in pkts:
            self.send(p[0], pkt)
            self.expect(pkt, out)
        self.expect_nothing()                             # reports: not on any port
        collector = Collector(udp_port=COLLECTOR_UDP)
        got = []
        deadline = time.monotonic() + 3.0
        while len(got) < len(pkts) and time.monotonic() < deadline:
            got += self.sw.packet_ins(timeout=0.2)
        self.assertEqual(len(got), len(pkts), "one packet-in per report")
        for pin in got:
            self.assertIsNotNone(collector.feed_packet_in(pin), collector.errors)
        self.assertEqual([s.ingress_port for s in collector.samples], [p[0]] * len(pkts))
        self.assertEqual({s.flow[3] for s in collector.samples}, {50000, 50001, 50002})
        self.assertEqual(collector.errors, [])
