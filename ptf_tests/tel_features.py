"""Layer 3 for the telemetry instrument (p4src/include/telemetry.p4): the
collector path, reading reports, and one scenario per behaviour.

    run_postcards(in_port, out, collector, sizes)     report format
    run_pair_counters({in_port: frames}, out)         per-ingress counters
    run_queue_growth(burst, in_ports, out, collector) depth under congestion
    run_burst_detection(threshold, end, burst, ...)   burst reports
    run_reports_as_packet_ins(n, in_port, out)        collector at the CPU port

Reports are INT Telemetry Report v2.0 frames (int_report.p4) sent to the
collector port; they are parsed with p4scope.control.reports and, where
the whole frame is known, compared with a ptf Mask whose don't-care bits
are the per-packet measurements.
"""

from __future__ import annotations

import ipaddress
import logging
import struct
import time
from collections import Counter
from typing import Iterable, Optional, Sequence

from ptf.mask import Mask
from ptf.packet import IP, UDP, Ether

from p4scope.control import packets
from p4scope.control.apps.collector import Collector
from p4scope.control.reports import (DOMAIN_QUEUE, EVENT_BURST_END, EVENT_BURST_START,
                                     EVENT_POSTCARD, Report, parse_report_frame)

from dut_base import DutTest, host_ip, host_mac, udp_packet
from dut_features import mac_int

SWITCH_MAC = "02:00:00:00:00:fe"
COLLECTOR_MAC = "02:00:00:00:00:64"
SWITCH_IP = "10.255.0.1"
COLLECTOR_IP = "10.255.0.100"
COLLECTOR_UDP = 32766
NODE_ID = 7
SNAPLEN = 64
# int_report.p4: outer Ethernet+IPv4+UDP, then group 8 + individual 4 + main 8
# + baseline metadata 28 + DOMAIN_QUEUE block 48, then the inner packet
OUTER = 14 + 20 + 8
MD_WORDS = (28 + 48) // 4
REPORT_MD_BITS = 0x7C00
QUEUE_DS_BITS = 0xFFF0
HIST_BINS = 16
DST = 3
"""The host every telemetry scenario sends to (MAC and IPv4 of host 3)."""


