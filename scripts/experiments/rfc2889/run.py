"""One `p4scope run rfc2889` in virtual time, through the tester's run
(tester/run.py): the reference DUT compiled with the run's MAC table
size, every port at the run's line rate."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import Rfc2889Measure, plan
from .params import NOT_MEASURED, Rfc2889Params


def execute(p: Rfc2889Params, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print) -> RunResult:
    p.check()
    meta = {"parameters": {"rfc2889": asdict(p)}, "not_measured": dict(NOT_MEASURED)}
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, profile, seed, program, p.rate_bps,
        lambda bed, store: Rfc2889Measure(bed, p, store), results, run_id, progress, report,
        echo, defines=p.defines)
