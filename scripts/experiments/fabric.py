"""Several reference DUTs in one virtual-time run: a fabric of switches.

Each switch is a `VirtualSwitch` (testbed.py): its own engine, traffic-
manager profile and tables, configured over P4Runtime by the same code a
single-switch run uses. The engine's `Fabric` joins their engines with
links — full duplex, at the ports' line rate, with a propagation delay —
and runs them as one discrete-event loop with one tester, whose sources
and sinks attach to the unlinked ports (numbered (switch, port)). A frame
whose first bit leaves a linked port at t is at the peer port when its
last bit is: t + (size + 8) x 8 / rate + delay (size with FCS, 8 bytes of
preamble). Every switch keeps its own ground truth (its traffic manager's
trace), read through its engine.

    with chain(dut, 4, profile, delay_ns=500) as vf:     # tester on FIRST and LAST
        with vf.locked() as f:
            f.add_stream(*vf.first, **vf.addresses(vf.first, vf.last), size=64, frames=1000)
            f.run(drain=True)
            rows = f.stream_stats()                       # rx_switch, rx_port, latency

`reset()` gives every switch a fresh engine (empty queues, time 0), its
configuration written again, and joins them in a new Fabric.

Switches may run different programs (`programs`, one per switch) and take
extra configuration after their forwarding (`setups`: VirtualSwitch's
setup_switch), e.g. taps running p4src/tap.p4 beside a reference DUT.
"""

from __future__ import annotations

from collections import abc
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from . import traffic
from .params import Profile
from .testbed import DutProgram, Flow, VirtualSwitch, host_ip, host_mac

WEST, EAST = 1, 2
"""A chain switch's ports: WEST faces the previous switch (or the tester on
the first), EAST the next (or the tester on the last)."""

End = tuple[int, int]  # (switch index, port)


@dataclass(frozen=True)
class Link:
    """A full-duplex link between two (switch, port) ends; `rate_bps`
    None: the ports' own line rate (the profile's)."""

    a: End
    b: End
    delay_ns: int = 0
    rate_bps: Optional[int] = None


class VirtualFabric:
    """Switches `i = 0..n-1` (reference DUTs with `profiles[i]`, bridging
    `flows[i]`) joined by `links`; use as a context manager. Switch i's
    engine gets seed `seed + i`, the tester `seed`. `program` is every
    switch's, or one per switch; `setups[i]` (None: nothing) configures
    switch i further after its forwarding, at start and at every reset."""

    def __init__(self, program: "DutProgram | Sequence[DutProgram]", profiles: Sequence[Profile],
                 flows: Sequence[Sequence[Flow]], links: Sequence[Link], *, seed: int = 0,
                 apply_profile: Callable[[Any, Profile], None] = traffic.apply_profile,
                 first: Optional[End] = None, last: Optional[End] = None,
                 setups: Optional[Sequence[Optional[Callable[[Any], None]]]] = None):
        if not profiles:
            raise ValueError("a fabric needs at least one switch")
        if len(flows) != len(profiles):
            raise ValueError(f"{len(profiles)} switches but flows for {len(flows)}")
        programs = (list(program) if isinstance(program, abc.Sequence)
                    else [program] * len(profiles))
        if len(programs) != len(profiles):
            raise ValueError(f"{len(profiles)} switches but {len(programs)} programs")
        self.setups = list(setups) if setups is not None else [None] * len(profiles)
        if len(self.setups) != len(profiles):
            raise ValueError(f"{len(profiles)} switches but {len(self.setups)} setups")
        self.programs = programs
        self.program = programs[0]
        self.profiles = list(profiles)
        self.flows = [list(f) for f in flows]
        self.links = list(links)
        self.seed = int(seed)
        self.apply_profile = apply_profile
        self.first, self.last = first, last
        """Where a chain's tester attaches: (switch, port) at each end."""
        self.switches: list[VirtualSwitch] = []
        self.fabric: Any = None  # p4scope_dataplane.Fabric

    def __len__(self) -> int:
        return len(self.profiles)

    # ----- life cycle ------------------------------------------------------------

    def __enter__(self) -> "VirtualFabric":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        try:
            for i, prof in enumerate(self.profiles):
                vs = VirtualSwitch(self.programs[i], prof, (self.seed + i) % 2**64,
                                   apply_profile=self.apply_profile, setup_switch=self.setups[i])
                self.switches.append(vs)
                vs.start()
                vs.reset(flows=self.flows[i])
            self._join()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stops every switch, each even when an earlier one fails to stop."""
        switches, self.switches, self.fabric = self.switches, [], None
        with ExitStack() as stack:
            for vs in switches:
                stack.callback(vs.close)

    def reset(self, profiles: Optional[Sequence[Profile]] = None) -> None:
        """Fresh engines (empty buffers, time 0) configured as before (with
        `profiles` if given), joined in a new Fabric."""
        if profiles is not None:
            if len(profiles) != len(self.profiles):
                raise ValueError(f"{len(self.profiles)} switches but {len(profiles)} profiles")
            self.profiles = list(profiles)
        self.fabric = None
        for vs, prof in zip(self.switches, self.profiles):
            vs.reset(prof)
        self._join()

    def _join(self) -> None:
        import p4scope_dataplane as dp

        with ExitStack() as stack:
            engines = [stack.enter_context(vs.locked()) for vs in self.switches]
            fabric = dp.Fabric(engines, self.seed)
            for ln in self.links:
                fabric.link(ln.a, ln.b, ln.rate_bps, ln.delay_ns)
        self.fabric = fabric

    # ----- use -------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[Any]:
        """The Fabric, with every switch's device lock held (P4Runtime
        requests wait)."""
        if self.fabric is None:
            raise RuntimeError("the fabric is not started")
        with ExitStack() as stack:
            for vs in self.switches:
                stack.enter_context(vs.locked())
            yield self.fabric

    @staticmethod
    def addresses(src: End, dst: End) -> dict[str, int]:
        """add_stream's addresses for frames from the host behind `src`'s
        port to the host behind `dst`'s (testbed's addressing, by port)."""
        return {"src_mac": host_mac(src[1]), "dst_mac": host_mac(dst[1]),
                "src_ip": host_ip(src[1]), "dst_ip": host_ip(dst[1])}


def chain(program: DutProgram, n: int, profile: Profile, *, delay_ns: int = 0,
          seed: int = 0, profiles: Optional[Sequence[Profile]] = None,
          apply_profile: Callable[[Any, Profile], None] = traffic.apply_profile
          ) -> VirtualFabric:
    """`n` switches in a row (not started): switch i's EAST port linked to
    switch i+1's WEST with `delay_ns`; the tester on the first switch's
    WEST and the last's EAST (seed 003's set-up). Every switch bridges the
    host behind EAST to EAST and the host behind WEST to WEST, so frames
    between the tester's two ports cross all of them. `profiles` (one per
    switch) replaces `profile`."""
    if n < 1:
        raise ValueError(f"a chain has at least one switch, not {n}")
    profs = list(profiles) if profiles is not None else [profile] * n
    if len(profs) != n:
        raise ValueError(f"a chain of {n} switches needs {n} profiles, not {len(profs)}")
    if delay_ns < 0:
        raise ValueError(f"a link's delay is at least 0 ns, not {delay_ns}")
    flows = [[Flow(WEST, EAST), Flow(EAST, WEST)] for _ in range(n)]
    links = [Link((i, EAST), (i + 1, WEST), int(delay_ns)) for i in range(n - 1)]
    return VirtualFabric(program, profs, flows, links, seed=seed, apply_profile=apply_profile,
                         first=(0, WEST), last=(n - 1, EAST))
