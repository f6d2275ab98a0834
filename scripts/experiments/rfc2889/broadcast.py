"""RFC 2889's broadcast frame forwarding and latency: port 1 sends
broadcast frames, which the DUT floods to its flood domain (every port of
the test); the search finds the highest rate at which every other port
receives every frame, and the latency each port saw at that rate.

A broadcast trial counts per receiving port: each should get every frame
sent, so a trial's frames to receive are the frames sent times the
receiving ports, and a frame flooded back out of its ingress port is an
error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..testbed import host_mac
from ..tester import search
from ..tester.streams import Stream
from ..tester.trial import Trial, stream_rows
from . import verdicts
from .context import Context
from .topology import broadcast_stream


def _configure(ports: list[int]):
    """The flood domain of the test's ports, and the source's own address
    as a static entry (no learning digest per frame)."""
    from ...control.apps.flooding import Flooding

    def configure(sw: Any) -> None:
        Flooding(sw).domain(ports)
        src = ports[0]
        sw.insert(sw.table("smac").entry({"hdr.ethernet.src_addr": host_mac(src)}, "smac_hit",
                                         port=src))

    return configure


def per_port(st: Stream, receivers: list[int], rows: list[dict[str, Any]], sid: int,
             line_rate_bps: float, duration_ns: int) -> pd.DataFrame:
    """The broadcast stream's engine rows as one tester row per receiving
    port (tx: what the source sent); frames back at the source port count
    as misdelivered."""
    fake = [Stream(st.tx_port, p, st.rate, st.size, name=f"{st.tx_port}->{p}")
            for p in receivers]
    table = stream_rows(fake, rows, [sid] * len(fake), line_rate_bps, duration_ns)
    echoed = sum(int(r["rx_frames"]) for r in rows
                 if r["stream"] == sid and r.get("rx_port") == st.tx_port)
    table["misdelivered"] = [echoed] + [0] * (len(table) - 1)
    return table


def engine_rows(bed: Any) -> list[dict[str, Any]]:
    """The last trial's rows per stream and receiving port: the embedded
    switch's sinks (kept until the next trial), the chain's, or the
    Mininet analyzers' reports."""
    if bed.name == "mininet":
        from ..tester.trafgen_trial import engine_rows as from_reports

        last = bed.last
        return from_reports(last["streams"], last["ids"], list(last["sent"].values()),
                            last["received"])
    if bed.name == "chain":
        return bed.last_rows
    with bed.vs.locked() as e:
        return e.stream_stats()


def trial(c: Context, pct: float) -> Trial:
    """One broadcast trial. The embedded switch is told its flood domain
    here; a chain floods over its tester ports and links, a Mininet DUT
    over every port as it is."""
    ports = c.p.port_list
    st = broadcast_stream(ports, c.size, pct)
    if c.bed.name == "virtual":
        c.bed.setup_switch = _configure(ports)
    try:
        t = c.bed.trial([st], c.duration_ns())
    finally:
        c.bed.setup_switch = None
    table = per_port(st, ports[1:], engine_rows(c.bed), int(t.streams["stream"].iloc[0]),
                     c.p.rate_bps, t.duration_ns)
    return Trial(table, t.duration_ns, t.settle_ns, t.line_rate_bps, t.queued_at_end,
                 info=t.info)


def _range(values: pd.Series) -> tuple[float, float]:
    v = values.dropna()
    return (float(v.min()), float(v.max())) if len(v) else (np.nan, np.nan)


def broadcast(c: Context) -> dict:
    receivers = c.p.ports - 1

    def each(step: search.Step) -> None:
        s = step.trial.streams
        c.keep(step, {"topology": "broadcast", "receiving_ports": receivers,
                      "source_tx_frames": int(s["tx_frames"].iloc[0]),
                      "source_tx_fps": float(s["tx_fps"].iloc[0])})

    r = search.throughput(lambda pct: trial(c, pct), c.p.tolerance_pct, c.p.resolution_pct,
                          each=each, tick=c.tick)
    value, note = r.answer()
    shown = r.best or (min(r.steps, key=lambda s: s.value) if r.steps else None)
    fields: dict[str, Any] = {}
    if shown is not None:
        s = shown.trial.streams
        c.store("rfc2889_broadcast_ports", s.assign(case_id=c.case.case_id,
                                                    frame_size=c.size, offered_pct=shown.value))
        for col, name in (("lat_avg_ns", "avg"), ("lat_min_ns", "min"), ("lat_max_ns", "max"),
                          ("jitter_ns", "jitter")):
            fields[f"lat_{name}_lo_ns"], fields[f"lat_{name}_hi_ns"] = _range(s[col])
        fields.update(tx_pct=shown.value, tx_frames=int(s["tx_frames"].iloc[0]),
                      tx_fps=float(s["tx_fps"].iloc[0]), loss_frames=int(s["lost"].sum()),
                      loss_pct=shown.trial.loss_pct)
    return c.result(topology="broadcast", throughput_pct=value, receiving_ports=receivers,
                    result=verdicts.search_result(r.value), trials=len(r.steps), note=note, **fields)
