"""The RFC 2889 tables in the shapes of seed 003 (Xena Valkyrie2889's
report), derived from the stored tables only."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..chain_latency import seed_table
from ..rundir import RunDir, load_table
from . import verdicts
from .topology import MESH_NAMES

CSV_FILES = {
    "rfc2889_summary": "Summary: every test measured, its Xena-style verdict (Fail if any "
                       "frame size failed) and what it found",
    "rfc2889_forwarding": "Forwarding test: full mesh, partial mesh 1:N and N:N, per offered "
                          "load (rows), each frame size's received rate (% of line rate per "
                          "sending port) and loss (% of frames)",
    "rfc2889_throughput": "Throughput test: per mesh and frame size, the offered rate (%, and "
                          "bit/s and frames/s over all ports), received rate, loss, Pass/Fail",
    "rfc2889_congestion_control": "Congestion control: per frame size, the uncongested (UC) and "
                                  "congested (C) port's tx, rx and loss, head-of-line blocking, "
                                  "back pressure, Pass/Fail",
    "rfc2889_forward_pressure": "Forward pressure: per frame size, frames sent with a gap below "
                                "96 bit and received, the tx and rx maximum utilisation (%, "
                                "from the smallest gap), loss, the smallest gap received, "
                                "Pass/Fail",
    "rfc2889_max_forwarding_rate": "Maximum forwarding rate: per frame size, the offered load it "
                                   "was seen at, tx/rx frames, loss, the rate received",
    "rfc2889_address_caching": "Address caching capacity: per frame size, the address count, "
                               "test port tx, learning and monitor port rx, Pass/Fail",
    "rfc2889_address_learning": "Address learning rate: frames/s per address count (rows) and "
                                "frame size (columns); 0 where no rate passed",
    "rfc2889_errored_frames": "Errored frames filtering: per frame size and offered load, tx "
                              "and rx of the valid, oversize, undersize and bad-FCS frames, "
                              "what the DUT's MAC dropped, Pass/Fail",
    "rfc2889_broadcast": "Broadcast forwarding: per frame size, the rate found (% and "
                         "frames/s), loss, Pass/Fail",
    "rfc2889_broadcast_latency": "Broadcast latency: per frame size at the rate found (FIFO: "
                                 "first bit in to first bit out), average, min, max and jitter "
                                 "(us), each as the range over the receiving ports",
    "rfc2889_layer_latency": "Latency per layer (--chain): per chain length and frame size, the "
                             "tester's latency and jitter average, min and max (us) through "
                             "that many switches, each as the range over the two directions",
}
TEST_NAMES = {**MESH_NAMES, "congestion_control": "congestion control",
              "forward_pressure": "forward pressure",
              "max_forwarding_rate": "maximum forwarding rate",
              "address_caching": "address caching capacity",
              "address_learning": "address learning rate",
              "errored_frames": "errored frames filtering", "broadcast": "broadcast forwarding"}


def _rows(results: pd.DataFrame, *tests: str) -> pd.DataFrame:
    r = results[results["test"].isin(tests)]
    order = {t: i for i, t in enumerate(tests)}
    keys = ["_t", "frame_size"] + (["addresses"] if "addresses" in r else [])
    return r.assign(_t=r["test"].map(order)).sort_values(keys, kind="stable").drop(columns="_t")


def _col(r: pd.DataFrame, name: str, default=np.nan) -> pd.Series:
    return r[name] if name in r else pd.Series(default, index=r.index)


def forwarding(trials: pd.DataFrame) -> pd.DataFrame:
    t = trials[trials["procedure"] == "forwarding"]
    if t.empty:
        return pd.DataFrame()
    out = []
    for mesh in (m for m in MESH_NAMES if (t["topology"] == m).any()):
        g = t[t["topology"] == mesh]
        wide = pd.DataFrame({"Topology": MESH_NAMES[mesh],
                             "Tx Rate (%)": sorted(g["value"].unique())})
        for size in sorted(g["frame_size"].unique()):
            s = g[g["frame_size"] == size].groupby("value").last()
            wide[f"{size} B Rx Rate (%)"] = wide["Tx Rate (%)"].map(s["rx_pct"].round(3))
            wide[f"{size} B Loss Rate (%)"] = wide["Tx Rate (%)"].map(s["loss_pct"].round(3))
        out.append(wide)
    return pd.concat(out, ignore_index=True)


def throughput(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, *MESH_NAMES)
    return pd.DataFrame({
        "Topology": r["test"].map(MESH_NAMES), "Frame Size (B)": r["frame_size"].astype(int),
        "Tx Rate (%)": r["tx_pct"].round(3), "Tx Rate (b/s)": r["tx_bps"].round(0),
        "Tx Rate (f/s)": r["tx_fps"].round(0), "Rx Rate (%)": r["rx_pct"].round(3),
        "Loss Rate (%)": r["loss_pct"].round(4), "Loss (frames)": r["loss_frames"].astype(int),
        "Result": r["result"], "Note": _col(r, "note", "").fillna(""),
    })


def congestion(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "congestion_control")
    yes = lambda s: s.map({True: "Yes", False: "No"})  # noqa: E731
    return pd.DataFrame({
        "Frame Size (B)": r["frame_size"].astype(int), "Tx Rate (%)": r["tx_pct"],
        "Tx Frames": r["tx_frames"].astype(int),
        "UC-Port: Tx": r["uc_tx"].astype(int), "UC-Port: Rx": r["uc_rx"].astype(int),
        "UC-Port: Loss (%)": r["uc_loss_pct"].round(4),
        "C-Port: Tx": r["c_tx"].astype(int), "C-Port: Rx": r["c_rx"].astype(int),
        "C-Port: Loss (%)": r["c_loss_pct"].round(4),
        "Head-of-line blocking": yes(r["head_of_line_blocking"].astype(bool)),
        "Back pressure": yes(r["back_pressure"].astype(bool)), "Result": r["result"],
        "Note": _col(r, "note", "").fillna(""),
    })


def forward_pressure(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "forward_pressure")
    return pd.DataFrame({
        "Frame Size (B)": r["frame_size"].astype(int), "Tx Frames": r["tx_frames"].astype(int),
        "Tx max. util. (%)": r["tx_util_pct"].round(3), "Rx Frames": r["rx_frames"].astype(int),
        "Rx max. util. (%)": r["rx_util_pct"].round(3), "Loss (%)": r["loss_pct"].round(4),
        "Tx Gap (bit)": r["ifg_bits"].astype(int), "Min. Rx Gap (bit)": r["min_gap_bits"].round(2),
        "Result": r["result"], "Note": _col(r, "note", "").fillna(""),
    })


def errored_frames(trials: pd.DataFrame) -> pd.DataFrame:
    t = trials[trials["procedure"] == "errored_frames"]
    if t.empty:
        return pd.DataFrame()
    t = t.sort_values(["frame_size", "value"], kind="stable")
    n = lambda c: t[c].astype(int)  # noqa: E731
    return pd.DataFrame({
        "Frame Size (B)": n("frame_size"), "Tx Rate (%)": t["value"],
        "Tx Frames": n("tx_frames"), "Rx Frames": n("rx_frames"),
        "Tx Valid": n("tx_valid"), "Rx Valid": n("rx_valid"),
        "Tx Oversize": n("tx_oversize"), "Rx Oversize": n("rx_oversize"),
        "Tx Undersize": n("tx_undersize"), "Rx Undersize": n("rx_undersize"),
        "Tx FCS Error": n("tx_bad_fcs"), "Rx FCS Error": n("rx_bad_fcs"),
        "DUT MAC Dropped": n("mac_dropped"),
        "Result": t["passed"].astype(bool).map({True: verdicts.PASS, False: verdicts.FAIL}),
    })


def max_forwarding_rate(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "max_forwarding_rate")
    return pd.DataFrame({
        "Frame Size (B)": r["frame_size"].astype(int), "Tx Rate (%)": r["tx_pct"],
        "Tx Rate (f/s)": r["tx_fps"].round(0), "Tx Frames": r["tx_frames"].astype(int),
        "Rx Frames": r["rx_frames"].astype(int), "Loss (%) (calculated)": r["loss_pct"].round(4),
        "Max Forwarding Rate (f/s)": r["mfr_fps"].round(0),
        "Max Forwarding Rate (% line rate)": r["mfr_pct"].round(3), "Result": r["result"],
        "Note": _col(r, "note", "").fillna(""),
    })


def address_caching(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "address_caching")
    return pd.DataFrame({
        "Frame Size (B)": r["frame_size"].astype(int), "Address Count": r["addresses"].astype(int),
        "Test Port Tx Frames": r["test_tx"].astype(int),
        "Learn Port Rx Frames": r["learn_rx"].astype(int),
        "Monitor Port Rx Frames": r["monitor_rx"].astype(int),
        "Learning Rate (f/s)": r["learn_fps"],
        "MAC Table Size": r["mac_table_size"].astype("Int64"),
        "Result": r["result"], "Note": _col(r, "note", "").fillna(""),
    })


def address_learning(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "address_learning")
    wide = r.pivot_table(index="addresses", columns="frame_size", values="learning_rate_fps",
                         aggfunc="last")
    wide.columns = [f"{int(c)} B (f/s)" for c in wide.columns]
    wide.index = wide.index.astype(int)
    return wide.round(1).reset_index().rename(columns={"addresses": "Address Count"})


def broadcast(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "broadcast")
    return pd.DataFrame({
        "Frame Size (B)": r["frame_size"].astype(int), "Tx Rate (%)": _col(r, "tx_pct"),
        "Tx Rate (f/s)": _col(r, "tx_fps").round(0), "Loss Rate (%)": _col(r, "loss_pct"),
        "Loss Frames": _col(r, "loss_frames", 0).fillna(0).astype(int),
        "Receiving Ports": r["receiving_ports"].astype(int), "Result": r["result"],
        "Note": _col(r, "note", "").fillna(""),
    })


def _span(lo: float, hi: float) -> str:
    """The seed's cells: 'lo-hi' over the ports, one figure when they agree."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return ""
    a, b = f"{lo / 1e3:.3f}", f"{hi / 1e3:.3f}"
    return a if a == b else f"{a}-{b}"


