"""Writes the seed-shaped CSV files of a run from its stored tables: every
registered experiment's (registry.py) that the run's tables allow.

Runs after the tables are consolidated (complete or partial), so the CSVs
always agree with the Parquet files next to them; run.json's
`seed_tables` says what each written file holds.
"""

from __future__ import annotations

from . import registry
from .rundir import RunDir


def derive_csvs(run: RunDir) -> list[str]:
    """Returns the names written."""
    written = registry.write_csvs(run)
    files = {k: v for e in registry.experiments().values() for k, v in e.csv_files.items()}
    run.meta["seed_tables"] = {k: files[k] for k in written}
    return written
