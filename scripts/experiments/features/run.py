"""One `p4scope run features` in virtual time, through the tester's run."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import FeaturesMeasure, plan
from .params import FeaturesParams
from .rules import esg_rules


def execute(p: FeaturesParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print) -> RunResult:
    p.check()
    rules = [{"priority": r.priority, "action": r.action, "dscp": r.dscp,
              "ingress_port": r.ingress_port, "src": r.src, "proto": r.proto,
              "dport": list(r.dport) if r.dport else None} for r in esg_rules(p.pairs).rules]
    return tester_run.virtual(
        EXPERIMENT, plan(p), {"parameters": {"features": {**asdict(p), "acl_rules": rules}}},
        profile, seed, program, p.rate_bps, lambda bed, store: FeaturesMeasure(bed, p, store),
        results, run_id, progress, report, echo)