def broadcast_latency(results: pd.DataFrame) -> pd.DataFrame:
    r = _rows(results, "broadcast")
    if "lat_avg_lo_ns" not in r:
        return pd.DataFrame()
    r = r.dropna(subset=["lat_avg_lo_ns"])
    cell = lambda k: [_span(lo, hi) for lo, hi in zip(r[f"lat_{k}_lo_ns"],  # noqa: E731
                                                       r[f"lat_{k}_hi_ns"])]
    return pd.DataFrame({"Frame Size (B)": r["frame_size"].astype(int),
                         "Latency Average (us)": cell("avg"), "Latency Min (us)": cell("min"),
                         "Latency Max (us)": cell("max"), "Jitter Average (us)": cell("jitter")})


def summary(results: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for test, name in TEST_NAMES.items():
        r = results[results["test"] == test]
        if r.empty:
            continue
        counts = r["result"].value_counts()
        detail = ", ".join(f"{n} {k}" for k, n in counts.items() if k in (verdicts.PASS, verdicts.FAIL))
        rows.append({"Test": name, "Result": verdicts.overall(r["result"]), "Cases": len(r),
                     "Detail": detail or "no pass/fail in RFC 2889"})
    return pd.DataFrame(rows)


def all_tables(results: Optional[pd.DataFrame],
               trials: Optional[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Every table that has rows, by CSV name."""
    out: dict[str, pd.DataFrame] = {}
    if results is not None and not results.empty:
        out["rfc2889_summary"] = summary(results)
    if trials is not None and not trials.empty:
        out["rfc2889_forwarding"] = forwarding(trials)
        out["rfc2889_errored_frames"] = errored_frames(trials)
    if results is not None and not results.empty:
        has = set(results["test"])
        for name, fn, tests in (
                ("rfc2889_throughput", throughput, set(MESH_NAMES)),
                ("rfc2889_congestion_control", congestion, {"congestion_control"}),
                ("rfc2889_forward_pressure", forward_pressure, {"forward_pressure"}),
                ("rfc2889_max_forwarding_rate", max_forwarding_rate, {"max_forwarding_rate"}),
                ("rfc2889_address_caching", address_caching, {"address_caching"}),
                ("rfc2889_address_learning", address_learning, {"address_learning"}),
                ("rfc2889_broadcast", broadcast, {"broadcast"}),
                ("rfc2889_broadcast_latency", broadcast_latency, {"broadcast"})):
            if has & tests:
                out[name] = fn(results)
    return {k: v for k, v in out.items() if not v.empty}


def write_csvs(run: RunDir) -> list[str]:
    """The seed-shaped CSVs of a run (after its tables are consolidated)."""
    tables = all_tables(load_table(run.path, "rfc2889_results"),
                        load_table(run.path, "rfc2889_trials"))
    layers = load_table(run.path, "rfc2889_layers")
    if layers is not None and not layers.empty:
        tables["rfc2889_layer_latency"] = seed_table(layers)
    for name, df in tables.items():
        run.write_csv(name, df)
    return list(tables)
