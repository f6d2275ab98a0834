"""The RFC 2544 tables in the shapes the seed reports and RFC 2544 s. 26 give,
derived from the stored tables only (results and trials)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..rundir import RunDir, load_table

CSV_FILES = {
    "rfc2544_dut_comparison": "DUTs compared (Mininet, several --dut): throughput per frame "
                              "size, % of line rate and frames/s per port, one column each per "
                              "DUT, with each DUT's notes (trials where the generator fell short)",
    "rfc2544_throughput": "RFC 2544 s. 26.1: throughput per frame size (% line rate, frames/s, "
                          "Gbit/s per port) beside the DUT's configured limit",
    "rfc2544_latency": "RFC 2544 s. 26.2: latency per frame size at the throughput rate, FIFO "
                       "and LIFO, min/avg/max, jitter, 99th percentile",
    "rfc2544_frame_loss": "RFC 2544 s. 26.3: frame loss % per frame size (rows) and offered load "
                          "(columns)",
    "rfc2544_back_to_back": "RFC 2544 s. 26.4: longest burst at line rate without loss, and its "
                            "buffer time",
    "rfc2544_recovery": "RFC 2544 s. 26.5: system recovery time per frame size",
}


def _dut_order(df: pd.DataFrame) -> dict[str, int]:
    """The DUTs of a Mininet run's rows, in the order they ran."""
    return {d: i for i, d in enumerate(dict.fromkeys(df["dut"].dropna()))}


def _by_dut(df: pd.DataFrame, order: dict[str, int]) -> pd.DataFrame:
    """Rows DUT by DUT (in run order), frame sizes ascending in each."""
    key = df["dut"].map(order) if "dut" in df else 0
    return df.assign(_order=key).sort_values(["_order", "frame_size"], kind="stable").drop(
        columns="_order")


def rows_of(results: pd.DataFrame, test: str) -> pd.DataFrame:
    """`test`'s results, DUT by DUT in run order, by frame size."""
    order = _dut_order(results) if "dut" in results else {}
    return _by_dut(results[results["test"] == test], order)


def _dut_first(r: pd.DataFrame, table: dict) -> pd.DataFrame:
    """`table`'s columns, after a DUT column when the rows name their DUT."""
    return pd.DataFrame({**({"DUT": r["dut"]} if "dut" in r else {}), **table})


def throughput(results: pd.DataFrame) -> pd.DataFrame:
    r = rows_of(results, "throughput")
    return _dut_first(r, {
        "Frame size (B)": r["frame_size"].astype(int),
        "Throughput (% line rate)": r["throughput_pct"].round(3),
        "Frames/s per port": r["throughput_fps_per_port"].round(0),
        "Gbit/s per port (L1)": r["throughput_gbps_per_port"].round(3),
        "Configured limit (% line rate)": r["theory_throughput_pct"].round(3),
        "Trials": r["trials"].astype(int),
        "Note": r["note"].fillna("") if "note" in r else "",
    })


def dut_comparison(results: pd.DataFrame) -> pd.DataFrame:
    """Throughput per frame size (rows), one column each per DUT: % of line
    rate, frames/s per port, the DUT's note (generator shortfalls). Empty
    unless the run measured the throughput of two DUTs or more."""
    r = rows_of(results, "throughput") if "dut" in results else pd.DataFrame()
    if r.empty or r["dut"].nunique() < 2:
        return pd.DataFrame()
    sizes = pd.Series(sorted(r["frame_size"].astype(int).unique()))
    out = pd.DataFrame({"Frame size (B)": sizes})
    for dut, d in r.groupby("dut", sort=False):
        d = d.set_index(d["frame_size"].astype(int))
        out[f"{dut} throughput (% line rate)"] = sizes.map(d["throughput_pct"].round(3))
        out[f"{dut} frames/s per port"] = sizes.map(d["throughput_fps_per_port"].round(0))
        note = d["note"].fillna("") if "note" in d else pd.Series("", index=d.index)
        out[f"{dut} note"] = sizes.map(note).fillna("")
    return out


