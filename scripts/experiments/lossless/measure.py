"""Planning and measuring the lossless-class cases: one incast per PFC
setting (off, on) on the reference DUT in virtual time.

Every sender port sends a lossy flow (class 0) and a lossless flow (class
3) of the same number of frames at once, together at line rate, into one
egress port: an N:1 incast of both classes. A CNP stream (class 7) from
one more port runs beside them. The run goes on until every flow has
ended and the switch is empty; a flow's completion is the time from its
first frame sent to its last frame received (first bits), in virtual time.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from ..linerate import frame_time_ns
from ..params import Profile
from ..runner import Case, Tables, Tick
from ..testbed import Flow
from ..traffic import Traffic
from . import EXPERIMENT, frames
from .params import (CNP_PRIORITY, DSCP_CLASSES, LOSSLESS_PRIORITY, LOSSY_PRIORITY,
                     LosslessParams)

CLASSES = {"lossy": LOSSY_PRIORITY, "lossless": LOSSLESS_PRIORITY, "cnp": CNP_PRIORITY}


def plan(p: LosslessParams) -> list[Case]:
    return [Case(f"{EXPERIMENT}/pfc-{pfc}", EXPERIMENT,
                 f"lossless class: {p.senders}:1 incast, PFC {pfc}", {"pfc": pfc},
                 weight=float(p.senders * p.flow_frames))
            for pfc in p.pfc]


def expected_ns(p: LosslessParams) -> float:
    """How long the incast lasts: every class's bytes through the egress."""
    wire = sum(p.senders * p.flow_frames * frame_time_ns(s, p.rate_bps)
               for s in (p.lossy_size, p.lossless_size))
    return wire


def write_classes(sw: Any) -> None:
    """The DUT's traffic classes: DSCP 26 -> 3 (lossless), 48 -> 7 (CNP)."""
    t = sw.table("traffic_class")
    sw.insert([t.entry({"hdr.ipv4.dscp": dscp}, "set_traffic_class", tc=tc)
               for dscp, tc in DSCP_CLASSES.items()])


class LosslessMeasure:
    """measure(case, tick) -> tables: one incast per case."""

    def __init__(self, bed: Any, p: LosslessParams, store: Callable[[str, Any], None],
                 base: Profile):
        self.vs, self.base, self.p = bed.vs, base, p

    def _streams(self, tr: Traffic) -> dict[int, tuple[str, int]]:
        p, eg = self.p, self.p.egress
        ids: dict[int, tuple[str, int]] = {}
        for port in p.sender_ports:
            for cls, tpl, size, pct in (("lossy", frames.lossy, p.lossy_size, p.lossy_pct),
                                        ("lossless", frames.lossless, p.lossless_size,
                                         p.lossless_pct)):
                sid = tr.add(port, eg, template=tpl(port, eg), size=size, frames=p.flow_frames,
                             rate_pct=pct, priority=CLASSES[cls], obey_pause=p.obey_pause,
                             name=f"{cls}-{port}")
                ids[sid] = (cls, port)
        if p.cnp_port is not None:
            sid = tr.add(p.cnp_port, eg, template=frames.cnp(p.cnp_port, eg),
                         size=frames.CNP_SIZE, rate_fps=p.cnp_fps,
                         duration_ns=int(expected_ns(p)), priority=CNP_PRIORITY, name="cnp")
            ids[sid] = ("cnp", p.cnp_port)
        return ids

    def __call__(self, case: Case, tick: Tick) -> Tables:
        p, pfc = self.p, case.params["pfc"] == "on"
        ports = p.sender_ports + ([p.cnp_port] if p.cnp_port else [])
        self.vs.setup_switch = write_classes
        self.vs.reset(p.profile(self.base, pfc), [Flow(i, p.egress) for i in ports], {})
        tr = Traffic(self.vs)
        ids = self._streams(tr)
        tr.run_until_idle(tick, expected_ns(p))
        with self.vs.locked() as e:
            rows = e.stream_stats()
            queues = e.tm_queue_stats()
            groups = e.tm_pfc_stats()
        common = {"case_id": case.case_id, "experiment": EXPERIMENT,
                  "pfc": "on" if pfc else "off", "obey_pause": p.obey_pause}
        flows = flow_rows(rows, ids, p.egress, common)
        return {"lossless_flows": flows,
                "lossless_classes": class_rows(flows, queues, p.egress, common),
                "lossless_pause": pause_rows(groups, p, common, flows)}


