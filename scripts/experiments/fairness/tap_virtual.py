"""`p4scope run fairness --instrument tap` in virtual time: the N:1
incast cases (plan.py: N ports stream the iMIX at line rate into one
port) through the reference DUT with its own traffic-manager profile,
a tap switch on each of its links (experiments.tap.virtual), all in one
engine Fabric; per case, over the steady-state window:

* fairness's own tables as without the tap (fairness, streams, Table 3)
  with the DUT named in every row; `instrument_shares` are the taps'
  (what they saw leave by the congested port, per ingress port), against
  the sinks' as the DUT's instrument is;
* the DUT's ground truth (ground_truth, ground_truth_ingress);
* tap_shares: per ingress port, the share of what the congested port
  sent (bandwidth and packet rate), of its queue (time-weighted) and the
  drops, the taps' against the DUT's trace (tap.shares), and tap_errors:
  per case the bars (shares within 1 pp, ...) and what sets the figures
  apart;
* with a report of every frame (the default) the inferred queue too:
  tap_series, tap_ingress, and tap_reference (the DUT's trace, reduced).

Fairness cases are long: a tap reports every frame it passes, so the
reports are as many as the frames (N × 25 Mpps at 100 Gb/s of iMIX) and
the inference takes about as long per report as the engine per frame.
So with every frame the default window is shorter (TAP_DURATION_US with
TAP_WARMUP_US: enough for a 16 MB buffer to fill at 3:1); with
`sample_log2_us` n the taps report the first frame of every 2^n us in
each direction and the run keeps fairness's window: the delivered shares
are then estimated from the samples (their standard error stated), the
occupancy not inferred.

The tester numbers its frames within the tap's 64-byte snap in two 16-bit
fields that count modulo 65536 and 65521 (MIX_NUMBER: the first payload
bytes and the IPv4 identification, whose checksum the tester
recomputes), so each frame of a stream is told apart from the others for
4 × 10^9 frames, and a 64-byte frame still holds the tester's tag.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from .. import figures as fg
from .. import groundtruth
from ..params import Profile, as_dict
from ..runner import Case, Tables, Tick
from ..tap import placement as pl
from ..tap import shares as sh
from ..tap import truth as tt
from ..tap import virtual as tv
from ..tap import virtual_run as vr
from ..tap.frames import tap_frames
from ..tap.inference import Inference, find_gaps, infer
from ..traffic import _weights as engine_weights
from . import plan as fx
from .virtual import delta

MIX_NUMBER = [{"offset": 42, "width": 2, "start": 0, "step": 1, "count": 2**16},
              {"offset": 18, "width": 2, "start": 0, "step": 1, "count": 65521}]
TAP_DURATION_US = 600.0
TAP_WARMUP_US = 400.0
REFERENCE_POINTS = 4000
SERIES_POINTS = 20000
"""Per case and series stored (figures.reduce_series keeps every peak and
trough): the inferred queue changes at every frame."""


def measure(td: tv.TappedDut, prof: Profile, case: Case, tick: Tick) -> Tables:
    """One case through the DUT with `prof`, the taps in its path."""
    ip = fx.plan_of(case)
    port, cid = ip.egress, case.case_id
    td.reset(prof)
    with td.dut.locked() as e:
        e.tm_trace_start(True, [port], 0)
    streams = {td.add_source(p, port, weights=engine_weights(dict(ip.mix)),
                             rate_pct=100.0 * ip.load, start_ns=0, duration_ns=ip.duration_ns,
                             line_rate_bps=ip.rate_bps, vary=MIX_NUMBER,
                             name=f"stream{i}-p{p}"): p
               for i, p in enumerate(ip.ingress)}
    w = ip.warmup_ns / ip.duration_ns
    vr.run_fabric(td, ip.warmup_ns, tick, 0.0, 0.6 * w)
    rx0 = vr.sinks(vr.stream_rows(td), streams, port)
    vr.run_fabric(td, ip.duration_ns, tick, 0.6 * w, 0.6 * (1 - w))
    rx1 = vr.sinks(vr.stream_rows(td), streams, port)
    rows, digest = vr.drain(td)
    tick(0.65)
    with td.dut.locked() as e:
        cols = {k: np.asarray(v) for k, v in e.tm_trace_stop().items() if k != "overflow"}
    seen, stamps, bad = tap_frames(td.take_reports(), pl.REPORT_UDP_PORT)
    if not seen:
        raise RuntimeError("the taps sent no reports: are they in the path?")
    tick(0.75)
    window = (float(ip.warmup_ns), float(ip.duration_ns))
    on_dut = tv.on_dut_clock(seen, ip.rate_bps, td.delay_ns)
    wiring = tv.wiring(td.ports)
    truth = tt.port_truth(cols, port)
    sampled = td.sample_log2_us is not None
    inf: Optional[Inference] = None
    if sampled:
        tap = sh.sampled_delivered(on_dut, wiring, port, window)
        tap_q: dict[int, float] = {}
        tap_drop = None
        peak_tap = mean_tap = math.nan
    else:
        inf = infer(on_dut, wiring)
        tick(0.9)
        tap = sh.tap_delivered(inf, port, window)
        tap_q = tt.shares(tt.tap_ingress(inf, port), *window)
        tap_drop = sh.tap_drops(inf, port, window)
        s = inf.port_series(port)
        t, v = s["t_ns"].to_numpy(float), s["occupancy_bytes"].to_numpy(float)
        peak_tap = _peak_within(t, v, window)
        mean_tap = fg.time_weighted_mean(t, v, *window) if t.size else math.nan
    tt_, tv_ = truth.series()
    peak_ref = _peak_within(tt_, tv_, window, truth.peak_within(*window))
    mean_ref = fg.time_weighted_mean(tt_, tv_, *window) if tt_.size else math.nan
    share = sh.share_rows(cid, port, list(ip.ingress), tap, sh.truth_delivered(cols, port, window),
                          tap_q, tt.shares(truth.by_ingress, *window), tap_drop,
                          sh.truth_drops(cols, port, window))
    largest = max(s for s, _ in ip.mix) - 4
    checks = sh.case_checks(share, (peak_tap, peak_ref), (mean_tap, mean_ref), largest, sampled)
    sink_rows = fx.stream_rows(case, ip, delta(rx1, rx0))
    inst = fx.instrument_rows(case, ip, {p: (tap.bytes.get(p, 0.0), tap.frames.get(p, 0.0))
                                         for p in ip.ingress}, sink_rows)
    row = fx.case_row(case, ip, sink_rows, inst)
    limit = prof.shared_bytes * prof.alpha / (1 + prof.alpha)
    on = int(0.1 * limit)
    gt = groundtruth.analyse(cid, groundtruth.trace_frame(cols), on, on // 2, "bytes",
                             window=(ip.warmup_ns, ip.duration_ns))
    row.update({"mode": "virtual", "instrument": "tap", "dut": "p4scope",
                "dut_title": vr.dut_title(prof), "dut_label": vr.dut_label(prof),
                "sim_digest": digest, "peak_truth_bytes": gt.peak_of(port)[0],
                "mean_truth_bytes_window": gt.mean_of(port, window=True),
                "tap_share_error_pp": checks["delivered_share_error_pp"]})
    summary = {
        "case_id": cid, "egress_port": port, "profile": ip.profile, "n": ip.n,
        "combination": ip.combination, "window_start_ns": window[0], "window_end_ns": window[1],
        "sample_interval_us": 2 ** td.sample_log2_us if sampled else 0,
        "samples": tap.k if sampled else math.nan,
        "bw_standard_error_max_pp": float(np.nanmax(share["bw_standard_error_pp"]))
        if sampled and share["bw_standard_error_pp"].notna().any() else math.nan,
        "peak_tap_bytes": peak_tap, "peak_reference_bytes": peak_ref,
        "mean_tap_bytes": mean_tap, "mean_reference_bytes": mean_ref,
        **checks, **_reports(td, inf, seen, bad, ip.rate_bps, largest),
    }
    out: Tables = {
        "fairness": pd.DataFrame([row]), "streams": sink_rows, "instrument_shares": inst,
        "ground_truth": gt.occupancy, "ground_truth_ingress": gt.by_ingress,
        "tap_shares": share, "tap_errors": pd.DataFrame([summary]),
    }
    if inf is not None:
        out.update(_series_tables(cid, port, inf, truth, cols))
    tick(1.0)
    return out


def _peak_within(t: np.ndarray, v: np.ndarray, window: tuple[float, float],
                 inside: float = math.nan) -> float:
    """The most a step series held in the window: its values there, the
    one holding at its start, and `inside` (the truth's every record)."""
    if not t.size:
        return inside
    values = v[(t >= window[0]) & (t < window[1])]
    return float(np.nanmax(np.concatenate([values, fg.step_at(t, v, [window[0]]), [inside]])))


def _reports(td: tv.TappedDut, inf: Optional[Inference], seen: list, bad: int, rate_bps: float,
             largest: int) -> dict[str, Any]:
    """Per case: the reports, those lost (every frame: by the cumulative
    counts; sampled: by the sequence numbers), the taps' own queues, the
    link time taken off, the frames a tap's port held."""
    q = td.tap_queue_stats()
    coll = [s for s in q if s["port"] == pl.COLLECTOR_PORT]
    data = [s for s in q if s["port"] != pl.COLLECTOR_PORT]
    lost = vr.reports_lost(inf) if inf is not None else sum(g.lost_reports for g in find_gaps(seen))
    return {
        "reports": len(seen), "reports_lost": lost, "not_reports": bad,
        "collector_drops": int(sum(int(s["drop_pkts"]) for s in coll)),
        "tap_queue_peak_frames": max((int(s["peak_pkts"]) for s in data), default=0),
        "unresolved_frames": int((inf.frames["fate"] == "unresolved").sum()) if inf is not None
        else math.nan,
        "strays": inf.strays if inf is not None else math.nan,
        "link_ns": tv.link_ns(largest, rate_bps, td.delay_ns), "link_delay_ns": td.delay_ns,
        "tap_held_frames": tv.tap_held(seen, rate_bps), "frame_bytes": largest,
    }


def _series_tables(cid: str, port: int, inf: Inference, truth: tt.PortTruth,
                   cols: dict[str, np.ndarray]) -> Tables:
    """The inferred queue (reduced per time bin, as the truth's reference
    is: a fairness case changes it at every frame) and the DUT's trace."""
    series, ingress = [], []
    for p, g in inf.series.groupby("egress_port"):
        t, v = fg.reduce_series(g["t_ns"].to_numpy(float), g["occupancy_bytes"].to_numpy(float),
                                SERIES_POINTS)
        series.append(pd.DataFrame({
            "t_ns": t, "egress_port": p, "occupancy_bytes": v,
            "occupancy_frames": fg.step_at(g["t_ns"].to_numpy(float),
                                           g["occupancy_frames"].to_numpy(float), t),
            "valid": fg.step_at(g["t_ns"].to_numpy(float),
                                g["valid"].astype(float).to_numpy(), t).astype(bool)}))
    for (e, i), g in inf.by_ingress.groupby(["egress_port", "ingress_port"]):
        t, v = fg.reduce_series(g["t_ns"].to_numpy(float), g["occupancy_bytes"].to_numpy(float),
                                SERIES_POINTS)
        ingress.append(pd.DataFrame({"t_ns": t, "egress_port": e, "ingress_port": i,
                                     "occupancy_bytes": v}))
    rt, rv = fg.reduce_series(*truth.series(), REFERENCE_POINTS)
    sel = (cols["port"] == port) & (cols["kind"] != tt.DROP)
    frames = fg.step_at(cols["time_ns"][sel].astype(float), cols["q_pkts"][sel].astype(float), rt)
    return {
        "tap_series": _concat(series).assign(case_id=cid, queue=0),
        "tap_ingress": _concat(ingress).assign(case_id=cid),
        "tap_reference": pd.DataFrame({
            "case_id": cid, "t_ns": rt.astype(np.int64), "time_ns": rt.astype(np.int64),
            "egress_port": port, "ifname": "", "backlog_bytes": rv.astype(np.int64),
            "backlog_frames": frames.astype(np.int64)}),
    }


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# ----- the run ------------------------------------------------------------------------------

def measure_case(td: tv.TappedDut, prof: Profile, case: Case, tick: Tick) -> Tables:
    """tap.virtual_run's per-case measure (module level: workers get it)."""
    return measure(td, prof, case, tick)


def tap_meta(profiles: dict[str, Profile], sample_log2_us: Optional[int]) -> dict[str, Any]:
    """run.json's `tap`: what the report's section says of the set-up."""
    names = ", ".join(profiles)
    every = sample_log2_us is None
    return {
        "program": "p4src/tap.p4", "mode": "virtual", "dut": "p4scope",
        "dut_title": f"the reference DUT (p4scope, its own traffic-manager profile: {names})",
        "dut_profiles": {n: as_dict(p) for n, p in profiles.items()},
        "tap_profile": as_dict(tv.tap_profile()),
        "placement": "one tap switch on each DUT port's link: the tester's port p into the "
                     f"tap's port p, the tap's port p + {pl.DUT_SIDE} linked to the DUT's port p "
                     "at the line rate, no delay",
        "sampling": "every frame (tap_config all_frames=1)" if every else
                    f"the first frame of every {2 ** sample_log2_us} us in each direction "
                    f"(tap_config interval_log2_us={sample_log2_us})",
        "sample_interval_us": 0 if every else 2 ** sample_log2_us,
        "snap_bytes": 64,
        "clock": "virtual time: the Fabric's one event clock, shared by the taps "
                 "(ingress_timestamp_ns) and the DUT's trace",
        "reference": "the DUT's traffic-manager trace of its egress port (every enqueue, "
                     "dequeue and drop)",
        "reference_name": "the DUT's truth",
        "share_tolerance_pp": sh.SHARE_TOL_PP,
        "peak_tolerance": {"rel": tt.PEAK_TOL_REL, "frames": tt.PEAK_TOL_FRAMES},
    }


def execute(req: Any, sample_log2_us: Optional[int] = None,
            echo: Callable[[str], None] = print) -> Any:
    """The run of `req` (driver.RunRequest with the fairness part): the
    cases through the DUT with the taps in its path; returns a
    driver.RunResult."""
    return vr.execute(req, measure_case, tap_meta(req.profiles, sample_log2_us),
                      sample_log2_us=sample_log2_us, echo=echo)


def run_cli(req: Any, sample_log2_us: Optional[int], program: Path,
            live: Callable[[Callable[[Optional[Callable[[Any], None]]], None]], None]) -> None:
    """Runs `req` to its end (exit codes as every run's), under `live` (the
    dashboard's wrapper: it hands the run its event hook)."""
    import typer

    from .. import virtual_cli

    def run(on_event: Optional[Callable[[Any], None]]) -> None:
        observed = replace(req, on_event=on_event)
        virtual_cli.run_to_end(lambda: execute(observed, sample_log2_us,
                                               echo=lambda s: typer.echo(s, err=True)), program)
    live(run)