def latency(results: pd.DataFrame) -> pd.DataFrame:
    r = rows_of(results, "latency").dropna(subset=["fifo_avg_ns"])
    return _dut_first(r, {
        "Frame size (B)": r["frame_size"].astype(int),
        "Offered (% line rate)": r["offered_pct"].round(3),
        "FIFO min (ns)": r["fifo_min_ns"], "FIFO avg (ns)": r["fifo_avg_ns"].round(2),
        "FIFO max (ns)": r["fifo_max_ns"],
        "LIFO min (ns)": r["lifo_min_ns"].round(2), "LIFO avg (ns)": r["lifo_avg_ns"].round(2),
        "LIFO max (ns)": r["lifo_max_ns"].round(2),
        "Jitter (ns)": r["jitter_ns"].round(2), "99th pct FIFO (ns)": r["p99_ns"],
        "Predicted FIFO min (ns)": r["theory_fifo_min_ns"],
        "Trials": r["trials"].astype(int),
    })


def frame_loss(trials: pd.DataFrame) -> pd.DataFrame:
    t = trials[trials["test"] == "frame_loss"]
    if t.empty:
        return pd.DataFrame()
    index = ["dut", "frame_size"] if "dut" in t else ["frame_size"]
    wide = t.pivot_table(index=index, columns="value", values="loss_pct", aggfunc="last")
    wide = wide[sorted(wide.columns, reverse=True)]
    wide.columns = [f"{c:g} %" for c in wide.columns]
    wide = _by_dut(wide.round(4).reset_index(), _dut_order(trials) if "dut" in t else {})
    return wide.rename(columns={"dut": "DUT", "frame_size": "Frame size (B)"}).reset_index(
        drop=True)


def back_to_back(results: pd.DataFrame) -> pd.DataFrame:
    r = rows_of(results, "back_to_back")
    return _dut_first(r, {
        "Frame size (B)": r["frame_size"].astype(int),
        "Back-to-back frames": r["b2b_frames"].astype(int),
        "Buffer time (us)": (r["buffer_time_ns"] / 1e3).round(3),
        "Predicted frames": r["theory_b2b_frames"],
        "Longest burst tried": r["b2b_max_tried"].astype(int),
        "Trials": r["trials"].astype(int),
        "Note": r["note"].fillna(""),
    })


def recovery(results: pd.DataFrame) -> pd.DataFrame:
    r = rows_of(results, "recovery")
    return _dut_first(r, {
        "Frame size (B)": r["frame_size"].astype(int),
        "Recovery time (us)": (r["recovery_ns"] / 1e3).round(3),
        "Overload (% line rate)": r.get("overload_pct", pd.Series(np.nan, index=r.index)),
        "Note": r["note"].fillna(""),
    })


def all_tables(results: Optional[pd.DataFrame],
               trials: Optional[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table that has rows, by CSV name."""
    out: dict[str, pd.DataFrame] = {}
    if results is not None and not results.empty:
        df = dut_comparison(results)
        if not df.empty:
            out["rfc2544_dut_comparison"] = df
        for name, fn in (("rfc2544_throughput", throughput), ("rfc2544_latency", latency),
                         ("rfc2544_back_to_back", back_to_back), ("rfc2544_recovery", recovery)):
            df = fn(results) if (results["test"] == name.split("_", 1)[1]).any() else pd.DataFrame()
            if not df.empty:
                out[name] = df
    if trials is not None and not trials.empty:
        df = frame_loss(trials)
        if not df.empty:
            out["rfc2544_frame_loss"] = df
    return out


def write_csvs(run: RunDir) -> list[str]:
    """The seed-shaped CSVs of a run (after its tables are consolidated)."""
    tables = all_tables(load_table(run.path, "rfc2544_results"),
                        load_table(run.path, "rfc2544_trials"))
    for name, df in tables.items():
        run.write_csv(name, df)
    return list(tables)
