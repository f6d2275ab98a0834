"""One `p4scope run frame-loss` in virtual time, through the tester's run."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import FrameLossMeasure, plan
from .params import FrameLossParams


def execute(p: FrameLossParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    """A virtual-time run against the embedded reference DUT, its cases
    measured in `jobs` processes or on the Dask `cluster`."""
    p.check()
    return tester_run.virtual(
        EXPERIMENT, plan(p), {"parameters": {"frame_loss": asdict(p)}}, profile, seed, program,
        p.rate_bps, partial(FrameLossMeasure, p=p), results, run_id,
        progress, report, echo, jobs=jobs, cluster=cluster)
