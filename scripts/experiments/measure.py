"""How one case is measured on the embedded switch (the engine-facing part
of the experiments; microburst and fairness hold the plans and formulas).

Each case: reset the switch (fresh engine with the case's profile, static
forwarding, the instrument on the egress port, all over P4Runtime), start
the sources, run virtual time, then read the sinks, the ground-truth trace,
the instrument's reports (through the controller's collector) and its
counters (over P4Runtime), and turn them into the run's tables.
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

from . import fairness as fx
from . import groundtruth, instrument
from . import microburst as mbx
from .params import Profile
from .runner import Case, Tables, Tick
from .testbed import COLLECTOR_PORT, COLLECTOR_UDP, Flow, TelemetryConfig, VirtualSwitch
from .traffic import Traffic

INTERVAL_LOG2_US = 0  # 1 us intervals of occupancy maxima


def make_measure(vs: VirtualSwitch, profiles: dict[str, Profile]) -> Callable[[Case, Tick], Tables]:
    def measure(case: Case, tick: Tick) -> Tables:
        prof = profiles[case.params["profile"]]
        if case.experiment == mbx.EXPERIMENT:
            return measure_burst(vs, prof, case, tick)
        if case.experiment == fx.EXPERIMENT:
            return measure_incast(vs, prof, case, tick)
        raise ValueError(f"unknown experiment {case.experiment!r}")
    return measure


def _collector(tr: Traffic):
    from p4scope.control.apps.collector import Collector

    col = Collector(udp_port=COLLECTOR_UDP)
    col.feed_frames(data for _, data in tr.outputs(COLLECTOR_PORT))
    return col


def measure_burst(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick) -> Tables:
    bp = mbx.plan_of(case)
    tel = TelemetryConfig(bp.burst_on_bytes, bp.burst_off_bytes, INTERVAL_LOG2_US,
                          report_intervals=True, report_burst_packets=True)
    vs.reset(prof, [Flow(p, bp.egress) for p in bp.ingress], {bp.egress: tel})
    tr = Traffic(vs)
    tr.trace([bp.egress])
    for i, port in enumerate(bp.ingress):
        tr.burst(i, port, bp.egress, bp.frame_size, bp.burst_frames, start_ns=0)
    tr.run_until_idle(tick, expected_ns=bp.duration_ns)
    sinks = tr.sinks()
    mbx.sent_check(bp, sinks)
    truth = groundtruth.analyse(case.case_id, tr.trace_events(), bp.burst_on_bytes,
                                bp.burst_off_bytes)
    seen = instrument.from_collector(case.case_id, _collector(tr), INTERVAL_LOG2_US)
    t_peak = truth.peak_of(bp.egress)
    s_peak = seen.peak_bytes(bp.egress)
    row = mbx.result_row(case, bp, sinks, t_peak, s_peak)
    streams = sinks.assign(case_id=case.case_id, experiment=mbx.EXPERIMENT, profile=bp.profile,
                           scenario=bp.scenario, combination=bp.combination,
                           frame_size=bp.frame_size)
    err = instrument.error_row(case.case_id, mbx.EXPERIMENT, bp.profile, t_peak[0], s_peak,
                               truth.bursts, seen.bursts_of(bp.egress), lost=seen.lost_reports)
    return {
        "microburst": pd.DataFrame([row]), "streams": streams,
        "ground_truth": truth.occupancy, "ground_truth_ingress": truth.by_ingress,
        "burst_events": pd.concat([truth.bursts, seen.bursts], ignore_index=True),
        "instrument_series": seen.series, "instrument_errors": pd.DataFrame([err]),
    }


def measure_incast(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick) -> Tables:
    ip = fx.plan_of(case)
    limit = prof.buffer_bytes * prof.alpha / (1 + prof.alpha)
    on = int(0.1 * limit)
    tel = TelemetryConfig(on, on // 2, INTERVAL_LOG2_US, report_intervals=True,
                          report_burst_packets=False)
    vs.reset(prof, [Flow(p, ip.egress) for p in ip.ingress], {ip.egress: tel})
    tr = Traffic(vs)
    tr.trace([ip.egress])
    mix = dict(ip.mix)
    for i, port in enumerate(ip.ingress):
        tr.stream(i, port, ip.egress, mix, load=ip.load, start_ns=0, stop_ns=ip.duration_ns)
    w = ip.warmup_ns / ip.duration_ns
    tr.run_until(ip.warmup_ns, lambda f: tick(f * w))
    rx0, d0 = tr.sinks(), vs.pair_counters(ip.egress, ip.ingress)
    tr.run_until(ip.duration_ns, lambda f: tick(w + f * (1 - w)))
    rx1, d1 = tr.sinks(), vs.pair_counters(ip.egress, ip.ingress)
    window = _delta(rx1, rx0)
    streams = fx.stream_rows(case, ip, window)
    delivered = {p: (d1[p][0] - d0[p][0], d1[p][1] - d0[p][1]) for p in ip.ingress}
    inst = fx.instrument_rows(case, ip, delivered, streams)
    row = fx.case_row(case, ip, streams, inst)
    truth = groundtruth.analyse(case.case_id, tr.trace_events(), on, on // 2)
    seen = instrument.from_collector(case.case_id, _collector(tr), INTERVAL_LOG2_US)
    t_peak = truth.peak_of(ip.egress)
    err = instrument.error_row(case.case_id, fx.EXPERIMENT, ip.profile, t_peak[0],
                               seen.peak_bytes(ip.egress), truth.bursts,
                               seen.bursts_of(ip.egress),
                               float(inst["err_pp_bw"].abs().max()), seen.lost_reports)
    return {
        "fairness": pd.DataFrame([row]), "streams": streams, "instrument_shares": inst,
        "ground_truth": truth.occupancy, "ground_truth_ingress": truth.by_ingress,
        "burst_events": pd.concat([truth.bursts, seen.bursts], ignore_index=True),
        "instrument_series": seen.series, "instrument_errors": pd.DataFrame([err]),
    }


def _delta(after: pd.DataFrame, before: pd.DataFrame) -> pd.DataFrame:
    """Sink counts received between two reads (rx_* differences; the rest
    as at the end)."""
    a = after.set_index("ingress_port")
    b = before.set_index("ingress_port").reindex(a.index)
    out = a.copy()
    for c in ("rx_frames", "rx_bytes"):
        out[c] = a[c] - b[c].fillna(0)
    out["rx_frames_total"] = a["rx_frames"]
    out["rx_bytes_total"] = a["rx_bytes"]
    return out.reset_index()

