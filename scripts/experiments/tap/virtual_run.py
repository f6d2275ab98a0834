"""An experiment's cases measured with a tap switch on every link of the
reference DUT in virtual time (tap.virtual's TappedDut), in this process
or in --jobs worker processes, into a run folder, with the report after:
what `p4scope run microburst|fairness --instrument tap` share. Each
experiment gives its per-case measure (`measure_case(td, profile, case,
tick)`, a module-level function so the workers can be handed it) and
what run.json's `tap` says of the set-up.

Also the pieces every such measure uses: the DUT ports to tap and the
DUT's flows, the tester's sinks and the run of the Fabric with progress
(the reports the taps captured: tap.frames.tap_frames).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from ..params import Profile
from ..runner import Case, Tables, Tick
from ..testbed import DutProgram, Flow
from . import virtual as tv
from .inference import Inference

TAP_SOURCE = Path("p4src/tap.p4")
MeasureCase = Callable[[tv.TappedDut, Profile, Case, Tick], Tables]


def fabric_ports(cases: list[Case]) -> tuple[list[int], list[Flow]]:
    """Every DUT port the cases use (each gets a tap) and the DUT's flows
    (every ingress port to its case's egress)."""
    flows = {(p, c.params["egress"]) for c in cases for p in c.params["ingress"]}
    ports = sorted({p for f in flows for p in f})
    return ports, [Flow(i, e) for i, e in sorted(flows)]


def dut_title(prof: Profile) -> str:
    return (f"the reference DUT (p4scope, profile {prof.name}: "
            f"{prof.buffer_bytes / 2**20:g} MB, α {prof.alpha:g})")


def dut_label(prof: Profile) -> str:
    return f"p4scope {prof.name}, through the tap"


def reports_lost(inf: Inference) -> int:
    """Reports the taps made or should have made and the capture lacks: per
    gap, the frames its cumulative counts say went unreported (a report
    dropped before the tap numbered it) or the numbers skipped, whichever
    is more (every frame reported)."""
    return sum(max(g.lost_reports, g.lost_to_frames + g.lost_from_frames) for g in inf.gaps)


def run_fabric(td: tv.TappedDut, until_ns: float, tick: Tick, done: float = 0.0,
               share: float = 0.9, steps: int = 10) -> None:
    """Virtual time on to `until_ns` in `steps` pieces, the progress going
    from `done` by `share` on the way."""
    with td.vf.locked() as f:
        t0 = int(f.now_ns())
        for k in range(1, steps + 1):
            f.run(until_ns=int(t0 + (until_ns - t0) * k / steps))
            tick(done + share * k / steps)


def drain(td: tv.TappedDut) -> tuple[list[dict], str]:
    """Virtual time until every frame is through: the tester's per-stream
    rows and the run's digest."""
    with td.vf.locked() as f:
        f.run(until_ns=2**62, drain=True)
        return list(f.stream_stats()), str(f.sim_digest())


def stream_rows(td: tv.TappedDut) -> list[dict]:
    with td.vf.locked() as f:
        return list(f.stream_stats())


def sinks(rows: list[dict], streams: dict[int, int], egress: int) -> pd.DataFrame:
    """Per stream (engine id -> its ingress port): tx and rx (on `egress`)
    frames and bytes, latency, from the Fabric's stream_stats rows."""
    out = []
    for sid, ing in streams.items():
        mine = [r for r in rows if r["stream"] == sid]
        rx = [r for r in mine if r.get("rx_port") == egress]
        r0 = rx[0] if rx else (mine[0] if mine else {})
        out.append({"stream": sid, "ingress_port": ing, "egress_port": egress,
                    "tx_frames": int(r0.get("tx_frames", 0)), "tx_bytes": int(r0.get("tx_bytes", 0)),
                    "rx_frames": int(rx[0]["rx_frames"]) if rx else 0,
                    "rx_bytes": int(rx[0]["rx_bytes"]) if rx else 0,
                    "lat_min_ns": r0.get("lat_min_ns") if rx else None,
                    "lat_avg_ns": r0.get("lat_avg_ns") if rx else None,
                    "lat_max_ns": r0.get("lat_max_ns") if rx else None})
    return pd.DataFrame(out)


# ----- the taps and the DUT, per process ----------------------------------------------------

@dataclass
class Bench:
    """What a process measures with: the compiled DUT and tap, the DUT's
    profiles, the ports to tap, the experiment's measure, the taps'
    sampling (None: every frame; n: the first frame of every 2^n us)."""

    dut: DutProgram
    tap: DutProgram
    profiles: dict[str, Profile]
    ports: list[int]
    flows: list[Flow]
    seed: int
    measure_case: MeasureCase
    delay_ns: int = 0
    sample_log2_us: Optional[int] = None

    def tapped(self) -> tv.TappedDut:
        from .. import traffic

        first = next(iter(self.profiles.values()))
        return tv.TappedDut(self.dut, self.tap, first, self.ports, self.flows, seed=self.seed,
                            delay_ns=self.delay_ns, apply_profile=traffic.apply_profile,
                            sample_log2_us=self.sample_log2_us)

    def measure(self, td: tv.TappedDut) -> Callable[[Case, Tick], Tables]:
        return lambda case, tick: self.measure_case(td, self.profiles[case.params["profile"]],
                                                    case, tick)


_WORKER: dict[str, Any] = {}


def _worker_start(dut: Path, tap: Path, profiles: dict[str, Profile], ports: list[int],
                  flows: list[Flow], seed: int, measure_case: MeasureCase,
                  sample_log2_us: Optional[int]) -> None:
    from multiprocessing import util

    from ..testbed import compile_dut

    bench = Bench(compile_dut(dut), compile_dut(tap), profiles, ports, flows, seed, measure_case,
                  sample_log2_us=sample_log2_us)
    td = bench.tapped()
    td.__enter__()
    _WORKER["stop"] = util.Finalize(td, td.__exit__, exitpriority=10)
    _WORKER["measure"] = bench.measure(td)


def _worker_measure(case: Case) -> Tables:
    return _WORKER["measure"](case, lambda fraction: None)


# ----- the run ------------------------------------------------------------------------------

def execute(req: Any, measure_case: MeasureCase, tap_meta: dict[str, Any],
            sample_log2_us: Optional[int] = None, tap_source: Path = TAP_SOURCE,
            echo: Callable[[str], None] = print) -> Any:
    """The run of `req` (driver.RunRequest): its cases through the DUT with
    the taps in its path, measured by `measure_case`; run.json's `tap` is
    `tap_meta` (with the tap program's hash). Returns a driver.RunResult."""
    from ..driver import RunResult, start_meta
    from ..params import MAX_JOBS, check_int, check_seed
    from ..rundir import RunDir
    from ..runner import Workers, abandon, run_cases
    from ..seedcsv import derive_csvs
    from ..testbed import compile_dut

    check_seed(req.seed)
    check_int(req.jobs, 1, MAX_JOBS, "--jobs")
    cases = req.plan()
    if not cases:
        raise ValueError("nothing to measure: no cases")
    dut, tap = compile_dut(req.program), compile_dut(tap_source)
    ports, flows = fabric_ports(cases)
    meta = start_meta(req, dut.info, cases)
    every = sample_log2_us is None
    meta["instrument"] = {"mode": "the tap in the DUT's path (p4src/tap.p4): a report of "
                                  + ("every frame" if every else
                                     f"the first frame of every {2 ** sample_log2_us} us")
                                  + " on every link, captured at its collector port",
                          "depth_unit": "bytes", "clock_step_ns": 1}
    meta["tap"] = {**tap_meta, "json_sha256": tap.info["json_sha256"]}
    run = RunDir.create(req.results, req.experiment, req.run_id)
    run.start(meta)
    echo(f"p4scope run: {len(cases)} cases into {run.path} (the DUT with a tap on each of its "
         f"ports {', '.join(map(str, ports))})")
    outcome = None
    try:
        if req.jobs > 1 and len(cases) > 1:
            outcome = run_cases(run, cases, None, derive=derive_csvs, progress=req.progress,
                                workers=Workers(req.jobs, _worker_start,
                                                (req.program, tap_source, req.profiles, ports,
                                                 flows, req.seed, measure_case, sample_log2_us),
                                                _worker_measure),
                                on_event=req.on_event)
        else:
            bench = Bench(dut, tap, req.profiles, ports, flows, req.seed, measure_case,
                          sample_log2_us=sample_log2_us)
            with bench.tapped() as td:
                outcome = run_cases(run, cases, bench.measure(td), derive=derive_csvs,
                                    progress=req.progress, on_event=req.on_event)
    except BaseException as e:  # noqa: BLE001 - the run folder says why; the caller exits
        if outcome is None:
            return RunResult(run.path, abandon(run, len(cases), e, "before the first case"), None)
        echo(f"p4scope run: stopping the switches failed: {type(e).__name__}: {e}")
    rep = None
    if req.report:
        from ..report import render

        try:
            rep = render(run.path)
        except KeyboardInterrupt:  # the results are safe; `p4scope report` renders later
            echo(f"p4scope run: report not rendered (interrupted); run `p4scope report {run.path}`")
        except Exception as e:  # noqa: BLE001 - the measurements are stored whatever the report does
            echo(f"p4scope run: report not rendered ({type(e).__name__}: {e}); "
                 f"run `p4scope report {run.path}`")
    return RunResult(run.path, outcome, rep)
