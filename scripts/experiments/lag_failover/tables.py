"""The trunk tables in seed 004's shape (Figure 1: the trunk's throughput
with 2 and 3 clients; Figure 2: failover and recovery, averaged over the
iterations), derived from the stored tables only."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..rundir import RunDir, load_table
from .policies import POLICIES

CSV_FILES = {
    "lag_failover_throughput": "seed 004 Figure 1: the trunk's throughput (Gbit/s, layer 1) "
                               "per policy with each client count, averaged over the "
                               "iterations; a policy the reference DUT cannot do says why",
    "lag_failover_recovery": "seed 004 Figure 2: per policy, client count and failover "
                             "(controller or data plane), each event's outage (frames lost / "
                             "offered rate) and recovery time in us, averaged over the "
                             "iterations, and their mean over the events",
}


def _label(policy: str) -> str:
    p = POLICIES.get(policy)
    return p.label if p else policy


def throughput(res: pd.DataFrame) -> Optional[pd.DataFrame]:
    """Policies down, client counts across (the seed's Figure 1 bars)."""
    if res is None or res.empty:
        return None
    rows = []
    for policy, g in res.groupby("policy", sort=False):
        row: dict[str, object] = {"Policy": _label(policy)}
        for r in g.sort_values("clients").itertuples():
            col = f"{int(r.clients)} clients"
            if not r.supported:
                row[f"{col} trunk (Gbit/s)"] = "n/a"
                continue
            row[f"{col} offered (Gbit/s)"] = round(float(r.offered_gbps), 2)
            row[f"{col} trunk (Gbit/s)"] = round(float(r.trunk_gbps), 2)
            row[f"{col} busiest member (Gbit/s)"] = round(float(r.busiest_member_gbps), 2)
            row[f"{col} clients per member"] = r.placement
        note = _notes(g)
        if note:
            row["Note"] = note
        rows.append(row)
    return pd.DataFrame(rows)


def _notes(g: pd.DataFrame) -> str:
    """The rows' notes, each once (why the DUT cannot; in Mininet, trials
    whose generator fell short)."""
    notes = g["note"].fillna("").astype(str) if "note" in g else pd.Series([], dtype=str)
    return "; ".join(dict.fromkeys(n for n in notes if n))


def recovery(res: pd.DataFrame) -> Optional[pd.DataFrame]:
    """One row per (policy, clients, failover): outage and recovery per
    event (us), and the mean over the events."""
    if res is None or res.empty:
        return None
    rows = []
    keys = ["policy", "clients", "failover"]
    for (policy, n, mode), g in res.groupby(keys, sort=False):
        row: dict[str, object] = {"Policy": _label(policy), "Clients": int(n),
                                  "Failover": mode}
        if not bool(g["supported"].all()):
            row["Note"] = str(g["note"].iloc[0])
            rows.append(row)
            continue
        if _notes(g):
            row["Note"] = _notes(g)
        for r in g.itertuples():
            row[f"{r.event} lost frames"] = round(float(r.lost_frames), 2)
            row[f"{r.event} outage (us)"] = round(float(r.outage_ns) / 1e3, 4)
            row[f"{r.event} recovery (us)"] = round(float(r.recovery_ns) / 1e3, 4)
        row["Mean outage per event (us)"] = round(float(g["outage_ns"].mean()) / 1e3, 4)
        row["Worst recovery (us)"] = round(float(g["recovery_ns"].max()) / 1e3, 4)
        rows.append(row)
    return pd.DataFrame(rows)


def failover_compare(res: pd.DataFrame) -> Optional[pd.DataFrame]:
    """Frames lost per pull (down events), controller vs data plane, per
    policy and client count."""
    if res is None or res.empty or "up" not in res:
        return None
    down = res[res["supported"].astype(bool) & (res["up"] == False)]  # noqa: E712
    if down.empty:
        return None
    w = down.groupby(["policy", "clients", "failover"], sort=False)["lost_frames"].sum()
    w = w.unstack("failover")
    out = pd.DataFrame({"Policy": [_label(p) for p, _ in w.index],
                        "Clients": [int(n) for _, n in w.index]})
    for mode in ("controller", "dataplane"):
        out[f"{mode} failover: frames lost per iteration"] = (
            w[mode].round(2).to_numpy() if mode in w else np.nan)
    return out


def write_csvs(run: RunDir) -> list[str]:
    out = []
    for name, table, fn in (("lag_failover_throughput", "lag_failover_throughput", throughput),
                            ("lag_failover_recovery", "lag_failover_outage", recovery)):
        t = fn(load_table(run.path, table))
        if t is not None:
            run.write_csv(name, t)
            out.append(name)
    return out
