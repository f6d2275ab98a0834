"""One `p4scope run rfc2544`: plan the cases, start the testbed (the
embedded switch in virtual time, or the DUT in Mininet), measure into a
new run folder, derive the seed tables, render the report. Parameters are
checked and the DUT compiled before the run folder is made."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Optional

from .. import testbed, traffic
from ..driver import RunResult, versions
from ..params import Profile
from ..rundir import RunDir
from ..runner import _hold_sigint, abandon, run_cases
from ..tester.virtual import VirtualTestbed
from . import EXPERIMENT, tables
from .params import Rfc2544Params
from .virtual import Rfc2544Measure, plan

from ..report import RENDERER  # noqa: E402

Echo = Callable[[str], None]


def _begin(p: Rfc2544Params, results: Path, run_id: Optional[str], cases: list,
           meta: dict[str, Any], echo: Echo) -> RunDir:
    run = RunDir.create(results, EXPERIMENT, run_id)
    run.start({"experiment": EXPERIMENT, "mode": p.mode, "renderer": RENDERER, **meta,
               "versions": versions(), "command": " ".join(sys.argv),
               "cases": {"planned": len(cases), "done": 0}})
    echo(f"p4scope run: {len(cases)} cases into {run.path}")
    return run


def _measure(run: RunDir, cases: list, bed: Any, p: Rfc2544Params, profile: Optional[Profile],
             progress: bool):
    def store(name, df) -> None:
        with _hold_sigint():
            run.add_part(name, df)

    return run_cases(run, cases, Rfc2544Measure(bed, p, profile, store),
                     derive=tables.write_csvs, progress=progress)


def _finish(run: RunDir, outcome, report: bool) -> RunResult:
    rep = None
    if report:
        from .section import render

        rep = render(run.path)
    return RunResult(run.path, outcome, rep)


def execute(p: Rfc2544Params, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Echo = print) -> RunResult:
    """A virtual-time run against the embedded reference DUT."""
    p.check()
    profile.check()
    traffic.check_engine()
    cases = plan(p, profile.name)
    dut = testbed.compile_dut(program)
    run = _begin(p, results, run_id, cases, {
        "parameters": {"rfc2544": asdict(p),
                       "profiles": {profile.name: {**asdict(profile),
                                                   "tm_config": profile.tm_config(p.rate_bps)}}},
        "seed": seed, "program": dut.info, "testbed": "virtual",
        "dut": {"name": "p4scope", "label": "the reference DUT in the embedded switch"},
        "clock": "virtual time (the engine's event clock; no wall-clock dependence)"}, echo)
    outcome = None
    try:
        with testbed.VirtualSwitch(dut, profile, seed, apply_profile=traffic.apply_profile) as vs:
            outcome = _measure(run, cases, VirtualTestbed(vs, p.rate_bps, profile), p, profile,
                               progress)
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        if outcome is None:
            return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)
        echo(f"p4scope run: stopping the embedded switch failed: {type(e).__name__}: {e}")
    return _finish(run, outcome, report)


def execute_mininet(p: Rfc2544Params, results: Path, run_id: Optional[str],
                    progress: bool = True, report: bool = True, echo: Echo = print) -> RunResult:
    """A run in Mininet (root) against `p.dut`; the caller has checked that
    this host can run Mininet and the DUT (tester.mininet.check_installed)."""
    from ..tester.mininet import MininetTestbed, parse_dut

    p.check()
    dut = parse_dut(p.dut)
    cases = plan(p, p.dut)
    mtu = max(p.sizes) - 18 if max(p.sizes) > 1518 else None
    run = _begin(p, results, run_id, cases, {
        "parameters": {"rfc2544": asdict(p)}, "testbed": "mininet",
        "dut": {"name": dut.name, "kind": dut.kind, "label": dut.label},
        "clock": "wall clock (Mininet: p4scope-trafgen on the tester hosts, real time)"}, echo)
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
    bed = MininetTestbed(p.ports, dut, run.path / "mininet", p.rate_bps,
                         link_bw_bps=p.link_bw_bps, link_queue=p.link_queue, mtu=mtu,
                         dut_build=build, log=echo)
    try:
        outcome = _measure(run, cases, bed, p, None, progress)
    finally:
        bed.stop()
    return _finish(run, outcome, report)
