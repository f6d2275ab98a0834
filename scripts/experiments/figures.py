"""Figures derived from measurements: pure functions, no I/O.

Everything the experiments and the report compute from raw counts lives
here, so each formula is written once and tested on hand-computed cases:

* fairness: Jain's index, max/min share, bandwidth share vs packet-rate
  share, per-stream Gbps (layer 1, as a tester reports it);
* occupancy: peak and time-weighted mean of a step series, bursts found
  with a threshold and hysteresis, series reduced for plotting without
  losing the peak;
* microburst absorption by the Tolly formula (buffered = forwarded - N)
  in frames, bytes and MB (Tolly's MB are MiB: bytes / 1024 / 1024);
* the instrument's error against ground truth: peak occupancy, burst
  start/end, per-ingress shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .linerate import WIRE_OVERHEAD

MIB = 1024 * 1024


# ----- fairness -----------------------------------------------------------------

def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all equal,
    1/n when one gets everything. NaN for no values or all zeros."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan
    if np.any(x < 0):
        raise ValueError("Jain's index takes non-negative values")
    sq = float(np.sum(x * x))
    if sq == 0.0:
        return math.nan
    return float(np.sum(x)) ** 2 / (x.size * sq)


def shares(values: Sequence[float]) -> np.ndarray:
    """Each value's fraction of the total (NaN everywhere when the total is 0)."""
    x = np.asarray(values, dtype=float)
    total = float(np.sum(x))
    if total == 0.0:
        return np.full(x.shape, math.nan)
    return x / total


def max_min_ratio(values: Sequence[float]) -> float:
    """Largest over smallest value (inf when the smallest is 0 and another is not)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan
    lo, hi = float(np.min(x)), float(np.max(x))
    if lo == 0.0:
        return math.nan if hi == 0.0 else math.inf
    return hi / lo


def max_share_deviation(values: Sequence[float]) -> float:
    """The largest |share * n - 1|: 0.02 means some share is 2% away from 1/n."""
    s = shares(values)
    if s.size == 0 or np.any(np.isnan(s)):
        return math.nan
    return float(np.max(np.abs(s * s.size - 1.0)))


def gbps(nbytes: float, frames: float, seconds: float, layer1: bool = True) -> float:
    """Rate in Gbit/s of `frames` frames holding `nbytes` bytes over `seconds`.
    Layer 1 (default) adds preamble and inter-frame gap, as the seed reports'
    per-stream tables do; layer 2 counts frame bytes only."""
    if seconds <= 0:
        raise ValueError("a rate needs a positive duration")
    bits = (nbytes + (WIRE_OVERHEAD * frames if layer1 else 0)) * 8
    return bits / seconds / 1e9


@dataclass(frozen=True)
class ShareSplit:
    """Bandwidth share vs packet-rate share of each stream (fractions)."""

    bandwidth: np.ndarray
    packet_rate: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        """packet-rate share minus bandwidth share: positive for a stream that
        lost more of its large frames than of its small ones."""
        return self.packet_rate - self.bandwidth


def share_split(nbytes: Sequence[float], frames: Sequence[float]) -> ShareSplit:
    return ShareSplit(shares(nbytes), shares(frames))


# ----- occupancy ----------------------------------------------------------------

def peak(times: ArrayLike, values: ArrayLike) -> tuple[float, float]:
    """(peak value, time of its first occurrence); (nan, nan) for no samples."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return math.nan, math.nan
    i = int(np.argmax(v))
    return float(v[i]), float(np.asarray(times, dtype=float)[i])