def flow_rows(rows: list[dict], ids: dict[int, tuple[str, int]], egress: int,
              common: dict[str, Any]) -> pd.DataFrame:
    out = []
    for sid, (cls, port) in ids.items():
        mine = [r for r in rows if r["stream"] == sid]
        rx = next((r for r in mine if r.get("rx_port") == egress), None)
        r0 = rx or mine[0]
        tx = int(r0["tx_frames"])
        got = int(rx["rx_frames"]) if rx else 0
        first = r0.get("first_tx_ns")
        last = rx.get("last_rx_ns") if rx else None
        out.append({**common, "class": cls, "priority": CLASSES[cls], "ingress_port": port,
                    "stream": sid, "tx_frames": tx, "rx_frames": got, "lost": tx - got,
                    "loss_pct": 100.0 * (tx - got) / tx if tx else 0.0,
                    "completion_us": (last - first) / 1e3 if last is not None
                    and first is not None else None,
                    "lat_avg_ns": rx.get("lat_avg_ns") if rx else None,
                    "lat_max_ns": rx.get("lat_max_ns") if rx else None,
                    "pause_frames": int(r0.get("pause_frames", 0)),
                    "paused_us": int(r0.get("paused_ns", 0)) / 1e3})
    return pd.DataFrame(out)


def class_rows(flows: pd.DataFrame, queues: list[dict], egress: int,
               common: dict[str, Any]) -> pd.DataFrame:
    out = []
    for cls, g in flows.groupby("class", sort=False):
        q = next((x for x in queues if x["port"] == egress and x["queue"] == CLASSES[cls]), {})
        tx, rx = int(g["tx_frames"].sum()), int(g["rx_frames"].sum())
        done = g["completion_us"].dropna()
        out.append({**common, "class": cls, "priority": CLASSES[cls], "flows": len(g),
                    "tx_frames": tx, "rx_frames": rx, "lost": tx - rx,
                    "loss_pct": 100.0 * (tx - rx) / tx if tx else 0.0,
                    "queue_drops": int(q.get("drop_pkts", 0)),
                    "headroom_drops": int(dict(q.get("drops", {})).get("headroom", 0)),
                    "ecn_marked": int(q.get("ecn_marked", 0)),
                    "peak_queue_bytes": int(q.get("peak_bytes", 0)),
                    "completion_median_us": float(done.median()) if len(done) else None,
                    "completion_max_us": float(done.max()) if len(done) else None,
                    "lat_max_ns": float(g["lat_max_ns"].max()) if g["lat_max_ns"].notna().any()
                    else None,
                    "paused_us_total": float(g["paused_us"].sum())})
    return pd.DataFrame(out)


def pause_rows(groups: list[dict], p: LosslessParams, common: dict[str, Any],
               flows: pd.DataFrame) -> pd.DataFrame:
    """One row per sender port (its lossless priority): the pauses the
    switch sent and how long it asked the sender to stop, and the run's
    length to read it against. Without PFC every count is 0."""
    by = {(g["port"], g["priority"]): g for g in groups}
    span = flows["completion_us"].max() if flows["completion_us"].notna().any() else None
    out = []
    for port in p.sender_ports:
        g = by.get((port, LOSSLESS_PRIORITY), {})
        paused = int(g.get("paused_ns", 0)) / 1e3
        out.append({**common, "ingress_port": port, "priority": LOSSLESS_PRIORITY,
                    "xoff_frames": int(g.get("xoff_frames", 0)),
                    "xon_frames": int(g.get("xon_frames", 0)), "paused_us": paused,
                    "paused_pct": 100.0 * paused / span if span else 0.0,
                    "peak_headroom_bytes": int(g.get("peak_headroom_bytes", 0)),
                    "headroom_bytes": p.headroom_bytes if common["pfc"] == "on" else 0,
                    "peak_bytes": int(g.get("peak_bytes", 0)),
                    "headroom_drops": int(g.get("drops", 0))})
    return pd.DataFrame(out)
