"""A Mininet run as the dashboard shows it (`p4scope run ... --mode mininet
--live`): the run's progress and its stored cases (a RunModel), and the
testbed's switch over the last `window` seconds of wall clock, seen two
ways, each a SwitchModel (the model `p4scope watch` draws a running switch
with):

* `links`: the queues of the switch's links towards the hosts (the tc
  qdisc on each switch port, link_queues.py). A P4 switch in Mininet
  forwards faster than its shaped links, so this is where a burst
  queues and drops; the runs keep this backlog as their stand-in for the
  ground truth, and the page shows it where a virtual-time run shows the
  traffic manager's trace: the queues, the heatmap, the "ground truth"
  peak and bursts.
* `dut`: the DUT's own egress queues as its telemetry instrument reports
  them (attach.ReportFeed, attach.RuntimeFeed): the reports' points, the
  instrument's bursts, and the bytes each ingress port had delivered
  (the shares of the congested link). The instrument reports a burst's
  start and end, not each of its packets (testbed_session.instrument),
  so a burst's peak is the most its queue held meanwhile (the interval
  maxima, each reported up to one interval late) and who built it the
  bytes each ingress port had delivered meanwhile.

Both windows share one clock (this process's monotonic clock since the
model was made), so their pixel columns line up.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from .link_queues import culprits
from .model import RunModel
from .switch_model import SwitchModel

WINDOW_S = 15.0
INTERVAL_NS = (1 << 13) * 1000  # the instrument's interval (testbed_session.instrument)
POLL_COLUMNS = 3  # columns one P4Runtime read may span (attach.RuntimeFeed every 0.1 s)
TRUTH = "the links' queues (tc qdisc backlog)"


class TestbedRunModel:
    """The page's view of a Mininet run (see the module docstring): a run
    model's interface, its window from both switch models."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, window_s: float = WINDOW_S, clock: Callable[[], int] = time.monotonic_ns):
        self.run = RunModel("live")
        self.links = SwitchModel("links", window_s, clock=clock)
        self.dut = SwitchModel("DUT", window_s, clock=clock)
        self.links.t0 = self.dut.t0

    # ----- the runner's events (live.session.LiveSession applies them) -----------------

    def begin(self, path: Any, planned: int, meta: dict[str, Any]) -> None:
        self.run.begin(path, planned, meta)

    def begin_case(self, index: int, case_id: str, label: str) -> None:
        self.run.begin_case(index, case_id, label)

    def progress(self, index: int, label: str, fraction: float) -> None:
        self.run.progress(index, label, fraction)

    def trace(self, t_ns: Any, piece: Any) -> None:
        """No virtual-time trace in Mininet."""

    def add_case(self, c: Any, done: Optional[int] = None) -> None:
        self.run.add_case(c, done)

    def end(self, complete: bool, reason: str = "") -> None:
        self.run.end(complete, reason)
        for m in (self.links, self.dut):
            if not m.ended:
                m.end(reason or "the run ended")

    # ----- what the server reads ---------------------------------------------------------

    @property
    def version(self) -> int:
        return self.run.version + self.links.version + self.dut.version

    @property
    def ended(self) -> bool:
        return self.run.ended

    def count(self) -> int:
        return self.run.count()

    def summaries(self, start: int = 0) -> list[dict[str, Any]]:
        return self.run.summaries(start)

    def case(self, case_id: str) -> Any:
        return self.run.case(case_id)

    def status(self) -> dict[str, Any]:
        st = self.run.status()
        lk, dt = self.links.status(), self.dut.status()
        lt, it = lk["totals"], dt["totals"]
        st.update(virtual_ns=None, clock="wall", truth=TRUTH,
                  sources={**lk["sources"], **dt["sources"]})
        st["totals"] = {
            "peak_truth": lt["peak_instrument"], "peak_unit": "bytes",
            "peak_truth_pkts": lt["peak_instrument_pkts"],
            "peak_instrument": it["peak_instrument"],
            "peak_instrument_pkts": it["peak_instrument_pkts"],
            "bursts_truth": lt["bursts_instrument"], "bursts_instrument": it["bursts_instrument"],
            # dropped by the links' queues and by the DUT's, of what the DUT's queues were offered
            "drops": None if lt["drops"] is None and it["drops"] is None
            else (lt["drops"] or 0) + (it["drops"] or 0),
            "sent": it["sent"] if it["drops"] is not None else lt["sent"]}
        return st

    def inflight_series(self, seen: int) -> Optional[dict[str, Any]]:
        """The window (the links' queues, the instrument's reports as points,
        the shares of the fullest link, both kinds of bursts), when anything
        changed since version `seen`."""
        v = self.version
        if v == seen:
            return None
        out = self.links.inflight_series(-1)
        assert out is not None
        dut = self.dut.inflight_series(-1, congested=out["congested"])
        assert dut is not None
        cur = self.run.status()["current"]
        out.update(id="testbed", version=v,
                   label=f"measuring {cur['label']}" if cur else "the testbed",
                   reports=[{**q, "name": f"DUT {q['name']}"} for q in dut["queues"]],
                   ingress=_backfilled(dut["ingress"], POLL_COLUMNS),
                   bursts=sorted(out["bursts"] + [self._dut_burst(b) for b in dut["bursts"]],
                                 key=lambda b: b["start_ns"] or 0),
                   drops=out["drops"] + dut["drops"])
        if "shares_title" in dut:
            out["shares_title"] = dut["shares_title"]
        return out

    def _dut_burst(self, b: dict[str, Any]) -> dict[str, Any]:
        """An instrument's burst with its peak and who built it (see the
        module docstring)."""
        if b["start_ns"] is None:
            return b
        t0 = int(b["start_ns"])
        t1 = int(b["end_ns"]) if b["end_ns"] is not None else self.dut.now_ns()
        top_b, top_p = self.dut.most(b["egress_port"], b["queue"], t0, t1 + INTERVAL_NS)
        return {**b, "peak": max(b["peak"] or 0.0, top_b),
                "peak_pkts": max(b["peak_pkts"] or 0.0, top_p),
                "ingress": culprits(self.dut.delivered(b["egress_port"], t0, t1)),
                "flows": []}  # the reports name the first packet's flow only


def _backfilled(ingress: list[dict[str, Any]], gap: int) -> list[dict[str, Any]]:
    """The shares' columns between two reads of the counters, which put what
    left meanwhile in one column: each empty column takes the next read's
    bytes (the shares only need their ratio), up to `gap` columns back."""
    if not ingress:
        return ingress
    vs = [list(s["v"]) for s in ingress]
    run = 0
    for k in range(len(vs[0]) - 2, -1, -1):
        if any(v[k] for v in vs):
            run = 0
        elif any(v[k + 1] for v in vs) and run < gap:
            run += 1
            for v in vs:
                v[k] = v[k + 1]
    return [{**s, "v": v} for s, v in zip(ingress, vs)]
