"""The thread behind the periodic samplers (counters.CounterSampler,
qdisc.QdiscSampler): one sample on entry, then one every `period` s on a
fixed grid (a slow sample does not shift the ones after it) until exit."""

from __future__ import annotations

import threading
import time
from typing import Optional


class PeriodicSampler:
    """Subclasses define `_sample()`; `self._t0` is the monotonic time of
    the first sample. `sample_on_stop`: one more sample when stopped."""

    sample_on_stop = False

    def __init__(self, period: float, thread_name: Optional[str] = None) -> None:
        self.period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=thread_name, daemon=True)
        self._t0 = 0.0

    def _sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        nxt = self._t0
        while True:
            nxt += self.period
            if self._stop.wait(max(0.0, nxt - time.monotonic())):
                break
            self._sample()
        if self.sample_on_stop:
            self._sample()

    def __enter__(self):
        # the first sample before returning: nothing the caller starts next is missed
        self._t0 = time.monotonic()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
