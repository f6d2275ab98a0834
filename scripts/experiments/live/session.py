"""`p4scope run ... --live`: the dashboard served beside a run.

The run's thread only hands the runner's events (runner.RunEvent) and the
pieces of the ground-truth trace of the case in flight (when cases are
measured in this process: traffic.trace_observed) over to a queue; a
thread of the session digests them into the model (a finished case's
tables become its summary and series there), and the server pushes what
changed. So the run pays for a queue put per event or piece.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from typing import Any, Callable, Optional

from .model import RunModel, digest
from .server import Dashboard

_STOP = object()


class LiveSession:
    """A dashboard for one run; `on_event` is the runner's hook. Binding the
    port happens here, so a taken one fails before the run starts
    (server.PortInUse)."""

    def __init__(self, port: int = 0, echo: Callable[[str], None] = print,
                 model: Optional[RunModel] = None):
        self.model = model if model is not None else RunModel("live")
        self.dash = Dashboard(self.model, port)
        self.echo = echo
        self._q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._digest, name="p4scope-live-feed", daemon=True)
        self.errors: list[str] = []

    @property
    def url(self) -> str:
        return self.dash.url

    def start(self) -> "LiveSession":
        self.dash.start()
        self._worker.start()
        self.echo(f"p4scope live: dashboard at {self.url} (Ctrl-C stops the run)")
        return self

    def on_event(self, ev: Any) -> None:
        """The runner's hook (runs in the run's thread): queue it, nothing more."""
        self._q.put(ev)

    def _digest(self) -> None:
        while True:
            ev = self._q.get()
            if ev is _STOP:
                return
            try:
                self._apply(ev)
            except Exception as e:  # noqa: BLE001 - the dashboard must never stop the run
                if not self.errors:
                    self.echo(f"p4scope live: warning: an update was not shown: "
                              f"{type(e).__name__}: {e}")
                self.errors.append(f"{type(e).__name__}: {e}")

    def on_trace(self, t_ns: Any, piece: Any) -> None:
        """traffic.trace_observed's observer (the run's thread): queue it."""
        self._q.put(("trace", t_ns, piece))

    def _apply(self, ev: Any) -> None:
        m = self.model
        if isinstance(ev, tuple):
            m.trace(ev[1], ev[2])
        elif ev.kind == "start":
            m.begin(ev.rundir.path, ev.planned, ev.rundir.meta)
        elif ev.kind == "case_begin":
            m.begin_case(ev.index, ev.case.case_id, ev.case.label)
        elif ev.kind == "tick":
            m.progress(ev.index, ev.case.label, ev.fraction)
        elif ev.kind == "case_end":
            m.add_case(digest(ev.case.case_id, ev.case.label, ev.index, ev.tables or {},
                              ev.status, ev.wall_s if ev.wall_s is not None else math.nan))
        elif ev.kind == "end":
            o = ev.outcome
            m.end(bool(o.complete), o.reason or "")

    def close(self, linger_s: float = 0.0) -> None:
        """After the run: the last events shown and sent to every open page,
        then (for `linger_s`, Ctrl-C ends it sooner) the page kept up, then
        the server stopped."""
        self._q.put(_STOP)
        self._worker.join(timeout=30)
        if not self.model.ended:  # the run stopped before the runner began
            self.model.end(False, "the run stopped before its first case")
        try:
            self.dash.flush()
            if linger_s > 0:
                self.echo(f"p4scope live: the dashboard stays at {self.url} for "
                          f"{linger_s:g} s (Ctrl-C stops it)")
                deadline = time.monotonic() + linger_s
                while time.monotonic() < deadline and self.dash.alive():
                    time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        except KeyboardInterrupt:
            pass
        finally:
            self.dash.stop()


def watch_until_stopped(dash: Dashboard, poll_s: float = 0.5,
                        on_wake: Optional[Callable[[], None]] = None) -> None:
    """Serves until Ctrl-C/SIGTERM (the caller's) or the server stops."""
    try:
        while dash.alive():
            time.sleep(poll_s)
            if on_wake is not None:
                on_wake()
    except KeyboardInterrupt:
        pass
    finally:
        dash.stop()
