"""The `chain` testbed: RFC 2889's forwarding tests through a chain of
reference DUTs in virtual time (seed 003's "4 layers"), the tester on the
first and the last switch.

    with ChainTestbed(dut, profile, switches=4, ports=[1, 2, 3, 4]) as bed:
        t = bed.trial(full_mesh([1, 2, 3, 4], 64, 50.0, 100e9), 10_000)

The tester's ports keep their numbers: the first half of them (rounded
up) are ports of the first switch, the rest ports of the last, so traffic
between the halves crosses every switch. Switch i reaches switch i + 1
through its port EAST_LINK, linked to that switch's WEST_LINK (the
engine's Fabric, fabric.VirtualFabric), each link running at the line
rate of the tester ports on one side together (a trunk that carries what
they send: the chain adds hops, not a bottleneck). Every switch forwards
on static entries for every tester host (its own port, or the link
towards the host's switch) and floods over its tester ports and links
(broadcast crosses the chain), so no learning digest is raised.

A trial is the virtual testbed's (tester.virtual): fresh switches, the
streams for `duration_ns`, counting until the settle time after; the
settle time is the single switch's for each switch crossed, so a frame
still on its way through the chain is not counted as lost, and frames
still queued anywhere in the chain, or on a link, count as not forwarded
(Trial.queued_at_end).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..fabric import Link, VirtualFabric
from ..linerate import GBPS_100
from ..params import Profile
from ..testbed import DutProgram, host_ip, host_mac
from ..tester.streams import Stream
from ..tester.trial import Trial, histogram_rows, stream_rows
from ..tester.virtual import VirtualTestbed, default_settle_ns
from .. import traffic

WEST_LINK, EAST_LINK = 101, 102
"""A chain switch's ports towards the switch before it and the one after
(no tester port has these numbers)."""
NOT_A_TESTER_PORT = -1
"""rx_port of frames that left the chain where no tester port is."""
STEPS = 20
"""A trial runs in this many steps of virtual time (the progress bar)."""


def home_switches(ports: Sequence[int], switches: int) -> dict[int, int]:
    """tester port -> the switch it is on: the first half of the ports
    (rounded up) on switch 0, the rest on the last switch (all on switch
    0 when there is one)."""
    ports = sorted(ports)
    first = (len(ports) + 1) // 2
    return {p: 0 if i < first or switches == 1 else switches - 1 for i, p in enumerate(ports)}


def toward(home: dict[int, int], switch: int, port: int) -> int:
    """Switch `switch`'s port for frames to the host behind tester `port`."""
    there = home[port]
    if there == switch:
        return port
    return EAST_LINK if there > switch else WEST_LINK


def link_ports(switch: int, switches: int) -> list[int]:
    """Switch `switch`'s ports linked to its neighbours."""
    return ([WEST_LINK] if switch > 0 else []) + ([EAST_LINK] if switch < switches - 1 else [])


def configure(home: dict[int, int], switch: int, switches: int):
    """setup_switch of chain switch `switch`: smac and dmac entries for
    every tester host (where its frames come from and go to), and the flood
    domain of its tester ports and links."""
    from ...control.apps.flooding import Flooding

    def setup(sw: Any) -> None:
        smac, dmac = sw.table("smac"), sw.table("dmac")
        entries = []
        for p in sorted(home):
            port = toward(home, switch, p)
            entries.append(smac.entry({"hdr.ethernet.src_addr": host_mac(p)}, "smac_hit",
                                      port=port))
            entries.append(dmac.entry({"hdr.ethernet.dst_addr": host_mac(p)}, "forward",
                                      port=port))
        sw.insert(entries)
        local = [p for p, s in home.items() if s == switch]
        Flooding(sw).domain(local + link_ports(switch, switches))

    return setup


