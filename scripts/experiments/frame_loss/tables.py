"""The frame-loss table in the shape of Tolly's Tables 1 and 2: frame
sizes across, one row of loss per scenario."""

from __future__ import annotations

import pandas as pd

from ..rundir import RunDir, load_table

CSV_FILES = {"tolly_frame_loss": "seed 000 Tables 1 and 2: frame loss at 100 % of line rate "
                                 "per frame size, one row per scenario"}


def loss_text(pct: float) -> str:
    """Tolly's cells: 0, or the loss in % with two decimals."""
    return "0" if pct == 0 else f"{pct:.2f}%"


def tolly_table(fl: pd.DataFrame) -> pd.DataFrame:
    sizes = sorted(fl["frame_size"].unique())
    rows = []
    for sc, g in fl.groupby("scenario", sort=False):
        by = g.set_index("frame_size")["loss_pct"]
        rows.append([f"p4scope {sc} Frame Loss"] + [loss_text(by[s]) if s in by else ""
                                                     for s in sizes])
    return pd.DataFrame(rows, columns=["Frame Size (Bytes)"] + [str(int(s)) for s in sizes])


def write_csvs(run: RunDir) -> list[str]:
    fl = load_table(run.path, "frame_loss")
    if fl is None or fl.empty:
        return []
    run.write_csv("tolly_frame_loss", tolly_table(fl))
    return ["tolly_frame_loss"]
