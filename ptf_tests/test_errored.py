"""Errored frames are filtered as a switch does: size limits, IPv4 header
checksum, malformed or truncated headers; each drop counted by reason."""

import struct

from ptf.packet import IP, Ether
from ptf.testutils import group

from dut_base import (DROP_CHECKSUM, DROP_OVERSIZE, DROP_PARSER, DROP_UNDERSIZE, host_mac,
                      l2_packet, udp_packet)
from dut_features import ErroredFrameTest


def with_ip(pkt, **fields) -> bytes:
    """`pkt` with IPv4 header fields set as given (checksum recomputed
    unless given)."""
    p = pkt.copy()
    for k, v in fields.items():
        setattr(p[IP], k, v)
    if "chksum" not in fields:
        del p[IP].chksum
    return bytes(Ether(bytes(p)))


@group("errored")
class Undersize(ErroredFrameTest):
    """Below the port's minimum (default 60 bytes, 64 with FCS): dropped."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        self.run_dropped(bytes(l2_packet(1, 2, size=60))[:59], p[0], DROP_UNDERSIZE)
        self.set_port_limits(p[0], min_frame=100)
        self.run_dropped(bytes(udp_packet(1, 2, size=99)), p[0], DROP_UNDERSIZE)
        ok = udp_packet(1, 2, size=100)
        self.send(p[0], ok)
        self.expect_on(ok, [p[1]])


@group("errored")
class Oversize(ErroredFrameTest):
    """Above the port's maximum: dropped; the maximum itself passes."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        self.set_port_limits(p[0], max_frame=1000)
        self.run_dropped(bytes(udp_packet(1, 2, size=1001)), p[0], DROP_OVERSIZE)
        ok = udp_packet(1, 2, size=1000)
        self.send(p[0], ok)
        self.expect_on(ok, [p[1]])


@group("errored")
class BadIpv4Checksum(ErroredFrameTest):
    """A wrong IPv4 header checksum: dropped."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        good = udp_packet(1, 2)
        bad = with_ip(good, chksum=(Ether(bytes(good))[IP].chksum ^ 0x5A5A))
        self.run_dropped(bad, p[0], DROP_CHECKSUM)
        self.send(p[0], good)
        self.expect_on(good, [p[1]])


@group("errored")
class MalformedIpv4(ErroredFrameTest):
    """IPv4 with version != 4 or IHL < 5: a parser error, dropped."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        self.run_dropped(with_ip(udp_packet(1, 2), version=6), p[0], DROP_PARSER)
        self.run_dropped(with_ip(udp_packet(1, 2), ihl=4), p[0], DROP_PARSER)


@group("errored")
class TruncatedIpv4(ErroredFrameTest):
    """A frame that ends inside its IPv4 header: a parser error, dropped."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), p[1])
        frame = bytes(udp_packet(1, 2))[:14 + 12]
        self.assertEqual(struct.unpack("!H", frame[12:14])[0], 0x0800)
        self.run_dropped(frame, p[0], DROP_PARSER)
