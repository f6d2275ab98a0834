"""The lossless-class summary in seed 001's terms: per class, loss and
completion time, PFC off against PFC on, and the pause time."""

from __future__ import annotations

import pandas as pd

from ..rundir import RunDir, load_table

CSV_FILES = {"lossless_summary": "seed 001's TCP + RoCEv2 result: per class, frames lost "
                                 "and completion times, and the pause time, PFC off vs on"}


def _num(v) -> str:
    return "" if v is None or pd.isna(v) else f"{v:,.1f}"


def summary(classes: pd.DataFrame, pause: pd.DataFrame) -> pd.DataFrame:
    """Rows: what is measured; columns: PFC off, PFC on (those run)."""
    cols = [c for c in ("off", "on") if c in set(classes["pfc"])]
    rows = []
    for cls, label in (("lossless", "Lossless (RoCEv2, priority 3)"),
                       ("lossy", "Lossy (TCP, priority 0)"), ("cnp", "CNP (priority 7, strict)")):
        g = classes[classes["class"] == cls].set_index("pfc")
        if g.empty:
            continue
        rows.append([f"{label}: frames lost"] + [str(int(g.loc[c, "lost"])) if c in g.index
                                                  else "" for c in cols])
        rows.append([f"{label}: loss %"] + [f"{g.loc[c, 'loss_pct']:.2f}" if c in g.index
                                             else "" for c in cols])
        if cls != "cnp":
            rows.append([f"{label}: completion, median (us)"]
                        + [_num(g.loc[c, "completion_median_us"]) if c in g.index else ""
                           for c in cols])
            rows.append([f"{label}: completion, slowest (us)"]
                        + [_num(g.loc[c, "completion_max_us"]) if c in g.index else ""
                           for c in cols])
        else:
            rows.append([f"{label}: latency, max (ns)"]
                        + [_num(g.loc[c, "lat_max_ns"]) if c in g.index else "" for c in cols])
    p = pause.groupby("pfc")
    rows.append(["Pause time asked, all sender ports (us)"]
                + [_num(p["paused_us"].sum().get(c)) for c in cols])
    rows.append(["Pause frames sent (XOFF + XON)"]
                + [str(int(p["xoff_frames"].sum().get(c, 0) + p["xon_frames"].sum().get(c, 0)))
                   for c in cols])
    return pd.DataFrame(rows, columns=["Measure"] + [f"PFC {c}" for c in cols])


def write_csvs(run: RunDir) -> list[str]:
    classes = load_table(run.path, "lossless_classes")
    pause = load_table(run.path, "lossless_pause")
    if classes is None or classes.empty or pause is None:
        return []
    run.write_csv("lossless_summary", summary(classes, pause))
    return ["lossless_summary"]
