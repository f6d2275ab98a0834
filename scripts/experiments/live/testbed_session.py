"""`p4scope run ... --mode mininet --live`: the dashboard beside a Mininet
run, as an observer of its testbeds (mininet.driver.testbeds_observed).

Before a testbed starts, the DUT's telemetry instrument is switched on in
its fabric options when the run has it off (reports to the controller as
packet-ins, into the fabric's collector; `INSTRUMENT`); once it runs, one
thread of the session reads, every 20 ms, the switch's link queues
(link_queues.py) and the reports the collector took (attach.ReportFeed),
and every 0.1 s the instrument's counters and registers over P4Runtime,
read-only (attach.RuntimeFeed): the model `p4scope watch` shows a running
switch with (testbed_model.py). Before the testbed stops, all of that
stops. The runner's events go through LiveSession's queue, as in virtual
time. Nothing here may end the run: a failing source is shown, not raised.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Callable, Optional

from .attach import Attached, ReportFeed, RuntimeFeed
from .link_queues import PERIOD_S, LinkQueues, links_of
from .session import LiveSession
from .testbed_model import TestbedRunModel

POLL_S = 0.1


def instrument() -> Any:
    """The instrument as --live switches it on: every host-facing port,
    8.192 ms interval maxima, bursts of the DUT's queue from 8 packets
    left behind to under 2, reported at their start and end only (a
    report per packet would cost the switch a packet-in per frame while
    a queue stays full, as it does for seconds in a fairness run)."""
    from ...control.fabric.plan import TelemetryOptions

    return TelemetryOptions(collector="cpu", burst_threshold=8, burst_end=2,
                            interval_log2_us=13, report_intervals=True,
                            report_burst_packets=False)


class TestbedSession(LiveSession):
    """The dashboard of one Mininet run (see the module docstring)."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, port: int = 0, echo: Callable[[str], None] = print):
        super().__init__(port, echo, model=TestbedRunModel())
        self.tmodel: TestbedRunModel = self.model  # type: ignore[assignment]
        self._lock = threading.Lock()
        self._sources: Optional[tuple[LinkQueues, Attached]] = None
        self._ours: set[int] = set()  # testbeds whose instrument --live switched on
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, name="p4scope-live-testbed",
                                        daemon=True)

    def start(self) -> "TestbedSession":
        super().start()
        self._reader.start()
        return self

    # ----- the testbed observer (mininet.driver) -------------------------------------

    def prepare(self, tb: Any) -> None:
        """The instrument on, reporting to a collector, if the run has it off."""
        from ...control.apps.collector import Collector
        from ...control.fabric.plan import FabricOptions

        try:
            opts = tb.options or FabricOptions.from_dict(
                (getattr(tb.topo, "control", None) or {}).get("fabric"))
            if opts.telemetry is not None:
                return  # the run's own: its collector is the run's
            if any(s.kind != "bridge" and s.cpu_port is None for s in tb.topo.switches):
                self._warn("the DUT's instrument stays off (a switch has no CPU port)")
                return
            tb.options = replace(opts, telemetry=instrument())
            tb.collector = Collector()
            self._ours.add(id(tb))
        except Exception as e:  # noqa: BLE001 - the run goes on without the instrument
            self._warn(f"the DUT's instrument stays off: {type(e).__name__}: {e}")

    def started(self, tb: Any) -> None:
        """The sources of the testbed's first P4 switch."""
        try:
            switch = sorted(s.name for s in tb.topo.switches if s.kind != "bridge")[0]
            links = LinkQueues(self.tmodel.links, self.tmodel.dut, links_of(tb.topo, switch))
            reports = runtime = None
            if id(tb) in self._ours and tb.fabric is not None and tb.fabric.collector is not None:
                reports = ReportFeed(self.tmodel.dut, tb.fabric.collector,
                                     f"packet-ins from {switch}")
                try:
                    runtime = RuntimeFeed(self.tmodel.dut, tb.net.grpc_addr(switch))
                except Exception as e:  # noqa: BLE001 - the reports still come
                    self._warn(f"the instrument is not read over P4Runtime: {e}")
            with self._lock:
                self._sources = (links, Attached(self.tmodel.dut, reports, runtime, POLL_S))
        except Exception as e:  # noqa: BLE001 - the run goes on unwatched
            self._warn(f"the testbed is not watched: {type(e).__name__}: {e}")

    def stopping(self, tb: Any) -> None:
        with self._lock:
            sources, self._sources = self._sources, None
        self._ours.discard(id(tb))
        if sources is not None:
            try:
                sources[1].stop()
            except Exception:  # noqa: BLE001 - the testbed stops anyway
                pass

    # ----- the reading thread ------------------------------------------------------------

    def _read(self) -> None:
        while not self._stop.wait(PERIOD_S):
            with self._lock:
                if self._sources is None:
                    continue
                links, attached = self._sources
                try:
                    links.sample()
                    attached.step()
                    links.refresh()
                except Exception as e:  # noqa: BLE001 - shown, the next read tries again
                    self.tmodel.links.note("links", last_error=f"{type(e).__name__}: {e}")

    def _warn(self, msg: str) -> None:
        self.echo(f"p4scope live: warning: {msg}")
        self.errors.append(msg)

    def close(self, linger_s: float = 0.0) -> None:
        self._stop.set()
        if self._reader.is_alive():
            self._reader.join(timeout=5)
        super().close(linger_s)
