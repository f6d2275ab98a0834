"""Telemetry Report v2.0 payloads made by hand, as the reference DUT's
instrument sends them (RepMdBits 0x7C00: ports, hop latency, queue,
ingress and egress timestamps), for the hop-latency tests: per-packet
queue reports (postcards, burst packets, interval maxima) and an INT-MD
sink's stack report."""

from __future__ import annotations

import struct

from p4scope.control import packets
from p4scope.control.int_md_headers import (INS_EGRESS_TS, INS_HOP_LATENCY, INS_INGRESS_TS,
                                            INS_L1_PORTS, INS_NODE_ID, with_int_md)
from p4scope.control.reports import DOMAIN_QUEUE, EVENT_POSTCARD

INT_MD_INS = INS_NODE_ID | INS_L1_PORTS | INS_HOP_LATENCY | INS_INGRESS_TS | INS_EGRESS_TS


def flow(sport: int = 1000, ident: int = 0, size: int = 64) -> bytes:
    """An Ethernet/IPv4/UDP frame 10.0.1.1:sport -> 10.0.2.2:5000."""
    pad = max(0, size - 14 - 20 - 8)
    udp = struct.pack("!HHHH", sport, 5000, 8 + pad, 0) + bytes(pad)
    return (packets.ethernet("00:00:00:00:00:02", "00:00:00:00:00:01", packets.ETH_IPV4)
            + packets.ipv4("10.0.1.1", "10.0.2.2", packets.PROTO_UDP, len(udp), ident=ident) + udp)


def _report(node: int, seq: int, inner: bytes, *, in_type: int, md: bytes, domain: int = 0,
            ds: bytes = b"") -> bytes:
    md_words = (len(md) + len(ds)) // 4
    inner = inner[:len(inner) & ~3]
    body = struct.pack("!II", (2 << 28) | seq, node)
    body += struct.pack("!BBBB", (1 << 4) | in_type, 2 + md_words + len(inner) // 4, md_words,
                        1 << 5)
    body += struct.pack("!HHHH", 0x7C00, domain, 0xFFF0 if ds else 0, 0)
    return body + md + ds + inner


def _baseline(ingress_port: int, egress_port: int, ingress_ts: int, latency: int,
              queue: int = 0) -> bytes:
    return struct.pack("!HHIIQQ", ingress_port, egress_port, latency, queue, ingress_ts,
                       ingress_ts + latency)


def queue_report(node: int, seq: int, *, egress_port: int, latency: int, ingress_port: int = 1,
                 events: int = EVENT_POSTCARD, ingress_ts: int = 1_000_000, deq_qdepth: int = 0,
                 deq_qbytes: int = 0, frame_bytes: int = 1000, burst_id: int = 0,
                 burst_pkts: int = 0, interval: int = 0, interval_max: tuple = (0, 0),
                 packet: bytes = b"") -> bytes:
    """A DOMAIN_QUEUE report of one packet (`events`: why it was sent)."""
    ds = struct.pack("!BBH11I", events, 1, frame_bytes, deq_qdepth, deq_qdepth, deq_qbytes,
                     deq_qbytes, 0, latency, burst_id, burst_pkts, interval_max[0],
                     interval_max[1], interval)
    return _report(node, seq, (packet or flow())[:64], in_type=3,
                   md=_baseline(ingress_port, egress_port, ingress_ts, latency),
                   domain=DOMAIN_QUEUE, ds=ds)


def stack_report(node: int, seq: int, packet: bytes, hops: list, ingress_ts: int,
                 ingress_port: int = 1, egress_port: int = 2) -> bytes:
    """An INT-MD sink's report of `packet` carrying `hops` (IntHops, the
    source's first); its own hop comes in a postcard (queue_report of the
    same packet, ingress port and timestamp)."""
    inner = with_int_md(packet, INT_MD_INS, 6, hops)[14:]
    return _report(node, seq, inner, in_type=4,
                   md=_baseline(ingress_port, egress_port, ingress_ts, 0xFFFFFFFF, 0xFFFFFFFF))
