"""`p4scope run microburst --instrument tap --dut bridge --mode mininet`:
the microburst cases of the Mininet run (mininet.py: k senders burst N
frames each at line rate into one port) through another switch, the tap
on every one of its links (experiments.tap.placement), and per case:

* the microburst and streams tables as without the tap (Tolly's
  buffered = forwarded - N), the DUT named in every row (`dut`);
* the DUT's egress queue as the tap infers it (inference.py) on the tap's
  clock (experiments.tap.inference): occupancy over time (tap_series), split by ingress port
  (tap_ingress), the bursts with their culprits and the frames the DUT
  dropped (tap_bursts, source "tap");
* the reference: the backlog of the DUT's egress qdisc (htb over a pfifo
  on its port towards the receiver), read every REFERENCE_PERIOD_S
  (topologies.qdisc) and put on the tap's clock (tap_reference; its
  bursts in tap_bursts, source "reference");
* the tap against the reference, burst by burst (tap_errors, tap.scoring),
  with what sets the figures apart: reports lost, the capture's drops,
  the clock offset and the fastest transit through the DUT.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ..mininet import cli as mininet_cli
from ..mininet.driver import EmuResult, TestbedPool, execute
from ..mininet.shape import ping_receiver
from ..mininet.testbed import ROOT, DutBuild, build_dut
from ..params import ParamError, parse_int_list
from ..runner import Case
from ..seedcsv import derive_csvs
from ..tap import placement as pl
from ..tap import scoring
from ..tap.frames import tap_frames
from ..tap.inference import infer
from ..tap.testbed import TapTestbed
from . import mininet as mm
from . import plan as mbx

TAP_SOURCE = ROOT / "p4src" / "tap.p4"
REFERENCE_PERIOD_S = 0.005
DUT_TITLES = {"bridge": "the Linux bridge", "p4scope": "the reference DUT in p4scope switch"}
DUT_LABELS = {"bridge": "Linux bridge", "p4scope": "p4scope switch (reference DUT)"}
HOW = "the tap in Mininet"
def dut_title(dut: str) -> str:
    return DUT_TITLES.get(dut, dut)


def measure(p: mm.MnBurstParams, dut: str, case: Case, tick: Callable[[float], None],
            tb: TapTestbed) -> dict[str, pd.DataFrame]:
    bp = mbx.plan_of(case)
    with tb.reports() as got:
        sinks, samples = mm.burst_through(tb, bp, [tb.dut_ifname(bp.egress)], tick,
                                          REFERENCE_PERIOD_S)
    frames, stamps, bad = tap_frames(got.frames, pl.REPORT_UDP_PORT)
    if not frames:
        raise RuntimeError("the tap sent no reports: is it in the path?")
    # the tap's clock onto the wall clock: the report that reached the collector port fastest
    offset = int((np.array(stamps, dtype=np.int64) - frames.columns["time_ns"]).min())
    inf = infer(frames, pl.wiring(tb.plan))
    on, off = bp.burst_on("bytes"), bp.burst_off("bytes")
    bursts = inf.bursts(on, off)
    ref_t = np.array([s.time_ns - offset for s in samples], dtype=float)
    ref_v = np.array([s.backlog_bytes for s in samples], dtype=float)
    port = bp.egress
    cid = case.case_id
    errors = scoring.score(cid, port, inf.port_series(port), bursts[bursts["egress_port"] == port],
                           ref_t, ref_v, REFERENCE_PERIOD_S * 1e9, on, off, bp.frame_size - 4)
    left = inf.frames[inf.frames["fate"] == "left"]
    transit = (left["left_ns"] - left["t_ns"]).to_numpy(float)
    drops = inf.drops
    peak_ref = float(ref_v.max()) if ref_v.size else 0.0
    peak_tap, _ = inf.peak(port)
    row = mbx.result_row(case, bp, sinks, peak_ref)
    row.update({
        "mode": "mininet", "instrument": "tap", "dut": dut, "dut_title": dut_title(dut),
        "dut_label": DUT_LABELS.get(dut, dut), "link_mbps": bp.rate_bps / 1e6, "queue_packets": p.queue_packets,
        "peak_link_backlog_frames": max((s.qlen for s in samples), default=0),
        "peak_tap_bytes": peak_tap,
    })
    summary = {
        "reports": len(frames), "reports_lost": inf.lost_reports,
        "capture_drops": got.drops, "not_reports": bad,
        "unknown_ns": float(sum(e - s for s, e in inf.unknown)),
        "drops_tap_frames": len(drops), "drops_tap_bytes": int(drops["frame_bytes"].sum()),
        "drops_tester_frames": row["lost_frames"],
        "unresolved_frames": int((inf.frames["fate"] == "unresolved").sum()),
        "strays": inf.strays, "clock_offset_ns": float(offset),
        "transit_min_ns": float(transit.min()) if transit.size else math.nan,
        "report_delay_median_ns": float(np.median(np.array(stamps, float) - offset
                                                  - np.array([f.time_ns for f in frames], float))),
        "reference_period_ns": REFERENCE_PERIOD_S * 1e9,
        "reference_interval_median_ns": (float(np.median(np.diff([s.time_ns for s in samples])))
                                         if len(samples) > 1 else math.nan),
        "burst_on_bytes": on,
        "burst_off_bytes": off, "frame_bytes": bp.frame_size - 4,
    }
    if not errors:  # no burst found: still one row, saying so
        errors = [{"case_id": cid, "egress_port": port, "burst_id": 0,
                   "peak_tap_bytes": peak_tap, "peak_reference_bytes": peak_ref}]
    return {
        "microburst": pd.DataFrame([row]),
        "streams": sinks.assign(case_id=cid, experiment=mbx.EXPERIMENT, profile=bp.profile,
                                scenario=bp.scenario, combination=bp.combination,
                                frame_size=bp.frame_size),
        "tap_series": inf.series.assign(case_id=cid, queue=0),
        "tap_ingress": inf.by_ingress.assign(case_id=cid),
        "tap_reference": pd.DataFrame({
            "case_id": cid, "t_ns": ref_t.astype(np.int64),
            "time_ns": [s.time_ns for s in samples], "egress_port": port,
            "ifname": [s.ifname for s in samples], "backlog_bytes": ref_v.astype(np.int64),
            "backlog_frames": [s.qlen for s in samples]}),
        "tap_bursts": _burst_table(cid, bursts, scoring.reference_burst_rows(
            cid, port, ref_t, ref_v, on, off)),
        "tap_errors": pd.DataFrame([{**e, **summary} for e in errors]),
    }


def _burst_table(case_id: str, tap: pd.DataFrame, reference: list[dict]) -> pd.DataFrame:
    t = tap.assign(case_id=case_id, source="tap")
    for c in ("by_ingress", "held_at_peak"):
        t[c] = [json.dumps({str(k): v for k, v in d.items()}) for d in t[c]]
    return pd.concat([t, pd.DataFrame(reference)], ignore_index=True)


# ----- the run --------------------------------------------------------------------------

def measure_case(p: mm.MnBurstParams, dut: str, case: Case, tick: Callable[[float], None],
                 pool: TestbedPool) -> dict[str, pd.DataFrame]:
    tb = pool.get(case.params["profile"])
    if pool.fresh:  # ARP and the DUT's learning, through the tap
        ping_receiver(tb, p.senders, f"h{p.egress}")
    return measure(p, dut, case, tick, tb)


def execute_tap_microburst(p: mm.MnBurstParams, dut: str, results: Path, run_id: Optional[str],
                           progress: bool, report: bool,
                           echo: Callable[[str], None] = print) -> EmuResult:
    """The run: the microburst cases through `dut` with the tap around it."""
    p.check()
    if dut not in pl.DUT_KINDS:
        raise ValueError(f"--dut {dut}: the tap runs around {' or '.join(pl.DUT_KINDS)} here")
    builds: dict[str, DutBuild] = {}

    def topology(tap_json: str = "build/tap.json", dut_json: Optional[str] = None):
        return pl.tapped_incast(p.senders, p.link_bw, p.queue_packets, dut, tap_json, dut_json)

    def make(kind: str, d: Path, dut_build: DutBuild) -> TapTestbed:
        run_path = d.parents[1]
        if "tap" not in builds:
            builds["tap"] = build_dut(run_path / "build", TAP_SOURCE)
        topo = topology(str(builds["tap"].json_path), str(dut_build.json_path))
        return TapTestbed(topo, d, kind, builds["tap"], dut_build)

    meta: dict[str, Any] = {
        "parameters": {"microburst_mininet": mm.params_dict(p)}, "skipped": {},
        "topology": topology().to_dict(),
        "method": ("seed 000 (2:1) and seed 001 (4:1): k senders each burst N frames at line "
                   "rate to one port; buffered = forwarded - N (Tolly); the DUT's egress queue "
                   "inferred by the tap in its path, against its qdisc's backlog"),
        "tap": {"program": "p4src/tap.p4", "dut": dut, "dut_title": dut_title(dut),
                "sampling": "every frame (tap_config all_frames=1)",
                "snap_bytes": 64, "clock": "the tap switch's nanosecond clock (p4scope "
                "ingress_timestamp_ns: since the tap started, one clock for every tapped link)",
                "reference": f"tc -s qdisc of the DUT's port towards the receiver, every "
                             f"{REFERENCE_PERIOD_S * 1e3:g} ms",
                "peak_tolerance": {"rel": scoring.PEAK_TOL_REL,
                                   "frames": scoring.PEAK_TOL_FRAMES}},
    }
    cases = mm.plan(p, (dut,), HOW)
    return execute("microburst-mininet", cases, meta, results, run_id, make,
                   lambda c, tick, pool: measure_case(p, dut, c, tick, pool),
                   derive_csvs, progress, report, echo)


def run_cli(dut: str, sizes: str, sizes_4to1: str, link_bw: str, queue_packets: int,
            burst_frames: Optional[int], results: Path, run_id: Optional[str], progress: bool,
            report: bool) -> None:
    """`p4scope run microburst --instrument tap --dut DUT --mode mininet`."""
    try:
        p = mm.MnBurstParams(
            sizes_2to1=tuple(parse_int_list(sizes, "--sizes")),
            sizes_4to1=() if sizes_4to1 == "none" else tuple(parse_int_list(sizes_4to1, "--sizes-4to1")),
            link_bw=link_bw, queue_packets=queue_packets, burst_frames=burst_frames).check()
    except ParamError as e:
        mininet_cli.fail(str(e))

    def run(params: Any, results: Path, run_id: Optional[str], progress: bool, report: bool,
            echo: Callable[[str], None] = print) -> EmuResult:
        return execute_tap_microburst(params, dut, results, run_id, progress, report, echo)

    mininet_cli.execute_in_mininet("microburst-mininet", run, p, results, run_id, progress, report)
