"""One `p4scope run rfc2889` through the tester's run (tester/run.py): in
virtual time, the reference DUT compiled with the run's MAC table size,
every port at the run's line rate, alone or through a chain of switches
(chain_run.py); or in Mininet, real traffic through one DUT."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import ParamError, Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import Rfc2889Measure, plan
from .params import NOT_MEASURED, NOT_THROUGH_CHAIN, Rfc2889Params, not_in_mininet

Echo = Callable[[str], None]


def execute(p: Rfc2889Params, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Echo = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    """A virtual-time run against the embedded reference DUT (its cases
    measured in `jobs` processes or on the Dask `cluster`), or through a
    chain of switches (in this process)."""
    p.check()
    meta = {"parameters": {"rfc2889": asdict(p)}, "not_measured": dict(NOT_MEASURED)}
    if p.chain > 1:
        from .chain_run import execute_chain

        if cluster is not None:  # its switches are one engine's fabric
            raise ParamError("--cluster: a run through a chain of switches (--chain) is "
                             "measured in this process")

        meta["not_through_chain"] = dict(NOT_THROUGH_CHAIN)
        return execute_chain(p, profile, seed, results, run_id, program, meta, progress, report,
                             echo)
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, profile, seed, program, p.rate_bps,
        partial(Rfc2889Measure, p=p), results, run_id, progress, report,
        echo, defines=p.defines, jobs=jobs, cluster=cluster)


def execute_mininet(p: Rfc2889Params, results: Path, run_id: Optional[str],
                    progress: bool = True, report: bool = True,
                    echo: Echo = print) -> RunResult:
    """A run in Mininet (root) against `p.dut`; the caller has checked
    that this host can run Mininet and the DUT."""
    p.check()
    meta = {"parameters": {"rfc2889": asdict(p)}, "not_measured": dict(NOT_MEASURED),
            "not_in_mininet": not_in_mininet(p.dut)}
    return tester_run.mininet(
        EXPERIMENT, plan(p), meta, p.dut, p.port_list, p.rate_bps,
        partial(Rfc2889Measure, p=p), results, run_id, progress=progress,
        report=report, echo=echo)
