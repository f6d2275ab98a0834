"""Layer 3 of the suite: one base per feature, each building a scenario
that concrete tests (test_*.py) run with their own parameters.

    BridgingTest.run_unicast(in_port, out_port, pkt)
    FloodingTest.run_flood(in_port, pkt, receivers)
    LearningTest.learn(...) / forget_wait(...)
    RoutingTest.routed(pkt, next_hop_mac) -> the packet as it should leave
    AclTest.with_dscp(pkt, dscp)
    LagTest.spread(flows, ports) -> {flow: port}
    ErroredFrameTest.run_dropped(frame, in_port, reason)
    TelemetryTest: collector, report parsing, report masks

Each scenario ends with ptf's negative check on every port, so a test
fails on any frame it did not ask for, not only on a missing one.
"""

from __future__ import annotations

import struct
import time
from typing import Iterable, Optional, Sequence

from ptf.mask import Mask
from ptf.packet import IP, UDP, Ether

from p4scope.control.reports import DOMAIN_QUEUE, Report, parse_report_frame

from dut_base import ROUTER_MAC, DutTest, host_mac, udp_packet


def mac_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


class BridgingTest(DutTest):
    def run_unicast(self, in_port: int, out_port: int, pkt) -> None:
        """A frame to a MAC with a dmac entry leaves by that port only."""
        self.add_bridging_entry(pkt[Ether].dst, out_port)
        self.send(in_port, pkt)
        self.expect_on(pkt, [out_port])


class FloodingTest(DutTest):
    def run_flood(self, in_port: int, pkt, receivers: Sequence[int]) -> None:
        """`pkt` from `in_port` is copied to exactly `receivers`."""
        self.send(in_port, pkt)
        self.expect_on(pkt, receivers)


class LearningTest(DutTest):
    def wait_learnt(self, mac: str, port: int, timeout: float = 3.0) -> None:
        """Lets the learning app handle digests until `mac` is at `port`."""
        app = self.learning()
        deadline = time.monotonic() + timeout
        while app.macs.get(mac_int(mac)) != port:
            if time.monotonic() > deadline:
                self.fail(f"{mac} not learnt on port {port} within {timeout}s "
                          f"(learnt: { {hex(m): p for m, p in app.macs.items()} })")
            app.handle(timeout=0.1)

    def wait_aged(self, mac: str, timeout: float) -> float:
        """Handles digests and idle timeouts until `mac` is forgotten;
        returns how long that took."""
        app = self.learning()
        t0 = time.monotonic()
        while mac_int(mac) in app.macs:
            if time.monotonic() - t0 > timeout:
                self.fail(f"{mac} did not age out within {timeout}s")
            app.handle(timeout=0.1)
        return time.monotonic() - t0

    def dmac_macs(self) -> set[int]:
        return {next(iter(e.match.values())) for e in self.sw.table("dmac").entries()}


class RoutingTest(DutTest):
    def routed(self, pkt, next_hop_mac: str, dscp: Optional[int] = None):
        """`pkt` as the DUT sends it on: MACs rewritten (router -> next hop),
        TTL - 1, header checksum recomputed."""
        exp = pkt.copy()
        exp[Ether].src = ROUTER_MAC
        exp[Ether].dst = next_hop_mac
        exp[IP].ttl = pkt[IP].ttl - 1
        if dscp is not None:
            exp[IP].tos = (dscp << 2) | (pkt[IP].tos & 3)
        del exp[IP].chksum
        return Ether(bytes(exp))

    def to_router(self, src: int, dst_ip: str, **kw):
        return udp_packet(src, 0, dst_mac=ROUTER_MAC, dst_ip=dst_ip, **kw)


class AclTest(DutTest):
    def with_dscp(self, pkt, dscp: int):
        exp = pkt.copy()
        exp[IP].tos = (dscp << 2) | (pkt[IP].tos & 3)
        del exp[IP].chksum
        return Ether(bytes(exp))