def time_weighted_mean(times: ArrayLike, values: ArrayLike,
                       t_start: Optional[float] = None, t_end: Optional[float] = None) -> float:
    """Mean of a step series (each value holds until the next sample) over
    [t_start, t_end]; before the first sample the series is 0. Defaults:
    the first and the last sample time."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.size == 0:
        return math.nan
    if np.any(np.diff(t) < 0):
        raise ValueError("sample times must not decrease")
    a = float(t[0]) if t_start is None else float(t_start)
    b = float(t[-1]) if t_end is None else float(t_end)
    if b <= a:
        return float(v[np.searchsorted(t, a, side="right") - 1]) if a >= t[0] else 0.0
    edges = np.clip(np.append(t, b), a, b)
    widths = np.diff(edges)
    area = float(np.sum(widths * v))
    return area / (b - a)


def step_from_deltas(times: ArrayLike, deltas: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Occupancy after each event from signed changes (+bytes at enqueue,
    -bytes at dequeue): (times, running sum), events at equal times merged
    into their last value."""
    t = np.asarray(times, dtype=float)
    d = np.asarray(deltas, dtype=float)
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    level = np.cumsum(d)
    if t.size == 0:
        return t, level
    last = np.append(t[1:] != t[:-1], True)
    return t[last], level[last]


@dataclass(frozen=True)
class Burst:
    """One excursion of an occupancy series above a threshold."""

    start: float
    end: float  # first time below the end threshold (nan while still on)
    peak: float
    peak_time: float


def find_bursts(times: ArrayLike, values: ArrayLike, on: float,
                off: Optional[float] = None) -> list[Burst]:
    """Bursts with hysteresis, the instrument's rule: one starts at the first
    sample >= `on` and ends at the first later sample < `off` (default `on`)."""
    off = on if off is None else off
    if off > on:
        raise ValueError("the end threshold must not exceed the start threshold")
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    ons = np.flatnonzero(v >= on)  # where a burst may start
    offs = np.flatnonzero(v < off)  # where one ends
    out: list[Burst] = []
    at = 0
    while (k := int(np.searchsorted(ons, at))) < len(ons):
        start = int(ons[k])
        m = int(np.searchsorted(offs, start, side="right"))
        end = int(offs[m]) if m < len(offs) else len(v)
        pk = start + int(np.nanargmax(v[start:end]))  # the first of the highest
        out.append(Burst(float(t[start]), float(t[end]) if end < len(v) else math.nan,
                         float(v[pk]), float(t[pk])))
        at = end + 1
    return out


