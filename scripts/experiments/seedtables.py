"""The seed reports' table shapes, built from a run's tidy tables.

* Table 3 of seed 000 (fairness): per number of source ports, one block per
  port combination: a header row "Stream (Source Port), Port a, Port b, ..."
  then one row of per-stream Gbps per traffic-manager profile.
* Table 4 of seed 000 (microburst, 2:1): frame sizes across, one row per
  profile and port combination ("Test 1", "Test 2"), buffer in use in MB
  (Tolly's MB: bytes / 1024 / 1024); the same in frames.
* Figure 10 of seed 001 (4:1 burst absorption): frame sizes across, one
  row per profile, MB.

Each builder returns rows (lists, ragged like the report's blocks) for the
CSV files and the HTML report; they read only tidy tables, so a report can
always be rebuilt from stored results.
"""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

Rows = list[list[Any]]

_COUNT_WORDS = {2: "Two", 3: "Three", 4: "Four", 6: "Six", 8: "Eight", 16: "Sixteen"}


def _words(n: int) -> str:
    return _COUNT_WORDS.get(n, str(n))


def _fmt(v: float, digits: int) -> Optional[float]:
    return None if pd.isna(v) else round(float(v), digits)


def _ports(s: str) -> list[int]:
    return [int(p) for p in str(s).split()]


def table3_fairness(streams: pd.DataFrame, digits: int = 1) -> Rows:
    """Per-stream Gbps (layer 1) in the shape of seed 000's Table 3.

    `streams` needs: experiment, n, combination, profile, ingress_port,
    gbps_l1 (one row per case and stream)."""
    df = streams[streams["experiment"] == "fairness"]
    rows: Rows = []
    for n in sorted(df["n"].unique()):
        rows.append([f"{_words(int(n))} Source Ports Test"])
        dn = df[df["n"] == n]
        for comb in _ordered(dn["combination"]):
            dc = dn[dn["combination"] == comb]
            ports = sorted(dc["ingress_port"].unique())
            rows.append(["Stream (Source Port)"] + [f"Port {p}" for p in ports])
            for prof in _ordered(dc["profile"]):
                dp = dc[dc["profile"] == prof].set_index("ingress_port")["gbps_l1"]
                rows.append([f"p4scope {prof}"] + [_fmt(dp.get(p), digits) for p in ports])
    if rows:
        rows.append(["Note: layer-1 Gbps (preamble and inter-frame gap included), "
                     "measured at the sink over the steady-state window; destination "
                     "is the egress port of each combination."])
    return rows


def _ordered(col: pd.Series) -> list:
    """Unique values in order of first appearance."""
    return list(dict.fromkeys(col.tolist()))


def table4_microburst(microburst: pd.DataFrame, value: str = "buffered_mb",
                      scenario: str = "2:1", digits: int = 2) -> Rows:
    """Buffer in use per frame size in the shape of seed 000's Table 4.

    `microburst` needs: scenario, profile, combination, frame_size and
    `value` (buffered_mb or buffered_frames)."""
    df = microburst[microburst["scenario"] == scenario]
    if df.empty:
        return []
    sizes = sorted(df["frame_size"].unique())
    rows: Rows = [["Frame Size (Bytes)", ""] + [int(s) for s in sizes]]
    for prof in _ordered(df["profile"]):
        dp = df[df["profile"] == prof]
        for i, comb in enumerate(_ordered(dp["combination"])):
            dc = dp[dp["combination"] == comb].set_index("frame_size")[value]
            vals = [_fmt(dc.get(s), digits) if digits else _int(dc.get(s)) for s in sizes]
            rows.append([f"p4scope {prof}" if i == 0 else "", comb] + vals)
    notes = []
    for comb in _ordered(df["combination"]):
        r = df[df["combination"] == comb].iloc[0]
        ins = " and ".join(f"Port {p} --> Port {r['egress_port']}" for p in _ports(r["ingress_ports"]))
        notes.append(f"{comb} is with bursts from {ins}.")
    rows.append(["Note: " + " ".join(notes)])
    return rows


def _int(v) -> Optional[int]:
    return None if v is None or pd.isna(v) else int(v)


def burst_4to1(microburst: pd.DataFrame, value: str = "buffered_mb", digits: int = 2) -> Rows:
    """Seed 001 Figure 10: 4:1 burst absorption capacity per frame size."""
    df = microburst[microburst["scenario"] == "4:1"]
    if df.empty:
        return []
    sizes = sorted(df["frame_size"].unique())
    rows: Rows = [["Packet Size (Bytes)", "Ports"] + [int(s) for s in sizes]]
    for prof in _ordered(df["profile"]):
        dp = df[df["profile"] == prof]
        for comb in _ordered(dp["combination"]):
            dc = dp[dp["combination"] == comb]
            r = dc.iloc[0]
            label = f"{r['ingress_ports']} -> {r['egress_port']}"
            dc = dc.set_index("frame_size")[value]
            vals = [_fmt(dc.get(s), digits) if digits else _int(dc.get(s)) for s in sizes]
            rows.append([f"p4scope {prof}", label] + vals)
    rows.append([f"Note: burst absorption capacity ({'MB' if value == 'buffered_mb' else 'frames'})"
                 " by the Tolly formula, four ingress ports to one egress port."])
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


def rows_to_frame(rows: Rows) -> pd.DataFrame:
    """Rows padded to one width (for HTML rendering)."""
    width = max((len(r) for r in rows), default=0)
    return pd.DataFrame([list(r) + [None] * (width - len(r)) for r in rows])