class TelemetryTest(DutTest):
    RATE = 100
    """Packets/s of a congested queue (set over the run-time Thrift API)."""

    # ----- set-up and reading ----------------------------------------------------------

    def setup_collector(self, port: int) -> None:
        """Reports leave by `port` (a front-panel port, or the CPU port)."""
        self.telemetry.collector(port=port, switch_ip=SWITCH_IP, collector_ip=COLLECTOR_IP,
                                 collector_mac=COLLECTOR_MAC, switch_mac=SWITCH_MAC,
                                 udp_port=COLLECTOR_UDP, node_id=NODE_ID, snaplen=SNAPLEN)

    def reports_from(self, port: int, n: Optional[int] = None, timeout: float = 3.0,
                     quiet: float = 0.3) -> list[Report]:
        """Reports arriving on `port` in sequence order: `n` of them, or (n
        None) all until none comes for `quiet` s. Every frame must parse."""
        if n is not None:
            frames = self.receive_n(port, n, timeout)
        else:
            frames = []
            while (got := self.receive(port, quiet)) is not None:
                frames.append(got[1])
        reports = [parse_report_frame(f, COLLECTOR_UDP) for f in frames]
        return sorted(reports, key=lambda r: r.seq)

    def report_mask(self, inner: bytes, ingress_port: int, egress_port: int, events: int,
                    frame_bytes: int, tracked: bool = False, congested: bool = False) -> Mask:
        """The report frame the DUT should send about a packet whose first
        bytes are `inner`; per-packet measurements (timestamps, latency,
        depths, sequence number) are don't-care bits."""
        inner = inner[:min(SNAPLEN, len(inner)) & ~3]
        body = struct.pack("!II", 2 << 28, NODE_ID)                   # group: version 2
        body += struct.pack("!BBBB", (1 << 4) | (3 if inner else 0),  # INT, Ethernet inside
                            (8 + MD_WORDS * 4 + len(inner)) // 4, MD_WORDS,
                            (congested << 6) | (tracked << 5))          # D Q F I
        body += struct.pack("!HHHH", REPORT_MD_BITS, DOMAIN_QUEUE, QUEUE_DS_BITS, 0)
        body += struct.pack("!HHIIQQ", ingress_port, egress_port, 0, 0, 0, 0)
        body += struct.pack("!BBH11I", events, 0, frame_bytes, *([0] * 11))
        body += inner
        outer = (Ether(dst=COLLECTOR_MAC, src=SWITCH_MAC)
                 / IP(src=SWITCH_IP, dst=COLLECTOR_IP, ttl=64, flags=2, id=0)
                 / UDP(sport=0, dport=COLLECTOR_UDP, chksum=0))
        m = Mask(Ether(bytes(outer / body)))
        ip, md, ds = 14, OUTER + 20, OUTER + 20 + 28
        m.set_do_not_care((ip + 4) * 8, 16)             # identification = sequence number
        m.set_do_not_care((ip + 10) * 8, 16)            # header checksum (covers it)
        m.set_do_not_care(OUTER * 8 + 10, 22)           # group header sequence number
        m.set_do_not_care((md + 4) * 8, 32)             # hop latency
        m.set_do_not_care((md + 8) * 8 + 8, 24)         # queue occupancy
        m.set_do_not_care((md + 12) * 8, 128)           # ingress and egress timestamps
        m.set_do_not_care((ds + 1) * 8, 8)              # flags (byte counts valid: p4scope)
        m.set_do_not_care((ds + 4) * 8, 6 * 32)         # depths, bytes, buffer, time in queue
        return m

    def send_burst(self, frames: Iterable[tuple[int, bytes]]) -> int:
        """Sends (port, frame) pairs back to back; returns how many."""
        n = 0
        for port, f in frames:
            self.send(port, f)
            n += 1
        return n

    def congest(self, burst: int, in_ports: Sequence[int], out: int) -> list[bytes]:
        """`burst` frames to host DST, back to back, alternating `in_ports`;
        returns them once all have left by `out` (whose queue is rate-limited)."""
        frames = [(in_ports[i % len(in_ports)],
                   bytes(udp_packet(1 + i % len(in_ports), DST, sport=40000 + i, dport=5000)))
                  for i in range(burst)]
        self.send_burst(frames)
        got = self.receive_n(out, burst, timeout=burst / self.RATE + 3.0)
        self.assertEqual(len(got), burst, "frames lost in the rate-limited queue")
        return [f for _, f in frames]

    # ----- scenarios --------------------------------------------------------------------

    def run_postcards(self, in_port: int, out: int, collector: int,
                      sizes: Sequence[int]) -> None:
        """Each packet of a watched flow leaves a postcard, field for field as
        specified; reports are numbered one by one; unwatched flows leave none."""
        self.bridge_to(host_mac(DST), out)
        self.setup_collector(collector)
        self.watch_flow(dst=f"{host_ip(DST)}/32", proto=17, dport=(5000, 5999))
        seqs = []
        for i, size in enumerate(sizes):
            pkt = udp_packet(1, DST, size=size, dport=5000 + i)
            self.send(in_port, pkt)
            self.expect(pkt, out)
            got = self.receive(collector)
            self.assertIsNotNone(got, "no report")
            mask = self.report_mask(bytes(pkt), in_port, out, EVENT_POSTCARD, len(pkt),
                                    tracked=True)
            self.assertTrue(mask.pkt_match(got[1]), f"not the expected report:\n{mask}\n"
                                                    f"got {got[1].hex()}")
            seqs.append(self.check_report(got[1], pkt, in_port, out))
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))),
                         "report sequence numbers must count up by one")
        unwatched = udp_packet(1, DST, dport=80)
        self.send(in_port, unwatched)
        self.expect_on(unwatched, [out])                  # and no report

    def check_report(self, frame: bytes, pkt, in_port: int, out: int) -> int:
        """What the mask cannot say about one postcard; returns its number."""
        r = parse_report_frame(frame, COLLECTOR_UDP)
        self.assertEqual((r.node_id, r.rep_type, r.domain_id, r.rep_md_bits),
                         (NODE_ID, 1, DOMAIN_QUEUE, REPORT_MD_BITS))
        self.assertEqual((r.md.ingress_port, r.md.egress_port), (in_port, out))
        self.assertTrue(r.tracked and not r.dropped and not r.congested)
        self.assertEqual((r.queue.events, r.queue.frame_bytes), (EVENT_POSTCARD, len(pkt)))
        self.assertEqual(r.inner, bytes(pkt)[:min(SNAPLEN, len(pkt)) & ~3])
        self.assertLessEqual(r.md.ingress_ts_ns, r.md.egress_ts_ns)
        self.assertEqual(r.md.hop_latency_ns,
                         (r.md.egress_ts_ns - r.md.ingress_ts_ns) & 0xFFFFFFFF)
        outer = packets.parse_frame(frame)
        self.assertTrue(outer.ip_checksum_ok, "report IPv4 header checksum")
        self.assertEqual((outer.src_mac, outer.dst_mac),
                         (mac_int(SWITCH_MAC), mac_int(COLLECTOR_MAC)))
        self.assertEqual((outer.ip_src, outer.ip_dst),
                         (int(ipaddress.IPv4Address(SWITCH_IP)),
                          int(ipaddress.IPv4Address(COLLECTOR_IP))))
        return r.seq

    def run_pair_counters(self, sent: dict[int, int], out: int) -> None:
        """`sent` {ingress port: frames} to one egress port: per (egress,
        ingress) offered and delivered packets and bytes exactly as sent,
        adding up to the egress port counter."""
        self.bridge_to(host_mac(DST), out)
        ins = sorted(sent)
        offered0 = self.telemetry.pairs([out], ins, "tel_offered")
        delivered0 = self.telemetry.pairs([out], ins, "tel_delivered")
        egress0 = self.port_counts("egress_port_counter", [out])[out]
        frames, want = [], {}
        for j, port in enumerate(ins):
            for k in range(sent[port]):
                f = bytes(udp_packet(j + 1, DST, size=80 + 8 * k, sport=1000 * (j + 1) + k))
                frames.append((port, f))
                pk, by = want.get(port, (0, 0))
                want[port] = (pk + 1, by + len(f))
        for port, f in frames:
            self.send(port, f)
        self.assertEqual(sorted(self.receive_n(out, len(frames))), sorted(f for _, f in frames))
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
        self.assertEqual((egress[0] - egress0[0], egress[1] - egress0[1]),
                         (sum(n for n, _ in want.values()), sum(b for _, b in want.values())))

    def run_queue_growth(self, burst: int, in_ports: Sequence[int], out: int, collector: int,
                         min_peak: int) -> None:
        """A burst into a rate-limited queue: every packet's postcard gives the
        depth it saw at enqueue; the depths grow (to `min_peak` at least) and
        agree bin by bin with the occupancy histogram counter."""
        self.bridge_to(host_mac(DST), out)
        self.setup_collector(collector)
        self.watch_flow(dst=f"{host_ip(DST)}/32")
        self.set_telemetry_port(out, histogram_shift=0)
        self.set_queue(out, rate_pps=self.RATE)
        hist0 = {b: n for b, n, _ in self.telemetry.histogram(out)}
        self.congest(burst, in_ports, out)
        reports = self.reports_from(collector, burst)
        self.assertEqual(len(reports), burst, "one postcard per packet")
        self.expect_nothing()
        depths = [r.queue.enq_qdepth for r in reports]
        logging.info("queue growth: depths at enqueue %s", depths)
        for i, depth in enumerate(depths):
            self.assertLessEqual(depth, i, "deeper than the packets sent before it")
        hist = {b: n for b, n, _ in self.telemetry.histogram(out)}
        seen = Counter(min(d, HIST_BINS - 1) for d in depths)
        for b in range(HIST_BINS):
            self.assertEqual(hist.get(b, 0) - hist0.get(b, 0), seen.get(b, 0),
                             f"tel_occupancy_hist bin {b}")
        self.assertGreaterEqual(max(depths), min_peak, f"depths seen: {depths}")
        self.assertTrue(any(r.queue.queue_time_ns > 0 for r in reports),
                        "no packet waited in the queue")

    def run_burst_detection(self, threshold: int, end: int, burst: int,
                            in_ports: Sequence[int], out: int, collector: int) -> None:
        """No burst report while packets trickle through; under congestion
        BURST_START when a dequeue leaves >= `threshold` behind, BURST_END
        when one leaves < `end` behind — as the queue drains, about one of
        the burst's own frames, not about a later frame — alternating, burst
        ids consecutive, the burst counter in agreement; a frame through the
        drained queue afterwards reports nothing."""
        self.bridge_to(host_mac(DST), out)
        self.setup_collector(collector)
        self.set_telemetry_port(out, burst_threshold=threshold, burst_end=end,
                                report_burst_packets=False)
        self.set_queue(out, rate_pps=self.RATE)
        bursts0 = self.telemetry.bursts(out)
        for i in range(8):                                # one at a time: never a queue
            pkt = udp_packet(1, DST, sport=30000 + i)
            self.send(in_ports[0], pkt)
            self.expect(pkt, out)
        self.expect_nothing()
        self.assertEqual(self.telemetry.bursts(out), bursts0, "a burst without congestion")

        self.congest(burst, in_ports, out)
        time.sleep(0.05)
        tail = udp_packet(1, DST, sport=31000)            # through the drained queue
        self.send(in_ports[0], tail)
        self.expect(tail, out)
        reports = self.reports_from(collector)
        events = [(r.queue.burst_id, r.queue.events, r.queue.deq_qdepth) for r in reports]
        self.expect_nothing()
        logging.info("burst detection: (burst id, events, depth left) %s", events)
        about = [packets.parse_frame(r.inner).sport for r in reports]
        self.assertNotIn(31000, about, f"a report about the frame after the burst: {events}")
        self.assertTrue(all(40000 <= sp < 40000 + burst for sp in about),
                        f"reports about frames outside the burst: {about}")
        starts = [e for e in events if e[1] == EVENT_BURST_START]
        self.assertEqual([ev for _, ev, _ in events],
                         [EVENT_BURST_START, EVENT_BURST_END] * len(starts),
                         f"only starts and ends, alternating: {events}")
        for _, ev, depth in events:
            if ev == EVENT_BURST_START:
                self.assertGreaterEqual(depth, threshold, f"started below: {events}")
            else:
                self.assertLess(depth, end, f"ended at or above the end: {events}")
        ids = [bid for bid, ev, _ in events if ev == EVENT_BURST_START]
        self.assertEqual(ids, list(range(1, 1 + len(ids))), "burst ids count from 1")
        self.assertEqual([bid for bid, ev, _ in events if ev == EVENT_BURST_END], ids)
        self.assertEqual(self.telemetry.bursts(out) - bursts0, len(starts))
        self.assertTrue(starts, f"no BURST_START: the queue never reached {threshold}")

    def run_reports_as_packet_ins(self, n: int, in_port: int, out: int) -> None:
        """Collector at the CPU port: no report on any front-panel port, one
        packet-in per report, and the collector app reads them all."""
        self.bridge_to(host_mac(DST), out)
        self.setup_collector(self.cpu_port)
        self.watch_flow(dst=f"{host_ip(DST)}/32")
        sports = [50000 + i for i in range(n)]
        for sp in sports:
            pkt = udp_packet(1, DST, sport=sp)
            self.send(in_port, pkt)
            self.expect(pkt, out)
        self.expect_nothing()
        got = []
        deadline = time.monotonic() + 3.0
        while len(got) < n and time.monotonic() < deadline:
            got += self.sw.packet_ins(timeout=0.2)
        self.assertEqual(len(got), n, "one packet-in per report")
        collector = Collector(udp_port=COLLECTOR_UDP)
        for pin in got:
            self.assertIsNotNone(collector.feed_packet_in(pin), collector.errors)
        self.assertEqual(collector.errors, [])
        self.assertEqual([s.ingress_port for s in collector.samples], [in_port] * n)
        self.assertEqual(sorted(s.flow[3] for s in collector.samples), sports)
