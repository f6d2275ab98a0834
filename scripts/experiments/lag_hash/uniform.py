"""What a uniform hash predicts for k flows on the m members of a LAG: each
flow lands on a member independently and with equal chance, so the m^k
placements are equally likely. Everything here is counted exactly
(integers and fractions), not sampled: how many placements keep every
member's flow count in a set is counted member by member.

    p_balanced   every member carries floor(k/m) or ceil(k/m) flows
                 (4 flows on 4 members: 4!/4^4 = 9.4 %)
    p_idle       some member carries no flow (12 flows on 4: 12.5 %; 1
                 when k < m)
    max_load     the busiest member's flow count: its distribution, mean
                 and standard deviation
    delivered    what the members carry together when every flow offers
                 `flow_bps` and a member carries at most `member_bps`

A DUT whose hash is no worse than chance shows, over R runs with new flows,
a mean busiest-member count within a few standard errors (sd / sqrt(R)) of
the mean: `z_score` per flow count, `combined_z` (Stouffer's) over all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Optional

WORSE_Z = 2.326
"""One-sided 1 %: a combined z above this says the hash is worse than
chance (below -WORSE_Z: more even than chance, e.g. per-packet spreading)."""


def _placements(k: int, m: int, allowed: Callable[[int], bool]) -> int:
    """How many of the m^k placements give every member a count j with
    allowed(j): members added one at a time, the n flows placed so far
    choosing which j of them the new member takes (integers throughout)."""
    ok = [j for j in range(k + 1) if allowed(j)]
    ways = [1] + [0] * k  # no member yet: only "no flow" is placed
    for _ in range(m):
        ways = [sum(math.comb(n, j) * ways[n - j] for j in ok if j <= n) for n in range(k + 1)]
    return ways[k]


def _check(k: int, m: int) -> None:
    if k < 1 or m < 1:
        raise ValueError(f"{k} flows on {m} members: both must be at least 1")


def p_balanced(k: int, m: int) -> Fraction:
    """Every member carries floor(k/m) or ceil(k/m) flows."""
    _check(k, m)
    q = k // m
    return Fraction(_placements(k, m, lambda j: j in (q, q + 1)), m ** k)


def p_idle(k: int, m: int) -> Fraction:
    """Some member carries no flow."""
    _check(k, m)
    return 1 - Fraction(_placements(k, m, lambda j: j >= 1), m ** k)


def max_load_distribution(k: int, m: int) -> list[Fraction]:
    """P(the busiest member carries exactly c flows), c = 0..k."""
    _check(k, m)
    at_most = [Fraction(_placements(k, m, lambda j, c=c: j <= c), m ** k) for c in range(k + 1)]
    return [at_most[0]] + [at_most[c] - at_most[c - 1] for c in range(1, k + 1)]


def delivered_bps(k: int, m: int, flow_bps: float, member_bps: float) -> float:
    """Expected rate the members carry together: a member's flow count is
    binomial(k, 1/m) and it carries min(count x flow_bps, member_bps)."""
    _check(k, m)
    p = Fraction(1, m)
    mean = sum(math.comb(k, n) * p ** n * (1 - p) ** (k - n) * min(n * flow_bps, member_bps)
               for n in range(k + 1))
    return float(m * mean)


@dataclass(frozen=True)
class Prediction:
    """A uniform hash's figures for `flows` flows on `members` members."""

    flows: int
    members: int
    p_balanced: float
    p_idle: float
    max_mean: float
    max_sd: float


def predict(k: int, m: int) -> Prediction:
    dist = max_load_distribution(k, m)
    mean = sum(c * p for c, p in enumerate(dist))
    var = sum((c - mean) ** 2 * p for c, p in enumerate(dist))
    return Prediction(k, m, float(p_balanced(k, m)), float(p_idle(k, m)), float(mean),
                      math.sqrt(float(var)))


def z_score(measured_mean: float, runs: int, pred: Prediction) -> Optional[float]:
    """How many standard errors the measured mean busiest-member count is
    above the uniform hash's mean; None when the count cannot vary (one
    flow, one member)."""
    if pred.max_sd <= 0 or runs < 1 or not math.isfinite(measured_mean):
        return None
    return (measured_mean - pred.max_mean) / (pred.max_sd / math.sqrt(runs))


def combined_z(zs: Iterable[Optional[float]]) -> Optional[float]:
    """Stouffer's combination of independent z scores (None ones left out)."""
    got = [z for z in zs if z is not None and math.isfinite(z)]
    return sum(got) / math.sqrt(len(got)) if got else None


def verdict(z: Optional[float]) -> str:
    if z is None:
        return "no verdict (no flow count where the busiest member can vary)"
    if z > WORSE_Z:
        return "worse than chance"
    if z < -WORSE_Z:
        return "more even than chance"
    return "within chance"
