"""One `p4scope run rfc2544`, in virtual time or in Mininet, through the
tester's run (tester/run.py)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .params import Rfc2544Params
from .virtual import Rfc2544Measure, plan, plan_duts

Echo = Callable[[str], None]


def execute(p: Rfc2544Params, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Echo = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    """A virtual-time run against the embedded reference DUT, its cases
    measured in `jobs` processes or on the Dask `cluster`."""
    p.check()
    return tester_run.virtual(
        EXPERIMENT, plan(p, profile.name), {"parameters": {"rfc2544": asdict(p)}}, profile, seed,
        program, p.rate_bps, partial(Rfc2544Measure, p=p, profile=profile), results,
        run_id, progress, report, echo, jobs=jobs, cluster=cluster)


def execute_mininet(p: Rfc2544Params, results: Path, run_id: Optional[str],
                    progress: bool = True, report: bool = True, echo: Echo = print, *,
                    skipped: Optional[dict[str, str]] = None) -> RunResult:
    """A run in Mininet (root) against each DUT of `p.dut` in turn, but
    those `skipped` (name -> why: not installed here); the caller has
    checked that this host can run Mininet and the other DUTs
    (tester.run.available_duts)."""
    p.check()
    skipped = dict(skipped or {})
    duts = [d for d in p.duts if d not in skipped]
    mtu = max(p.sizes) - 18 if max(p.sizes) > 1518 else None
    return tester_run.mininet(
        EXPERIMENT, plan_duts(p, duts), {"parameters": {"rfc2544": asdict(p)}}, duts, p.ports,
        p.rate_bps, partial(Rfc2544Measure, p=p, profile=None), results, run_id,
        skipped=skipped, link_bw_bps=p.link_bw_bps, link_queue=p.link_queue, mtu=mtu,
        progress=progress, report=report, echo=echo)
