"""One `p4scope run lag-hash` in virtual time, through the tester's run,
on the reference DUT compiled with the chosen LAG hash."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import LagHashMeasure, plan
from .params import FIELDS, SENDER_BPS, SENDER_PORT, LagHashParams, streams_text


def execute(p: LagHashParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print, jobs: int = 1,
            cluster: Optional[str] = None) -> RunResult:
    p.check()
    meta = {"parameters": {"lag_hash": {
        **asdict(p), "streams_text": streams_text(p.streams), "fields_text": FIELDS[p.fields],
        "defines": p.defines, "sender_port": SENDER_PORT, "sender_bps": SENDER_BPS,
        "egress": {s: p.egress(s) for s in p.setups}}}}
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, profile, seed, program, SENDER_BPS,
        partial(LagHashMeasure, p=p, seed=seed), results, run_id, progress,
        report, echo, defines=p.defines, jobs=jobs, cluster=cluster)
