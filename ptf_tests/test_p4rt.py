"""P4Runtime stream: packet-out to a port, packet-in from the CPU port."""

from ptf.testutils import group

from dut_base import DutTest, host_mac, udp_packet


@group("p4runtime")
class PacketOut(DutTest):
    """A packet-out leaves by the port its metadata names, unchanged."""

    def runTest(self):
        p = self.need_ports(3)
        for port in p[1:3]:
            pkt = udp_packet(7, 8, sport=port)
            self.sw.packet_out(bytes(pkt), egress_port=port)
            self.expect_on(pkt, [port])


@group("p4runtime")
class PacketIn(DutTest):
    """A frame forwarded to the CPU port reaches the controller as a
    packet-in with its ingress port in the metadata."""

    def runTest(self):
        p = self.need_ports(2)
        self.add_bridging_entry(host_mac(2), self.cpu_port)
        pkt = udp_packet(1, 2)
        self.send(p[1], pkt)
        got = self.sw.packet_ins(timeout=2.0)
        self.assertEqual(len(got), 1, f"packet-ins: {got}")
        self.assertEqual(got[0].payload, bytes(pkt))
        self.assertEqual(got[0].metadata.get("ingress_port"), p[1])
        self.expect_nothing()
