"""The features-on tables in seed 001's shape (ESG's Figure 11: throughput
and latency per packet size; Figures 12 and 13: each source port's share),
derived from the stored tables only. Differences are with the rules less
without (a feature-invariant DUT shows 0)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..rundir import RunDir, load_table

CSV_FILES = {
    "features_throughput": "seed 001 Figure 11: throughput per packet size with the 24 ACL "
                           "rules off and on (% line rate, frames/s per port)",
    "features_latency": "seed 001 Figure 11: latency per packet size at the throughput rate, "
                        "rules off and on (average, min, max, ns)",
    "features_difference": "rules on less rules off per packet size: throughput (points of "
                           "line rate) and latency (ns); 0 for a feature-invariant DUT",
    "features_fairness_shares": "seed 001 Figures 12 and 13: each source port's share of the "
                                "egress (%) per fairness scenario, rules on, with Jain's index",
}


def _side(results: pd.DataFrame, test: str) -> Optional[pd.DataFrame]:
    """`test`'s rows with one column per (field, rules), by frame size."""
    r = results[results["test"] == test]
    if r.empty:
        return None
    return r.pivot_table(index="frame_size", columns="rules", aggfunc="first", dropna=False,
                         values=[c for c in r.columns if c.endswith(("_pct", "_ns", "_port"))])


def _get(w: pd.DataFrame, field: str, rules: str) -> pd.Series:
    return w[(field, rules)] if (field, rules) in w.columns else pd.Series(np.nan, index=w.index)


def _notes(results: pd.DataFrame, test: str, rules: str, index: pd.Index) -> pd.Series:
    """`test`'s notes for `rules` by frame size (e.g. trials where the
    generator fell short, in Mininet); "" where there is none."""
    r = results[(results["test"] == test) & (results["rules"] == rules)]
    if "note" not in r:
        return pd.Series("", index=index)
    return r.set_index("frame_size")["note"].reindex(index).fillna("")


def throughput(results: pd.DataFrame) -> Optional[pd.DataFrame]:
    w = _side(results, "throughput")
    if w is None:
        return None
    return pd.DataFrame({
        "Packet Size (B)": w.index.astype(int),
        "Throughput without rules (% line rate)": _get(w, "throughput_pct", "off").round(3),
        "Throughput with rules (% line rate)": _get(w, "throughput_pct", "on").round(3),
        "Frames/s per port without rules": _get(w, "throughput_fps_per_port", "off").round(0),
        "Frames/s per port with rules": _get(w, "throughput_fps_per_port", "on").round(0),
        "Note without rules": _notes(results, "throughput", "off", w.index),
        "Note with rules": _notes(results, "throughput", "on", w.index),
    })


def latency(results: pd.DataFrame) -> Optional[pd.DataFrame]:
    w = _side(results, "latency")
    if w is None:
        return None
    out = {"Packet Size (B)": w.index.astype(int)}
    for rules, word in (("off", "without"), ("on", "with")):
        out[f"Offered {word} rules (% line rate)"] = _get(w, "offered_pct", rules).round(3)
        for f, name in (("lat_avg_ns", "average"), ("lat_min_ns", "min"), ("lat_max_ns", "max")):
            out[f"Latency {name} {word} rules (ns)"] = _get(w, f, rules).round(1)
    for rules, word in (("off", "without"), ("on", "with")):
        out[f"Note {word} rules"] = _notes(results, "latency", rules, w.index)
    return pd.DataFrame(out)


def difference(results: pd.DataFrame) -> Optional[pd.DataFrame]:
    """Rules on less rules off, per size (NaN where one side is missing)."""
    t, la = _side(results, "throughput"), _side(results, "latency")
    if t is None and la is None:
        return None
    sizes = sorted(set(t.index if t is not None else []) | set(la.index if la is not None else []))
    out = pd.DataFrame({"Packet Size (B)": [int(s) for s in sizes]})

    def delta(w, field):
        if w is None:
            return [np.nan] * len(sizes)
        d = (_get(w, field, "on") - _get(w, field, "off")).reindex(sizes)
        return d.round(6).to_list()

    out["Throughput difference (points of line rate)"] = delta(t, "throughput_pct")
    out["Frames/s per port difference"] = delta(t, "throughput_fps_per_port")
    for f, name in (("lat_avg_ns", "average"), ("lat_min_ns", "min"), ("lat_max_ns", "max")):
        out[f"Latency {name} difference (ns)"] = delta(la, f)
    return out


def fairness_shares(fair: pd.DataFrame, shares: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario: N:1, size, egress port, each source port's
    share (%, as ESG's figures label them) in port order, Jain's index, a
    note when a generator fell short (Mininet)."""
    ports = sorted(shares["ingress_port"].unique())
    rows = []
    for cid, f in fair.set_index("case_id").iterrows():
        s = shares[shares["case_id"] == cid].set_index("ingress_port")["share_pct"]
        rows.append({"Scenario": f"{int(f['n'])}-to-1", "Frame Size (B)": int(f["frame_size"]),
                     "Egress port": int(f["egress_port"]),
                     **{f"Port {p} share (%)": round(float(s[p]), 2) if p in s else np.nan
                        for p in ports},
                     "Fair share (%)": round(float(f["fair_share_pct"]), 2),
                     "Jain's index": round(float(f["jain"]), 6),
                     "Note": "a generator fell short of line rate"
                     if bool(f.get("generator_short", False)) else ""})
    return pd.DataFrame(rows)


def write_csvs(run: RunDir) -> list[str]:
    out = []
    res = load_table(run.path, "features_results")
    if res is not None and not res.empty:
        for name, fn in (("features_throughput", throughput), ("features_latency", latency),
                         ("features_difference", difference)):
            table = fn(res)
            if table is not None:
                run.write_csv(name, table)
                out.append(name)
    fair = load_table(run.path, "features_fairness")
    shares = load_table(run.path, "features_shares")
    if fair is not None and not fair.empty and shares is not None:
        run.write_csv("features_fairness_shares", fairness_shares(fair, shares))
        out.append("features_fairness_shares")
    return out
