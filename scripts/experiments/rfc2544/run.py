"""One `p4scope run rfc2544`: plan the cases, start the embedded switch,
measure into a new run folder, derive the seed tables, render the report.
Parameters are checked and the DUT compiled before the run folder is made."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Optional

from .. import testbed, traffic
from ..driver import RunResult, versions
from ..params import Profile
from ..rundir import RunDir
from ..runner import _hold_sigint, run_cases
from ..tester.virtual import VirtualTestbed
from . import EXPERIMENT, tables
from .params import Rfc2544Params
from .virtual import Rfc2544Measure, plan

from ..report import RFC2544_RENDERER as RENDERER  # noqa: E402


def execute(p: Rfc2544Params, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print) -> RunResult:
    p.check()
    profile.check()
    traffic.check_engine()
    cases = plan(p, profile.name)
    dut = testbed.compile_dut(program)
    run = RunDir.create(results, EXPERIMENT, run_id)
    run.start({
        "experiment": EXPERIMENT, "mode": "virtual", "renderer": RENDERER,
        "parameters": {"rfc2544": asdict(p),
                       "profiles": {profile.name: {**asdict(profile),
                                                   "tm_config": profile.tm_config(p.rate_bps)}}},
        "seed": seed, "program": dut.info, "versions": versions(), "testbed": "virtual",
        "clock": "virtual time (the engine's event clock; no wall-clock dependence)",
        "command": " ".join(sys.argv), "cases": {"planned": len(cases), "done": 0},
    })
    echo(f"p4scope run: {len(cases)} cases into {run.path}")

    def store(name, df) -> None:
        with _hold_sigint():
            run.add_part(name, df)

    with testbed.VirtualSwitch(dut, profile, seed, apply_profile=traffic.apply_profile) as vs:
        bed = VirtualTestbed(vs, p.rate_bps, profile)
        outcome = run_cases(run, cases, Rfc2544Measure(bed, p, profile, store),
                            derive=tables.write_csvs, progress=progress)
    rep = None
    if report:
        from .section import render

        rep = render(run.path)
    return RunResult(run.path, outcome, rep)
