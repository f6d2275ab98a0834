"""One `p4scope run ... --mode mininet`: plan the cases, build the DUT, run
each case in Mininet through the shared run-folder machinery
(experiments.rundir / runner: run.json, Parquet tables, partial on
Ctrl-C), derive the CSVs and render the report.

Testbeds are made per switch kind and kept across that kind's cases
(`TestbedPool`); whatever happens, every testbed is stopped and its
namespaces, interfaces and processes removed before the run returns.

A run can be watched while it goes (`p4scope run ... --live`): inside
`testbeds_observed(observer)`, the observer is told the runner's events
(`on_event`, runner.RunEvent) and sees every testbed: `prepare(tb)`
before it starts (it may change its fabric options), `started(tb)` once
the controller configured it, `stopping(tb)` before it stops.
"""

from __future__ import annotations

import os
import platform
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from .. import sources
from ..report import RENDERER
from ..rundir import RunDir
from ..runner import Case, Outcome, abandon, run_cases
from .testbed import DutBuild, Testbed, bmv2_missing, build_dut


class NeedsRoot(RuntimeError):
    pass


_OBSERVERS: list[Any] = []


@contextmanager
def testbeds_observed(observer: Any) -> Iterator[None]:
    """The Mininet runs of the block tell `observer` what happens (see the
    module docstring); its methods must be quick and must not raise."""
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.remove(observer)


def _tell(ev: Any) -> None:
    for o in list(_OBSERVERS):
        o.on_event(ev)


@dataclass
class EmuResult:
    path: Path
    outcome: Outcome
    report: Optional[Path]
    skipped: dict[str, str]


def check_host() -> None:
    """Raises NeedsRoot saying what is missing for a Mininet run."""
    from ...topologies.run import NetworkError, check_environment

    try:
        check_environment()
    except NetworkError as e:
        raise NeedsRoot(str(e)) from None


def versions() -> dict[str, str]:
    from ... import __version__

    return {"p4scope": __version__, **sources.fingerprint(), "python": platform.python_version(),
            "platform": platform.platform(), "cpus": str(os.cpu_count()),
            "load_1min": f"{os.getloadavg()[0]:.2f}"}


def available_kinds(kinds: tuple[str, ...], echo: Callable[[str], None]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The kinds that can run here, and why the others are skipped."""
    skipped = {}
    keep = []
    for k in kinds:
        why = bmv2_missing() if k == "bmv2" else None
        if why:
            skipped[k] = why
            echo(f"p4scope run: skipping the {k} cases: {why}")
        else:
            keep.append(k)
    return tuple(keep), skipped


class TestbedPool:
    """One started testbed at a time, for the switch kind of the case."""

    __test__ = False

    def __init__(self, make: Callable[[str, Path], Testbed], root: Path):
        self.make, self.root = make, root
        self.kind: Optional[str] = None
        self.tb: Optional[Testbed] = None
        self.fresh = False

    def get(self, kind: str) -> Testbed:
        if self.kind != kind:
            self.close()
            tb = self.make(kind, self.root / kind)
            for o in list(_OBSERVERS):
                o.prepare(tb)
            self.tb = tb.start()
            self.kind, self.fresh = kind, True
            for o in list(_OBSERVERS):
                o.started(tb)
        else:
            self.fresh = False
        assert self.tb is not None
        return self.tb

    def close(self) -> None:
        if self.tb is not None:
            tb, self.tb, self.kind = self.tb, None, None
            try:
                for o in list(_OBSERVERS):
                    o.stopping(tb)
            finally:
                tb.stop()


def execute(experiment: str, cases: list[Case], meta: dict[str, Any], results: Path,
            run_id: Optional[str], make_testbed: Callable[[str, Path, DutBuild], Testbed],
            measure: Callable[[Case, Callable[[float], None], TestbedPool], dict],
            derive: Optional[Callable[[RunDir], Any]], progress: bool, report: bool,
            echo: Callable[[str], None] = print) -> EmuResult:
    """Runs `cases` (already filtered to the kinds available) into a new
    run folder; see the module docstring."""
    if not cases:
        raise ValueError("nothing to measure: no cases (every switch kind was skipped)")
    sources.tell_if_stale(echo)
    run = RunDir.create(results, experiment, run_id)
    meta = {**meta, "experiment": experiment, "versions": versions(),
            "command": " ".join(sys.argv), "mode": "mininet",
            "clock": "wall clock (Mininet: real host stacks, real time)",
            "renderer": RENDERER,
            "cases": {"planned": len(cases), "done": 0}}
    run.start(meta)
    echo(f"p4scope run: {len(cases)} case(s) into {run.path}")
    try:
        dut = build_dut(run.path / "build")
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        return EmuResult(run.path, abandon(run, len(cases), e, "before the first case"), None,
                         dict(meta.get("skipped", {})))
    run.update(program={"source": "p4src/dut.p4", "json": str(dut.json_path.relative_to(run.path)),
                        "compiler": "p4scope"})
    pool = TestbedPool(lambda kind, d: make_testbed(kind, d, dut), run.path / "mininet")
    try:
        outcome = run_cases(run, cases, lambda c, tick: measure(c, tick, pool), derive=derive,
                            progress=progress, on_event=_tell if _OBSERVERS else None)
    finally:
        pool.close()
    rep = None
    if report:
        from ..report import render

        rep = render(run.path)
    return EmuResult(run.path, outcome, rep, dict(meta.get("skipped", {})))
