"""One `p4scope run lag-failover` in virtual time, through the tester's run;
the DUT is compiled again per policy (measure.py)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable, Optional

from ..driver import RunResult
from ..params import Profile
from ..tester import run as tester_run
from . import EXPERIMENT
from .measure import SERVER_IP, SERVER_MAC, LagFailoverMeasure, client_mac, plan
from .params import LagFailoverParams
from .policies import POLICIES


def execute(p: LagFailoverParams, profile: Profile, seed: int, results: Path,
            run_id: Optional[str], program: Path, progress: bool = True, report: bool = True,
            echo: Callable[[str], None] = print) -> RunResult:
    p.check()
    meta = {"parameters": {"lag_failover": {
        **asdict(p), "events": [{"event": e, "member": port, "up": up, "time_ns": t}
                                for e, port, up, t in p.events()],
        "policies_detail": {n: {"label": POLICIES[n].label, "defines": POLICIES[n].defines,
                                "why_not": POLICIES[n].why_not} for n in p.policies},
        "server": {"mac": f"{SERVER_MAC:012x}", "ip": f"{SERVER_IP:08x}"},
        "client_macs": {c: f"{client_mac(seed, c):012x}"
                        for c in p.client_ports(max(p.clients))}}}}
    return tester_run.virtual(
        EXPERIMENT, plan(p), meta, profile, seed, program, p.rate_bps,
        lambda bed, store: LagFailoverMeasure(bed, p, seed, program, store), results, run_id,
        progress, report, echo)
