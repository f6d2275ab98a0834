"""One run of an experiment built on the tester (rfc2544, frame-loss, ...):
plan its cases, start its testbed (the embedded switch in virtual time, or
a DUT in Mininet), measure into a new run folder with every trial stored
as it ends, derive the seed tables, render the report.

The experiment gives its cases and a measure maker: `make(bed, store)`
returns `measure(case, tick) -> tables`, where `store(table, rows)` keeps
rows at once (a search's trials). Parameters are checked and the DUT
compiled before the run folder is made.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Optional

from .. import testbed, traffic
from ..driver import RunResult, versions
from ..params import Profile
from ..report import RENDERER
from ..rundir import RunDir
from ..runner import Case, abandon, run_cases, store_part
from ..seedcsv import derive_csvs
from .virtual import VirtualTestbed

Echo = Callable[[str], None]
Store = Callable[[str, Any], None]
MakeMeasure = Callable[[Any, Store], Callable]


def begin(experiment: str, mode: str, results: Path, run_id: Optional[str], cases: list[Case],
          meta: dict[str, Any], echo: Echo) -> RunDir:
    run = RunDir.create(results, experiment, run_id)
    run.start({"experiment": experiment, "mode": mode, "renderer": RENDERER, **meta,
               "versions": versions(), "command": " ".join(sys.argv),
               "cases": {"planned": len(cases), "done": 0}})
    echo(f"p4scope run: {len(cases)} cases into {run.path}")
    return run


def measure(run: RunDir, cases: list[Case], bed: Any, make: MakeMeasure, progress: bool):
    return run_cases(run, cases, make(bed, lambda table, df: store_part(run, table, df)),
                     derive=derive_csvs, progress=progress)


def finish(run: RunDir, outcome, report: bool) -> RunResult:
    rep = None
    if report:
        from ..report import render

        rep = render(run.path)
    return RunResult(run.path, outcome, rep)


def virtual(experiment: str, cases: list[Case], meta: dict[str, Any], profile: Profile,
            seed: int, program: Path, rate_bps: float, make: MakeMeasure, results: Path,
            run_id: Optional[str], progress: bool = True, report: bool = True,
            echo: Echo = print) -> RunResult:
    """The run against the reference DUT in the embedded switch, in virtual
    time, under `profile`; `meta` has the experiment's parameters."""
    profile.check()
    traffic.check_engine()
    dut = testbed.compile_dut(program)
    meta = {**meta, "seed": seed, "program": dut.info, "testbed": "virtual",
            "dut": {"name": "p4scope", "label": "the reference DUT in the embedded switch"},
            "clock": "virtual time (the engine's event clock; no wall-clock dependence)"}
    meta["parameters"] = {**meta.get("parameters", {}), "profiles": {
        profile.name: {**asdict(profile), "tm_config": profile.tm_config(rate_bps)}}}
    run = begin(experiment, "virtual", results, run_id, cases, meta, echo)
    outcome = None
    try:
        with testbed.VirtualSwitch(dut, profile, seed, apply_profile=traffic.apply_profile) as vs:
            outcome = measure(run, cases, VirtualTestbed(vs, rate_bps, profile), make, progress)
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        if outcome is None:
            return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)
        echo(f"p4scope run: stopping the embedded switch failed: {type(e).__name__}: {e}")
    return finish(run, outcome, report)


def mininet(experiment: str, cases: list[Case], meta: dict[str, Any], dut_spec: str,
            ports: list[int], rate_bps: float, make: MakeMeasure, results: Path,
            run_id: Optional[str], *, link_bw_bps: Optional[float] = None,
            link_queue: Optional[int] = None, mtu: Optional[int] = None,
            progress: bool = True, report: bool = True, echo: Echo = print) -> RunResult:
    """The run in Mininet (root) against the DUT `dut_spec` (tester.mininet
    parse_dut); the caller has checked that this host can run Mininet and
    the DUT (tester.mininet.check_installed)."""
    from .mininet import MininetTestbed, parse_dut

    dut = parse_dut(dut_spec)
    meta = {**meta, "testbed": "mininet",
            "dut": {"name": dut.name, "kind": dut.kind, "label": dut.label},
            "clock": "wall clock (Mininet: p4scope-trafgen on the tester hosts, real time)"}
    run = begin(experiment, "mininet", results, run_id, cases, meta, echo)
    try:
        build = None
        if dut.p4:
            from ..mininet.testbed import build_dut

            build = build_dut(run.path / "build")
            run.update(program={"source": "p4src/dut.p4", "compiler": "p4scope",
                                "json": str(build.json_path.relative_to(run.path))})
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)
    # started by the first trial, so a testbed that cannot start fails that case
    bed = MininetTestbed(ports, dut, run.path / "mininet", rate_bps, link_bw_bps=link_bw_bps,
                         link_queue=link_queue, mtu=mtu, dut_build=build, log=echo)
    try:
        outcome = measure(run, cases, bed, make, progress)
    finally:
        bed.stop()
    return finish(run, outcome, report)
