"""The most each egress queue held since the last Prometheus scrape, on a
running switch (`-- --metrics-port`).

The engine keeps a queue's peak since it started (tm_queue_stats'
peak_bytes), not since a given moment; a burst shorter than the scrape
interval that stays under an earlier peak would never show. So the
endpoint records the traffic manager's occupancy trace (one record per
enqueue and dequeue with what the queue holds right after it) and folds it
into per-queue maxima every SAMPLE_S, in a thread of its own; each scrape
reads the maxima, then starts them again from the queues' levels then.
A new pipeline (a new engine) gets its trace started at the next fold.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Optional

import numpy as np

log = logging.getLogger("p4scope.switch")

SAMPLE_S = 0.05
"""How often the trace is folded (it holds the records of this long)."""

Queue = tuple[int, int]  # port, queue
Level = tuple[float, float]  # bytes, packets


def device_engine(device: Any) -> Any:
    """The device's engine (None before a program is loaded)."""
    eng = device.dataplane
    return eng.raw if eng is not None else None


class QueueMaxima:
    """Per queue, the most bytes and packets held since the last `take`
    (kept from the engine's trace by `fold`, which `start` runs every
    SAMPLE_S in a thread)."""

    def __init__(self, device: Any, sample_s: float = SAMPLE_S):
        self.device = device
        self.sample_s = sample_s
        self.lock = threading.Lock()
        self.top: dict[Queue, Level] = {}
        self._traced: Any = None  # the engine whose trace is running
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.failed = False

    def fold(self) -> bool:
        """Folds the trace since the last fold into the maxima; False when
        the engine cannot trace (no program yet, or an engine without it)."""
        with self.device.lock:
            raw = device_engine(self.device)
            if raw is None:
                self._traced = None
                return False
            if raw is not self._traced:
                # what the new engine held before its trace began is in its peaks
                raw.tm_trace_start(False, None, 0)
                self._traced = raw
                peaks = [((int(s["port"]), int(s["queue"])), (float(s["peak_bytes"]),
                                                              float(s["peak_pkts"])))
                         for s in raw.tm_queue_stats()]
                cols = None
            else:
                cols = raw.tm_trace_take()
        if cols is None:
            self._merge(peaks)
            return True
        n = len(cols["time_ns"])
        if not n:
            return True
        key = (np.asarray(cols["port"], dtype=np.int64) << 16) | np.asarray(cols["queue"],
                                                                          dtype=np.int64)
        qb = np.asarray(cols["q_bytes"], dtype=np.float64)
        qp = np.asarray(cols["q_pkts"], dtype=np.float64)
        order = np.argsort(key, kind="stable")
        key, qb, qp = key[order], qb[order], qp[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        tb, tp = np.maximum.reduceat(qb, starts), np.maximum.reduceat(qp, starts)
        self._merge(((k >> 16, k & 0xFFFF), (b, p))
                    for k, b, p in zip(key[starts].tolist(), tb.tolist(), tp.tolist()))
        return True

    def _merge(self, items: Any) -> None:
        with self.lock:
            for q, (b, p) in items:
                ob, op = self.top.get(q, (0.0, 0.0))
                self.top[q] = (max(ob, b), max(op, p))

    def take(self, levels: dict[Queue, Level]) -> dict[Queue, Level]:
        """The maxima since the last take, each at least the queue's level
        now (`levels`, read with the trace folded up to the same moment:
        the caller holds the device's lock over both); the next ones start
        from `levels`."""
        with self.lock:
            out = {q: (max(self.top.get(q, (0.0, 0.0))[0], lv[0]),
                       max(self.top.get(q, (0.0, 0.0))[1], lv[1])) for q, lv in levels.items()}
            self.top = dict(levels)
        return out

    def start(self) -> "QueueMaxima":
        self._thread = threading.Thread(target=self._run, name="metrics-queue-maxima",
                                        daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.sample_s):
            self.safe_fold()

    def safe_fold(self) -> bool:
        """fold, an error logged once instead of raised (the maxima then
        rest on the levels each scrape reads)."""
        try:
            return self.fold()
        except Exception as e:  # noqa: BLE001 - the switch must keep serving
            if not self.failed:
                log.warning("metrics: the queues' occupancy trace failed: %s: %s",
                            type(e).__name__, e)
            self.failed = True
            return False

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
