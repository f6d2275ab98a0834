"""The RFC 2544 suite's parameters (defaults from RFC 2544 s. 9 and 26 and
METHODS.md), checked before anything starts."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..params import ParamError

STANDARD_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
JUMBO_SIZES = (2048, 4096, 9216)
TESTS = ("throughput", "latency", "frame_loss", "back_to_back", "recovery")
MAX_PORT = 63
MAX_FRAME = 9216


@dataclass(frozen=True)
class Rfc2544Params:
    """sizes: frame sizes (FCS included); pairs: port pairs, each sending
    both ways, all pairs at once; tests: which of TESTS; tolerance_pct: the
    loss a throughput trial may have (0: RFC 2544; 0.01 or 0.5: PDR);
    resolution_pct: the search's resolution in % of line rate; trial_frames:
    frames per stream in a throughput or loss trial (None: enough that an
    overload of one resolution step shows as 50 frames); latency_trials:
    trials at the throughput rate (RFC 2544: at least 20); b2b_trials: how
    many times the longest clean burst is confirmed (RFC: 50); b2b_max_frames:
    the longest burst tried (None: twice what the buffer holds at line rate);
    recovery_overload: the overload phase's rate over the throughput (1.1);
    dut_rate_pct: the DUT's egress ports shaped to this share of line rate
    (100: unshaped), a DUT whose limit is known."""

    sizes: tuple[int, ...] = STANDARD_SIZES
    pairs: tuple[tuple[int, int], ...] = ((1, 2),)
    tests: tuple[str, ...] = TESTS
    tolerance_pct: float = 0.0
    resolution_pct: float = 0.1
    trial_frames: Optional[int] = None
    latency_trials: int = 20
    b2b_trials: int = 50
    b2b_max_frames: Optional[int] = None
    recovery_overload: float = 1.1
    dut_rate_pct: float = 100.0
    rate_bps: float = 100e9

    def check(self) -> "Rfc2544Params":
        if not self.sizes:
            raise ParamError("--sizes: no frame sizes")
        for s in self.sizes:
            if not 64 <= s <= MAX_FRAME:
                raise ParamError(f"--sizes: frame size {s} is outside 64..{MAX_FRAME} bytes")
        if len(set(self.sizes)) != len(self.sizes):
            raise ParamError("--sizes: a frame size repeats")
        if not self.pairs:
            raise ParamError("--pairs: no port pairs")
        seen: set[int] = set()
        for a, b in self.pairs:
            for p in (a, b):
                if not 1 <= p <= MAX_PORT:
                    raise ParamError(f"--pairs: port {p} is outside 1..{MAX_PORT}")
                if p in seen:
                    raise ParamError(f"--pairs: port {p} is in two pairs (or paired with itself)")
                seen.add(p)
        bad = [t for t in self.tests if t not in TESTS]
        if bad or not self.tests:
            raise ParamError(f"--tests: {', '.join(bad) or 'none'}: choose from {', '.join(TESTS)}")
        _finite_in("--tolerance-pct", self.tolerance_pct, 0.0, 50.0)
        _finite_in("--resolution-pct", self.resolution_pct, 0.001, 10.0, low_open=False)
        if self.trial_frames is not None and not 100 <= self.trial_frames <= 10_000_000:
            raise ParamError("--trial-frames: between 100 and 10,000,000 frames per stream")
        if not 1 <= self.latency_trials <= 1000:
            raise ParamError("--latency-trials: between 1 and 1000")
        if not 1 <= self.b2b_trials <= 1000:
            raise ParamError("--b2b-trials: between 1 and 1000")
        if self.b2b_max_frames is not None and not 1 <= self.b2b_max_frames <= 10_000_000:
            raise ParamError("--b2b-max-frames: between 1 and 10,000,000")
        _finite_in("--recovery-overload", self.recovery_overload, 1.0, 2.0, low_open=True)
        _finite_in("--dut-rate-pct", self.dut_rate_pct, 1.0, 100.0)
        return self

    @property
    def ports(self) -> list[int]:
        return sorted(p for pr in self.pairs for p in pr)


def _finite_in(option: str, v: float, lo: float, hi: float, low_open: bool = False) -> None:
    if not (isinstance(v, (int, float)) and math.isfinite(v)):
        raise ParamError(f"{option}: {v!r} is not a finite number")
    if v < lo or v > hi or (low_open and v == lo):
        raise ParamError(f"{option}: {v:g} is outside {'(' if low_open else '['}{lo:g}, {hi:g}]")


def parse_pairs(text: str) -> tuple[tuple[int, int], ...]:
    """'1-2,3-4' -> ((1, 2), (3, 4))."""
    out = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        a, sep, b = item.partition("-")
        try:
            if not sep:
                raise ValueError
            out.append((int(a), int(b)))
        except ValueError:
            raise ParamError(f"--pairs: expected A-B port pairs, got {item!r}") from None
    if not out:
        raise ParamError("--pairs: empty")
    return tuple(out)
