"""One `p4scope run rfc2889 --chain N`: the forwarding tests through a
chain of N reference DUTs in virtual time (chain.ChainTestbed), then seed
003's latency per layer (layers.py), into one run folder, as the tester's
virtual run (tester/run.py) does for one switch."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, Callable

from .. import testbed
from ..driver import RunResult
from ..params import Profile
from ..runner import abandon
from ..tester import run as tester_run
from . import EXPERIMENT
from .chain import ChainTestbed
from .measure import Rfc2889Measure, plan
from .params import Rfc2889Params


def execute_chain(p: Rfc2889Params, profile: Profile, seed: int, results: Path,
                  run_id: Any, program: Path, meta: dict[str, Any], progress: bool,
                  report: bool, echo: Callable[[str], None]) -> RunResult:
    profile.check()
    dut = testbed.compile_dut(program, p.defines)
    bed = ChainTestbed(dut, profile, p.chain, p.port_list, p.rate_bps, seed=seed)
    meta = {**meta, "seed": seed, "program": dut.info, "testbed": "chain",
            "dut": {"name": "p4scope", "label": f"a chain of {p.chain} reference DUTs in the "
                                                "embedded switch"},
            "chain": bed.layout(),
            "clock": "virtual time (the engine's event clock; no wall-clock dependence)"}
    meta["parameters"] = {**meta.get("parameters", {}), "profiles": {
        profile.name: {**asdict(profile), "tm_config": profile.tm_config(p.rate_bps)}}}
    cases = plan(p)
    run = tester_run.begin(EXPERIMENT, "virtual", results, run_id, cases, meta, echo)
    outcome = None
    try:
        bed.start()
        try:
            outcome = tester_run.measure(run, cases, bed,
                                         partial(Rfc2889Measure, p=p), progress)
        finally:
            bed.close()
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        if outcome is None:
            return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)
        echo(f"p4scope run: stopping the chain failed: {type(e).__name__}: {e}")
    return tester_run.finish(run, outcome, report)
