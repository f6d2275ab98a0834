"""Series reduced on the server to what the page can draw: one value per
pixel column of a time window, the largest there (so no peak is lost
however many samples a column holds)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import figures as fg

MIN_PX, MAX_PX = 16, 4000
DEFAULT_PX = 1200


def edges(t0: float, t1: float, px: int) -> np.ndarray:
    """`px` equal columns over [t0, t1] (a window of zero width gets 1 ns)."""
    px = int(min(max(px, MIN_PX), MAX_PX))
    if not (math.isfinite(t0) and math.isfinite(t1)) or t1 <= t0:
        t1 = t0 + 1.0
    return np.linspace(t0, t1, px + 1)


def step_max(t: Sequence[float], v: Sequence[float], e: np.ndarray) -> tuple[list, list]:
    """A step series (a queue's occupancy): per column the largest value it
    takes there, the level holding at the column's start included."""
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        return [], []
    return _lists(e[:-1], fg.bin_max_step(t, v, e))


def point_max(t: Sequence[float], v: Sequence[float], e: np.ndarray) -> tuple[list, list]:
    """Point samples (the instrument's reports): per column holding any, the
    largest of them, placed at the column's start; empty columns left out."""
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    inside = (t >= e[0]) & (t <= e[-1])
    t, v = t[inside], v[inside]
    if t.size == 0:
        return [], []
    k = np.minimum(np.searchsorted(e, t, side="right") - 1, e.size - 2)
    out = np.full(e.size - 1, -np.inf)
    np.maximum.at(out, k, v)
    has = np.isfinite(out)
    return _lists(e[:-1][has], out[has])


def _lists(t: np.ndarray, v: np.ndarray) -> tuple[list, list]:
    return [int(round(x)) for x in t], [int(round(x)) for x in v]
