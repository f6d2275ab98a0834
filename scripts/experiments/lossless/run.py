"""One `p4scope run lossless` in virtual time, through the tester's run."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import LosslessMeasure, plan
from .params import LosslessParams


def execute(p: LosslessParams, base: Profile, seed: int, results: Path, run_id: Optional[str],
            program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    """The cases on the reference DUT under `base` with this run's classes
    (the PFC-on profile is the run's; PFC off is the same without `pfc`)."""
    p.check()
    p.check_profile(base)
    meta = {"parameters": {"lossless": {**asdict(p), "pfc_off_tm_config":
                                        p.profile(base, False).tm_config(p.rate_bps)}}}
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, p.profile(base, True), seed, program, p.rate_bps,
        partial(LosslessMeasure, p=p, base=base), results, run_id, progress, report,
        echo, jobs=jobs, cluster=cluster)
