"""A running switch as the dashboard shows it (`p4scope watch --switch
... --reports ...`): the last `window` seconds of wall clock in pixel
columns — per egress queue the most it held (bytes and packets), per
(egress, ingress) the bytes that left, and the bursts with the ingress
ports and flows that built them; the frames offered to a queue and not
delivered.

It answers the server (server.py) as a run's model does: no stored
cases, one view "in flight" that never ends until the watch stops. The
sources (attach.py) feed it from their threads; every access takes its
lock. Times are nanoseconds of this process's monotonic clock since the
watch began.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from .rolling import Rolling

N_COLUMNS = 300
MAX_BURSTS = 50  # the newest shown


def _ip(x: Optional[int]) -> str:
    return "?" if x is None else ".".join(str(b) for b in int(x).to_bytes(4, "big"))


def flow_name(five: tuple) -> str:
    """A flow's 5-tuple (the collector's) as a person reads it."""
    src, dst, proto, sport, dport = five
    name = {6: "tcp", 17: "udp"}.get(proto, f"proto {proto}")
    return f"{_ip(src)}:{sport} \u2192 {_ip(dst)}:{dport} {name}"


class SwitchModel:
    """The dashboard's view of one running switch (see the module docstring)."""

    mode = "attach"

    def __init__(self, target: str, window_s: float = 60.0, columns: int = N_COLUMNS,
                 clock: Callable[[], int] = time.monotonic_ns):
        self.target = target
        self.clock = clock
        self.t0 = clock()
        self.width = max(1, round(window_s * 1e9 / columns))
        self.columns = columns
        self.lock = threading.Lock()
        self.version = 0
        self.state = "running"
        self.reason = ""
        self.sources: dict[str, dict[str, Any]] = {}  # what each source says about itself
        self.occ: dict[tuple[int, int], tuple[Rolling, Rolling]] = {}
        self.left: dict[str, dict[tuple[int, int], Rolling]] = {}  # source -> (egress, ingress)
        self.peak: dict[tuple[int, int], tuple[float, float]] = {}
        self.bursts: list[dict[str, Any]] = []
        self.burst_count = 0
        self.pairs: list[dict[str, Any]] = []
        self.wall_s: Optional[float] = None
        self.names: dict[tuple[int, int], str] = {}  # a queue's name, if not "port P qQ"
        self.stopped_ns: Optional[int] = None  # the window stays where it was at the end

    def now_ns(self) -> int:
        return self.clock() - self.t0

    def name(self, port: int, queue: int, name: str) -> None:
        """Shows queue (port, queue) as `name`."""
        with self.lock:
            self.names[(int(port), int(queue))] = name

    # ----- the sources' updates ------------------------------------------------------

    def sample(self, port: int, queue: int, t_ns: int, nbytes: float, pkts: float) -> None:
        """What queue (port, queue) held at `t_ns` (bytes and packets)."""
        with self.lock:
            k = (int(port), int(queue))
            if k not in self.occ:
                self.occ[k] = (Rolling(self.columns, self.width), Rolling(self.columns, self.width))
            self.occ[k][0].add(t_ns, nbytes)
            self.occ[k][1].add(t_ns, pkts)
            pb, pp = self.peak.get(k, (0.0, 0.0))
            self.peak[k] = (max(pb, float(nbytes)), max(pp, float(pkts)))
            self.version += 1

    def left_port(self, source: str, egress: int, ingress: int, t_ns: int, nbytes: float) -> None:
        """Bytes from `ingress` that left `egress` around `t_ns`, as `source`
        counts them (delivered: the instrument's counter; reported: the
        reported packets)."""
        with self.lock:
            by = self.left.setdefault(source, {})
            k = (int(egress), int(ingress))
            if k not in by:
                by[k] = Rolling(self.columns, self.width, "sum")
            by[k].add(t_ns, nbytes)
            self.version += 1

    def set_bursts(self, bursts: list[dict[str, Any]], count: int) -> None:
        with self.lock:
            self.bursts = sorted(bursts, key=lambda b: b["start_ns"] or 0)[-MAX_BURSTS:]
            self.burst_count = max(count, len(bursts))
            self.version += 1

    def set_pairs(self, pairs: list[dict[str, Any]]) -> None:
        with self.lock:
            self.pairs = pairs
            self.version += 1

    def note(self, source: str, **facts: Any) -> None:
        """A source's own figures (reports received, polls, errors), shown in
        the status."""
        with self.lock:
            self.sources.setdefault(source, {}).update(facts)
            self.version += 1

    def touch(self) -> None:
        """A change of the view by time alone (its window slid)."""
        with self.lock:
            self.version += 1

    def end(self, reason: str = "") -> None:
        with self.lock:
            self.state = "stopped"
            self.reason = reason
            self.stopped_ns = self.now_ns()
            self.wall_s = self.stopped_ns / 1e9
            self.version += 1

    # ----- what the server reads (a run model's interface) ---------------------------

    @property
    def ended(self) -> bool:
        return self.state != "running"

    def count(self) -> int:
        return 0

    def summaries(self, start: int = 0) -> list[dict[str, Any]]:
        return []

    def case(self, case_id: str) -> None:
        return None

    def status(self) -> dict[str, Any]:
        with self.lock:
            peak_b = max((b for b, _ in self.peak.values()), default=None)
            peak_p = max((p for _, p in self.peak.values()), default=None)
            lost = sum(p["lost"] for p in self.pairs)
            return {
                "mode": "attach", "run_id": self.target, "experiment": "switch", "path": "",
                "state": self.state, "reason": self.reason, "planned": 0, "done": 0,
                "cases_shown": 0, "current": None,
                "wall_s": self.wall_s if self.wall_s is not None else self.now_ns() / 1e9,
                "virtual_ns": None, "sources": {k: dict(v) for k, v in self.sources.items()},
                "totals": {"peak_truth": None, "peak_instrument": peak_b, "peak_unit": "bytes",
                           "peak_truth_pkts": None, "peak_instrument_pkts": peak_p,
                           "bursts_truth": None, "bursts_instrument": self.burst_count,
                           "drops": lost if self.pairs else None,
                           "sent": sum(p["sent"] for p in self.pairs)},
            }

    def delivered(self, egress: int, t0_ns: int, t1_ns: int) -> dict[int, float]:
        """Bytes each ingress port had delivered out of `egress` from `t0_ns`
        to `t1_ns` (the columns they fall in), as the instrument counts them
        ("delivered") or else as its reports do."""
        with self.lock:
            source = "delivered" if self.left.get("delivered") else "reported"
            return {i: r.over(t0_ns, t1_ns) for (e, i), r in self.left.get(source, {}).items()
                    if e == egress}

    def most(self, port: int, queue: int, t0_ns: int, t1_ns: int) -> tuple[float, float]:
        """The most queue (port, queue) held from `t0_ns` to `t1_ns` (the
        columns they fall in), in bytes and packets."""
        with self.lock:
            r = self.occ.get((int(port), int(queue)))
            return (r[0].over(t0_ns, t1_ns), r[1].over(t0_ns, t1_ns)) if r else (0.0, 0.0)

    def inflight_series(self, seen: int, congested: Optional[int] = None) -> Optional[dict[str, Any]]:
        """The window up to now (or the end), when anything changed since
        version `seen`; the shares are of egress `congested` (default: the
        port whose queue held the most)."""
        with self.lock:
            if self.version == seen:
                return None
            now = self.stopped_ns if self.stopped_ns is not None else self.now_ns()
            out: dict[str, Any] = {
                "id": "switch", "label": f"switch {self.target}", "index": 0, "clock": "wall",
                "version": self.version, "t0": float(now - self.columns * self.width),
                "t1": float(now), "virtual_ns": None, "queues": [], "reports": [],
                "ingress": [], "congested": None, "bursts": list(self.bursts),
                "drops": list(self.pairs)}
            for (p, q), (rb, rp) in sorted(self.occ.items()):
                t, v = rb.series(now)
                out["queues"].append({"name": self.names.get((p, q), f"port {p} q{q}"), "t": t,
                                      "v": v, "p": rp.series(now)[1]})
            if congested is not None:
                out["congested"] = congested
            elif self.peak:
                out["congested"] = max(self.peak, key=lambda k: self.peak[k][0])[0]
            source = "delivered" if self.left.get("delivered") else "reported"
            for (e, i), r in sorted(self.left.get(source, {}).items()):
                if e == out["congested"]:
                    t, v = r.series(now)
                    out["ingress"].append({"ingress": i, "t": t, "v": [x or 0.0 for x in v]})
            if out["congested"] is not None:
                what = ("bytes delivered, the instrument's counter" if source == "delivered"
                        else "bytes of the reported packets")
                out["shares_title"] = (f"Each ingress port's share of egress port "
                                       f"{out['congested']} (%, stacked, {what})")
            return out
