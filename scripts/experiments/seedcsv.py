"""Writes the seed-shaped CSV files of a run from its stored tables.

Runs after the tables are consolidated (complete or partial), so the CSVs
always agree with the Parquet files next to them.
"""

from __future__ import annotations

from . import seedtables as st
from .rundir import RunDir, load_table

CSV_FILES = {
    "table3_fairness_gbps": "seed 000 Table 3: per-stream Gbps per port combination and profile",
    "table4_microburst_mb": "seed 000 Table 4: buffer in use (MB) per frame size, 2:1",
    "table4_microburst_frames": "the same in frames",
    "burst_4to1_mb": "seed 001 Figure 10: 4:1 burst absorption (MB) per frame size",
    "fairness_summary": "Jain's index, max/min share, bandwidth vs packet-rate share per case",
}


def write_seed_csvs(run: RunDir) -> list[str]:
    """Returns the names written."""
    written = []
    streams = load_table(run.path, "streams")
    if streams is not None and "n" in streams and (streams["experiment"] == "fairness").any():
        run.write_csv("table3_fairness_gbps", st.table3_fairness(streams))
        written.append("table3_fairness_gbps")
    fair = load_table(run.path, "fairness")
    if fair is not None and not fair.empty:
        run.write_csv("fairness_summary", st.fairness_summary(fair))
        written.append("fairness_summary")
    micro = load_table(run.path, "microburst")
    if micro is not None and not micro.empty:
        rows = st.table4_microburst(micro)
        if rows:
            run.write_csv("table4_microburst_mb", rows)
            run.write_csv("table4_microburst_frames",
                          st.table4_microburst(micro, "buffered_frames", digits=0))
            written += ["table4_microburst_mb", "table4_microburst_frames"]
        rows = st.burst_4to1(micro)
        if rows:
            run.write_csv("burst_4to1_mb", rows)
            written.append("burst_4to1_mb")
    run.meta["seed_tables"] = {k: CSV_FILES[k] for k in written}
    return written
