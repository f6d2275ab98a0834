"""The LAG hashing tables in seed 002's shapes, derived from the stored
tables only. Rates are layer-1 Gbit/s (the seed counts Frametest frames/s:
one of its instances at 24 frames/s is one stream here)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..rundir import RunDir, load_table
from . import uniform as lag_hash_uniform

CSV_FILES = {
    "lag_hash_sums": "seed 002 Tables 1-4: the streams' summed achieved rate (Gbit/s) per run "
                     "(rows) and stream count (columns), with Average, Median and Target rows, "
                     "one block per set-up (the port, the LAG)",
    "lag_hash_per_stream": "seed 002 Tables 5-28: per set-up and stream count, each stream's "
                           "achieved rate (Gbit/s) per run (columns), then Sum, Average and "
                           "Std. Deviation rows",
    "lag_hash_member_load": "per set-up, stream count and run: the streams each egress port "
                            "or LAG member carried and its load (Gbit/s)",
    "lag_hash_uniform": "per set-up and stream count: balanced runs, runs with an idle member, "
                        "the busiest member's streams and the summed rate, measured beside "
                        "what a uniform hash predicts (exact), with z and the verdict",
}

SETUP_ORDER = {"port": 0, "lag": 1}


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """Rows set-up by set-up (the port first), stream counts ascending."""
    return df.assign(_o=df["setup"].map(SETUP_ORDER)).sort_values(
        ["_o", "streams"], kind="stable").drop(columns="_o")


def setup_label(results: Optional[pd.DataFrame], setup: str) -> str:
    """'1x100G port' or '4x25G LAG' as the results name it (else the key)."""
    if results is not None and not results.empty and "setup_label" in results:
        got = results.loc[results["setup"] == setup, "setup_label"]
        if len(got):
            return str(got.iloc[0])
    return setup


def sums(runs: pd.DataFrame, results: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Run rows 1..R, then Average, Median, Target; a column per stream
    count; a block per set-up."""
    blocks = []
    for setup in sorted(runs["setup"].unique(), key=SETUP_ORDER.get):
        r = runs[runs["setup"] == setup]
        w = r.pivot_table(index="run", columns="streams", values="sum_gbps", aggfunc="first")
        w = w.reindex(sorted(w.columns), axis=1)
        body = w.round(2)
        body.index = [str(i) for i in body.index]
        target = r.groupby("streams")["target_gbps"].first().reindex(w.columns)
        extra = pd.DataFrame([w.mean().round(2), w.median().round(2), target.round(2)],
                             index=["Average", "Median", "Target"])
        block = pd.concat([body, extra])
        block.columns = [f"{k} streams" for k in block.columns]
        block.insert(0, "Run", block.index)
        block.insert(0, "Setup", setup_label(results, setup))
        blocks.append(block.reset_index(drop=True))
    return pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()


