"""RFC 2889's forwarding tests on the tester: the full and partial meshes
(a forwarding trial per offered load, then the throughput search), the
maximum forwarding rate, and congestion control.

Each trial starts from a fresh switch; frames still in the DUT a few frame
times after the sources stop count as not forwarded, so the buffer cannot
hide an overload (tester.virtual)."""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..tester import search
from ..tester.trial import Trial
from . import verdicts
from .context import Context
from .topology import (congestion_ports, congestion_streams, mesh_streams, sending_ports)


def _mesh_trial(c: Context, mesh: str, pct: float) -> tuple[Trial, int]:
    streams = mesh_streams(mesh, c.p.port_list, c.size, pct, c.p.rate_bps)
    return c.bed.trial(streams, c.duration_ns()), sending_ports(streams)


def sweep(c: Context, mesh: str, procedure: str = "forwarding",
          tick: Optional[Callable[[float], None]] = None) -> list[dict[str, Any]]:
    """A forwarding trial at each offered load (highest first); returns
    the stored rows."""
    tick = tick or c.tick
    rows = []
    loads = sorted(c.p.loads, reverse=True)
    for i, pct in enumerate(loads):
        t, senders = _mesh_trial(c, mesh, pct)
        s = t.summary()
        ok = verdicts.forwarding_passed(s["tx_frames"], s["rx_frames"], s["misdelivered"],
                                 c.p.tolerance_pct) and not t.generator_short
        extra = {"topology": mesh, **c.rates(s, senders, pct)}
        c.keep(search.Step(procedure, i, pct, t, ok), extra)
        rows.append({**s, **extra, "offered_pct": pct, "passed": ok})
        tick((i + 1) / len(loads))
    return rows


def mesh(c: Context) -> tuple[dict, list[dict[str, Any]]]:
    """Forwarding at every load, then the throughput search (both on the
    test's mesh). Returns the case's result, and the forwarding rows (the
    maximum forwarding rate reads the full mesh's)."""
    mesh_name = c.test
    share = len(c.p.loads) / (len(c.p.loads) + search.throughput_trials(c.p.resolution_pct))
    forwarding = sweep(c, mesh_name, tick=lambda f: c.tick(share * f))
    senders = sending_ports(mesh_streams(mesh_name, c.p.port_list, c.size, 100.0, c.p.rate_bps))

    def each(step: search.Step) -> None:
        c.keep(step, {"topology": mesh_name,
                      **c.rates(step.trial.summary(), senders, step.value)})

    r = search.throughput(lambda pct: _mesh_trial(c, mesh_name, pct)[0], c.p.tolerance_pct,
                          c.p.resolution_pct, each=each,
                          tick=lambda f: c.tick(share + (1 - share) * f))
    value, note = r.answer()
    shown = r.best or (min(r.steps, key=lambda s: s.value) if r.steps else None)
    s = shown.trial.summary() if shown is not None else {}
    rates = c.rates(s, senders, shown.value) if shown is not None and s else {}
    return c.result(
        topology=mesh_name, throughput_pct=value, result=verdicts.search_result(r.value),
        tx_pct=shown.value if shown is not None else np.nan,
        tx_bps=rates.get("tx_bps", np.nan), tx_fps=s.get("tx_fps", np.nan),
        rx_pct=rates.get("rx_pct", np.nan), loss_pct=s.get("loss_pct", np.nan),
        loss_frames=s.get("lost", 0), trials=len(r.steps), sending_ports=senders,
        forwarding_loads=len(forwarding),
        forwarding_clean=int(sum(row["passed"] for row in forwarding)), note=note), forwarding


def max_forwarding_rate(c: Context, full_mesh_rows: Optional[list[dict[str, Any]]]) -> dict:
    """RFC 2889 s. 5.6: the highest rate received over the offered loads,
    loss allowed; from the full mesh's forwarding trials of this size when
    the run measured them, else from a sweep of its own."""
    rows, source = full_mesh_rows, "the full mesh's forwarding trials"
    if not rows:
        rows, source = sweep(c, "full_mesh", "max_forwarding_rate"), "its own full-mesh trials"
    best = max(rows, key=lambda r: (r["rx_fps"], -r["offered_pct"]))
    c.tick(1.0)
    return c.result(
        topology="full_mesh", tx_pct=best["offered_pct"], tx_fps=best["tx_fps"],
        tx_frames=best["tx_frames"], rx_frames=best["rx_frames"], loss_pct=best["loss_pct"],
        mfr_fps=best["rx_fps"], mfr_pct=best["rx_pct"], sending_ports=best["sending_ports"],
        result=verdicts.NONE, note=f"from {source}")


def congestion_control(c: Context, load_pct: float = 100.0) -> dict:
    """RFC 2889 s. 5.5, one trial: head-of-line blocking (the uncongested
    port loses) fails; back pressure (the sources held back) is reported."""
    ports = congestion_ports(c.p.port_list)
    streams = congestion_streams(ports, c.size, load_pct, c.p.rate_bps)
    t = c.bed.trial(streams, c.duration_ns())
    st = t.streams.set_index("name")
    # what the sources offered from their starts, less a frame each for rounding
    offered = sum(max(s.rate.fps(c.p.rate_bps, c.size) * max(t.duration_ns - s.start_ns, 0)
                      / 1e9 - 1, 0) for s in streams)
    uc_tx, uc_rx = int(st.loc["A->UC", "tx_frames"]), int(st.loc["A->UC", "rx_frames"])
    c_tx = int(st.loc[["A->C", "B->C"], "tx_frames"].sum())
    c_rx = int(st.loc[["A->C", "B->C"], "rx_frames"].sum())
    hol = verdicts.head_of_line_blocking(uc_tx, uc_rx, c.p.tolerance_pct)
    bp = verdicts.back_pressure(t.tx_frames, offered)
    note = ""
    if c.bed.name == "mininet":  # a generator short of its rate is the tester's, not a pause
        bp = False
        note = ("back pressure not observable: veth carries no pause frames"
                + ("; the generator fell short, the congested port may not have been "
                   "overloaded" if t.generator_short else ""))
    result = verdicts.congestion_result(uc_tx, uc_rx, c.p.tolerance_pct)
    c.keep(search.Step("congestion_control", 0, load_pct, t, result == verdicts.PASS),
           {"topology": "congestion", **c.rates(t.summary(), 2, load_pct)})
    c.tick(1.0)
    return c.result(
        topology="congestion", tx_pct=load_pct, tx_frames=t.tx_frames,
        offered_frames=round(offered), uc_port=ports.uncongested, c_port=ports.congested,
        uc_tx=uc_tx, uc_rx=uc_rx, uc_loss_pct=verdicts.loss_pct(uc_tx, uc_rx), c_tx=c_tx, c_rx=c_rx,
        c_loss_pct=verdicts.loss_pct(c_tx, c_rx), head_of_line_blocking=hol, back_pressure=bp,
        misdelivered=int(t.streams["misdelivered"].sum()), queued_at_end=t.queued_at_end,
        result=result, note=note)