class LagTest(DutTest):
    def flows(self, n: int, src: int = 1, dst: int = 2, size: int = 100) -> list[bytes]:
        """`n` frames of `n` distinct UDP flows (source port and address vary)."""
        return [bytes(udp_packet(src, dst, size=size, sport=10000 + 7 * i,
                                 src_ip=f"10.1.{i // 200}.{1 + i % 200}")) for i in range(n)]

    def spread(self, flows: Sequence[bytes], in_port: int, members: Sequence[int],
               timeout: float = 3.0) -> dict[bytes, int]:
        """Sends every flow once; each must leave by exactly one member port
        and nothing else may come out. Returns {flow: port}."""
        for f in flows:
            self.send(in_port, f)
        where: dict[bytes, int] = {}
        deadline = time.monotonic() + timeout
        while len(where) < len(flows) and time.monotonic() < deadline:
            got = self.receive(None, max(0.05, deadline - time.monotonic()))
            if got is None:
                break
            port, data = got
            self.assertIn(data, flows, f"unexpected frame on port {port}")
            self.assertNotIn(data, where, f"flow delivered twice (ports {where.get(data)} "
                                          f"and {port})")
            self.assertIn(port, members, f"flow left by port {port}, not a LAG member")
            where[data] = port
        self.assertEqual(len(where), len(flows),
                         f"{len(flows) - len(where)} of {len(flows)} flows never arrived")
        self.expect_nothing()
        return where

    @staticmethod
    def per_port(where: dict[bytes, int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for p in where.values():
            out[p] = out.get(p, 0) + 1
        return out


class ErroredFrameTest(DutTest):
    def run_dropped(self, frame: bytes, in_port: int, reason: int) -> None:
        """`frame` is dropped and counted once under `reason`."""
        before = self.drops(reason, in_port)
        self.send(in_port, frame)
        self.expect_nothing()
        self.wait_until(lambda: self.drops(reason, in_port) == before + 1, 2.0,
                        what=f"drop_counter[{reason} << 9 | {in_port}] to count the frame")


# ----- telemetry ----------------------------------------------------------------------

SWITCH_MAC = "02:00:00:00:00:fe"
COLLECTOR_MAC = "02:00:00:00:00:64"
SWITCH_IP = "10.255.0.1"
COLLECTOR_IP = "10.255.0.100"
COLLECTOR_UDP = 32766
NODE_ID = 7
SNAPLEN = 64
# report sizes (int_report.p4): outer Ethernet+IPv4+UDP, then group 8 + individual 4
# + main 8 + baseline 28 + DOMAIN_QUEUE block 48
OUTER = 14 + 20 + 8
MD_WORDS = (28 + 48) // 4
REPORT_MD_BITS = 0x7C00


class TelemetryTest(DutTest):
    def setup_collector(self, port: int) -> None:
        """Reports leave by `port` (a front-panel port, or the CPU port)."""
        self.telemetry.collector(port=port, switch_ip=SWITCH_IP, collector_ip=COLLECTOR_IP,
                                 collector_mac=COLLECTOR_MAC, switch_mac=SWITCH_MAC,
                                 udp_port=COLLECTOR_UDP, node_id=NODE_ID, snaplen=SNAPLEN)

    def reports_from(self, port: int, n: Optional[int] = None,
                     timeout: float = 3.0, quiet: float = 0.3) -> list[Report]:
        """Reports arriving on `port`: `n` of them, or (n None) all until
        none comes for `quiet` s. Every frame must parse."""
        frames = []
        if n is not None:
            frames = self.receive_n(port, n, timeout)
        else:
            while True:
                got = self.receive(port, quiet)
                if got is None:
                    break
                frames.append(got[1])
        return [parse_report_frame(f, COLLECTOR_UDP) for f in frames]

    def report_mask(self, inner: bytes, ingress_port: int, egress_port: int,
                    events: int, frame_bytes: int, tracked: bool = False,
                    congested: bool = False) -> Mask:
        """The report frame the DUT should send about a packet whose first
        bytes are `inner`; per-packet measurements (timestamps, latency,
        depths, sequence number) are don't-care bits."""
        inner = inner[:min(SNAPLEN, len(inner)) & ~3]
        body = struct.pack("!II", (2 << 28), NODE_ID)                 # group: ver 2, seq 0
        body += struct.pack("!BBBB", (1 << 4) | (2 if inner else 0),  # INT, Ethernet inside
                            (8 + MD_WORDS * 4 + len(inner)) // 4, MD_WORDS,
                            (congested << 6) | (tracked << 5))          # D Q F I
        body += struct.pack("!HHHH", REPORT_MD_BITS, DOMAIN_QUEUE, 0xFFF0, 0)
        body += struct.pack("!HHIIQQ", ingress_port, egress_port, 0, 0, 0, 0)
        body += struct.pack("!BBH11I", events, 0, frame_bytes, *([0] * 11))
        body += inner
        outer = (Ether(dst=COLLECTOR_MAC, src=SWITCH_MAC)
                 / IP(src=SWITCH_IP, dst=COLLECTOR_IP, ttl=64, flags=2, id=0)
                 / UDP(sport=0, dport=COLLECTOR_UDP, chksum=0))
        frame = Ether(bytes(outer / body))
        m = Mask(frame)
        ip, grp = 14, OUTER
        m.set_do_not_care((ip + 4) * 8, 16)             # identification = sequence number
        m.set_do_not_care((ip + 10) * 8, 16)            # header checksum (covers it)
        m.set_do_not_care(grp * 8 + 10, 22)             # group header sequence number
        md = OUTER + 20
        m.set_do_not_care((md + 4) * 8, 32)             # hop latency
        m.set_do_not_care((md + 8) * 8 + 8, 24)         # queue occupancy
        m.set_do_not_care((md + 12) * 8, 128)           # ingress and egress timestamps
        ds = md + 28
        m.set_do_not_care((ds + 1) * 8, 8)              # flags (byte counts valid: p4scope)
        m.set_do_not_care((ds + 4) * 8, 6 * 32)         # depths, bytes, buffer, time in queue
        return m

    def send_burst(self, frames: Iterable[tuple[int, bytes]]) -> int:
        """Sends (port, frame) pairs back to back; returns how many."""
        n = 0
        for port, f in frames:
            self.dataplane.send(0, port, f)
            n += 1
        return n

    @staticmethod
    def queue_reports(reports: Iterable[Report]) -> list[Report]:
        out = [r for r in reports if r.domain_id == DOMAIN_QUEUE and r.queue is not None]
        return out