def per_stream(streams: pd.DataFrame, results: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Per (set-up, stream count): Stream 1..k rows, Sum, Average, Std.
    Deviation (over the streams, as the seed); a column per run."""
    blocks = []
    for (setup, k), g in ordered(streams).groupby(["setup", "streams"], sort=False):
        w = g.pivot_table(index="stream", columns="run", values="achieved_gbps", aggfunc="first")
        w = w.reindex(sorted(w.columns), axis=1)
        body = w.round(2)
        body.index = [f"Stream {i}" for i in body.index]
        extra = pd.DataFrame([w.sum().round(2), w.mean().round(2),
                              w.std(ddof=0).round(2)], index=["Sum", "Average", "Std. Deviation"])
        block = pd.concat([body, extra])
        block.columns = [f"Run {r}" for r in block.columns]
        block.insert(0, "Row", block.index)
        block.insert(0, "Streams", int(k))
        block.insert(0, "Setup", setup_label(results, setup))
        blocks.append(block.reset_index(drop=True))
    return pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()


def member_load(members: pd.DataFrame, results: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """One row per (set-up, stream count, run); per egress port its streams
    and load."""
    out = []
    for (setup, k, run), g in ordered(members).groupby(["setup", "streams", "run"], sort=False):
        row = {"Setup": setup_label(results, setup), "Streams": int(k), "Run": int(run)}
        for q in g.sort_values("member").itertuples():
            row[f"Port {q.member} streams"] = int(q.flows)
            row[f"Port {q.member} (Gbit/s)"] = round(float(q.load_gbps), 2)
        row["Busiest port streams"] = int(g["flows"].max())
        row["Idle ports"] = int((g["flows"] == 0).sum())
        out.append(row)
    return pd.DataFrame(out)


def verdicts(results: pd.DataFrame) -> dict[str, tuple[Optional[float], str]]:
    """Per set-up: the combined z of the busiest member's streams over the
    stream counts, and what it says."""
    out = {}
    for setup, g in results.groupby("setup"):
        if (g["members"] == 1).all():
            out[str(setup)] = (None, "one port: nothing to hash")
            continue
        zs = [None if pd.isna(z) else float(z) for z in g["z_max_flows"]]
        z = lag_hash_uniform.combined_z(zs)
        out[str(setup)] = (z, lag_hash_uniform.verdict(z))
    return out


def uniform(results: pd.DataFrame) -> pd.DataFrame:
    r = ordered(results)
    v = verdicts(results)
    return pd.DataFrame({
        "Setup": r["setup_label"], "Streams": r["streams"].astype(int),
        "Members": r["members"].astype(int), "Runs": r["runs"].astype(int),
        "Balanced runs (%)": r["balanced_pct"].round(1),
        "Uniform hash: P(balanced) (%)": r["uniform_balanced_pct"].round(1),
        "Runs with an idle member (%)": r["idle_pct"].round(1),
        "Uniform hash: P(a member idle) (%)": r["uniform_idle_pct"].round(1),
        "Busiest member's streams (mean)": r["max_flows_mean"].round(3),
        "Uniform hash: busiest member's streams (mean)": r["uniform_max_flows_mean"].round(3),
        "Uniform hash: busiest member's streams (sd)": r["uniform_max_flows_sd"].round(3),
        "z (busiest member)": r["z_max_flows"].round(2),
        "Sum average (Gbit/s)": r["sum_avg_gbps"].round(2),
        "Uniform hash: expected sum (Gbit/s)": r["uniform_sum_gbps"].round(2),
        "Target (Gbit/s)": r["target_gbps"].round(2),
        "Verdict (all stream counts)": [v[s][1] for s in r["setup"]],
    })


def write_csvs(run: RunDir) -> list[str]:
    out = []
    results = load_table(run.path, "lag_hash_results")
    for name, table, fn in (("lag_hash_sums", "lag_hash_runs", sums),
                            ("lag_hash_per_stream", "lag_hash_streams", per_stream),
                            ("lag_hash_member_load", "lag_hash_members", member_load)):
        df = load_table(run.path, table)
        if df is not None and not df.empty:
            run.write_csv(name, fn(df, results))
            out.append(name)
    if results is not None and not results.empty:
        run.write_csv("lag_hash_uniform", uniform(results))
        out.append("lag_hash_uniform")
    return out


def member_ranks(members: pd.DataFrame, results: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Per (set-up, stream count): each run's members sorted busiest first,
    their loads and streams averaged over the runs (the report's summary
    of the per-member load)."""
    out = []
    for (setup, k), g in ordered(members).groupby(["setup", "streams"], sort=False):
        loads = g.sort_values(["run", "load_gbps"], ascending=[True, False]).groupby("run")
        ranked = np.array([grp["load_gbps"].to_numpy() for _, grp in loads])
        flows = np.array([np.sort(grp["flows"].to_numpy())[::-1] for _, grp in loads])
        row = {"Setup": setup_label(results, setup), "Streams": int(k), "Runs": len(ranked)}
        for i in range(ranked.shape[1]):
            name = "Busiest" if i == 0 else ("Idlest" if i == ranked.shape[1] - 1 else f"#{i + 1}")
            row[f"{name} member (Gbit/s)"] = round(float(ranked[:, i].mean()), 2)
            row[f"{name} member (streams)"] = round(float(flows[:, i].mean()), 2)
        out.append(row)
    return pd.DataFrame(out)
