"""Seed 001's features-on tests, their parameters checked before anything
starts: frame sizes 64, 82 and 97 B on six adjacent port pairs, and ESG's
fairness scenarios (N source ports at line rate into one egress port).

The seed "randomly chose six adjacent pairs (e.g. ports 1 and 2, or 31 and
32)"; p4scope fixes the choice so runs compare: 1-2, 7-8, 13-14, 19-20,
25-26 and 31-32 (spread over a 32-port switch, both of the seed's examples
included). Fairness: sources 1..N, egress port 32 (ESG picked source ports
at random and saw the same split whatever the grouping).

In Mininet (real traffic at software rates, MODE_DEFAULTS) the pairs are
as many of ESG's as the machine's cores carry (mininet_pairs) and trials
last `trial_s`; the line rate is what the tester says a port is."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Optional

from ..params import (MAX_PORT, ParamError, check_int, check_mode, check_number, check_ports,
                      check_sizes, mode_values)

ESG_SIZES = (64, 82, 97)
ESG_PAIRS = ((1, 2), (7, 8), (13, 14), (19, 20), (25, 26), (31, 32))
ESG_FAIRNESS = ((6, 64), (6, 1280), (8, 64), (8, 1280), (16, 64), (16, 97), (16, 1280))
"""(N source ports, frame size) of ESG's fairness runs."""
FAIR_EGRESS = 32
TESTS = ("throughput", "latency", "fairness")
MAX_FAIR_SIZE = 9216
DUTS = ("p4scope", "bmv2")
"""The Mininet DUTs that take the rules: the reference DUT over P4Runtime."""
CORES_PER_PAIR = 2
"""A pair in Mininet runs two generators and two analyzers beside the switch."""


def mininet_pairs(cpus: Optional[int] = None) -> tuple[tuple[int, int], ...]:
    """ESG's pairs a Mininet run uses by default: one per CORES_PER_PAIR
    cores (at least one, at most six)."""
    n = (cpus if cpus is not None else os.cpu_count() or 1) // CORES_PER_PAIR
    return ESG_PAIRS[:max(1, min(len(ESG_PAIRS), n))]


MODE_DEFAULTS: dict[str, dict[str, Any]] = {
    "virtual": {"resolution_pct": 0.1, "rate_bps": 100e9, "pairs": ESG_PAIRS},
    "mininet": {"resolution_pct": 1.0, "rate_bps": 10e6, "trial_s": 1.0},
}
"""What a mode's run uses for the parameters not given (Mininet's pairs:
mininet_pairs(), from this machine's cores)."""


def pairs_text(pairs) -> str:
    return ",".join(f"{a}-{b}" for a, b in pairs)


def fairness_text(scenarios) -> str:
    return ",".join(f"{n}:1@{s}" for n, s in scenarios)


_SCENARIO = re.compile(r"(\d+):1@(\d+)")


def parse_fairness(text: str) -> tuple[tuple[int, int], ...]:
    """'6:1@64,16:1@97' -> ((6, 64), (16, 97)); 'none' or '' -> ()."""
    if text.strip().lower() in ("", "none"):
        return ()
    out = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        m = _SCENARIO.fullmatch(item)
        if not m:
            raise ParamError(f"--fairness: expected N:1@SIZE items (e.g. 8:1@64), got {item!r}")
        out.append((int(m.group(1)), int(m.group(2))))
    return tuple(out)


