"""The adaptive procedures a tester builds from trials (RFC 2544 s. 26).

Each takes a function that runs one trial at a given load and returns a
`Trial`, and calls `each(step)` after every trial, so a caller stores each
trial as it finishes (Ctrl-C keeps them) and moves its progress bar.
Nothing here knows the testbed.

    throughput       binary search for the highest rate with loss within a
                     tolerance (RFC 2544 s. 26.1; NDR at 0 %, PDR above)
    frame_loss       offered 100 %, 90 %, ... until two successive trials
                     lose nothing (RFC 2544 s. 26.3)
    back_to_back     binary search on the longest burst at line rate that
                     passes without loss (RFC 2544 s. 26.4)
    recovery_time    from per-frame records of an overload then a reduced
                     load: how long loss goes on after the reduction
                     (RFC 2544 s. 26.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .trial import Trial

RunAt = Callable[[float], Trial]


@dataclass
class Step:
    """One trial of a procedure: what it offered and whether it passed."""

    procedure: str
    index: int
    value: float  # % of line rate, or frames per burst
    trial: Trial
    passed: bool


Each = Callable[[Step], None]


def _noop(_: Step) -> None:
    pass


@dataclass
class Searched:
    """A procedure's answer and the trials it took."""

    value: Optional[float]  # None: no value passed (even the lowest failed)
    steps: list[Step] = field(default_factory=list)
    note: str = ""

    def answer(self) -> tuple[float, str]:
        """The throughput to report and its note: the value found; NaN
        ("not measured") when every trial failed only because the generator
        fell short; 0 when the DUT lost frames at every rate tried."""
        if self.value is not None:
            return self.value, self.note
        if self.steps and all(s.trial.generator_short for s in self.steps):
            return math.nan, f"not measured: the generator fell short in every trial ({self.note})"
        return 0.0, self.note

    @property
    def best(self) -> Optional[Step]:
        """The passing step at the answer."""
        ok = [s for s in self.steps if s.passed and s.value == self.value]
        return ok[-1] if ok else None


def throughput(run_at: RunAt, tolerance_pct: float = 0.0, resolution_pct: float = 0.1,
               low_pct: float = 0.0, high_pct: float = 100.0, each: Each = _noop,
               tick: Callable[[float], None] = lambda fraction: None) -> Searched:
    """Binary search between a rate that passed (`low_pct`, 0 by default:
    nothing offered, nothing lost) and one that failed, to `resolution_pct`
    of line rate; the first trial is at `high_pct`. A trial whose generator
    fell short counts as failed (the tester, not the DUT, limits it) and is
    marked so in the note. `tick(fraction)` after each trial, of the trials
    such a search takes (throughput_trials)."""
    if not 0 < resolution_pct <= 100:
        raise ValueError("the resolution is a share of line rate in (0, 100]")
    if not 0 <= low_pct < high_pct <= 100:
        raise ValueError("need 0 <= low < high <= 100 % of line rate")
    if not 0 <= tolerance_pct < 100:
        raise ValueError("the loss tolerance is in [0, 100) %")
    out = Searched(None)
    short = 0

    def attempt(rate: float) -> bool:
        nonlocal short
        t = run_at(rate)
        ok = t.passed(tolerance_pct) and not t.generator_short
        short += t.generator_short
        step = Step("throughput", len(out.steps), rate, t, ok)
        out.steps.append(step)
        each(step)
        tick(min(1.0, len(out.steps) / expected))
        return ok

    expected = throughput_trials(resolution_pct)
    lo, hi = low_pct, high_pct
    if attempt(hi):
        out.value = hi
    else:
        while hi - lo > resolution_pct + 1e-9:
            mid = _round_to(lo + (hi - lo) / 2, resolution_pct)
            if mid <= lo or mid >= hi:
                break
            if attempt(mid):
                lo = mid
            else:
                hi = mid
        out.value = lo if lo > 0 else None
    if short:
        out.note = f"{short} trial(s) where the generator fell short of the offered rate"
    return out


def throughput_trials(resolution_pct: float) -> int:
    """About how many trials a throughput search to `resolution_pct` takes
    (for a progress bar)."""
    return max(1, math.ceil(math.log2(100.0 / resolution_pct)) + 1)


def _round_to(x: float, step: float) -> float:
    """`x` on the grid of `step` (the search only ever offers grid points)."""
    return round(round(x / step) * step, 9)


def frame_loss(run_at: RunAt, start_pct: float = 100.0, step_pct: float = 10.0,
               each: Each = _noop) -> Searched:
    """Offered start, start - step, ... until two successive trials lose
    nothing (or the load reaches 0). `value` is the highest load of the
    first of those two clean trials."""
    if not 0 < step_pct <= start_pct <= 100:
        raise ValueError("need 0 < step <= start <= 100 % of line rate")
    out = Searched(None)
    clean = 0
    rate = start_pct
    while rate > 1e-9:
        t = run_at(rate)
        ok = t.loss_frames == 0
        step = Step("frame_loss", len(out.steps), rate, t, ok)
        out.steps.append(step)
        each(step)
        clean = clean + 1 if ok else 0
        if clean == 2:
            out.value = out.steps[-2].value
            break
        rate = round(rate - step_pct, 9)
    return out


def back_to_back(run_burst: Callable[[int], Trial], max_frames: int, resolution_frames: int = 1,
                 each: Each = _noop) -> Searched:
    """The longest burst (frames at line rate) the DUT forwards without
    loss: first `max_frames`; when that loses, binary search between 0 and
    it to `resolution_frames`. `value` is None when even one frame is lost."""
    if max_frames < 1 or resolution_frames < 1:
        raise ValueError("bursts and the resolution are at least one frame")
    out = Searched(None)

    def attempt(n: int) -> bool:
        t = run_burst(n)
        ok = t.passed(0.0)
        step = Step("back_to_back", len(out.steps), float(n), t, ok)
        out.steps.append(step)
        each(step)
        return ok

    lo, hi = 0, max_frames
    if attempt(hi):
        out.value = float(hi)
        out.note = f"no loss at the longest burst tried ({max_frames} frames)"
        return out
    while hi - lo > resolution_frames:
        mid = (lo + hi) // 2
        if attempt(mid):
            lo = mid
        else:
            hi = mid
    out.value = float(lo) if lo > 0 else None
    return out


def recovery_time(tx_ns: np.ndarray, received: np.ndarray, reduce_at_ns: int) -> float:
    """RFC 2544 s. 26.5: given the send times of every frame of the reduced
    load phase and whether each was received, the time from the reduction
    (`reduce_at_ns`) to the last frame lost (0 when none is lost after it;
    NaN when nothing was sent after it)."""
    tx_ns = np.asarray(tx_ns)
    received = np.asarray(received, bool)
    after = tx_ns >= reduce_at_ns
    if not after.any():
        return math.nan
    lost = tx_ns[after & ~received]
    if lost.size == 0:
        return 0.0
    return float(lost.max() - reduce_at_ns)
