"""Interface counters sampled over time, for rates as a port sees them
(e.g. the aggregate rate into an incast receiver, read at the switch's
port towards it).

Switch interfaces are in the root namespace, where /sys/class/net is this
process's own, so a sample is a few file reads: cheap enough for 10 ms
periods. (Inside Mininet hosts /sys is not remounted; read those with a
host command instead.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

from .sampler import PeriodicSampler

FIELDS = ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_dropped", "tx_dropped")


def read_counters(ifname: str) -> dict[str, int]:
    base = f"/sys/class/net/{ifname}/statistics/"
    out = {}
    for f in FIELDS:
        with open(base + f) as fh:
            out[f] = int(fh.read())
    return out


@dataclass
class Series:
    t: list[float] = field(default_factory=list)
    """Seconds since the sampler started."""
    samples: dict[str, list[dict[str, int]]] = field(default_factory=dict)

    def rates(self, ifname: str, key: str = "tx_bytes") -> list[tuple[float, float]]:
        """(mid-time s, per second) between consecutive samples; bytes
        become bit/s."""
        s = self.samples[ifname]
        mult = 8 if key.endswith("bytes") else 1
        out = []
        for i in range(1, len(s)):
            dt = self.t[i] - self.t[i - 1]
            if dt > 0:
                out.append(((self.t[i] + self.t[i - 1]) / 2, mult * (s[i][key] - s[i - 1][key]) / dt))
        return out


class CounterSampler(PeriodicSampler):
    """Samples root-namespace interfaces every `period` s in a thread.

        with CounterSampler(["s1-eth17"], 0.01) as cs:
            ...
        cs.series.rates("s1-eth17")
    """

    sample_on_stop = True

    def __init__(self, ifnames: Sequence[str], period: float = 0.05) -> None:
        super().__init__(period)
        self.ifnames = list(ifnames)
        self.series = Series(samples={i: [] for i in self.ifnames})

    def _sample(self) -> None:
        now = time.monotonic() - self._t0
        vals = {i: read_counters(i) for i in self.ifnames}
        self.series.t.append(now)
        for i, v in vals.items():
            self.series.samples[i].append(v)