class ChainTestbed(VirtualTestbed):
    """Trials through `switches` reference DUTs in a row (see the module
    doc), each with traffic-manager `profile`, the tester's `ports` at
    `line_rate_bps`; `delay_ns`: each link's propagation delay. Use as a
    context manager (or start()/close())."""

    name = "chain"

    def __init__(self, program: DutProgram, profile: Profile, switches: int,
                 ports: Sequence[int], line_rate_bps: float = GBPS_100, *, delay_ns: int = 0,
                 seed: int = 0):
        if switches < 2:
            raise ValueError(f"a chain has at least two switches, not {switches}")
        super().__init__(None, line_rate_bps, profile)
        self.program, self.switches, self.delay_ns, self.seed = program, switches, delay_ns, seed
        self.ports = sorted(int(p) for p in ports)
        self.home = home_switches(self.ports, switches)
        per_side = max(sum(1 for s in self.home.values() if s == 0),
                       sum(1 for s in self.home.values() if s != 0))
        self.link_rate_bps = int(line_rate_bps * per_side)
        links = [Link((i, EAST_LINK), (i + 1, WEST_LINK), int(delay_ns), self.link_rate_bps)
                 for i in range(switches - 1)]
        self.vf = VirtualFabric(program, [profile] * switches, [[] for _ in range(switches)],
                                links, seed=seed, apply_profile=traffic.apply_profile)
        self.last_rows: list[dict[str, Any]] = []
        """The last trial's stream_stats rows, rx_port a tester port (or
        NOT_A_TESTER_PORT)."""

    # ----- life cycle ------------------------------------------------------------

    def __enter__(self) -> "ChainTestbed":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> None:
        self.vf.start()
        for i, vs in enumerate(self.vf.switches):
            vs.setup_switch = configure(self.home, i, self.switches)

    def close(self) -> None:
        self.vf.close()

    def layout(self) -> dict[str, Any]:
        """What run.json says of the chain."""
        return {"switches": self.switches,
                "first_switch_ports": [p for p, s in self.home.items() if s == 0],
                "last_switch_ports": [p for p, s in self.home.items() if s != 0],
                "link_rate_bps": self.link_rate_bps, "link_delay_ns": self.delay_ns,
                "link_ports": {"west": WEST_LINK, "east": EAST_LINK}}

    # ----- a trial ---------------------------------------------------------------

    def settle_for(self, streams: Sequence[Stream]) -> int:
        """The single switch's settle time for each switch crossed, plus
        the links' delays."""
        one = default_settle_ns(streams, self.line_rate_bps)
        return one * self.switches + self.delay_ns * (self.switches - 1)

    def _add(self, f: Any, st: Stream, duration_ns: int) -> int:
        kw = self._engine_args(st, duration_ns)
        rx = st.rx_port if st.rx_port is not None else st.tx_port
        kw.setdefault("dst_mac", host_mac(rx))
        kw.setdefault("src_mac", host_mac(st.tx_port))
        kw.setdefault("src_ip", host_ip(st.tx_port))
        kw.setdefault("dst_ip", host_ip(rx))
        return int(f.add_stream(self.home[st.tx_port], st.tx_port, **kw))

    def _tester_port(self, row: dict[str, Any]) -> dict[str, Any]:
        sw, port = row.get("rx_switch"), row.get("rx_port")
        if port is not None and self.home.get(port) != sw:
            row = {**row, "rx_port": NOT_A_TESTER_PORT}
        return row

    def trial(self, streams: Sequence[Stream], duration_ns: int, *, records: bool = False,
              tick: Optional[Any] = None, settle_ns: Optional[int] = None) -> Trial:
        if duration_ns <= 0:
            raise ValueError("a trial lasts a positive time")
        if not streams:
            raise ValueError("a trial needs at least one stream")
        if self.setup_switch is not None:
            raise ValueError("the chain configures its switches itself (no setup_switch)")
        for st in streams:
            for p in (st.tx_port, st.rx_port):
                if p is not None and p not in self.home:
                    raise ValueError(f"stream {st.label}: port {p} is not a tester port")
        settle = self.settle_for(streams) if settle_ns is None else int(settle_ns)
        self.vf.reset()
        if self.setup is not None:
            for vs in self.vf.switches:
                with vs.locked() as e:
                    self.setup(e)
        duration_ns = int(duration_ns)
        with self.vf.locked() as f:
            ids = [self._add(f, st, duration_ns) for st in streams]
            f.record_rx(records)
        for k in range(1, STEPS + 1):
            with self.vf.locked() as f:
                f.run(until_ns=duration_ns * k // STEPS)
            if tick is not None:
                tick(k / STEPS)
        with self.vf.locked() as f:
            f.run(until_ns=duration_ns + settle)
            rows = [self._tester_port(dict(r)) for r in f.stream_stats()]
            hist = {sid: f.latency_histogram(sid) for sid in ids}
            recs = ({k: np.asarray(v) for k, v in f.rx_records().items()} if records else None)
            on_links = int(f.in_flight())
            digest = str(f.sim_digest())
            f.record_rx(False)
        queued = on_links
        for vs in self.vf.switches:
            with vs.locked() as e:
                queued += sum(int(q["pkts"]) for q in e.tm_queue_stats())
        self.last_records, self.last_rows = recs, rows
        table = stream_rows(streams, rows, ids, self.line_rate_bps, duration_ns, recs)
        return Trial(table, duration_ns, settle, self.line_rate_bps, queued,
                     histogram_rows(ids, [s.label for s in streams], hist),
                     {"testbed": self.name, "switches": self.switches, "digest": digest})
