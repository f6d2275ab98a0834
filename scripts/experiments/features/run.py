"""One `p4scope run features`, in virtual time or in Mininet, through the
tester's run (tester/run.py)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import FeaturesMeasure, plan
from .params import FeaturesParams
from .rules import esg_rules

Echo = Callable[[str], None]


def _meta(p: FeaturesParams) -> dict[str, Any]:
    """run.json's parameters: the experiment's and the rules it writes."""
    rules = [{"priority": r.priority, "action": r.action, "dscp": r.dscp,
              "ingress_port": r.ingress_port, "src": r.src, "proto": r.proto,
              "dport": list(r.dport) if r.dport else None} for r in esg_rules(p.pairs).rules]
    other = ("dut", "trial_s") if p.mode == "virtual" else ("trial_frames", "fairness_us")
    kept = {k: v for k, v in asdict(p).items() if k not in other}
    return {"parameters": {"features": {**kept, "acl_rules": rules}}}


def execute(p: FeaturesParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Echo = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    """A virtual-time run against the embedded reference DUT, its cases
    measured in `jobs` processes or on the Dask `cluster`."""
    p.check()
    return tester_run.virtual(
        EXPERIMENT, plan(p), _meta(p), profile, seed, program, p.rate_bps,
        partial(FeaturesMeasure, p=p), results, run_id, progress, report, echo, jobs=jobs,
        cluster=cluster)


def execute_mininet(p: FeaturesParams, results: Path, run_id: Optional[str],
                    progress: bool = True, report: bool = True, echo: Echo = print) -> RunResult:
    """A run in Mininet (root) against the reference DUT in `p.dut`; the
    caller has checked that this host can run Mininet and the DUT."""
    p.check()
    size = p.largest_frame
    return tester_run.mininet(
        EXPERIMENT, plan(p), _meta(p), p.dut, p.ports, p.rate_bps,
        partial(FeaturesMeasure, p=p), results, run_id,
        mtu=size - 18 if size > 1518 else None, progress=progress, report=report, echo=echo)
