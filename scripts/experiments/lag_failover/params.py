"""Seed 004's trunk test, its parameters checked before anything starts.

The seed (Tolly, Sun Trunking) aggregates two Gigabit Ethernet adapters of a
server into one trunk and measures (1) the trunk's throughput to 2 and 3
clients and (2) failover: under load, the primary link is pulled at 30 s,
put back at 60 s, the secondary pulled at 90 s and put back at 120 s; six
failure/recovery iterations are averaged.

On the reference DUT in virtual time the trunk is a LAG of the DUT's member
ports (`members`) towards the server; clients 1..N send to the server
through it at 100GbE. The 30 s schedule is scaled to `interval_us` (600 us:
1:50,000), and the controller's reaction to a port-down event to
`reaction_us` (10 us: the seed's best recovery, 0.5 s, at the same scale).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Collection, Sequence

from ..collector_port import COLLECTOR_PORT
from ..linerate import GBPS_100, frames_per_second
from ..params import MAX_PORT, ParamError, check_int, check_number
from .policies import POLICIES, SEED_POLICIES

FAILOVER = ("controller", "dataplane")
"""controller: the controller rewrites the LAG group after its reaction
delay; dataplane: members watch their own ports (P4Runtime watch_port), so
the selector skips a down member at once (the controller still rewrites)."""
SEED_CLIENTS = (2, 3)
SEED_MEMBERS = (11, 12)
SEED_FRAME = 1518
MAX_CLIENTS = 8
MAX_MEMBERS = 4
MAX_ITERATIONS = 100


def parse_names(text: str, known: Collection[str], option: str) -> tuple[str, ...]:
    """'a, b,a' -> ('a', 'b'), each one of `known` (check_names)."""
    out = tuple(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
    check_names(out, known, option)
    return out


def check_names(names: Sequence[str], known: Collection[str], option: str) -> None:
    """At least one name, each one of `known`."""
    if not names:
        raise ParamError(f"{option}: empty list (known: {', '.join(known)})")
    for x in names:
        if x not in known:
            raise ParamError(f"{option} {x}: unknown (known: {', '.join(known)})")


def parse_ports(text: str, option: str) -> tuple[int, ...]:
    """'11,12' -> (11, 12); an empty list is allowed here (check() says why not)."""
    try:
        return tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise ParamError(f"{option}: expected comma-separated port numbers, got {text!r}") from None


def schedule(members, interval_ns: int) -> list[tuple[str, int, bool, int]]:
    """The seed's schedule: (label, member port, up, time ns): each member
    in turn pulled at an interval's end and put back an interval later."""
    out = []
    for i, port in enumerate(members):
        name = "ABCD"[i]
        out.append((f"{name} down", port, False, (2 * i + 1) * interval_ns))
        out.append((f"{name} up", port, True, (2 * i + 2) * interval_ns))
    return out


