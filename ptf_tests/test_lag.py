"""LAG: flows spread over the members by hash; a removed member's flows
move to the others and come back when it returns."""

from ptf.testutils import group

from dut_base import host_mac
from dut_features import LagTest, RoutingTest

FLOWS = 48


@group("lag")
class LagDistribution(LagTest):
    """Every flow leaves by exactly one member, always the same one, and
    every member carries some flows."""

    def runTest(self):
        p = self.need_ports(4)
        members = p[1:4]
        self.add_lag(1, members)
        self.add_bridging_lag_entry(host_mac(2), 1)
        flows = self.flows(FLOWS)
        first = self.spread(flows, p[0], members)
        again = self.spread(flows, p[0], members)
        self.assertEqual(first, again, "a flow changed member between two sends")
        self.assertEqual(set(self.per_port(first)), set(members),
                         f"members without flows: {self.per_port(first)}")


@group("lag")
class LagMemberRemoval(LagTest):
    """Member removed: nothing leaves by it, its flows use the others.
    Member back: every flow returns to where it was."""

    def runTest(self):
        p = self.need_ports(4)
        members = p[1:4]
        self.add_lag(1, members)
        self.add_bridging_lag_entry(host_mac(2), 1)
        flows = self.flows(FLOWS)
        before = self.spread(flows, p[0], members)
        left = members[1:]                       # the first member: it always carries flows
        self.set_lag_members(1, left)
        during = self.spread(flows, p[0], left)
        self.set_lag_members(1, members)
        after = self.spread(flows, p[0], members)
        self.assertEqual(before, after, "flows did not return to their members")
        moved = [f for f, port in before.items() if port == members[0]]
        self.assertTrue(moved)
        self.assertEqual(set(self.per_port(during)), set(left),
                         f"remaining members without flows: {self.per_port(during)}")
        kept = [f for f, port in before.items() if port != members[0]]
        self.assertTrue(any(during[f] == before[f] for f in kept),
                        "no flow of a remaining member stayed where it was")


@group("lag")
class LagAsNextHop(LagTest, RoutingTest):
    """A route whose next hop is a LAG: routed, then spread over the LAG."""

    def runTest(self):
        p = self.need_ports(3)
        members = p[1:3]
        self.add_lag(2, members)
        self.add_route_via_lag("10.0.2.0/24", "00:00:00:aa:00:09", 2)
        sent = [self.to_router(1, "10.0.2.5", sport=30000 + i) for i in range(16)]
        exp = {bytes(self.routed(s, "00:00:00:aa:00:09")): i for i, s in enumerate(sent)}
        for s in sent:
            self.send(p[0], s)
        seen = {}
        for _ in sent:
            got = self.receive(None)
            self.assertIsNotNone(got, "a routed flow never arrived")
            port, data = got
            self.assertIn(data, exp, f"unexpected frame on port {port}")
            self.assertIn(port, members)
            seen[exp[data]] = port
        self.expect_nothing()
        self.assertEqual(len(seen), len(sent))
        self.assertEqual(set(seen.values()), set(members))