def reduce_series(times: ArrayLike, values: ArrayLike,
                  max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """At most about `max_points` samples of a step series for plotting and
    storage: per equal-width time bin the first, minimum and maximum samples
    are kept (in time order), so the peak and every trough survive."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.size <= max_points or t.size == 0:
        return t, v
    nbins = max(1, max_points // 3)
    span = t[-1] - t[0]
    if span <= 0:
        i = int(np.argmax(v))
        return t[[0, i]] if i else t[:1], v[[0, i]] if i else v[:1]
    b = np.minimum(((t - t[0]) / span * nbins).astype(np.int64), nbins - 1)
    keep = np.zeros(t.size, dtype=bool)
    first = np.append(True, b[1:] != b[:-1])
    starts = np.flatnonzero(first)
    keep[starts] = True
    if t.size > 128 * starts.size or np.isnan(v).any():
        # long runs (a loop of few steps is quicker) or NaN (argmax's rule: the first NaN)
        for s, e in zip(starts, np.append(starts[1:], t.size)):
            keep[s + int(np.argmax(v[s:e]))] = True
            keep[s + int(np.argmin(v[s:e]))] = True
    else:
        keep[_first_where_equal(v, np.maximum.reduceat(v, starts), first, starts)] = True
        keep[_first_where_equal(v, np.minimum.reduceat(v, starts), first, starts)] = True
    keep[-1] = True
    return t[keep], v[keep]


def _first_where_equal(v: np.ndarray, per_run: np.ndarray, first: np.ndarray,
                       starts: np.ndarray) -> np.ndarray:
    """Per run of v (runs begin where `first` is set, at `starts`), the
    first index where v equals the run's value in `per_run`: np.argmax /
    np.argmin of each run at once."""
    run = np.cumsum(first) - 1
    at = np.where(v == per_run[run], np.arange(v.size), v.size)
    return np.minimum.reduceat(at, starts)


def step_at(times: ArrayLike, values: ArrayLike, at: ArrayLike) -> np.ndarray:
    """Values of a step series at the times `at` (0 before the first sample)."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    i = np.searchsorted(t, np.asarray(at, dtype=float), side="right") - 1
    out = np.where(i >= 0, v[np.clip(i, 0, None)] if v.size else 0.0, 0.0)
    return out.astype(float)


def bin_max_step(times: ArrayLike, values: ArrayLike,
                 edges: ArrayLike) -> np.ndarray:
    """Per bin [edges[k], edges[k+1]) the largest value a step series takes
    there: the value holding at the bin's start or any sample inside it."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    out = step_at(t, v, e[:-1])
    if t.size:
        k = np.searchsorted(e, t, side="right") - 1
        ok = (k >= 0) & (k < e.size - 1)
        np.maximum.at(out, k[ok], v[ok])
    return out


# ----- microburst absorption ----------------------------------------------------

@dataclass(frozen=True)
class Absorption:
    """The Tolly microburst figures of one burst."""

    forwarded: int
    burst_frames: int  # N: frames each ingress port sent
    frame_size: int

    @property
    def buffered_frames(self) -> int:
        """buffered = forwarded - N (seed 000, "Microburst Absorption Capacity
        Test"): without a buffer the egress port passes N frames in the time
        the burst lasts; everything beyond came out of the buffer."""
        return self.forwarded - self.burst_frames

    @property
    def buffered_bytes(self) -> int:
        return self.buffered_frames * self.frame_size

    @property
    def buffered_mb(self) -> float:
        """Tolly's "MBytes": frames * size / 1024 / 1024."""
        return self.buffered_bytes / MIB


def absorption(forwarded_per_port: Sequence[int], burst_frames: int, frame_size: int) -> Absorption:
    if burst_frames <= 0:
        raise ValueError("a burst has at least one frame")
    return Absorption(int(sum(forwarded_per_port)), int(burst_frames), int(frame_size))


# ----- the instrument against ground truth -------------------------------------

def relative_error(measured: float, truth: float) -> float:
    """(measured - truth) / truth; NaN when the truth is 0."""
    if truth == 0:
        return math.nan
    return (measured - truth) / truth


def share_error_pp(measured: Sequence[float], truth: Sequence[float]) -> np.ndarray:
    """Per-stream share error in percentage points (shares are normalised
    first, so counters and rates can be passed directly)."""
    m, t = shares(measured), shares(truth)
    if m.shape != t.shape:
        raise ValueError("measured and true shares must have the same length")
    return (m - t) * 100.0


@dataclass(frozen=True)
class BurstMatch:
    truth: Burst
    measured: Optional[Burst]

    @property
    def start_error(self) -> float:
        return math.nan if self.measured is None else self.measured.start - self.truth.start

    @property
    def end_error(self) -> float:
        return math.nan if self.measured is None else self.measured.end - self.truth.end

    @property
    def peak_error(self) -> float:
        """Relative error of the measured peak."""
        return math.nan if self.measured is None else relative_error(self.measured.peak,
                                                                      self.truth.peak)


def match_bursts(truth: Sequence[Burst], measured: Sequence[Burst]) -> list[BurstMatch]:
    """Pairs each true burst with the measured burst that overlaps it most
    (None when none overlaps); a measured burst is used at most once."""
    used: set[int] = set()
    out = []
    for tb in truth:
        best, best_ov = None, -math.inf
        t_end = tb.end if not math.isnan(tb.end) else math.inf
        for i, mb in enumerate(measured):
            if i in used:
                continue
            m_end = mb.end if not math.isnan(mb.end) else math.inf
            ov = min(t_end, m_end) - max(tb.start, mb.start)
            if ov >= 0 and ov > best_ov:
                best, best_ov = i, ov
        if best is not None:
            used.add(best)
            out.append(BurstMatch(tb, measured[best]))
        else:
            out.append(BurstMatch(tb, None))
    return out
