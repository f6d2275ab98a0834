"""Seed 004's trunk test in Mininet (root), its parameters checked before
anything starts.

Real traffic in real time through the reference DUT in `p4scope switch`
(or BMv2): clients h1..hN on DUT ports 1..N, the server bonded over the
DUT's member ports (its host on the first member, tester port
`server_port`). A port is `rate_bps` (what the tester says a port is, and
what every DUT link is shaped to), so a member carries one port's worth
and a trunk two. The seed's 30 s between link events is scaled to
`interval_s` (2 s: 1:15); the controller reacts as fast as it sees the link
change and writes the LAG over P4Runtime, nothing is scaled there.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..params import ParamError, check_int, check_number
from .params import TrunkParams

DUTS = ("p4scope", "bmv2")
"""The Mininet DUTs that run the reference DUT (its LAG written over P4Runtime)."""
MAX_MININET_FRAME = 1518
"""Mininet's links carry 1500-byte packets: 1518 B frames with the FCS."""


@dataclass(frozen=True)
class MininetLagParams(TrunkParams):
    throughput_s: float = 2.0
    warmup_s: float = 0.5
    interval_s: float = 2.0
    bin_ms: float = 50.0
    rate_bps: float = 20e6
    dut: str = "p4scope"
    link_queue: int = 100
    """Packets each shaped DUT link holds (so a trial's backlog drains soon)."""

    def check(self) -> "MininetLagParams":
        self.check_trunk()
        if not 2 <= len(self.members) <= 4:
            raise ParamError(f"--members {','.join(map(str, self.members))}: the server's bond "
                             "in Mininet takes 2..4 member ports")
        if self.dut not in DUTS:
            raise ParamError(f"--dut {self.dut!r}: the trunk needs the reference DUT's LAG, "
                             f"written over P4Runtime: {' or '.join(DUTS)}")
        check_int(self.frame_size, 64, MAX_MININET_FRAME, "--frame-size", unit="B",
                  where="at most 1518 in Mininet (1500-byte links)")
        check_number(self.rate_bps, 1e6, 10e9, "--line-rate", unit="bit/s")
        check_number(self.throughput_s, 0.2, 60, "--throughput-s", unit="s")
        check_number(self.warmup_s, 0, 60, "--warmup-s", unit="s")
        if self.warmup_s >= self.throughput_s:
            raise ParamError(f"--warmup-s {self.warmup_s}: must be less than --throughput-s "
                             f"({self.throughput_s})")
        check_number(self.interval_s, 0.2, 60, "--interval-s", unit="s")
        check_number(self.bin_ms, 5, 1000 * self.interval_s, "--bin-ms", unit="ms",
                     where="at most --interval-s")
        check_int(self.link_queue, 10, 100_000, "--link-queue", unit="packets")
        return self

    # ----- what the checked parameters imply --------------------------------------

    @property
    def server_port(self) -> int:
        """The server's tester port: its host sits on the first member."""
        return self.members[0]

    @property
    def tester_ports(self) -> list[int]:
        return self.client_ports(max(self.clients)) + [self.server_port]

    @property
    def interval_ns(self) -> int:
        return round(self.interval_s * 1e9)

    def throughput_weight(self, n: int) -> float:
        """Seconds: the trial and a second to set it up."""
        return self.iterations * (self.throughput_s + 1.0)

    @property
    def failover_weight(self) -> float:
        return self.iterations * (self.failover_ns / 1e9 + 1.0)
