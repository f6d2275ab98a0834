"""One run's folder, results/<run-id>/, written so nothing is ever half there.

    run.json                 parameters, program, versions, seed, start/end,
                             status ("partial" until the run completes)
    <table>.parquet          the measurements (one file per table)
    parts/<table>/<n>.parquet  the same tables case by case while running
    *.csv                    the seed reports' table shapes

Every file is written to a temporary name in the same folder, flushed to
disk and renamed over the final name, so a reader (or a crash) sees the old
file or the new one, never a mix (a case's parts are flushed together, one
filesystem sync, before run.json counts the case). run.json says "partial" from the first
moment on and only says "complete" once every case has been measured and
every table consolidated: a run killed with SIGKILL still reads as partial,
and its parts are picked up by `load_table`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

import pandas as pd

from ..fileio import sync_files, write_atomic

if TYPE_CHECKING:
    import pyarrow as pa

RUN_JSON = "run.json"
PARTS = "parts"
STATUS_COMPLETE = "complete"
STATUS_PARTIAL = "partial"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")
_RUN_ID = re.compile(r"[A-Za-z0-9._+][A-Za-z0-9._+\-]*")
MAX_RUN_ID = 128


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file and a rename,
    synced (p4scope.fileio)."""
    write_atomic(path, data)


def atomic_write_text(path: Path, text: str) -> None:
    write_atomic(path, text)


def table_options(table: "pa.Table") -> dict[str, Any]:
    """How every table of a run is written (a case's parts: `part_options`).
    Integer columns (times, depths, ports, counts: most of a run's data)
    delta-encoded, the others with dictionaries (written plain once one
    passes 512 KiB, not Arrow's 1 MiB); zstd at level 1; no statistics for
    string columns (their minimum and maximum cost compares per value and
    serve no read of a whole table). The instrument's series of the README's
    main job (5.9 M rows): encoded in 1.14 -> 0.78 s of CPU, 68.3 -> 8.1 MB."""
    import pyarrow as pa

    delta = _delta_ints(table)
    strings = {f.name for f in table.schema
               if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)}
    return {"use_dictionary": [n for n in table.column_names if n not in delta],
            "column_encoding": delta,
            "dictionary_pagesize_limit": 512 << 10, "compression": "zstd", "compression_level": 1,
            "write_statistics": [n for n in table.column_names if n not in strings]}


def part_options(table: "pa.Table") -> dict[str, Any]:
    """How a case's part is written: it is read back only when a run was
    killed before consolidating (the tables are made from the parts' Arrow
    tables), so for speed: LZ4, integers delta-encoded, no statistics, no
    dictionaries but for categorical columns (which keep their categories'
    order through one). The main job's instrument-series parts: encoded in
    1.04 -> 0.80 s of CPU, 82 -> 12 MB carried to the run's process and
    written."""
    import pyarrow as pa

    categorical = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    return {"compression": "lz4", "use_dictionary": categorical, "write_statistics": False,
            "column_encoding": _delta_ints(table)}


def _delta_ints(table: "pa.Table") -> dict[str, str]:
    """Every integer column delta-encoded (`column_encoding`): times and
    depths that move by little from row to row take a few bits each."""
    import pyarrow as pa

    return {f.name: "DELTA_BINARY_PACKED" for f in table.schema if pa.types.is_integer(f.type)}


def parquet_bytes(df: pd.DataFrame) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    buf = io.BytesIO()
    pq.write_table(table, buf, **table_options(table))
    return buf.getvalue()


def atomic_write_parquet(path: Path, df: pd.DataFrame) -> None:
    atomic_write_bytes(path, parquet_bytes(df))


