"""Seed 004's load-balancing policies, and how the reference DUT does each.

A v1model action selector picks a group member from a hash of fields fixed
when the program is compiled; P4Runtime has no message that changes them.
The DUT (p4src/dut.p4) is therefore compiled once per hash policy, with the
-D macro that keys its LAG selector on that policy's fields. Round robin is
no hash of the packet: it needs per-packet state (a counter advanced by
every frame), which a selector does not keep, so the reference DUT cannot
do it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Policy:
    name: str
    label: str
    defines: Optional[dict[str, str]] = field(default=None)
    """-D macros of the DUT that does it (None: the DUT cannot)."""
    why_not: str = ""

    @property
    def supported(self) -> bool:
        return self.defines is not None


ROUND_ROBIN_WHY = ("a v1model action selector picks a member from a hash of the packet's "
                   "fields, so every frame of a flow takes the same member; round robin "
                   "needs state that every frame advances (a per-LAG counter), which no "
                   "selector keeps and P4Runtime cannot configure")

POLICIES = {p.name: p for p in (
    Policy("ip-dst", "IP destination", {"LAG_POLICY_IP_DST": "1"}),
    Policy("src", "source address (MAC and IPv4)", {"LAG_POLICY_SRC": "1"}),
    Policy("mac", "MAC hash (source and destination MAC)", {"LAG_POLICY_MAC": "1"}),
    Policy("round-robin", "round robin", None, ROUND_ROBIN_WHY),
    Policy("l2-l4", "the DUT's own hash (MACs, IPv4 addresses and protocol, L4 ports)", {}),
)}
"""Seed 004's four policies, then the DUT's selector as shipped."""

SEED_POLICIES = ("ip-dst", "src", "mac", "round-robin")
