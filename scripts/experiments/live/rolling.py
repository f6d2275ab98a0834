"""A sliding window of pixel columns over the wall clock, for a switch
watched while it runs: samples arrive in (about) time order, the page
draws the last `n` columns, each the largest (or the sum) of the samples
that fell in it; a column nothing fell in has no value (None), which the
page leaves blank rather than drawing a level nobody measured.
"""

from __future__ import annotations

from typing import Optional


class Rolling:
    """`n` columns of `width_ns` ending at the newest column seen."""

    def __init__(self, n: int, width_ns: int, how: str = "max"):
        if how not in ("max", "sum"):
            raise ValueError(f"how: max or sum, not {how!r}")
        self.n, self.w, self.how = int(n), max(1, int(width_ns)), how
        self.cols: dict[int, float] = {}
        self.newest = -1

    def add(self, t_ns: int, v: float) -> None:
        k = int(t_ns) // self.w
        if k <= self.newest - self.n:  # older than the window
            return
        old = self.cols.get(k)
        self.cols[k] = float(v) if old is None else (max(old, float(v)) if self.how == "max"
                                                     else old + float(v))
        if k > self.newest:
            self.newest = k
            if len(self.cols) > 2 * self.n:
                self.cols = {c: x for c, x in self.cols.items() if c > k - self.n}

    def series(self, now_ns: int) -> tuple[list[int], list[Optional[float]]]:
        """(column starts, values) of the `n` columns ending at `now_ns`'s."""
        last = int(now_ns) // self.w
        ks = range(last - self.n + 1, last + 1)
        return [k * self.w for k in ks], [self.cols.get(k) for k in ks]

    def over(self, t0_ns: int, t1_ns: int) -> float:
        """The columns from `t0_ns`'s to `t1_ns`'s (both in) as one: their
        largest or their sum; 0 when nothing fell in them."""
        lo, hi = int(t0_ns) // self.w, int(t1_ns) // self.w
        vals = [v for k, v in self.cols.items() if lo <= k <= hi]
        return (max(vals, default=0.0) if self.how == "max" else sum(vals))
