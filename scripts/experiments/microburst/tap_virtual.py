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
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from .. import figures as fg
from .. import groundtruth
from ..linerate import frame_time_ns
from ..params import Profile, as_dict
from ..runner import Case, Tables, Tick
from ..tap import placement as pl
from ..tap import truth as tt
from ..tap import virtual as tv
from ..tap import virtual_run as vr
from ..tap.frames import TapFrames, tap_frames
from ..tap.inference import Inference, infer
from ..tap.virtual_run import TAP_SOURCE, dut_label, dut_title, reports_lost
from . import plan as mbx

FRAME_NUMBER = {"offset": 42, "width": 4, "start": 0, "step": 1, "count": 2**32}
"""The tester's frame number: the first payload bytes after Ethernet, IPv4
and UDP (engine `vary`)."""
SNAP_BYTES = 64
REFERENCE_POINTS = 4000
HOW = "the tap in virtual time"


def numbering(frame_size: int) -> list[dict[str, int]]:
    """The tester's `vary` that numbers frames of `frame_size` (FCS
    included) within the snap: none for a frame the snap holds whole."""
    return [FRAME_NUMBER] if frame_size - 4 > SNAP_BYTES else []


# ----- one case ---------------------------------------------------------------------------

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
    vr.run_fabric(td, bp.duration_ns, tick)
    rows, digest = vr.drain(td)
    with td.dut.locked() as e:
        cols = {k: np.asarray(v) for k, v in e.tm_trace_stop().items() if k != "overflow"}
    sinks = vr.sinks(rows, streams, bp.egress)
    mbx.sent_check(bp, sinks)
    seen, stamps, bad = tap_frames(td.take_reports(), pl.REPORT_UDP_PORT)
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


def _summary(td: tv.TappedDut, inf: Inference, seen: TapFrames, stamps: list[int], bad: int,
             truth: tt.PortTruth, row: dict, rate_bps: float, fbytes: int, ftime: float,
             on: float, off: float) -> dict[str, Any]:
    """Per case: what sets the tap's figures apart from the truth's."""
    q = td.tap_queue_stats()
    data = [s for s in q if s["port"] != pl.COLLECTOR_PORT]
    coll = [s for s in q if s["port"] == pl.COLLECTOR_PORT]
    left = inf.frames[inf.frames["fate"] == "left"]
    transit = (left["left_ns"] - left["t_ns"]).to_numpy(float)
    delay = np.array(stamps, float) - seen.columns["time_ns"].astype(float)
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


def _burst_table(cid: str, inf: Inference, on: float, off: float, port: int,
                 ref_t: np.ndarray, ref_v: np.ndarray) -> pd.DataFrame:
    from ..tap import scoring

    t = inf.bursts(on, off).assign(case_id=cid, source="tap")
    for c in ("by_ingress", "held_at_peak"):
        t[c] = [json.dumps({str(k): v for k, v in d.items()}) for d in t[c]]
    ref = scoring.reference_burst_rows(cid, port, ref_t, ref_v, on, off)
    return pd.concat([t, pd.DataFrame(ref)], ignore_index=True)


# ----- the run ------------------------------------------------------------------------------

def measure_case(td: tv.TappedDut, prof: Profile, case: Case, tick: Tick) -> Tables:
    """tap.virtual_run's per-case measure (module level: workers get it)."""
    return measure(td, prof, case, tick)


def execute(req: Any, tap_source: Path = TAP_SOURCE,
            echo: Callable[[str], None] = print) -> Any:
    """The run of `req` (driver.RunRequest with the microburst part): the
    cases through the DUT with the taps in its path; returns a
    driver.RunResult."""
    return vr.execute(req, measure_case, tap_meta(req.profiles), tap_source=tap_source,
                      echo=echo)


def tap_meta(profiles: dict[str, Profile]) -> dict[str, Any]:
    """run.json's `tap` (the tap program's hash added by the run): what
    the report's section says of the set-up."""
    names = ", ".join(profiles)
    return {
        "program": "p4src/tap.p4", "mode": "virtual",
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
            report: bool, jobs: int,
            live: Callable[[Callable], None] = lambda run: run(None)) -> None:
    """`p4scope run microburst --instrument tap` (virtual time): the options
    checked (exit 2 naming one that is wrong), the run to its end under
    `live` (the dashboard's wrapper: it hands the run its event hook)."""
    import typer

    from .. import virtual_cli
    from ..driver import RunRequest
    from ..params import ParamError
    from .cli import params_from_options

    try:
        profs = virtual_cli.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        mb = params_from_options("table4" if sizes is None else sizes,
                                 "esg" if sizes_4to1 is None else sizes_4to1, burst_frames, quick)
    except ParamError as e:
        virtual_cli.fail(str(e))
    live(lambda on_event: virtual_cli.run_to_end(lambda: execute(
        RunRequest(mbx.EXPERIMENT, profs, {mbx.EXPERIMENT: mb}, seed, results, run_id, program,
                   progress, report, jobs, on_event),
        echo=lambda s: typer.echo(s, err=True)), program))
