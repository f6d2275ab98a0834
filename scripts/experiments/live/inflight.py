"""The case being measured, drawn as its ground-truth trace arrives (the
engine's occupancy records, handed over by traffic.trace_observed while
virtual time runs in this process).

A case may produce millions of records; what the page needs is the
largest value per pixel column. `Columns` keeps exactly that, at most
`n` columns whose width doubles (neighbours merged) whenever virtual time
outgrows them, so each piece costs its own length and memory stays flat.
Every series of a case keeps the same width (the widest's), so they share
their columns: the rows of a time x port heatmap.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..groundtruth import DROP

N_COLUMNS = 512
FIRST_WIDTH_NS = 64


class Columns:
    """A step series arriving in time order, kept as per column the largest
    value and the last one (the level it leaves to the next columns)."""

    def __init__(self, n: int = N_COLUMNS, width_ns: int = FIRST_WIDTH_NS):
        self.n, self.w = n, width_ns
        self.top = np.full(n, -np.inf)
        self.last = np.full(n, np.nan)

    def add(self, t: np.ndarray, v: np.ndarray) -> None:
        if t.size == 0:
            return
        while int(t.max()) // self.w >= self.n:
            self._widen()
        k = (t // self.w).astype(np.int64)
        np.maximum.at(self.top, k, v)
        ends = np.flatnonzero(np.append(k[1:] != k[:-1], True))
        self.last[k[ends]] = v[ends]

    def widen_to(self, width_ns: int) -> None:
        while self.w < width_ns:
            self._widen()

    def _widen(self) -> None:
        half = self.n // 2
        top = np.maximum(self.top[0::2], self.top[1::2])
        last = np.where(np.isnan(self.last[1::2]), self.last[0::2], self.last[1::2])
        self.top[:] = -np.inf
        self.last[:] = np.nan
        self.top[:half], self.last[:half] = top, last
        self.w *= 2

    def series(self, until_ns: int) -> tuple[list[int], list[int]]:
        """(column starts, largest value) up to the column of `until_ns`; a
        column without records holds the level the one before left."""
        m = int(min(self.n, max(until_ns, 0) // self.w + 1))
        last = self.last[:m]
        filled = np.where(np.isnan(last), -1, np.arange(m))
        filled = np.maximum.accumulate(filled)
        level = np.where(filled >= 0, last[np.maximum(filled, 0)], 0.0)
        carried = np.concatenate(([0.0], level[:-1]))
        v = np.maximum(self.top[:m], carried)
        return [int(i * self.w) for i in range(m)], [int(x) for x in v]


class InFlight:
    """The case in flight: per egress queue its occupancy (bytes and
    packets), per ingress port what it holds there (bytes), the virtual
    time reached."""

    def __init__(self, case_id: str, label: str, index: int):
        self.case_id, self.label, self.index = case_id, label, index
        self.queues: dict[tuple[int, int], Columns] = {}
        self.queues_pkts: dict[tuple[int, int], Columns] = {}
        self.ingress: dict[tuple[int, int, int], Columns] = {}
        self.peak: dict[tuple[int, int], float] = {}
        self.t_ns = 0
        self.version = 0

    def add(self, t_ns: Optional[int], piece: dict[str, Any]) -> None:
        keep = np.asarray(piece["kind"]) != DROP
        t = np.asarray(piece["time_ns"], dtype=np.int64)[keep]
        if t.size:
            port = np.asarray(piece["port"])[keep]
            queue = np.asarray(piece["queue"])[keep]
            ing = np.asarray(piece["ingress"])[keep]
            qb = np.asarray(piece["q_bytes"], dtype=float)[keep]
            qp = (np.asarray(piece["q_pkts"], dtype=float)[keep] if "q_pkts" in piece
                  else np.zeros(t.size))
            ib = np.asarray(piece["in_bytes"], dtype=float)[keep]
            for p, q in {(int(a), int(b)) for a, b in zip(*np.unique(
                    np.stack([port, queue]), axis=1))}:
                sel = (port == p) & (queue == q)
                self.queues.setdefault((p, q), Columns()).add(t[sel], qb[sel])
                self.queues_pkts.setdefault((p, q), Columns()).add(t[sel], qp[sel])
                self.peak[(p, q)] = max(self.peak.get((p, q), 0.0), float(qb[sel].max()))
                for i in np.unique(ing[sel]):
                    si = sel & (ing == i)
                    self.ingress.setdefault((p, q, int(i)), Columns()).add(t[si], ib[si])
            self.t_ns = max(self.t_ns, int(t.max()))
            self._same_width()
        if t_ns is not None and t_ns < 2**61:
            self.t_ns = max(self.t_ns, int(t_ns))
        self.version += 1

    def _same_width(self) -> None:
        cols = [*self.queues.values(), *self.queues_pkts.values(), *self.ingress.values()]
        w = max(c.w for c in cols)
        for c in cols:
            c.widen_to(w)

    def series(self) -> dict[str, Any]:
        """In the shape of CaseData.series, over [0, the virtual time reached]."""
        out: dict[str, Any] = {"id": self.case_id, "label": self.label, "index": self.index,
                               "t0": 0.0, "t1": float(max(self.t_ns, 1)), "virtual_ns": self.t_ns,
                               "queues": [], "reports": [], "ingress": [], "congested": None}
        for (p, q), c in sorted(self.queues.items()):
            t, v = c.series(self.t_ns)
            pk = self.queues_pkts.get((p, q))
            out["queues"].append({"name": f"port {p} q{q}", "t": t, "v": v,
                                  "p": pk.series(self.t_ns)[1] if pk is not None else []})
        if self.peak:
            p, q = max(self.peak, key=lambda k: self.peak[k])
            out["congested"] = p
            for (pp, qq, i), c in sorted(self.ingress.items()):
                if (pp, qq) == (p, q):
                    t, v = c.series(self.t_ns)
                    out["ingress"].append({"ingress": i, "t": t, "v": v})
        return out
