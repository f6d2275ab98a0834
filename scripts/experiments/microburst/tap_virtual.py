"""`p4scope run microburst --instrument tap` in virtual time: the
microburst cases (plan.py: k ports burst N frames each at line rate into
one port) through the reference DUT with its own traffic-manager profile
(the run's --profiles), a tap switch on each of its links
(experiments.tap.virtual), all in one engine Fabric; per case:

* the microburst and streams tables as without the tap, the DUT named in
  every row (`dut`, `instrument` tap), and the DUT's ground truth
  (ground_truth, ground_truth_ingress), as a run on the DUT alone has;
* the DUT's egress queue as the tap infers it from its reports (every
  frame, tap.inference) on the DUT's side of the links (tap.virtual
  on_dut_clock): tap_series, tap_ingress, tap_bursts (source "tap");
* the reference: the DUT's traffic-manager trace of that port
  (tap_reference, reduced for plotting; its bursts in tap_bursts, source
  "reference");
* the tap against it, burst by burst, with the bars (tap.truth): peak
  within 1 % or one frame, start and end within one frame time, shares
  within 1 pp, the drops (tap_errors).

The tester numbers its frames in the first four payload bytes
(FRAME_NUMBER), within the tap's 64-byte snap, so every frame a report
shows is told apart from the others of its stream (a frame that fits the
snap whole shows the tester's own tag, its sequence number in it).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ...control.reports import ReportError, parse_report_frame
from .. import figures as fg
from .. import groundtruth
from ..linerate import frame_time_ns
from ..params import Profile, as_dict
from ..runner import Case, Tables, Tick
from ..tap import placement as pl
from ..tap import truth as tt
from ..tap import virtual as tv
from ..tap.inference import Inference, frames_from_reports, infer
from ..testbed import DutProgram, Flow
from . import plan as mbx

TAP_SOURCE = Path("p4src/tap.p4")
FRAME_NUMBER = {"offset": 42, "width": 4, "start": 0, "step": 1, "count": 2**32}
"""The tester's frame number: the first payload bytes after Ethernet, IPv4
and UDP (engine `vary`)."""
SNAP_BYTES = 64
REFERENCE_POINTS = 4000
HOW = "the tap in virtual time"


def dut_title(prof: Profile) -> str:
    return (f"the reference DUT (p4scope, profile {prof.name}: "
            f"{prof.buffer_bytes / 2**20:g} MB, α {prof.alpha:g})")


def dut_label(prof: Profile) -> str:
    return f"p4scope {prof.name}, through the tap"


def numbering(frame_size: int) -> list[dict[str, int]]:
    """The tester's `vary` that numbers frames of `frame_size` (FCS
    included) within the snap: none for a frame the snap holds whole."""
    return [FRAME_NUMBER] if frame_size - 4 > SNAP_BYTES else []


def fabric_ports(cases: list[Case]) -> tuple[list[int], list[Flow]]:
    """Every DUT port the cases use (each gets a tap) and the DUT's flows
    (every ingress port to its case's egress)."""
    flows = {(p, c.params["egress"]) for c in cases for p in c.params["ingress"]}
    ports = sorted({p for f in flows for p in f})
    return ports, [Flow(i, e) for i, e in sorted(flows)]


# ----- one case ---------------------------------------------------------------------------

def tap_reports(frames: list[tuple[int, bytes]]) -> tuple[list, list[int], int]:
    """The parsed reports of the taps' captures, the time each left its
    collector port, and how many frames were not reports."""
    reports, stamps, bad = [], [], 0
    for ts, f in frames:
        try:
            r = parse_report_frame(f, pl.REPORT_UDP_PORT)
        except ReportError:
            bad += 1
            continue
        if r.tap is not None:
            reports.append(r)
            stamps.append(ts)
    return reports, stamps, bad


def _run(td: tv.TappedDut, expected_ns: float, tick: Tick) -> tuple[list[dict], str]:
    """Virtual time until every frame is through; progress on the way."""
    step = max(1, int(expected_ns / 10))
    with td.vf.locked() as f:
        for k in range(1, 11):
            f.run(until_ns=k * step)
            tick(0.9 * k / 10)
        f.run(until_ns=2**62, drain=True)
        return list(f.stream_stats()), str(f.sim_digest())


def _sinks(rows: list[dict], streams: dict[int, int], egress: int) -> pd.DataFrame:
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


def measure(td: tv.TappedDut, prof: Profile, case: Case, tick: Tick) -> Tables:
    """One case through the DUT with `prof`, the taps in its path."""
    bp = mbx.plan_of(case)
    td.reset(prof)
    with td.dut.locked() as e:
        e.tm_trace_start(True, [bp.egress], 0)
    streams = {td.add_source(p, bp.egress, size=bp.frame_size, frames=bp.burst_frames,
                             rate_pct=100.0, line_rate_bps=bp.rate_bps, vary=numbering(bp.frame_size),
                             name=f"burst{i}-p{p}"): p
               for i, p in enumerate(bp.ingress)}
    rows, digest = _run(td, bp.duration_ns, tick)
    with td.dut.locked() as e:
        cols = {k: np.asarray(v) for k, v in e.tm_trace_stop().items() if k != "overflow"}
    sinks = _sinks(rows, streams, bp.egress)
    mbx.sent_check(bp, sinks)
    reports, stamps, bad = tap_reports(td.take_reports())
    seen = frames_from_reports(reports)
    if not seen:
        raise RuntimeError("the taps sent no reports: are they in the path?")
    wiring = tv.wiring(td.ports)
    inf = infer(tv.on_dut_clock(seen, bp.rate_bps, td.delay_ns), wiring)
    raw = infer(seen, wiring)
    on, off = bp.burst_on("bytes"), bp.burst_off("bytes")
    fbytes, ftime = bp.frame_size - 4, frame_time_ns(bp.frame_size, bp.rate_bps)
    truth = tt.port_truth(cols, bp.egress)
    cid, port = case.case_id, bp.egress
    errors = tt.score(cid, port, inf, truth, on, off, fbytes, ftime, raw)
    gt = groundtruth.analyse(cid, groundtruth.trace_frame(cols), on, off, "bytes")
    peak_truth = float(truth.q_bytes.max()) if truth.q_bytes.size else 0.0
    peak_tap, _ = inf.peak(port)
    row = mbx.result_row(case, bp, sinks, peak_truth)
    row.update({"mode": "virtual", "instrument": "tap", "dut": "p4scope",
                "dut_title": dut_title(prof), "dut_label": dut_label(prof),
                "mean_truth_bytes": gt.mean_of(port), "peak_tap_bytes": peak_tap,
                "sim_digest": digest})
    summary = _summary(td, inf, seen, stamps, bad, truth, row, bp.rate_bps, fbytes, ftime, on, off)
    if not errors:  # no burst on either side: still one row, saying so
        errors = [{"case_id": cid, "egress_port": port, "burst_id": 0, "truth_burst_id": 0,
                   "peak_tap_bytes": peak_tap, "peak_reference_bytes": peak_truth}]
    ref_t, ref_v = truth.series()
    ref_f = _frames_series(cols, port)
    rt, rv = fg.reduce_series(ref_t, ref_v, REFERENCE_POINTS)
    return {
        "microburst": pd.DataFrame([row]),
        "streams": sinks.assign(case_id=cid, experiment=mbx.EXPERIMENT, profile=bp.profile,
                                scenario=bp.scenario, combination=bp.combination,
                                frame_size=bp.frame_size),
        "ground_truth": gt.occupancy, "ground_truth_ingress": gt.by_ingress,
        "tap_series": inf.series.assign(case_id=cid, queue=0),
        "tap_ingress": inf.by_ingress.assign(case_id=cid),
        "tap_reference": pd.DataFrame({
            "case_id": cid, "t_ns": rt.astype(np.int64), "time_ns": rt.astype(np.int64),
            "egress_port": port, "ifname": "", "backlog_bytes": rv.astype(np.int64),
            "backlog_frames": fg.step_at(*ref_f, rt).astype(np.int64)}),
        "tap_bursts": _burst_table(cid, inf, on, off, port, ref_t, ref_v),
        "tap_errors": pd.DataFrame([{**e, **summary} for e in errors]),
    }


def _frames_series(cols: dict[str, np.ndarray], port: int) -> tuple[np.ndarray, np.ndarray]:
    sel = (cols["port"] == port) & (cols["kind"] != tt.DROP)
    return (cols["time_ns"][sel].astype(float), cols["q_pkts"][sel].astype(float))


def _summary(td: tv.TappedDut, inf: Inference, seen: list, stamps: list[int], bad: int,
             truth: tt.PortTruth, row: dict, rate_bps: float, fbytes: int, ftime: float,
             on: float, off: float) -> dict[str, Any]:
    """Per case: what sets the tap's figures apart from the truth's."""
    q = td.tap_queue_stats()
    data = [s for s in q if s["port"] != pl.COLLECTOR_PORT]
    coll = [s for s in q if s["port"] == pl.COLLECTOR_PORT]
    left = inf.frames[inf.frames["fate"] == "left"]
    transit = (left["left_ns"] - left["t_ns"]).to_numpy(float)
    delay = np.array(stamps, float) - np.array([f.time_ns for f in seen], float)
    drops = inf.drops
    return {
        "reports": len(seen), "reports_lost": reports_lost(inf), "not_reports": bad,
        "collector_drops": int(sum(int(s["drop_pkts"]) for s in coll)),
        "collector_peak_frames": max((int(s["peak_pkts"]) for s in coll), default=0),
        "unknown_ns": float(sum(e - s for s, e in inf.unknown)),
        "drops_tap_frames": len(drops), "drops_tap_bytes": int(drops["frame_bytes"].sum()),
        "drops_truth_frames": truth.drop_frames, "drops_truth_bytes": truth.drop_bytes,
        "drops_tester_frames": row["lost_frames"],
        "unresolved_frames": int((inf.frames["fate"] == "unresolved").sum()),
        "strays": inf.strays,
        "tap_queue_peak_frames": max((int(s["peak_pkts"]) for s in data), default=0),
        "transit_min_ns": float(transit.min()) if transit.size else math.nan,
        "link_ns": tv.link_ns(fbytes, rate_bps, td.delay_ns), "link_delay_ns": td.delay_ns,
        "tap_held_frames": tv.tap_held(seen, rate_bps),
        "report_delay_median_ns": float(np.median(delay)) if delay.size else math.nan,
        "burst_on_bytes": on, "burst_off_bytes": off, "frame_bytes": fbytes,
        "frame_time_ns": ftime,
    }


def reports_lost(inf: Inference) -> int:
    """Reports the taps made or should have made and the capture lacks: per
    gap, the frames its cumulative counts say went unreported (a report
    dropped before the tap numbered it) or the numbers skipped, whichever
    is more."""
    return sum(max(g.lost_reports, g.lost_to_frames + g.lost_from_frames) for g in inf.gaps)


def _burst_table(cid: str, inf: Inference, on: float, off: float, port: int,
                 ref_t: np.ndarray, ref_v: np.ndarray) -> pd.DataFrame:
    from ..tap import scoring

    t = inf.bursts(on, off).assign(case_id=cid, source="tap")
    for c in ("by_ingress", "held_at_peak"):
        t[c] = [json.dumps({str(k): v for k, v in d.items()}) for d in t[c]]
    ref = scoring.reference_burst_rows(cid, port, ref_t, ref_v, on, off)
    return pd.concat([t, pd.DataFrame(ref)], ignore_index=True)


# ----- the taps and the DUT, per process ----------------------------------------------------

@dataclass
class Bench:
    """What a process measures with: the compiled DUT and tap, the DUT's
    profiles, the ports to tap."""

    dut: DutProgram
    tap: DutProgram
    profiles: dict[str, Profile]
    ports: list[int]
    flows: list[Flow]
    seed: int
    delay_ns: int = 0

    def tapped(self) -> tv.TappedDut:
        from .. import traffic

        first = next(iter(self.profiles.values()))
        return tv.TappedDut(self.dut, self.tap, first, self.ports, self.flows, seed=self.seed,
                            delay_ns=self.delay_ns, apply_profile=traffic.apply_profile)

    def measure(self, td: tv.TappedDut) -> Callable[[Case, Tick], Tables]:
        return lambda case, tick: measure(td, self.profiles[case.params["profile"]], case, tick)


_WORKER: dict[str, Any] = {}


def _worker_start(dut: Path, tap: Path, profiles: dict[str, Profile], ports: list[int],
                  flows: list[Flow], seed: int) -> None:
    from multiprocessing import util

    from ..testbed import compile_dut

    bench = Bench(compile_dut(dut), compile_dut(tap), profiles, ports, flows, seed)
    td = bench.tapped()
    td.__enter__()
    _WORKER["stop"] = util.Finalize(td, td.__exit__, exitpriority=10)
    _WORKER["measure"] = bench.measure(td)


def _worker_measure(case: Case) -> Tables:
    return _WORKER["measure"](case, lambda fraction: None)


# ----- the run ------------------------------------------------------------------------------

def execute(req: Any, tap_source: Path = TAP_SOURCE,
            echo: Callable[[str], None] = print) -> Any:
    """The run of `req` (driver.RunRequest with the microburst part): the
    cases through the DUT with the taps in its path; returns a
    driver.RunResult."""
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
    meta["instrument"] = {"mode": "the tap in the DUT's path (p4src/tap.p4): a report of "
                                  "every frame on every link, captured at its collector port",
                          "depth_unit": "bytes", "clock_step_ns": 1}
    meta["tap"] = tap_meta(req.profiles, tap)
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
                                                 flows, req.seed), _worker_measure))
        else:
            bench = Bench(dut, tap, req.profiles, ports, flows, req.seed)
            with bench.tapped() as td:
                outcome = run_cases(run, cases, bench.measure(td), derive=derive_csvs,
                                    progress=req.progress)
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


