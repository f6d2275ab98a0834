"""Runs an experiment's cases into a run folder: one after another in this
process, or in worker processes (`Workers`: --jobs, or a Dask cluster's
workers with --cluster, see cluster.py) stored in plan order; worker
processes take the costliest cases first (`longest_first`).

Each case is measured, then its tables are stored at once (as parts, see
rundir), so whatever happens next, what was measured stays. A progress
bar (rich) shows the cases done, weighted by their expected cost, and the
case being measured; measurements report progress inside a case through
`tick(fraction)`. An observer (`on_event`, e.g. the live dashboard) is
told as the run goes: RunEvent start, case_begin, tick, case_end (with the
tables just stored), end.

Ctrl-C (KeyboardInterrupt) ends the run after the cases already measured:
the case in flight is recorded as interrupted, the tables are consolidated,
the seed-shaped tables derived from what is there, and run.json says
"partial" with the reason. SIGTERM (a scheduler, `timeout`, `kill`) does the
same under `sigterm_interrupts()`, which raises it as `Terminated`. A second
signal while the folder is being written is held until it is done, so the
folder is never left half-written.
An error in a case ends the run the same way (partial, with the error),
and is handed to the caller in Outcome.error; `abandon` ends a run the same
way when it stops outside its cases (e.g. the switch failed to start).
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import pandas as pd

from .rundir import RunDir

Tick = Callable[[float], None]
Tables = dict[str, pd.DataFrame]


@dataclass
class Case:
    """One measurement: an id named group/case/config, what it needs, its cost."""

    case_id: str
    experiment: str
    label: str  # one line for the progress bar
    params: dict[str, Any]
    weight: float = 1.0  # relative cost (e.g. packets to process)
    chain: Optional[str] = None
    """Cases of one chain use what an earlier one of them measured (RFC
    2544's latency runs at the throughput found for its size): in worker
    processes they are measured one after another, in plan order, by one
    worker. None: the case stands alone."""


@dataclass
class Outcome:
    complete: bool
    done: int
    planned: int
    reason: Optional[str] = None
    error: Optional[BaseException] = field(default=None, repr=False)
    signal: Optional[int] = None  # SIGINT or SIGTERM when one ended the run


@dataclass(frozen=True)
class RunEvent:
    """What run_cases tells its observer (`on_event`): `kind` is start,
    case_begin, tick (`fraction` of the case), case_end (`status`,
    `wall_s`, the `tables` just stored) or end (`outcome`); `index` is the
    case's position in the plan."""

    kind: str
    rundir: RunDir
    planned: int
    index: int = 0
    case: Optional[Case] = None
    fraction: float = 0.0
    status: str = ""
    wall_s: Optional[float] = None
    tables: Optional[Tables] = None
    outcome: Optional[Outcome] = None


def _observer(on_event: Optional[Callable[[RunEvent], None]], rundir: RunDir,
              planned: int) -> Callable[..., None]:
    """emit(kind, **fields) for `on_event`; an observer that fails is
    dropped (with one line on stderr), never the run. A case's `tables`
    (stored parts or frames) reach the observer as frames, made only when
    there is one."""
    live = [on_event]

    def emit(kind: str, **fields: Any) -> None:
        if live[0] is None:
            return
        if fields.get("tables") is not None:
            fields["tables"] = _frames(fields["tables"])
        try:
            live[0](RunEvent(kind, rundir, planned, **fields))
        except Exception as e:  # noqa: BLE001 - an observer must not end a run
            import sys

            print(f"p4scope run: the run's observer failed, left out from now on: "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            live[0] = None
    return emit


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt, so a run ends
    the same way (see `sigterm_interrupts`)."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


def install_sigterm_interrupt() -> Callable[[], None]:
    """Makes SIGTERM raise Terminated in the main thread; returns what puts
    the handler from before back (nothing to do off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    return lambda: signal.signal(signal.SIGTERM, old)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM ends what runs in the block as Ctrl-C does."""
    restore = install_sigterm_interrupt()
    try:
        yield
    finally:
        restore()


def interrupt_signal(exc: KeyboardInterrupt) -> int:
    return signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT


def interrupt_reason(signum: int) -> str:
    if signum == signal.SIGTERM:
        return "terminated (SIGTERM)"
    return "interrupted by the user (Ctrl-C)"


@contextmanager
def _hold_signals() -> Iterator[list[int]]:
    """Delays SIGINT, and SIGTERM when Python handles it, until the block
    is done (main thread only); yields the list of the signals that came."""
    pending: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield pending
        return
    sigs = [signal.SIGINT]
    if callable(signal.getsignal(signal.SIGTERM)):
        sigs.append(signal.SIGTERM)
    old = {s: signal.signal(s, lambda n, f: pending.append(n)) for s in sigs}
    try:
        yield pending
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _interrupt_of(pending: list[int]) -> KeyboardInterrupt:
    return Terminated() if signal.SIGTERM in pending else KeyboardInterrupt()


@contextmanager
def _hold_sigint() -> Iterator[None]:
    """Delays SIGINT and SIGTERM until the block is done, then raises the
    interrupt (KeyboardInterrupt, or Terminated for SIGTERM)."""
    with _hold_signals() as pending:
        yield
    if pending:
        raise _interrupt_of(pending)


class _Progress:
    """The rich progress bar on a terminal (stderr), one line per case when
    stderr is a file or pipe, or nothing (tests)."""

    def __init__(self, enabled: bool, total: float, planned: int,
                 emit: Callable[..., None] = lambda kind, **f: None):
        self.enabled = enabled
        self.emit = emit
        self.total = max(total, 1e-9)
        self.planned = planned
        self._p = None
        self._task = None
        self._base = 0.0
        self._plain = None
        self._t0 = 0.0

    def __enter__(self) -> "_Progress":
        if self.enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            console = Console(stderr=True)
            if not console.is_terminal:
                self._plain = console
                return self
            self._p = Progress(TextColumn("[bold]{task.fields[cases]:>7}"),
                               BarColumn(bar_width=24), TextColumn("{task.percentage:>3.0f}%"),
                               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                               TextColumn("{task.description}"),
                               console=console, transient=False)
            self._p.start()
            self._task = self._p.add_task("", total=self.total, cases=f"0/{self.planned}")
        return self

    def __exit__(self, *exc) -> None:
        if self._p is not None:
            self._p.stop()

    def begin(self, case: Case, index: int) -> None:
        self._t0 = time.perf_counter()
        self.emit("case_begin", index=index, case=case)
        if self._p is not None:
            self._p.update(self._task, description=case.label,
                           cases=f"{index}/{self.planned}", completed=self._base)

    def tick(self, case: Case, fraction: float, index: int = 0) -> None:
        self.emit("tick", index=index, case=case, fraction=fraction)
        if self._p is not None:
            f = min(max(fraction, 0.0), 1.0)
            self._p.update(self._task, completed=self._base + f * case.weight)

    def end(self, case: Case, index: int, status: str = "complete") -> None:
        self._base += case.weight
        if self._plain is not None:
            note = "" if status == "complete" else f", {status}"
            self._plain.print(f"[{index}/{self.planned}] {case.label} "
                              f"({time.perf_counter() - self._t0:.1f} s{note})", highlight=False)
        if self._p is not None:
            self._p.update(self._task, completed=self._base, cases=f"{index}/{self.planned}")


@dataclass(frozen=True)
class Workers:
    """Cases measured in `jobs` worker processes instead of this one: each
    worker runs `init(*args)` once, then `measure(case)` for each case it
    is given (module-level functions: the workers are forked by a server
    of their own, processes.context(), not by this process, so no thread
    of this process is copied into them). Cases are stored
    in plan order whichever worker finishes first, so a run's tables do not
    depend on the number of workers."""

    jobs: int
    init: Callable[..., None]
    args: tuple
    measure: Callable[[Case], Tables]
    client: Any = None
    """A dask.distributed Client: the cases are measured on its cluster's
    workers instead (cluster.py; `jobs` is not used)."""


Measured = tuple[str, Tables, Optional[BaseException], Optional[str], float, list]
"""status (complete, failed, interrupted), tables, the error and its text,
wall seconds, and the rows a worker's case stored as it went (`worker_store`:
(table, part) pairs, stored before its tables; in this process `store_part`
stores them at once)."""


def _measure_here(cases: Sequence[Case], measure: Callable[[Case, Tick], Tables],
                  bar: "_Progress") -> Iterator[Measured]:
    for i, case in enumerate(cases):
        bar.begin(case, i)
        t0 = time.perf_counter()
        try:
            tables = measure(case, lambda f, c=case, k=i: bar.tick(c, f, k))
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - recorded, then raised again by the caller
            yield "failed", {}, e, f"{type(e).__name__}: {e}", time.perf_counter() - t0, []
            continue
        yield "complete", tables, None, None, time.perf_counter() - t0, []


_WORKER_FAILED: list[str] = []
"""In a worker: why its start failed (a pool restarts a worker whose
initializer raises, for ever; so the failure is kept and every case it is
given fails with it)."""


def _worker_init(init: Callable[..., None], args: tuple, rows: Any = None) -> None:
    """A --jobs worker's start; `rows`: the queue its cases' stored rows
    go back on as they are stored (see worker_store)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt ends
    _ROWS[:] = [rows]
    _start_worker(init, args)


def _start_worker(init: Callable[..., None], args: tuple) -> None:
    """`init(*args)` in a worker; a failure is kept for its cases (a Dask
    worker starts again for each run: what an earlier start said goes)."""
    _WORKER_FAILED.clear()
    try:
        init(*args)
    except Exception as e:  # noqa: BLE001 - reported with the first case
        _WORKER_FAILED.append(f"{type(e).__name__}: {e}")


_ROWS: list[Any] = []
"""In a --jobs worker: the queue stored rows go back on at once."""
_STORED: list[tuple[str, Any]] = []
"""In a Dask worker: the rows the case being measured stored so far."""
_CASE: list[str] = [""]
"""In a worker: the id of the case being measured."""


def worker_store(table: str, df: pd.DataFrame) -> None:
    """`store_part` in a worker: the rows go to the run's process at once
    (a --jobs worker's; stored there as its case is waited for, so Ctrl-C
    keeps them) or with the case's outcome (a Dask worker's), and are
    stored before the case's tables."""
    if df is None or df.empty:
        return
    part = _stored({table: df})[table]
    if _ROWS and _ROWS[0] is not None:
        _ROWS[0].put((_CASE[0], table, part))
    else:
        _STORED.append((table, part))


def _worker_measure(measure: Callable[[Case], Tables], case: Case) -> Measured:
    """In a worker: the case's outcome, its tables as stored (encoded and
    read back here, not in the run's process: see rundir.StoredPart), its
    error as text (an engine's exception need not pickle)."""
    _STORED.clear()
    _CASE[0] = case.case_id
    t0 = time.perf_counter()
    try:
        if _WORKER_FAILED:
            raise RuntimeError(f"the worker could not start: {_WORKER_FAILED[0]}")
        tables = measure(case)
        wall = time.perf_counter() - t0
        return "complete", _stored(tables), None, None, wall, _take_stored()
    except Exception as e:  # noqa: BLE001 - reported to the parent
        text = f"{type(e).__name__}: {e}"
        return "failed", {}, RuntimeError(text), text, time.perf_counter() - t0, _take_stored()


def _take_stored() -> list[tuple[str, Any]]:
    out = list(_STORED)
    _STORED.clear()
    return out


def worker_measure_chain(measure: Callable[[Case], Tables], cases: Sequence[Case]) -> list[Measured]:
    """In a worker: `cases` (a chain, see Case.chain) one after another,
    up to the first that fails (the run ends there)."""
    out = []
    for case in cases:
        out.append(_worker_measure(measure, case))
        if out[-1][0] != "complete":
            break
    return out


def worker_tasks(cases: Sequence[Case]) -> list[list[int]]:
    """What workers are given, as plan indexes: each chain's cases together
    in plan order, every other case alone; the costliest (weight) first,
    ties in plan order, so the last to end are short ones and no worker
    idles while another measures a long one alone."""
    tasks: list[list[int]] = []
    chain_of: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        if c.chain is None:
            tasks.append([i])
        elif c.chain in chain_of:
            chain_of[c.chain].append(i)
        else:
            chain_of[c.chain] = [i]
            tasks.append(chain_of[c.chain])
    return sorted(tasks, key=lambda t: -sum(cases[i].weight for i in t))


def _stored(tables: Tables) -> dict[str, Any]:
    """Each non-empty table as its part file will hold it."""
    from .rundir import StoredPart

    return {n: StoredPart.of(df) if df is not None and not df.empty else df
            for n, df in tables.items()}


def _frames(tables: dict[str, Any]) -> Tables:
    """The tables as frames again (what the observer is told)."""
    from .rundir import StoredPart

    return {n: t.frame if isinstance(t, StoredPart) else t for n, t in tables.items()}


def _measure_in_workers(cases: Sequence[Case], w: Workers, bar: "_Progress",
                        store: Callable[[list], None]) -> Iterator[Measured]:
    """The outcomes in plan order; the rows a case stores as it goes are
    handed to `store` while it is waited for (those of cases further on
    are held until then, so the tables keep plan order), and all that came
    when the run is interrupted."""
    from .processes import context, pool as worker_pool

    rows = context().SimpleQueue()
    held: dict[str, list] = {}  # case id -> (table, part) not stored yet

    def take(case_id: str) -> None:
        while not rows.empty():
            cid, table, part = rows.get()
            held.setdefault(cid, []).append((table, part))
        store(held.pop(case_id, []))

    pool = worker_pool(min(w.jobs, len(cases)), _worker_init, (w.init, w.args, rows))
    try:
        given: dict[int, tuple[Any, int]] = {}
        for task in worker_tasks(cases):
            res = pool.apply_async(worker_measure_chain, (w.measure, [cases[i] for i in task]))
            given.update((i, (res, k)) for k, i in enumerate(task))
        for i, case in enumerate(cases):
            bar.begin(case, i)
            res, k = given[i]
            try:
                while not res.ready():
                    take(case.case_id)
                    res.wait(0.05)
                take(case.case_id)  # a worker puts a case's rows before its outcome
            except KeyboardInterrupt:
                for c in cases[i:]:
                    take(c.case_id)
                raise
            yield res.get()[k]
        pool.close()
        pool.join()
    finally:
        pool.terminate()  # cases still running when the run ends (Ctrl-C, a failure)
        rows.close()


def _measure_on_cluster(cases: Sequence[Case], w: Workers, bar: "_Progress") -> Iterator[Measured]:
    from .cluster import measure_on_cluster

    return measure_on_cluster(cases, w, bar)


def run_cases(rundir: RunDir, cases: Sequence[Case],
              measure: Optional[Callable[[Case, Tick], Tables]],
              derive: Optional[Callable[[RunDir], object]] = None,
              progress: bool = True, workers: Optional[Workers] = None,
              on_event: Optional[Callable[[RunEvent], None]] = None) -> Outcome:
    """Measures `cases` into `rundir` (already started), here with `measure`
    or in `workers`, telling `on_event`; see the module doc."""
    planned = len(cases)
    done = 0
    reason: Optional[str] = None
    error: Optional[BaseException] = None
    stopped_by: Optional[int] = None
    rundir.update(cases={"planned": planned, "done": 0})
    total = sum(c.weight for c in cases)
    emit = _observer(on_event, rundir, planned)
    emit("start")

    def store_rows(stored: list) -> None:
        """Rows a worker's case stored as it went (see store_part)."""
        if stored:
            with _hold_sigint():
                for name, part in stored:
                    rundir.add_part(name, part)
    try:
        with _Progress(progress, total, planned, emit) as bar:
            outcomes = (_measure_here(cases, measure, bar) if workers is None
                        else _measure_in_workers(cases, workers, bar, store_rows)
                        if workers.client is None
                        else _measure_on_cluster(cases, workers, bar))
            for i, case in enumerate(cases):
                try:
                    status, tables, exc, err_text, wall, stored = next(outcomes)
                except KeyboardInterrupt as e:
                    stopped_by = interrupt_signal(e)
                    status, reason, tables, exc, err_text, wall, stored = (
                        "interrupted", interrupt_reason(stopped_by), {}, None, None, 0.0, [])
                if status == "failed":
                    reason = f"case {case.case_id} failed: {err_text}"
                    error = exc
                with _hold_sigint():
                    # a case's parts synced together, then counted in run.json
                    for name, part in stored:
                        rundir.add_part(name, part, durable=False)
                    for name, df in tables.items():
                        rundir.add_part(name, df, durable=False)
                    rundir.add_part("cases", _case_row(case, status, wall, err_text), durable=False)
                    rundir.sync_parts()
                    if status == "complete":
                        done += 1
                    rundir.update(cases={"planned": planned, "done": done})
                bar.end(case, i + 1, status)
                emit("case_end", index=i, case=case, status=status, wall_s=wall,
                     tables=tables)
                if status != "complete":
                    if err_text:
                        rundir.update(error_traceback="".join(
                            traceback.format_exception(error)))
                    outcomes.close()
                    break
    except KeyboardInterrupt as e:
        if reason is None:
            stopped_by = interrupt_signal(e)
            reason = interrupt_reason(stopped_by)
    complete = done == planned and reason is None
    # the folder is finished whatever comes now; a signal that comes while
    # it is only makes the outcome say so
    with _hold_signals() as pending:
        rundir.consolidate()
        if derive is not None:
            try:
                derive(rundir)
            except Exception as e:  # noqa: BLE001 - keep the measurements
                complete = False
                reason = reason or f"deriving the seed tables failed: {type(e).__name__}: {e}"
                error = error or e
        rundir.finish(complete, reason)
    if pending and stopped_by is None:
        stopped_by = signal.SIGTERM if signal.SIGTERM in pending else signal.SIGINT
    outcome = Outcome(complete, done, planned, reason, error, stopped_by)
    emit("end", outcome=outcome)
    return outcome


def store_part(rundir: RunDir, table: str, df: pd.DataFrame) -> None:
    """Stores rows of `table` in the middle of a case (a search's trial as
    it ends), signals held meanwhile, so Ctrl-C keeps every stored part."""
    with _hold_sigint():
        rundir.add_part(table, df)


def abandon(rundir: RunDir, planned: int, exc: BaseException, when: str) -> Outcome:
    """Ends a run that stopped outside its cases (`when`: e.g. "before the
    first case"): run.json says partial and why, as for a failed case."""
    error: Optional[BaseException] = None
    stopped_by: Optional[int] = None
    if isinstance(exc, KeyboardInterrupt):
        stopped_by = interrupt_signal(exc)
        reason = interrupt_reason(stopped_by)
    else:
        error = exc
        reason = f"failed {when}: {type(exc).__name__}: {exc}"
        rundir.update(error_traceback="".join(traceback.format_exception(exc)))
    done = int(rundir.meta.get("cases", {}).get("done", 0))
    with _hold_signals():
        rundir.finish(False, reason)
    return Outcome(False, done, planned, reason, error, stopped_by)


def _case_row(case: Case, status: str, wall_s: float, error: Optional[str]) -> pd.DataFrame:
    row: dict[str, Any] = {"case_id": case.case_id, "experiment": case.experiment,
                           "label": case.label, "status": status, "wall_s": wall_s,
                           "error": error or ""}
    for k, v in case.params.items():
        if isinstance(v, (list, tuple)):
            v = " ".join(str(x) for x in v)
        elif isinstance(v, dict):
            v = " ".join(f"{a}:{b}" for a, b in v.items())
        row[f"param_{k}"] = v
    return pd.DataFrame([row])
