"""Microburst's seed-shaped tables: seed 000's Table 4 (2:1; frame sizes
across, one row per profile and port combination, buffer in use in Tolly's
MB, bytes / 2^20, and in frames) and seed 001's Figure 10 (4:1 burst
absorption per frame size). The same in virtual time and in Mininet."""

from __future__ import annotations

from .. import seedtables as st
from ..rundir import RunDir, load_table
from ..seedtables import Rows

import pandas as pd

CSV_FILES = {
    "table4_microburst_mb": "seed 000 Table 4: buffer in use (MB) per frame size, 2:1",
    "table4_microburst_frames": "the same in frames",
    "burst_4to1_mb": "seed 001 Figure 10: 4:1 burst absorption (MB) per frame size",
}


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
    for prof in st.ordered(df["profile"]):
        dp = df[df["profile"] == prof]
        for i, comb in enumerate(st.ordered(dp["combination"])):
            dc = dp[dp["combination"] == comb].set_index("frame_size")[value]
            vals = [st.fmt(dc.get(s), digits) if digits else st.int_or_none(dc.get(s)) for s in sizes]
            rows.append([_label(dp, prof) if i == 0 else "", comb] + vals)
    notes = []
    for comb in st.ordered(df["combination"]):
        r = df[df["combination"] == comb].iloc[0]
        ins = " and ".join(f"Port {p} --> Port {r['egress_port']}" for p in st.ports_of(r["ingress_ports"]))
        notes.append(f"{comb} is with bursts from {ins}.")
    rows.append(["Note: " + " ".join(notes)])
    return rows


def burst_4to1(microburst: pd.DataFrame, value: str = "buffered_mb", digits: int = 2) -> Rows:
    """Seed 001 Figure 10: 4:1 burst absorption capacity per frame size."""
    df = microburst[microburst["scenario"] == "4:1"]
    if df.empty:
        return []
    sizes = sorted(df["frame_size"].unique())
    rows: Rows = [["Packet Size (Bytes)", "Ports"] + [int(s) for s in sizes]]
    for prof in st.ordered(df["profile"]):
        dp = df[df["profile"] == prof]
        for comb in st.ordered(dp["combination"]):
            dc = dp[dp["combination"] == comb]
            r = dc.iloc[0]
            label = f"{r['ingress_ports']} -> {r['egress_port']}"
            dc = dc.set_index("frame_size")[value]
            vals = [st.fmt(dc.get(s), digits) if digits else st.int_or_none(dc.get(s)) for s in sizes]
            rows.append([_label(dp, prof), label] + vals)
    rows.append([f"Note: burst absorption capacity ({'MB' if value == 'buffered_mb' else 'frames'})"
                 " by the Tolly formula, four ingress ports to one egress port."])
    return rows


def _label(rows: pd.DataFrame, profile: str) -> str:
    """The row's title: the switch measured (`dut_label`, when another
    switch than p4scope's was), else p4scope and the profile."""
    if "dut_label" in rows and rows["dut_label"].notna().any():
        return str(rows["dut_label"].dropna().iloc[0])
    return f"p4scope {profile}"


def write_csvs(run: RunDir) -> list[str]:
    written = []
    micro = load_table(run.path, "microburst")
    if micro is None or micro.empty:
        return written
    rows = table4_microburst(micro)
    if rows:
        run.write_csv("table4_microburst_mb", rows)
        run.write_csv("table4_microburst_frames", table4_microburst(micro, "buffered_frames", digits=0))
        written += ["table4_microburst_mb", "table4_microburst_frames"]
    rows = burst_4to1(micro)
    if rows:
        run.write_csv("burst_4to1_mb", rows)
        written.append("burst_4to1_mb")
    return written
