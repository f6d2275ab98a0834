"""ACL rule sets: permit, deny and DSCP rewrite, with per-rule hit counts.

    rules = [
        AclRule(priority=100, action="deny", dst="10.0.9.0/24", proto=6, dport=(22, 22)),
        AclRule(priority=50, action="set_dscp", dscp=46, src="10.0.1.0/24"),
    ]
    acl = Acl(sw)
    acl.apply(AclSet("edge", rules))       # replaces what was installed before
    acl.hits()                             # {rule: (bytes, packets)}

A higher priority wins (P4Runtime's rule). Unset fields are wildcards.
The seed report 001 runs its throughput tests with 24 such rules and DSCP
rewrite on: `feature_invariance_rules(24)` builds that set.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Optional

from ..device import Switch
from ..entities import TableEntry, decode_match


@dataclass(frozen=True)
class AclRule:
    priority: int
    action: str = "permit"          # permit, deny, set_dscp
    dscp: Optional[int] = None      # the new DSCP of set_dscp
    ingress_port: Optional[int] = None
    ether_type: Optional[int] = None
    src: Optional[str] = None       # "10.0.0.0/8" or an address
    dst: Optional[str] = None
    proto: Optional[int] = None
    match_dscp: Optional[int] = None
    sport: Optional[tuple[int, int]] = None
    dport: Optional[tuple[int, int]] = None

    def entry(self, table: str = "acl") -> TableEntry:
        m: dict = {}
        if self.ingress_port is not None:
            m["ingress_port"] = (self.ingress_port, 0x1FF)
        if self.ether_type is not None:
            m["ether_type"] = (self.ether_type, 0xFFFF)
        if self.src is not None:
            m["ipv4.src_addr"] = _prefix(self.src)
        if self.dst is not None:
            m["ipv4.dst_addr"] = _prefix(self.dst)
        if self.proto is not None:
            m["protocol"] = (self.proto, 0xFF)
        if self.match_dscp is not None:
            m["dscp"] = (self.match_dscp, 0x3F)
        if self.sport is not None:
            m["l4_src_port"] = self.sport
        if self.dport is not None:
            m["l4_dst_port"] = self.dport
        params = {}
        if self.action == "set_dscp":
            if self.dscp is None:
                raise ValueError("set_dscp needs dscp=")
            params["dscp"] = self.dscp
        return TableEntry(table, m, self.action, params, priority=self.priority)


def _prefix(text: str) -> tuple[int, int]:
    net = ipaddress.ip_network(text, strict=False)
    return int(net.network_address), int(net.netmask)


@dataclass
class AclSet:
    name: str
    rules: list[AclRule] = field(default_factory=list)


class Acl:
    def __init__(self, sw: Switch, table: str = "acl"):
        self.sw = sw
        self.table = table
        self.installed: list[AclRule] = []

    def apply(self, acl_set: AclSet) -> None:
        """Replaces the installed rules with `acl_set`'s."""
        self.clear()
        self.sw.insert([r.entry(self.table) for r in acl_set.rules])
        self.installed = list(acl_set.rules)

    def add(self, *rules: AclRule) -> None:
        self.sw.insert([r.entry(self.table) for r in rules])
        self.installed.extend(rules)

    def clear(self) -> None:
        if self.installed:
            self.sw.delete([TableEntry(self.table, r.entry(self.table).match, priority=r.priority)
                            for r in self.installed])
        self.installed = []

    def hits(self) -> dict[AclRule, tuple[int, int]]:
        """(bytes, packets) each installed rule matched (direct counter)."""
        read = self.sw.table(self.table).entries(with_counters=True)
        by_key = {(e.priority, tuple(sorted(e.match.items()))): e.counter for e in read}
        out = {}
        for r in self.installed:
            probe = r.entry(self.table)
            enc = probe.encode(self.sw.schema)
            key = (r.priority, tuple(sorted(decode_match(self.sw.schema.table(self.table),
                                                         enc.match).items())))
            out[r] = by_key.get(key) or (0, 0)
        return out


def feature_invariance_rules(n: int = 24, dscp: int = 10) -> AclSet:
    """A set like seed report 001's: n rules that permit and rewrite DSCP
    of test traffic (10.0.0.0/8, UDP) and deny traffic that never occurs
    in the test, so every frame is looked up against all of them."""
    rules = [AclRule(priority=1000 + i, action="deny", src=f"192.168.{i}.0/24", proto=17,
                     dport=(1000 + i, 1000 + i)) for i in range(max(0, n - 1))]
    rules.append(AclRule(priority=1, action="set_dscp", dscp=dscp, src="10.0.0.0/8"))
    return AclSet(f"feature-invariance-{n}", rules)
