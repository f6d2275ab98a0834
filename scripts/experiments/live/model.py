"""A run as the dashboard shows it: its state and progress, and per case
what the stored tables say — the occupancy of every traced egress queue
(ground truth, in bytes and packets), what each ingress port holds in the
congested one, the instrument's reports, the bursts (instrument and ground
truth, with the same thresholds; with the ingress ports and flows that
built them, culprits.py), the peaks and the drops per (ingress, egress).

A model is fed case by case while a run goes (from the runner's events),
the case in flight drawn from its trace as it comes (inflight.py), or at
once from a stored run folder (`from_run_dir`, for replay); either way a
finished case is digested from the same tables, so the live page and the
replay show the same figures. It is shared between the run's thread
and the server's, so every access takes its lock.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from .. import rundir as rd
from . import reduce as rx
from .culprits import blame
from .inflight import InFlight

TABLES = ("ground_truth", "ground_truth_ingress", "instrument_series", "burst_events",
          "instrument_errors", "streams", "tap_series")
"""The stored tables a case's view comes from (any may be missing). A
run with the instrument in the DUT's path (--instrument tap) has the
taps' inferred occupancy (tap_series) where the DUT's instrument's
reports would be: the page shows it in their place."""


@dataclass
class Series:
    t: np.ndarray
    v: np.ndarray


@dataclass
class CaseData:
    case_id: str
    label: str
    index: int
    status: str = "complete"
    wall_s: float = math.nan
    queues: dict[str, Series] = field(default_factory=dict)  # "port 31 q0" -> bytes (step)
    queues_pkts: dict[str, Series] = field(default_factory=dict)  # the same in packets
    reports: dict[str, Series] = field(default_factory=dict)  # "port 31" -> depth bytes (points)
    reports_pkts: dict[str, Series] = field(default_factory=dict)  # the same in packets
    congested: Optional[int] = None  # the egress port split by ingress
    ingress: dict[int, Series] = field(default_factory=dict)  # ingress port -> bytes (step)
    bursts: list[dict[str, Any]] = field(default_factory=list)
    peak_truth: float = math.nan
    peak_instrument: float = math.nan
    peak_unit: str = "bytes"
    peak_truth_pkts: float = math.nan
    peak_instrument_pkts: float = math.nan
    sent: int = 0
    drops: int = 0
    pairs: list[dict[str, Any]] = field(default_factory=list)  # per (ingress, egress): sent, lost
    span: tuple[float, float] = (0.0, 0.0)

    def summary(self) -> dict[str, Any]:
        return {"id": self.case_id, "label": self.label, "index": self.index,
                "status": self.status, "wall_s": _num(self.wall_s),
                "span": [self.span[0], self.span[1]], "peak_truth": _num(self.peak_truth),
                "peak_instrument": _num(self.peak_instrument), "peak_unit": self.peak_unit,
                "peak_truth_pkts": _num(self.peak_truth_pkts),
                "peak_instrument_pkts": _num(self.peak_instrument_pkts),
                "bursts_truth": sum(b["source"] == "truth" for b in self.bursts),
                "bursts_instrument": sum(b["source"] == "instrument" for b in self.bursts),
                "bursts": self.bursts, "sent": self.sent, "drops": self.drops,
                "pairs": self.pairs, "congested": self.congested}

    def series(self, t0: Optional[float] = None, t1: Optional[float] = None,
               px: int = rx.DEFAULT_PX) -> dict[str, Any]:
        """The case's series over [t0, t1] (default: its whole span), one
        value per pixel column (the largest), in bytes (`v`) and packets
        (`p`); every queue on the same columns (a time x port heatmap's)."""
        lo = self.span[0] if t0 is None else float(t0)
        hi = self.span[1] if t1 is None else float(t1)
        e = rx.edges(lo, hi, px)
        out: dict[str, Any] = {"id": self.case_id, "t0": float(e[0]), "t1": float(e[-1]),
                               "px": int(e.size - 1), "queues": [], "reports": [],
                               "congested": self.congested, "ingress": []}
        for name, s in self.queues.items():
            t, v = rx.step_max(s.t, s.v, e)
            sp = self.queues_pkts.get(name)
            p = rx.step_max(sp.t, sp.v, e)[1] if sp is not None else []
            out["queues"].append({"name": name, "t": t, "v": v, "p": p})
        for name, s in self.reports.items():
            t, v = rx.point_max(s.t, s.v, e)
            sp = self.reports_pkts.get(name)
            p = rx.point_max(sp.t, sp.v, e)[1] if sp is not None else []
            out["reports"].append({"name": name, "t": t, "v": v, "p": p})
        for port, s in self.ingress.items():
            t, v = rx.step_max(s.t, s.v, e)
            out["ingress"].append({"ingress": port, "t": t, "v": v})
        return out


def _num(x: Any) -> Optional[float]:
    """JSON has no NaN: missing numbers are null."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _rows(df: Optional[pd.DataFrame], case_id: str) -> pd.DataFrame:
    if df is None or df.empty or "case_id" not in df.columns:
        return pd.DataFrame()
    return df[df["case_id"] == case_id]


def _sorted(t: Any, v: Any) -> Series:
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    order = np.argsort(t, kind="stable")
    return Series(t[order], v[order])


def digest(case_id: str, label: str, index: int, tables: dict[str, pd.DataFrame],
           status: str = "complete", wall_s: float = math.nan) -> CaseData:
    """A case's view from its rows of the stored tables."""
    c = CaseData(case_id, label, index, status, wall_s)
    gt = _rows(tables.get("ground_truth"), case_id)
    for (port, q), g in (gt.groupby(["egress_port", "queue"], sort=True) if not gt.empty else ()):
        name = f"port {int(port)} q{int(q)}"
        c.queues[name] = _sorted(g["t_ns"], g["occupancy_bytes"])
        if "occupancy_frames" in g.columns:
            c.queues_pkts[name] = _sorted(g["t_ns"], g["occupancy_frames"])
    ins = _rows(tables.get("instrument_series"), case_id)
    if not ins.empty:
        if "depth_frames" in ins.columns:  # a case maximum read from a register counts too
            c.peak_instrument_pkts = float(ins["depth_frames"].max())
        ins = ins[ins["t_ns"] >= 0]  # ... but has no time
        for port, g in ins.groupby("egress_port", sort=True):
            c.reports[f"port {int(port)}"] = _sorted(g["t_ns"], g["depth_bytes"])
            if "depth_frames" in g.columns:
                c.reports_pkts[f"port {int(port)}"] = _sorted(g["t_ns"], g["depth_frames"])
    if ins.empty:
        _tap_reports(c, _rows(tables.get("tap_series"), case_id))
    if not gt.empty and "occupancy_frames" in gt.columns:
        c.peak_truth_pkts = float(gt["occupancy_frames"].max())
    gi = _rows(tables.get("ground_truth_ingress"), case_id)
    if not gi.empty:
        fullest = gi.groupby("egress_port")["occupancy_bytes"].max()
        c.congested = int(fullest.idxmax())
        for ing, g in gi[gi["egress_port"] == c.congested].groupby("ingress_port", sort=True):
            c.ingress[int(ing)] = _sorted(g["t_ns"], g["occupancy_bytes"])
    st = _rows(tables.get("streams"), case_id)
    c.bursts = _bursts(_rows(tables.get("burst_events"), case_id))
    for b in c.bursts:
        blame(b, gi, ins, st)
        b["peak_pkts"] = _burst_pkts(b, gt, ins)
    _peaks(c, _rows(tables.get("instrument_errors"), case_id))
    _drops(c, st)
    c.span = _span(c)
    return c


def _tap_reports(c: CaseData, tap: pd.DataFrame) -> None:
    """The taps' inferred occupancy per DUT egress port as the case's
    reports (bytes and frames), where it is known (lost reports leave
    gaps, never values)."""
    if tap.empty:
        return
    known = tap[tap["occupancy_bytes"].notna()]
    if "valid" in known.columns:
        known = known[known["valid"].astype(bool)]
    for port, g in known.groupby("egress_port", sort=True):
        c.reports[f"port {int(port)}"] = _sorted(g["t_ns"], g["occupancy_bytes"])
        if "occupancy_frames" in g.columns:
            c.reports_pkts[f"port {int(port)}"] = _sorted(g["t_ns"], g["occupancy_frames"])
    if "occupancy_frames" in known.columns and not known.empty:
        c.peak_instrument_pkts = float(known["occupancy_frames"].max())


def _burst_pkts(b: dict[str, Any], gt: pd.DataFrame, ins: pd.DataFrame) -> Optional[float]:
    """A burst's peak in packets: the most its queue held from its start to
    its end (ground truth), or the most a reported packet left behind
    (instrument); None when the tables cannot say."""
    start, end = b["start_ns"], b["end_ns"]
    if start is None:
        return None
    if b["source"] == "truth":
        d, col = gt, "occupancy_frames"
        if not d.empty:
            d = d[(d["egress_port"] == b["egress_port"]) & (d["queue"] == b["queue"])]
    else:
        d, col = ins, "depth_frames"
        if not d.empty:
            d = d[(d["egress_port"] == b["egress_port"]) & (d["kind"] == "burst_pkt")]
    if d.empty or col not in d.columns:
        return None
    d = d[(d["t_ns"] >= start) & ((d["t_ns"] <= end) if end is not None else True)]
    return _num(d[col].max()) if not d.empty else None


def _bursts(be: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in be.itertuples(index=False):
        d = r._asdict()
        out.append({"source": str(d.get("source", "")), "egress_port": int(d.get("egress_port", -1)),
                    "queue": int(d.get("queue", 0)), "burst_id": int(d.get("burst_id", 0)),
                    "start_ns": _num(d.get("start_ns")), "end_ns": _num(d.get("end_ns")),
                    "peak": _num(d.get("peak")), "peak_ns": _num(d.get("peak_ns")),
                    "unit": str(d.get("unit", "bytes")), "frames": _num(d.get("frames"))})
    out.sort(key=lambda b: (b["source"] != "instrument", b["egress_port"], b["burst_id"]))
    return out


def _peaks(c: CaseData, err: pd.DataFrame) -> None:
    """The case's true peak (over every trace record) and the instrument's,
    as stored in instrument_errors; else the highest values drawn."""
    if not err.empty:
        r = err.iloc[0]
        c.peak_truth, c.peak_instrument = float(r["peak_truth"]), float(r["peak_instrument"])
        c.peak_unit = str(r.get("peak_unit", "bytes"))
        return
    c.peak_truth = max((float(s.v.max()) for s in c.queues.values() if s.v.size), default=math.nan)
    c.peak_instrument = max((float(s.v.max()) for s in c.reports.values() if s.v.size),
                            default=math.nan)


def _drops(c: CaseData, st: pd.DataFrame) -> None:
    """Frames the sources sent that no sink received (received: over the
    whole case where a stream says so, rx_frames_total)."""
    if st.empty or "tx_frames" not in st.columns:
        return
    rx_col = "rx_frames_total" if "rx_frames_total" in st.columns else "rx_frames"
    if rx_col not in st.columns:
        return
    c.sent = int(st["tx_frames"].sum())
    c.drops = int(max(0, c.sent - int(st[rx_col].sum())))
    if {"ingress_port", "egress_port"} <= set(st.columns):
        for (i, e), g in st.groupby(["ingress_port", "egress_port"], sort=True):
            sent = int(g["tx_frames"].sum())
            c.pairs.append({"ingress": int(i), "egress": int(e), "sent": sent,
                            "lost": max(0, sent - int(g[rx_col].sum()))})


def _span(c: CaseData) -> tuple[float, float]:
    ts = [s.t for s in (*c.queues.values(), *c.reports.values(), *c.ingress.values()) if s.t.size]
    if not ts:
        return 0.0, 0.0
    return float(min(t[0] for t in ts)), float(max(t[-1] for t in ts))


class RunModel:
    """The dashboard's view of one run (see the module docstring)."""

    def __init__(self, mode: str = "live"):
        self.mode = mode  # live or replay
        self.lock = threading.Lock()
        self.version = 0  # grows with every change
        self.run_id = ""
        self.experiment = ""
        self.path = ""
        self.state = "starting"  # starting, running, complete, partial
        self.reason = ""
        self.planned = 0
        self.done = 0
        self.current: Optional[dict[str, Any]] = None
        self.cases: list[CaseData] = []
        self.inflight: Optional[InFlight] = None
        self._by_id: dict[str, CaseData] = {}
        self.started = time.monotonic()
        self.wall_s: Optional[float] = None  # set when the run ended

    # ----- changes -----------------------------------------------------------------

    def _changed(self) -> None:
        self.version += 1

    def begin(self, path: Path, planned: int, meta: dict[str, Any]) -> None:
        with self.lock:
            self.path = str(path)
            self.run_id = str(meta.get("run_id", Path(path).name))
            self.experiment = str(meta.get("experiment", ""))
            self.planned = planned
            self.state = "running"
            self._changed()

    def progress(self, index: int, label: str, fraction: float) -> None:
        with self.lock:
            vns = (self.current or {}).get("virtual_ns")
            self.current = {"index": index, "label": label, "virtual_ns": vns,
                            "fraction": min(max(float(fraction), 0.0), 1.0)}
            self._changed()

    def begin_case(self, index: int, case_id: str, label: str) -> None:
        with self.lock:
            self.inflight = InFlight(case_id, label, index)
            self.current = {"index": index, "label": label, "fraction": 0.0, "virtual_ns": None}
            self._changed()

    def trace(self, t_ns: Optional[int], piece: dict[str, Any]) -> None:
        """A piece of the in-flight case's ground-truth trace."""
        with self.lock:
            if self.inflight is None:
                return
            self.inflight.add(t_ns, piece)
            if self.current is not None:
                self.current["virtual_ns"] = self.inflight.t_ns
            self._changed()

    def inflight_series(self, seen: int) -> Optional[dict[str, Any]]:
        """The in-flight case's series when it changed since version `seen`."""
        with self.lock:
            f = self.inflight
            if f is None or f.version == seen or not f.queues:
                return None
            d = f.series()
            d["version"] = f.version
            return d

    def add_case(self, c: CaseData, done: Optional[int] = None) -> None:
        with self.lock:
            if self.inflight is not None and self.inflight.case_id == c.case_id:
                self.inflight = None
            if c.case_id in self._by_id:  # measured again (should not happen): keep the last
                self.cases = [x for x in self.cases if x.case_id != c.case_id]
            self.cases.append(c)
            self._by_id[c.case_id] = c
            self.done = done if done is not None else sum(x.status == "complete" for x in self.cases)
            self._changed()

    def end(self, complete: bool, reason: str = "") -> None:
        with self.lock:
            self.state = "complete" if complete else "partial"
            self.reason = reason or ""
            self.current = None
            self.inflight = None
            self.wall_s = time.monotonic() - self.started
            self._changed()

    # ----- what the page reads -----------------------------------------------------

    @property
    def ended(self) -> bool:
        return self.state in ("complete", "partial")

    def case(self, case_id: str) -> Optional[CaseData]:
        with self.lock:
            return self._by_id.get(case_id)

    def status(self) -> dict[str, Any]:
        with self.lock:
            cs = self.cases
            wall = self.wall_s if self.wall_s is not None else time.monotonic() - self.started
            return {
                "mode": self.mode, "run_id": self.run_id, "experiment": self.experiment,
                "path": self.path, "state": self.state, "reason": self.reason,
                "planned": self.planned, "done": self.done, "cases_shown": len(cs),
                "current": self.current, "wall_s": wall if self.mode == "live" else None,
                "virtual_ns": sum(c.span[1] for c in cs),
                "totals": {
                    "peak_truth": _num(max((c.peak_truth for c in cs
                                            if math.isfinite(c.peak_truth)), default=math.nan)),
                    "peak_instrument": _num(max((c.peak_instrument for c in cs
                                                 if math.isfinite(c.peak_instrument)),
                                                default=math.nan)),
                    "peak_unit": cs[0].peak_unit if cs else "bytes",
                    "peak_truth_pkts": _num(max((c.peak_truth_pkts for c in cs
                                                 if math.isfinite(c.peak_truth_pkts)),
                                                default=math.nan)),
                    "peak_instrument_pkts": _num(max((c.peak_instrument_pkts for c in cs
                                                      if math.isfinite(c.peak_instrument_pkts)),
                                                     default=math.nan)),
                    "bursts_truth": sum(c.summary()["bursts_truth"] for c in cs),
                    "bursts_instrument": sum(c.summary()["bursts_instrument"] for c in cs),
                    "drops": sum(c.drops for c in cs), "sent": sum(c.sent for c in cs),
                },
            }

    def summaries(self, start: int = 0) -> list[dict[str, Any]]:
        """The summaries of the cases from position `start` on (arrival order)."""
        with self.lock:
            return [c.summary() for c in self.cases[start:]]

    def count(self) -> int:
        with self.lock:
            return len(self.cases)


def from_run_dir(path: Path) -> RunModel:
    """A stored run (consolidated, or the parts a killed run left) as a
    finished model, for replay."""
    path = Path(path)
    meta = rd.load_meta(path)
    m = RunModel("replay")
    cases = rd.load_table(path, "cases")
    planned = int(meta.get("cases", {}).get("planned", 0) or (0 if cases is None else len(cases)))
    m.begin(path, planned, meta)
    tables = {t: rd.load_table(path, t) for t in TABLES}
    if cases is None or cases.empty:
        ids = sorted({cid for df in tables.values() if df is not None and "case_id" in df.columns
                      for cid in df["case_id"].unique()})
        rows = [{"case_id": i, "label": i, "status": "complete", "wall_s": math.nan} for i in ids]
    else:
        rows = cases.to_dict("records")
    for i, r in enumerate(rows):
        cid = str(r["case_id"])
        m.add_case(digest(cid, str(r.get("label", cid)), i, tables, str(r.get("status", "complete")),
                          float(r.get("wall_s", math.nan))))
    m.end(meta.get("status") == rd.STATUS_COMPLETE, str(meta.get("partial_reason", "")))
    return m
