"""A run into the telemetry: the runner's events (runner.RunEvent) and the
ground-truth trace of the case in flight (traffic.trace_observed).

The trace (cases measured in this process) gives the queues' levels as
virtual time goes; a finished case's stored tables give, per (egress,
ingress), what the sinks received and what was lost (streams), its bursts
(burst_events), its queues' peaks (ground_truth, so the maxima are right
also when the case ran in a worker process and no trace came here) and,
when the case captured the instrument's reports, the hop latency of each
reported packet (instrument_series' hop_latency_ns), as the DUT's node.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import numpy as np
import pandas as pd

from ..groundtruth import DROP
from ..testbed import NODE_ID
from .telemetry import Telemetry

SWITCH = "virtual"
"""The `switch` label of a virtual-time run's series (each case's embedded switch)."""


class RunFeed:
    """`on_event` and `on_trace` for one run; both run in the run's thread
    and only update the telemetry (a few numpy reductions per piece)."""

    def __init__(self, telemetry: Telemetry, switch: str = SWITCH):
        self.t = telemetry
        self.switch = switch

    def on_trace(self, t_ns: Optional[int], piece: Mapping[str, np.ndarray]) -> None:
        keep = np.asarray(piece["kind"]) != DROP
        if not keep.any():
            return
        port = np.asarray(piece["port"])[keep].astype(np.int64)
        queue = np.asarray(piece["queue"])[keep].astype(np.int64)
        qb = np.asarray(piece["q_bytes"])[keep]
        qp = np.asarray(piece["q_pkts"])[keep]
        key = port * 65536 + queue
        for k in np.unique(key):
            sel = np.flatnonzero(key == k)
            last = sel[-1]
            self.t.queue_level((self.switch, int(k) // 65536, int(k) % 65536), qb[last], qp[last],
                               qb[sel].max(), qp[sel].max())

    def on_event(self, ev: Any) -> None:
        if ev.kind == "start":
            self.t.progress(0, ev.planned)
        elif ev.kind == "case_end":
            self.case_tables(ev.tables or {})
            self.t.progress(self.t.cases_done + (ev.status == "complete"), ev.planned)

    def case_tables(self, tables: Mapping[str, pd.DataFrame]) -> None:
        gt = tables.get("ground_truth")
        if gt is not None and not gt.empty:
            for (p, q), g in gt.groupby(["egress_port", "queue"], sort=True):
                key = (self.switch, int(p), int(q))
                with self.t.lock:
                    now_b, now_p = self.t.occ_bytes.get(key, 0.0), self.t.occ_pkts.get(key, 0.0)
                self.t.queue_level(key, now_b, now_p, g["occupancy_bytes"].max(),
                                   g["occupancy_frames"].max())
        st = tables.get("streams")
        if st is not None and not st.empty and {"ingress_port", "egress_port"} <= set(st.columns):
            whole = "rx_frames_total" in st.columns  # a windowed case keeps its totals there
            rx_f, rx_b = ("rx_frames_total", "rx_bytes_total") if whole else ("rx_frames", "rx_bytes")
            for (e, i), g in st.groupby(["egress_port", "ingress_port"], sort=True):
                self.t.add_pair((self.switch, int(e), int(i)), g[rx_b].sum(),
                                g[rx_f].sum(), g["tx_frames"].sum() - g[rx_f].sum())
        self.hop_latencies(tables.get("instrument_series"))
        be = tables.get("burst_events")
        if be is not None and not be.empty:
            order = be.sort_values(["start_ns"], kind="stable")
            for r in order.itertuples(index=False):
                self.t.add_burst((self.switch, int(r.egress_port), int(r.queue), str(r.source)),
                                 float(r.peak), str(r.unit))

    def hop_latencies(self, series: Optional[pd.DataFrame]) -> None:
        """The reported packets' hop latencies, per egress port (rows of no
        one packet have -1; a series from before the column, none)."""
        if series is None or series.empty or "hop_latency_ns" not in series.columns:
            return
        pk = series[series["hop_latency_ns"] >= 0]
        for p, g in pk.groupby("egress_port", sort=True):
            self.t.hop_latency((self.switch, NODE_ID, int(p), "instrument"),
                               g["hop_latency_ns"].to_numpy())
