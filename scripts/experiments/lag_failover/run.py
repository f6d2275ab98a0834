"""One `p4scope run lag-failover` in virtual time, through the tester's run;
the DUT is compiled again per policy (measure.py)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .cases import plan, run_parameters
from .measure import SERVER_IP, SERVER_MAC, LagFailoverMeasure, policy_programs
from .params import LagFailoverParams


def execute(p: LagFailoverParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    p.check()
    meta = {"parameters": {"lag_failover": run_parameters(
        p, seed, "time_ns", {"mac": f"{SERVER_MAC:012x}", "ip": f"{SERVER_IP:08x}"})}}
    make = partial(LagFailoverMeasure, p=p, seed=seed, programs=policy_programs(p, program))
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, profile, seed, program, p.rate_bps, make, results, run_id,
        progress, report, echo, jobs=jobs, cluster=cluster)
