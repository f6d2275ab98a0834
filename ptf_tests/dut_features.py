"""Layer 3 of the suite: one base per feature, each building a scenario
that concrete tests (test_*.py) run with their own parameters.

    BridgingTest.run_unicast(in_port, out_port, pkt)
    FloodingTest.run_flood(in_port, pkt, receivers)
    LearningTest.learn(...) / forget_wait(...)
    RoutingTest.routed(pkt, next_hop_mac) -> the packet as it should leave
    AclTest.with_dscp(pkt, dscp)
    LagTest.spread(flows, ports) -> {flow: port}
    ErroredFrameTest.run_dropped(frame, in_port, reason)

(The telemetry instrument's bases are in tel_features.py.)

Each scenario ends with ptf's negative check on every port, so a test
fails on any frame it did not ask for, not only on a missing one.
"""

from __future__ import annotations

import time
from typing import Optional, Sequence

from ptf.packet import IP, Ether

from dut_base import ROUTER_MAC, DutTest, udp_packet


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

    def keep_sending(self, pkt, in_port: int, out_port: int, seconds: float,
                     period: float) -> None:
        """Sends `pkt` every `period` s for `seconds` s (each one must arrive
        on `out_port`), letting the learning app handle what comes in."""
        app = self.learning()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.send(in_port, pkt)
            self.expect(pkt, out_port)
            app.handle(timeout=period)

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