@dataclass(frozen=True)
class TrunkParams(ABC):
    """What both modes take and check alike (ParamError naming the option);
    each mode adds its times, in its own units, and its line rate."""

    clients: tuple[int, ...] = SEED_CLIENTS
    policies: tuple[str, ...] = SEED_POLICIES + ("l2-l4",)
    failover: tuple[str, ...] = FAILOVER
    members: tuple[int, ...] = SEED_MEMBERS
    frame_size: int = SEED_FRAME
    client_load_pct: float = 100.0
    """Throughput test: each client's offered load, % of its line rate."""
    failover_load_pct: float = 90.0
    """Failover test: all clients together, % of one member's line rate
    (what one member can carry, so only the failover itself loses frames)."""
    iterations: int = 3
    rate_bps: float = GBPS_100
    """What a port is: loads are shares of it."""

    def check_trunk(self) -> None:
        """Members, clients, policies, failover modes, frame size, loads and
        iterations."""
        if not self.members:
            raise ParamError("--members: a LAG with no members (give its ports, e.g. 11,12)")
        check_int(len(self.members), 1, MAX_MEMBERS, "--members", where="member ports")
        if len(set(self.members)) != len(self.members):
            raise ParamError(f"--members: ports repeat: {list(self.members)}")
        if not self.clients:
            raise ParamError("--clients: no client counts")
        for n in self.clients:
            check_int(n, 1, MAX_CLIENTS, "--clients")
        clients = set(range(1, max(self.clients) + 1))
        for port in self.members:
            if not 1 <= port <= MAX_PORT or port == COLLECTOR_PORT:
                raise ParamError(f"--members: port {port} does not exist on the DUT (its ports "
                                 f"are 1..{MAX_PORT}; {COLLECTOR_PORT} is the collector's)")
            if port in clients:
                raise ParamError(f"--members: port {port} is a client's (clients use ports "
                                 f"1..{max(self.clients)})")
        check_names(self.policies, POLICIES, "--policies")
        check_names(self.failover, FAILOVER, "--failover")
        check_int(self.frame_size, 64, 9216, "--frame-size", unit="B")
        check_number(self.client_load_pct, 0, 100, "--client-load-pct", above=True, unit="%")
        check_number(self.failover_load_pct, 0, 100, "--failover-load-pct", above=True, unit="%")
        check_int(self.iterations, 1, MAX_ITERATIONS, "--iterations")

    # ----- what the checked parameters imply --------------------------------------

    @property
    @abstractmethod
    def interval_ns(self) -> int:
        """The seed's 30 s between link events, scaled: in virtual or wall-clock ns."""

    @abstractmethod
    def throughput_weight(self, n: int) -> float:
        """A throughput case's share of the run's progress, with `n` clients."""

    @property
    @abstractmethod
    def failover_weight(self) -> float:
        """A failover case's share of the run's progress."""

    def client_ports(self, n: int) -> list[int]:
        return list(range(1, n + 1))

    def events(self) -> list[tuple[str, int, bool, int]]:
        """The seed's schedule from the load's start (schedule())."""
        return schedule(self.members, self.interval_ns)

    @property
    def failover_ns(self) -> int:
        """How long a failover trial offers its load: one interval after the last event."""
        return (2 * len(self.members) + 1) * self.interval_ns


@dataclass(frozen=True)
class LagFailoverParams(TrunkParams):
    throughput_us: float = 200.0
    warmup_us: float = 20.0
    interval_us: float = 600.0
    reaction_us: float = 10.0
    bin_us: float = 10.0

    def check(self) -> "LagFailoverParams":
        self.check_trunk()
        check_number(self.throughput_us, 1, 100_000, "--throughput-us", unit="us")
        check_number(self.warmup_us, 0, 100_000, "--warmup-us", unit="us")
        if self.warmup_us >= self.throughput_us:
            raise ParamError(f"--warmup-us {self.warmup_us}: must be less than --throughput-us "
                             f"({self.throughput_us})")
        check_number(self.interval_us, 1, 100_000, "--interval-us", unit="us")
        check_number(self.reaction_us, 0, self.interval_us, "--reaction-us", unit="us",
                     where="at most --interval-us: the controller reacts before the next event")
        check_number(self.bin_us, 0.1, self.interval_us, "--bin-us", unit="us",
                     where="at most --interval-us")
        frame_us = 1e6 / frames_per_second(self.frame_size, self.rate_bps)
        if self.interval_us < 10 * frame_us:
            raise ParamError(f"--interval-us {self.interval_us}: shorter than 10 frames of "
                             f"{self.frame_size} B ({10 * frame_us:.3g} us)")
        return self

    @property
    def interval_ns(self) -> int:
        return round(self.interval_us * 1000)

    @property
    def reaction_ns(self) -> int:
        return round(self.reaction_us * 1000)

    @property
    def bin_ns(self) -> int:
        return max(1, round(self.bin_us * 1000))

    def throughput_weight(self, n: int) -> float:
        return self.iterations * n * self.throughput_us / 200

    @property
    def failover_weight(self) -> float:
        return self.iterations * self.failover_ns / 600_000