@dataclass(frozen=True)
class FeaturesParams:
    """sizes: frame sizes of the throughput and latency tests (FCS
    included); pairs: the port pairs, each sending both ways, all at once;
    tests: which of TESTS; tolerance_pct and resolution_pct: the throughput
    search's loss tolerance and resolution (% of line rate); trial_frames:
    frames each stream sends per trial; latency_trials: trials at the
    throughput rate per size; fairness: (N, size) scenarios, N sources at
    line rate into FAIR_EGRESS with the rules on; fairness_us: how long each
    fairness trial offers its load (virtual time); rate_bps: line rate.

    Mininet only: dut (p4scope or bmv2, the reference DUT), trial_s (every
    trial's length, fairness's too; virtual time sizes trials by
    trial_frames and fairness_us instead)."""

    sizes: tuple[int, ...] = ESG_SIZES
    pairs: tuple[tuple[int, int], ...] = ESG_PAIRS
    tests: tuple[str, ...] = TESTS
    tolerance_pct: float = 0.0
    resolution_pct: float = 0.1
    trial_frames: int = 10_000
    latency_trials: int = 20
    fairness: tuple[tuple[int, int], ...] = ESG_FAIRNESS
    fairness_us: float = 100.0
    rate_bps: float = 100e9
    mode: str = "virtual"
    dut: str = "p4scope"
    trial_s: Optional[float] = None

    @classmethod
    def for_mode(cls, mode: str, **given: Any) -> "FeaturesParams":
        """A `mode` run's parameters: those given (None: not given) over
        the mode's defaults."""
        more = {"pairs": mininet_pairs()} if mode == "mininet" else {}
        return cls(mode=mode, **{**more, **mode_values(mode, MODE_DEFAULTS, given)})

    @property
    def trial_ns(self) -> Optional[int]:
        """A trial's length when it is set in time (Mininet), else None."""
        return None if self.trial_s is None else int(round(self.trial_s * 1e9))

    @property
    def ports(self) -> list[int]:
        """Every port a case uses (the Mininet testbed's tester ports)."""
        out = {p for ab in self.pairs for p in ab} if {"throughput", "latency"} & set(
            self.tests) else set()
        if "fairness" in self.tests:
            for n, _ in self.fairness:
                out |= {*fairness_sources(n), fairness_egress(n)}
        return sorted(out)

    @property
    def largest_frame(self) -> int:
        """The largest frame any case sends."""
        sizes = [*self.sizes] if {"throughput", "latency"} & set(self.tests) else []
        if "fairness" in self.tests:
            sizes += [s for _, s in self.fairness]
        return max(sizes)

    def check(self) -> "FeaturesParams":
        check_sizes(self.sizes, "--sizes")
        if len(set(self.sizes)) != len(self.sizes):
            raise ParamError(f"--sizes: a size repeats: {list(self.sizes)}")
        if not self.pairs:
            raise ParamError("--pairs: empty")
        ports = [p for ab in self.pairs for p in ab]
        for p in ports:
            if not 1 <= p <= MAX_PORT:
                raise ParamError(f"--pairs: port {p} is outside 1..{MAX_PORT}")
        if len(set(ports)) != len(ports):
            raise ParamError(f"--pairs: a port is in more than one pair or paired with itself: "
                             f"{pairs_text(self.pairs)}")
        if not self.tests:
            raise ParamError("--tests: none")
        for t in self.tests:
            if t not in TESTS:
                raise ParamError(f"--tests: {t!r} is not one of {', '.join(TESTS)}")
        check_number(self.tolerance_pct, 0.0, 99.0, "--tolerance-pct", unit="%")
        check_number(self.resolution_pct, 0.001, 10.0, "--resolution-pct", unit="% of line rate")
        check_int(self.trial_frames, 100, 10_000_000, "--trial-frames")
        check_int(self.latency_trials, 1, 1000, "--latency-trials")
        check_number(self.fairness_us, 1.0, 100_000.0, "--fairness-us", unit="us")
        if "fairness" in self.tests and not self.fairness:
            raise ParamError("--fairness: no scenario (or leave fairness out of --tests)")
        for n, size in self.fairness:
            check_int(n, 2, MAX_PORT - 1, "--fairness", where=f"{n}:1@{size}: N source ports")
            check_ports(fairness_sources(n), fairness_egress(n), "--fairness")
            check_sizes((size,), f"--fairness {n}:1@{size}")
        check_mode(self.mode)
        if self.mode == "mininet":
            self._check_mininet()
        elif self.trial_s is not None:
            raise ParamError("--trial-s: for --mode mininet only")
        return self

    def _check_mininet(self) -> None:
        check_number(self.rate_bps, 1e6, 100e9, "--line-rate")
        if self.trial_s is None:
            raise ParamError("--trial-s: a Mininet trial needs a length")
        check_number(self.trial_s, 0.05, 60.0, "--trial-s", unit="s")
        if self.dut not in DUTS:
            raise ParamError(f"--dut {self.dut!r}: the ACL rules need the reference DUT "
                             f"({' or '.join(DUTS)})")


def fairness_sources(n: int) -> list[int]:
    """Source ports 1..N (skipping the egress port)."""
    return [p for p in range(1, n + 2) if p != fairness_egress(n)][:n]


def fairness_egress(n: int) -> int:
    """Port 32, or N + 1 when N sources need port 32 too."""
    return FAIR_EGRESS if n < FAIR_EGRESS else n + 1
