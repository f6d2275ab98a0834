"""Planning and measuring the LAG hashing cases on the virtual testbed.

    lag-hash/<port|lag>/<k>streams    k streams at once, `runs` times, each
                                      run with new destination ports

The controller configures the DUT after every reset (the testbed's
setup_switch hook, over P4Runtime): the sender's smac entry, the client's
dmac entry (forward to the port, or forward_lag to LAG 1) and LAG 1's
selector group over the members (control/apps/lag.py); the traffic
manager limits the port or each member to its rate (the setup hook).

A run's streams start evenly spread over one frame period, so on the
sender's port they take turns. Each run keeps a record per received frame:
a stream's member is the port its frames left on, its achieved rate the
layer-1 bits that arrived in the measured window (after the warm-up) over
the window's length, and a member's load the same over all its frames.
Every run's rows are stored as the run ends (Ctrl-C keeps them); the case
returns its summary with the uniform hash's figures beside it.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..linerate import wire_bits
from ..runner import Case, Tables, Tick
from ..testbed import host_ip, host_mac
from ..tester.streams import Rate, Stream
from . import EXPERIMENT
from . import uniform
from .params import NFS_PORT, SENDER_PORT, LagHashParams, run_ports, run_seed

Store = Callable[[str, pd.DataFrame], None]
LAG_ID = 1
SERVER_MAC, SERVER_IP = host_mac(SENDER_PORT), host_ip(SENDER_PORT)
CLIENT_MAC, CLIENT_IP = 0x02_00_00_00_01_00, 0x0A_00_01_00
"""The client: behind the port or the LAG (10.0.1.0, 02:00:00:00:01:00)."""


def plan(p: LagHashParams) -> list[Case]:
    """Per stream count, each set-up in turn (a partial run has both for
    the counts it reached)."""
    return [Case(f"{EXPERIMENT}/{setup}/{k}streams", EXPERIMENT,
                 f"lag-hash {p.label(setup)}, {k} streams x {p.runs} runs",
                 {"setup": setup, "streams": k}, weight=p.runs * (1.0 + k / 4.0))
            for k in p.streams for setup in p.setups]


def pop_std(x: np.ndarray) -> float:
    """The seed's standard deviation (over the values themselves, n in the
    denominator)."""
    return float(np.std(x)) if len(x) else float("nan")


class LagHashMeasure:
    """measure(case, tick) -> tables, on `bed` (the virtual testbed)."""

    def __init__(self, bed: Any, p: LagHashParams, seed: int, store: Store):
        self.bed, self.p, self.seed, self.store = bed, p, seed, store

    # ----- the DUT's configuration ------------------------------------------------

    def configure(self, setup: str) -> None:
        """What the controller writes after each reset, and the egress rates."""
        p = self.p
        egress = p.egress(setup)
        rate = int(p.capacity_bps(setup))

        def write(sw: Any) -> None:
            from p4scope.control.apps.lag import Lags

            sw.insert([sw.table("smac").entry({"hdr.ethernet.src_addr": SERVER_MAC}, "smac_hit",
                                              port=SENDER_PORT)])
            dmac = sw.table("dmac")
            if setup == "lag":
                Lags(sw).create(LAG_ID, egress)
                sw.insert([dmac.entry({"hdr.ethernet.dst_addr": CLIENT_MAC}, "forward_lag",
                                      lag_id=LAG_ID)])
            else:
                sw.insert([dmac.entry({"hdr.ethernet.dst_addr": CLIENT_MAC}, "forward",
                                      port=egress[0])])

        self.bed.setup_switch = write
        self.bed.setup = lambda e: [e.set_port_rate(q, rate) for q in egress]

    def streams(self, k: int, run: int) -> list[Stream]:
        p = self.p
        gap = p.frame_period_ns / k
        return [Stream(SENDER_PORT, None, Rate(p.stream_bps, "bps"), p.frame_size,
                       start_ns=round(i * gap), name=f"stream {i + 1}",
                       headers={"src_mac": SERVER_MAC, "dst_mac": CLIENT_MAC,
                                "src_ip": SERVER_IP, "dst_ip": CLIENT_IP,
                                "sport": NFS_PORT, "dport": dport})
                for i, dport in enumerate(run_ports(self.seed, k, run))]

    # ----- one run ------------------------------------------------------------------

    def one_run(self, case: Case, run: int) -> dict[str, Any]:
        p = self.p
        setup, k = case.params["setup"], int(case.params["streams"])
        streams = self.streams(k, run)
        t = self.bed.trial(streams, p.duration_ns, records=True)
        rec = self.bed.last_records
        egress = p.egress(setup)
        cap = p.capacity_bps(setup)
        inside = (rec["rx_ns"] > p.warmup_ns) & (rec["rx_ns"] <= p.duration_ns)
        bits = wire_bits(rec["size"].astype(np.float64))
        key = {"case_id": case.case_id, "setup": setup, "streams": k, "run": run + 1,
               "run_seed": str(run_seed(self.seed, k, run))}
        rows = []
        for i, (st, r) in enumerate(zip(streams, t.streams.itertuples())):
            mine = rec["stream"] == r.stream
            ports, counts = np.unique(rec["port"][mine], return_counts=True)
            got = mine & inside
            rate = float(bits[got].sum()) / p.window_ns  # Gbit/s: bits per ns
            rows.append({**key, "stream": i + 1, "sport": st.headers["sport"],
                         "dport": st.headers["dport"],
                         "member": int(ports[np.argmax(counts)]) if len(ports) else -1,
                         "ports_used": len(ports), "tx_frames": int(r.tx_frames),
                         "rx_frames": int(r.rx_frames), "window_rx_frames": int(got.sum()),
                         "loss_pct": float(r.loss_pct), "target_gbps": p.stream_gbps,
                         "achieved_gbps": rate, "achieved_pct": 100.0 * rate / p.stream_gbps})
        per_stream = pd.DataFrame(rows)
        flows = per_stream["member"].value_counts()
        members = pd.DataFrame([{
            **key, "member": q, "capacity_gbps": cap / 1e9, "flows": int(flows.get(q, 0)),
            "load_gbps": float(bits[inside & (rec["port"] == q)].sum()) / p.window_ns,
        } for q in egress])
        members["utilization_pct"] = 100.0 * members["load_gbps"] / members["capacity_gbps"]
        n = members["flows"].to_numpy()
        rates = per_stream["achieved_gbps"].to_numpy()
        row = {**key, "members": len(egress), "target_gbps": k * p.stream_gbps,
               "sum_gbps": float(rates.sum()),
               "sum_pct": 100.0 * float(rates.sum()) / (k * p.stream_gbps),
               "mean_gbps": float(rates.mean()), "std_gbps": pop_std(rates),
               "max_flows": int(n.max()), "min_flows": int(n.min()),
               "idle_members": int((n == 0).sum()), "balanced": bool(n.max() - n.min() <= 1),
               "split_streams": int((per_stream["ports_used"] > 1).sum()),
               "lost_frames": int(t.loss_frames)}
        self.store("lag_hash_streams", per_stream)
        self.store("lag_hash_members", members)
        self.store("lag_hash_runs", pd.DataFrame([row]))
        return {"row": row, "rates": rates}

    # ----- a case -------------------------------------------------------------------

    def __call__(self, case: Case, tick: Tick) -> Tables:
        p = self.p
        self.configure(case.params["setup"])
        runs = []
        for r in range(p.runs):
            runs.append(self.one_run(case, r))
            tick((r + 1) / p.runs)
        return {"lag_hash_results": pd.DataFrame([summary(case, p, runs)])}


def summary(case: Case, p: LagHashParams, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The case's row: the runs' figures beside the uniform hash's."""
    setup, k = case.params["setup"], int(case.params["streams"])
    rows = pd.DataFrame([r["row"] for r in runs])
    rates = np.concatenate([r["rates"] for r in runs])
    m = len(p.egress(setup))
    cap = p.capacity_bps(setup)
    pred = uniform.predict(k, m)
    sums = rows["sum_gbps"].to_numpy()
    max_mean = float(rows["max_flows"].mean())
    z = uniform.z_score(max_mean, len(rows), pred)
    return {
        "case_id": case.case_id, "experiment": EXPERIMENT, "setup": setup,
        "setup_label": p.label(setup), "streams": k, "members": m, "runs": len(rows),
        "capacity_gbps": cap / 1e9, "stream_gbps": p.stream_gbps,
        "target_gbps": k * p.stream_gbps, "sum_avg_gbps": float(sums.mean()),
        "sum_median_gbps": float(np.median(sums)), "sum_min_gbps": float(sums.min()),
        "sum_max_gbps": float(sums.max()), "sum_std_gbps": pop_std(sums),
        "sum_avg_pct": 100.0 * float(sums.mean()) / (k * p.stream_gbps),
        "stream_avg_gbps": float(rates.mean()), "stream_std_gbps": pop_std(rates),
        "stream_min_gbps": float(rates.min()),
        "run_std_avg_gbps": float(rows["std_gbps"].mean()),
        "balanced_pct": 100.0 * float(rows["balanced"].mean()),
        "idle_pct": 100.0 * float((rows["idle_members"] > 0).mean()),
        "max_flows_mean": max_mean,
        "uniform_balanced_pct": 100.0 * pred.p_balanced, "uniform_idle_pct": 100.0 * pred.p_idle,
        "uniform_max_flows_mean": pred.max_mean, "uniform_max_flows_sd": pred.max_sd,
        "uniform_sum_gbps": uniform.delivered_bps(k, m, p.stream_bps, cap) / 1e9,
        "z_max_flows": np.nan if z is None else z,
        "split_streams": int(rows["split_streams"].sum()),
    }
