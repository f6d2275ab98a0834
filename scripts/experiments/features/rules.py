"""Seed 001's 24 ACL rules, written with the controller's ACL app
(control/apps/acl.py), and the test traffic's headers that meet them.

ESG: "12 of those ACL rules applied to all ports (permit/deny) while the
other 12 rules were specific to select ports (modify DSCP of the packet)".
Here, in the reference DUT's one ternary `acl` table (every frame is
looked up against all 24 entries at once; the highest priority that
matches wins):

    6 deny, all ports, priority 300..305: traffic the test never sends
      (TCP 22 and 23, UDP 69 and 161-162, sources 192.168/16 and
      172.16/12), so no test frame is denied;
    12 set_dscp, the first port of each pair (two per port; with fewer
      than six pairs, also ports no pair uses: rewrite_ports), priority
      200..211: UDP from 10/8 to ports 5001-5003 -> DSCP 10 (AF11),
      5004-5006 -> DSCP 18 (AF21);
    6 permit, all ports, priority 100..105: UDP from 10/8 to port 5001+i.

Test frames are UDP from 10.0.0.a to 10.0.0.b with the destination port
cycling over 5001..5006 frame by frame (TEST_HEADERS), so every rewrite
rule of a sending port and every permit rule is hit; a frame from the
second port of a pair, which has no rewrite rule, is permitted. A
generator that cannot vary a field frame by frame (p4scope-trafgen, in
Mininet) sends one stream per destination port instead (test_streams).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from p4scope.control.apps.acl import Acl, AclRule, AclSet

from ..params import MAX_PORT
from ..tester.streams import Rate, Stream
from .params import ESG_PAIRS

DPORTS = (5001, 5006)
"""The test frames' UDP destination ports, first and last."""
UDP_DPORT_OFFSET = 36  # Ethernet 14 + IPv4 20 + UDP source port 2
TEST_HEADERS = {"dport": DPORTS[0],
                "vary": [{"offset": UDP_DPORT_OFFSET, "width": 2, "start": DPORTS[0], "step": 1,
                          "count": DPORTS[1] - DPORTS[0] + 1}]}
"""A stream's headers (tester Stream.headers) for frames that meet the rules."""
TEST_SRC = "10.0.0.0/8"
AF11, AF21 = 10, 18
REWRITE_PORTS = 6
"""ESG's 12 DSCP rewrite rules: two on each of six ports."""


def test_streams(tx: int, rx: int, pct: float, size: int, vary: bool = True) -> list[Stream]:
    """Frames from port `tx` to `rx` at `pct` of line rate that meet the
    rules: one stream whose UDP destination port cycles over DPORTS
    (`vary`), or one stream per destination port, each at an equal share
    of `pct`, for a generator that cannot vary it."""
    if vary:
        return [Stream(tx, rx, Rate.pct(pct), size, headers=TEST_HEADERS)]
    lo, hi = DPORTS
    return [Stream(tx, rx, Rate.pct(pct / (hi - lo + 1)), size, name=f"{tx}->{rx}:{d}",
                   headers={"dport": d}) for d in range(lo, hi + 1)]


def _denies() -> list[AclRule]:
    return [AclRule(300, "deny", proto=6, dport=(22, 22)),
            AclRule(301, "deny", proto=6, dport=(23, 23)),
            AclRule(302, "deny", proto=17, dport=(69, 69)),
            AclRule(303, "deny", proto=17, dport=(161, 162)),
            AclRule(304, "deny", src="192.168.0.0/16"),
            AclRule(305, "deny", src="172.16.0.0/12")]


def rewrite_ports(pairs: Sequence[tuple[int, int]]) -> list[int]:
    """The ports with DSCP rewrite rules: the first of each pair and, with
    fewer than REWRITE_PORTS pairs (a Mininet run on a small machine), the
    first ports of ESG's other pairs (then the lowest ports) that no pair
    uses, so the set keeps its 12 rewrite rules; those are looked up by
    every frame and hit by none of the pairs' frames."""
    out = [a for a, _ in pairs]
    used = {p for ab in pairs for p in ab}
    for p in [a for a, _ in ESG_PAIRS] + list(range(1, MAX_PORT + 1)):
        if len(out) >= REWRITE_PORTS:
            break
        if p not in used and p not in out:
            out.append(p)
    return out


def esg_rules(pairs: Sequence[tuple[int, int]]) -> AclSet:
    """The 24 rules (6 deny + 6 permit on all ports, 12 DSCP rewrites, two
    on each of the rewrite_ports); more than six pairs give two rewrite
    rules per pair's first port (2 x pairs)."""
    lo, hi = DPORTS
    mid = (lo + hi) // 2
    rules = _denies()
    prio = 200
    for port in rewrite_ports(pairs):
        for (a, b), dscp in (((lo, mid), AF11), ((mid + 1, hi), AF21)):
            rules.append(AclRule(prio, "set_dscp", dscp=dscp, ingress_port=port, src=TEST_SRC,
                                 proto=17, dport=(a, b)))
            prio += 1
    rules += [AclRule(100 + i, "permit", src=TEST_SRC, proto=17, dport=(d, d))
              for i, d in enumerate(range(lo, hi + 1))]
    return AclSet(f"esg-features-{len(rules)}", rules)


def kind(rule: AclRule) -> str:
    """deny / permit (all ports) or set_dscp (one port)."""
    return rule.action


class RuleInstaller:
    """A testbed's setup_switch: writes the rule set after every reset and
    keeps the ACL app, so the rules' hits can be read after a trial."""

    def __init__(self, rules: AclSet):
        self.rules = rules
        self.acl: Optional[Acl] = None

    def __call__(self, sw: Any) -> None:
        self.acl = Acl(sw)  # a fresh switch: nothing of the last trial's is installed
        self.acl.add(*self.rules.rules)

    def undo(self, sw: Any) -> None:
        """Deletes the rules written last (a DUT kept between trials: Mininet)."""
        if self.acl is not None:
            self.acl.clear()

    def hits(self) -> list[dict[str, Any]]:
        """One row per rule of the last trial: what it matches and the
        (packets, bytes) its direct counter counted."""
        if self.acl is None:
            raise RuntimeError("the rules were never installed")
        counted = self.acl.hits()
        rows = []
        for i, r in enumerate(self.rules.rules):
            b, pk = counted.get(r, (0, 0))
            rows.append({"rule": i, "priority": r.priority, "action": r.action,
                         "scope": "all ports" if r.ingress_port is None
                         else f"port {r.ingress_port}",
                         "ingress_port": -1 if r.ingress_port is None else r.ingress_port,
                         "new_dscp": -1 if r.dscp is None else r.dscp,
                         "match": describe(r), "packets": int(pk), "bytes": int(b)})
        return rows


def describe(r: AclRule) -> str:
    parts = []
    if r.ingress_port is not None:
        parts.append(f"in {r.ingress_port}")
    if r.src:
        parts.append(f"src {r.src}")
    if r.dst:
        parts.append(f"dst {r.dst}")
    if r.proto is not None:
        parts.append({6: "tcp", 17: "udp"}.get(r.proto, f"proto {r.proto}"))
    if r.dport is not None:
        a, b = r.dport
        parts.append(f"dport {a}" if a == b else f"dport {a}-{b}")
    return " ".join(parts)
