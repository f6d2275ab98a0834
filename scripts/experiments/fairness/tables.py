"""Fairness's seed-shaped tables: seed 000's Table 3 (per number of source
ports, one block per port combination: a header row "Stream (Source
Port), Port a, Port b, ..." then one row of per-stream Gbps per
traffic-manager profile; Mbit/s in Mininet, where links run at megabits)
and the per-case summary (Jain's index, max/min share, bandwidth vs
packet-rate share)."""

from __future__ import annotations

import pandas as pd

from .. import seedtables as st
from ..rundir import RunDir, load_table
from ..seedtables import Rows

CSV_FILES = {
    "table3_fairness_gbps": "seed 000 Table 3: per-stream Gbps per port combination and profile",
    "table3_fairness_mbps": "seed 000 Table 3's shape: per-stream Mbit/s (layer 1) per combination "
                            "(Mininet)",
    "fairness_summary": "Jain's index, max/min share, bandwidth vs packet-rate share per case",
}


def table3_fairness(streams: pd.DataFrame, digits: int = 1) -> Rows:
    """Per-stream Gbps (layer 1) in the shape of seed 000's Table 3.

    `streams` needs: experiment, n, combination, profile, ingress_port,
    gbps_l1 (one row per case and stream)."""
    df = streams[streams["experiment"] == "fairness"]
    rows: Rows = []
    for n in sorted(df["n"].unique()):
        rows.append([f"{st.count_words(int(n))} Source Ports Test"])
        dn = df[df["n"] == n]
        for comb in st.ordered(dn["combination"]):
            dc = dn[dn["combination"] == comb]
            ports = sorted(dc["ingress_port"].unique())
            rows.append(["Stream (Source Port)"] + [f"Port {p}" for p in ports])
            for prof in st.ordered(dc["profile"]):
                dp = dc[dc["profile"] == prof].set_index("ingress_port")["gbps_l1"]
                rows.append([f"p4scope {prof}"] + [st.fmt(dp.get(p), digits) for p in ports])
    if rows:
        rows.append(["Note: layer-1 Gbps (preamble and inter-frame gap included), "
                     "measured at the sink over the steady-state window; destination "
                     "is the egress port of each combination."])
    return rows


def fairness_summary(fairness: pd.DataFrame) -> pd.DataFrame:
    """The per-case fairness figures, rounded for reading."""
    cols = ["n", "combination", "profile", "jain_bw", "jain_pkt",
            "max_min_bw", "max_dev_bw", "max_pkt_minus_bw_pp", "total_gbps_l1",
            "instrument_jain_bw", "instrument_share_err_pp", "fair_ok"]
    df = fairness[[c for c in cols if c in fairness.columns]].copy()
    for c in df.columns:
        if df[c].dtype.kind == "f":
            df[c] = df[c].round(4)
    return df


def table3_mbps(streams: pd.DataFrame) -> Rows:
    """Seed 000 Table 3's shape with per-stream Mbit/s (layer 1)."""
    s = streams.copy()
    s["gbps_l1"] = s["gbps_l1"] * 1000
    rows = table3_fairness(s, digits=3)
    return [[c.replace("Gbps", "Mbit/s") if isinstance(c, str) else c for c in r] for r in rows]


def write_csvs(run: RunDir) -> list[str]:
    """Table 3 (Gbps in virtual time, Mbit/s in Mininet) and the summary."""
    written = []
    streams = load_table(run.path, "streams")
    if streams is not None and "n" in streams and (streams["experiment"] == "fairness").any():
        if run.meta.get("mode") == "mininet":
            run.write_csv("table3_fairness_mbps", table3_mbps(streams))
            written.append("table3_fairness_mbps")
        else:
            run.write_csv("table3_fairness_gbps", table3_fairness(streams))
            written.append("table3_fairness_gbps")
    fair = load_table(run.path, "fairness")
    if fair is not None and not fair.empty:
        run.write_csv("fairness_summary", fairness_summary(fair))
        written.append("fairness_summary")
    return written
