"""What the seed reports' table shapes share: rows (lists, ragged like the
report's blocks) for the CSV files and the HTML report, and the small
helpers the experiments' builders (e.g. microburst/tables.py) use. Builders
read only tidy tables, so a report can always be rebuilt from stored
results.
"""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

Rows = list[list[Any]]

_COUNT_WORDS = {2: "Two", 3: "Three", 4: "Four", 6: "Six", 8: "Eight", 16: "Sixteen"}


def count_words(n: int) -> str:
    return _COUNT_WORDS.get(n, str(n))


def fmt(v: float, digits: int) -> Optional[float]:
    return None if pd.isna(v) else round(float(v), digits)


def ports_of(s: str) -> list[int]:
    return [int(p) for p in str(s).split()]


def ordered(col: pd.Series) -> list:
    """Unique values in order of first appearance."""
    return list(dict.fromkeys(col.tolist()))


def int_or_none(v) -> Optional[int]:
    return None if v is None or pd.isna(v) else int(v)


def rows_to_frame(rows: Rows) -> pd.DataFrame:
    """Rows padded to one width (for HTML rendering)."""
    width = max((len(r) for r in rows), default=0)
    return pd.DataFrame([list(r) + [None] * (width - len(r)) for r in rows])
