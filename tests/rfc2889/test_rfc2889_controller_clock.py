"""The controller's digest path in virtual time is a single server: digests
wait in the order they were raised, and each one's entries are written
the controller's service time after it started on it (its wall-clock time
per digest, here a fake clock's 1 ms). No switch runs here."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

from p4scope.experiments.rfc2889 import controller as C

MS = 1_000_000


class FakeEngine:
    def __init__(self, raised_at):
        self.now = 0
        self.waiting = [("mac_learn_t", [b"\x01"], t) for t in raised_at]

    def run(self, until_ns, drain=False):
        self.now = until_ns

    def take_digests(self):
        out = [d for d in self.waiting if d[2] <= self.now]
        self.waiting = [d for d in self.waiting if d[2] > self.now]
        return out


class FakeSwitch:
    """A VirtualSwitch's face: the engine under its lock, the device."""

    def __init__(self, engine):
        self.engine = engine
        self.device = SimpleNamespace(stats=SimpleNamespace(digests=0), dataplane=object(),
                                      deliver_events=self._deliver)

    def _deliver(self, dataplane, events):
        self.device.stats.digests += len(events)

    @contextmanager
    def locked(self):
        yield self.engine


def test_digests_are_served_one_after_another(monkeypatch):
    ticks = iter(range(0, 10**6))
    monkeypatch.setattr(C, "perf_counter", lambda: next(ticks) * 1e-3)  # 1 ms a call
    engine = FakeEngine([0, 100, 200])
    written = []
    learning = SimpleNamespace(handle=lambda timeout: written.append(engine.now))
    ctl = C.VirtualController(FakeSwitch(engine), learning)
    ctl.run_until(10 * MS, C.Watch(start_ns=0, period_ns=100.0, count=3, delay_ns=1))
    # the first is written when the controller first sees it (no estimate
    # yet) and keeps it busy 1 ms; the others wait their turn, 1 ms each
    assert written == [1, 2 * MS + 1, 3 * MS + 1]
    assert ctl.handled == 3 and ctl.service_ns == MS and ctl.late_ns == 0
    assert not ctl.pending


def test_a_full_stream_queue_drops_digests(monkeypatch):
    ticks = iter(range(0, 10**6))
    monkeypatch.setattr(C, "perf_counter", lambda: next(ticks) * 1e-3)
    engine = FakeEngine([0, 1, 2, 3])
    learning = SimpleNamespace(handle=lambda timeout: None)
    ctl = C.VirtualController(FakeSwitch(engine), learning, queue_limit=2)
    ctl.run_until(10)  # all four raised before the controller is asked
    assert ctl.dropped == 2 and ctl.handled == 1 and len(ctl.pending) == 1