@dataclass(frozen=True)
class StoredPart:
    """A case's rows of one table as its part file holds them: the Parquet
    bytes and the Arrow table they read back as (the Parquet file keeps
    the Arrow schema), what consolidation concatenates. A worker process
    makes them (`of`), so the run's own process neither encodes the part
    nor reads it back."""

    data: bytes
    table: "pa.Table"

    @classmethod
    def of(cls, df: pd.DataFrame) -> "StoredPart":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        buf = io.BytesIO()
        pq.write_table(table, buf, **part_options(table))
        return cls(buf.getvalue(), table)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The frame reading the part back gives (made when asked for: a
        run's tables are made from the parts' tables at once)."""
        return self.table.to_pandas()


def rows_to_csv(rows: Iterable[Sequence[Any]]) -> str:
    """CSV text of rows that may differ in length (the seed tables' blocks)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return out.getvalue()


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(f"bad table or file name {name!r}: use lower-case letters, digits, - and _")
    return name


def check_run_id(run_id: str) -> str:
    """A run id names one folder under the results folder; it is never a
    path, so a run cannot write anywhere else (no separators, no . or ..,
    no leading -, only letters, digits and . _ - +)."""
    if (not isinstance(run_id, str) or len(run_id) > MAX_RUN_ID or run_id in (".", "..")
            or not _RUN_ID.fullmatch(run_id)):
        raise ValueError(f"--run-id {run_id!r}: a run id is a folder name, not a path "
                         f"(1..{MAX_RUN_ID} letters, digits, '.', '_', '-' or '+', "
                         "not starting with '-', not '.' or '..')")
    return run_id


def new_run_id(experiment: str, now: Optional[datetime] = None) -> str:
    """<UTC time>-<experiment>, e.g. 20261121T070102Z-microburst."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%dT%H%M%SZ}-{check_name(experiment)}"


class RunDir:
    """Writes one run's results; see the module docstring for the layout."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.meta: dict[str, Any] = {}
        self._parts: dict[str, int] = {}
        self.tables: dict[str, pd.DataFrame] = {}
        """The tables `consolidate` wrote, as written (the run's report
        takes them from here instead of reading them back)."""
        self._held: dict[str, Optional[list[StoredPart]]] = {}
        """Per table, the parts this object stored."""
        self._unsynced: list[Path] = []
        """Parts stored with durable=False, until `sync_parts`."""

    @classmethod
    def create(cls, root: Path, experiment: str, run_id: Optional[str] = None) -> "RunDir":
        """A new, empty run folder under `root` (a suffix keeps ids unique)."""
        root = Path(root)
        base = new_run_id(experiment) if run_id is None else check_run_id(run_id)
        root.mkdir(parents=True, exist_ok=True)
        for i in range(1, 1000):
            name = base if i == 1 else f"{base}-{i}"
            try:
                (root / name).mkdir()
            except FileExistsError:
                continue
            return cls(root / name)
        raise FileExistsError(f"no free run id like {base} under {root}")

    @property
    def run_id(self) -> str:
        return self.path.name

    # ----- run.json ----------------------------------------------------------------

    def start(self, meta: dict[str, Any]) -> None:
        """Writes run.json for a run that starts now (status partial)."""
        self.meta = dict(meta)
        self.meta.update(run_id=self.run_id, status=STATUS_PARTIAL, started=utc_now(),
                         ended=None)
        self.meta.setdefault("cases", {"planned": 0, "done": 0})
        self.save_meta()

    def update(self, **fields: Any) -> None:
        self.meta.update(fields)
        self.save_meta()

    def save_meta(self) -> None:
        atomic_write_text(self.path / RUN_JSON,
                          json.dumps(self.meta, indent=2, sort_keys=False, default=str) + "\n")

    def finish(self, complete: bool, reason: Optional[str] = None) -> None:
        """Consolidates the tables and records how the run ended."""
        tables = self.consolidate()
        self.meta.update(status=STATUS_COMPLETE if complete else STATUS_PARTIAL,
                         ended=utc_now(), tables=sorted(tables))
        if reason:
            self.meta["partial_reason"] = reason
        self.save_meta()

    # ----- tables ------------------------------------------------------------------

    def add_part(self, table: str, df: "pd.DataFrame | StoredPart", *,
                 durable: bool = True) -> Optional[Path]:
        """Stores one case's rows of `table` (nothing for an empty frame),
        given as a frame or already encoded (StoredPart)."""
        check_name(table)
        if df is None or (isinstance(df, pd.DataFrame) and df.empty):
            return None
        part = df if isinstance(df, StoredPart) else StoredPart.of(df)
        d = self.path / PARTS / table
        d.mkdir(parents=True, exist_ok=True)
        n = self._parts.get(table)
        if n is None:
            n = len(list(d.glob("*.parquet")))
            self._held[table] = [] if n == 0 else None  # parts of before: read them
        self._parts[table] = n + 1
        p = d / f"{n:05d}.parquet"
        write_atomic(p, part.data, durable=durable)
        if not durable:
            self._unsynced.append(p)
        held = self._held.get(table)
        if held is not None:
            held.append(part)
        return p

    def sync_parts(self) -> None:
        """Makes the parts stored with durable=False durable (all at once:
        see fileio.sync_files), before run.json counts their case."""
        sync_files(self._unsynced)
        self._unsynced.clear()

    def write_table(self, table: str, df: pd.DataFrame) -> Path:
        p = self.path / f"{check_name(table)}.parquet"
        atomic_write_parquet(p, df)
        return p

    def write_csv(self, name: str, data: "pd.DataFrame | Iterable[Sequence[Any]]") -> Path:
        p = self.path / f"{check_name(name)}.csv"
        if isinstance(data, pd.DataFrame):
            atomic_write_text(p, data.to_csv(index=False))
        else:
            atomic_write_text(p, rows_to_csv(data))
        return p

    def _replace_parts(self, folder: Path, df: Optional[pd.DataFrame]) -> None:
        """Writes the table consolidated from `folder`'s parts (None: they
        were all empty), then removes them."""
        if df is not None:
            self.write_table(folder.name, df)
        for f in folder.glob("*.parquet"):
            f.unlink()
        folder.rmdir()

    def consolidate(self) -> list[str]:
        """Turns parts/<table>/*.parquet into <table>.parquet (each written
        atomically before its parts are removed); returns every table name."""
        parts = self.path / PARTS
        if parts.is_dir():
            folders = sorted(p for p in parts.iterdir() if p.is_dir())
            held = {d.name: h for d in folders
                    if (h := self._held.pop(d.name, None)) is not None
                    and len(h) == len(list(d.glob("*.parquet")))}
            rows = {name: sum(p.table.num_rows for p in parts) for name, parts in held.items()}
            # the biggest tables first: their files are written (Arrow releases
            # the GIL) while this thread concatenates the next ones
            folders.sort(key=lambda d: -rows.get(d.name, 0))
            made: dict[str, pd.DataFrame] = {}
            with ThreadPoolExecutor(max_workers=2) as pool:
                stored = []
                for d in folders:  # what read_parts(d) reads, already here or not
                    df = _table_of_parts(held[d.name]) if d.name in held else read_parts(d)
                    stored.append(pool.submit(self._replace_parts, d, df))
                    if df is not None:
                        made[d.name] = df
                for f in stored:
                    f.result()
            self.tables.update(sorted(made.items()))
            try:
                parts.rmdir()
            except OSError:
                pass
        return [p.stem for p in self.path.glob("*.parquet")]


def read_parts(folder: Path) -> Optional[pd.DataFrame]:
    files = sorted(Path(folder).glob("*.parquet"))
    return _concat_parts([pd.read_parquet(f) for f in files])


def _table_of_parts(parts: list[StoredPart]) -> Optional[pd.DataFrame]:
    """The table the parts make, as reading them back and concatenating
    them gives (`_concat_parts`), made from their Arrow tables at once (no
    frame per part, no copy until the one conversion). Parts that differ
    in schema (column types, pandas' metadata) or have a categorical
    column are concatenated by pandas, which reconciles the types and
    joins the categories as reading them back does."""
    import pyarrow as pa

    tables = [p.table for p in parts if p.table.num_rows and p.table.num_columns]
    if not tables:
        return None
    first = tables[0].schema
    if (any(pa.types.is_dictionary(f.type) for f in first)
            or not all(t.schema.equals(first, check_metadata=True) for t in tables[1:])):
        return _concat_parts([p.frame for p in parts])
    return pa.concat_tables(tables).to_pandas()


def _concat_parts(frames: list[pd.DataFrame]) -> Optional[pd.DataFrame]:
    """One table from its parts (in part order), as read back."""
    frames = [f for f in frames if not f.empty]
    if not frames:
        return None
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


# ----- reading -------------------------------------------------------------------

def load_meta(run: Path) -> dict[str, Any]:
    p = Path(run) / RUN_JSON
    if not p.is_file():
        raise FileNotFoundError(f"{run} is not a p4scope run folder (no {RUN_JSON})")
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def load_table(run: Path, table: str) -> Optional[pd.DataFrame]:
    """A table of a run: the consolidated file, else the parts a run that
    was killed left behind, else None."""
    run = Path(run)
    p = run / f"{table}.parquet"
    if p.is_file():
        return pd.read_parquet(p)
    return read_parts(run / PARTS / table)


def list_tables(run: Path) -> list[str]:
    run = Path(run)
    names = {p.stem for p in run.glob("*.parquet")}
    parts = run / PARTS
    if parts.is_dir():
        names |= {d.name for d in parts.iterdir() if d.is_dir()}
    return sorted(names)