def tap_meta(profiles: dict[str, Profile], tap: DutProgram) -> dict[str, Any]:
    """run.json's `tap`: what the report's section says of the set-up."""
    names = ", ".join(profiles)
    return {
        "program": "p4src/tap.p4", "json_sha256": tap.info["json_sha256"], "mode": "virtual",
        "dut": "p4scope",
        "dut_title": ("the reference DUT (p4scope, its own traffic-manager profile: "
                      f"{names})"),
        "dut_profiles": {n: as_dict(p) for n, p in profiles.items()},
        "tap_profile": as_dict(tv.tap_profile()),
        "placement": "one tap switch on each DUT port's link: the tester's port p into the "
                     f"tap's port p, the tap's port p + {pl.DUT_SIDE} linked to the DUT's port p "
                     "at the line rate, no delay",
        "sampling": "every frame (tap_config all_frames=1)", "snap_bytes": 64,
        "clock": "virtual time: the Fabric's one event clock, shared by the taps "
                 "(ingress_timestamp_ns) and the DUT's trace",
        "reference": "the DUT's traffic-manager trace of its egress port (every enqueue, "
                     "dequeue and drop)",
        "reference_name": "the DUT's truth",
        "peak_tolerance": {"rel": tt.PEAK_TOL_REL, "frames": tt.PEAK_TOL_FRAMES},
        "time_tolerance_frames": tt.TIME_TOL_FRAMES, "share_tolerance_pp": tt.SHARE_TOL_PP,
    }


def run_cli(profiles: str, buffer_mb: float, alpha: float, cell_bytes: int, seed: int,
            sizes: Optional[str], sizes_4to1: Optional[str], burst_frames: Optional[int],
            quick: bool, results: Path, run_id: Optional[str], program: Path, progress: bool,
            report: bool, jobs: int) -> None:
    """`p4scope run microburst --instrument tap` (virtual time): the options
    checked (exit 2 naming one that is wrong), the run to its end."""
    import typer

    from .. import virtual_cli as V
    from ..driver import RunRequest
    from ..params import ParamError
    from .cli import params_from_options

    try:
        profs = V.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        mb = params_from_options("table4" if sizes is None else sizes,
                                 "esg" if sizes_4to1 is None else sizes_4to1, burst_frames, quick)
    except ParamError as e:
        V.fail(str(e))
    req = RunRequest(mbx.EXPERIMENT, profs, {mbx.EXPERIMENT: mb}, seed, results, run_id, program,
                     progress, report, jobs)
    V.run_to_end(lambda: execute(req, echo=lambda s: typer.echo(s, err=True)), program)
