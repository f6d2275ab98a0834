"""The backlog of a link's queue (tc qdisc statistics) sampled over time.

When a link has a rate (htb, tc.py), its queue is the kernel's qdisc on
the sending end: for an incast receiver's link, the qdisc of the switch
port towards it (<switch>-eth<port>, in the root namespace). A P4 switch
in Mininet that forwards faster than that link then keeps its own queue
short, and the queue that builds (and drops) is this one, so experiments
record it next to what the switch's instrument reports.

Each sample runs `tc -s -j qdisc show dev IF` (about 2 ms), so periods of
10-50 ms are what this is for.
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from .sampler import PeriodicSampler


@dataclass(frozen=True)
class QdiscSample:
    t: float
    """Seconds since the sampler started."""
    time_ns: int
    """Wall clock (CLOCK_REALTIME) of the sample."""
    ifname: str
    backlog_bytes: int
    qlen: int
    drops: int
    """Packets the qdiscs dropped so far (all of the interface's qdiscs)."""
    sent_packets: int


def read_qdisc(ifname: str) -> Optional[tuple[int, int, int, int]]:
    """(backlog bytes, queue length, drops, packets sent) of the root qdisc; None if
    the interface is gone. The root's figures include those of the qdiscs
    below it (htb counts a drop of its pfifo as its own)."""
    return read_qdiscs([ifname], ["dev", ifname]).get(ifname)


def read_qdiscs(ifnames: Sequence[str], dev: Sequence[str] = ()) -> dict[str, tuple[int, int, int, int]]:
    """read_qdisc of several interfaces with one `tc` call (`dev`: its
    filter, none: every interface); those gone are left out."""
    r = subprocess.run(["tc", "-s", "-j", "qdisc", "show", *dev], capture_output=True, text=True)
    if r.returncode != 0:
        return {}
    try:
        qs = json.loads(r.stdout or "[]")
    except json.JSONDecodeError:
        return {}
    roots: dict[Any, Any] = {q.get("dev"): q for q in qs if q.get("root")}
    if dev and qs:  # one interface asked for: tc leaves out its name
        roots = {dev[-1]: next((q for q in qs if q.get("root")), None)}
    return {name: (int(q.get("backlog", 0)), int(q.get("qlen", 0)), int(q.get("drops", 0)),
                   int(q.get("packets", 0)))
            for name in ifnames if (q := roots.get(name)) is not None}


class QdiscSampler(PeriodicSampler):
    """Samples root-namespace interfaces' qdiscs every `period` s in a thread."""

    def __init__(self, ifnames: Sequence[str], period: float = 0.02) -> None:
        super().__init__(period, "qdisc-sampler")
        self.ifnames = list(ifnames)
        self.samples: list[QdiscSample] = []

    def _sample(self) -> None:
        for i in self.ifnames:
            v = read_qdisc(i)
            if v is not None:
                self.samples.append(QdiscSample(time.monotonic() - self._t0, time.time_ns(), i, *v))
