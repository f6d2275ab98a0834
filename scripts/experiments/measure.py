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

from . import collector_port, groundtruth, instrument
from . import fairness as fx
from . import microburst as mbx
from .linerate import mix_mean_size
from .params import Profile
from .runner import Case, Tables, Tick
from .testbed import COLLECTOR_PORT, COLLECTOR_UDP, Flow, TelemetryConfig, VirtualSwitch
from .traffic import Traffic, can_capture

INTERVAL_LOG2_US = 0  # 1 us intervals of occupancy maxima (with reports)
POLL_LOG2_US = 4  # without reports: 16 us intervals, polled over P4Runtime at their ends


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
    """The collector's view of the case's captured reports, parsed at once
    (a microburst's capture holds a report per burst packet)."""
    from p4scope.control.apps.capture import collect_capture

    return collect_capture([data for _, data in tr.outputs(COLLECTOR_PORT)], COLLECTOR_UDP)


def _unit(vs: VirtualSwitch) -> str:
    """What the instrument can measure depth in on this DUT build."""
    return "bytes" if vs.program.byte_depths else "frames"


def _tel(capture: bool, on: int, off: int, unit: str, per_packet: bool) -> TelemetryConfig:
    """With reports captured: 1 us interval maxima and (for bursts) a report
    per packet while a burst lasts. Without: no reports; 16 us intervals
    whose maxima (and the burst registers) are polled over P4Runtime.
    Reports take no shared buffer (the collector port's rate and reserve,
    collector_port.py): a case measures the same with or without them."""
    if capture:
        return TelemetryConfig(on, off, INTERVAL_LOG2_US, report_intervals=True,
                               report_burst_packets=per_packet, bytes_mode=unit == "bytes")
    return TelemetryConfig(on, off, POLL_LOG2_US, report_intervals=False,
                           report_burst_packets=False, bytes_mode=unit == "bytes")


class _Instrument:
    """Reads the instrument one way or the other for one case."""

    def __init__(self, vs: VirtualSwitch, tr: Traffic, egress: int, unit: str):
        self.vs, self.tr, self.egress, self.unit = vs, tr, egress, unit
        self.captured = tr.capture(COLLECTOR_PORT)
        self.poller = None if self.captured else instrument.RegisterPoller(vs, egress, POLL_LOG2_US)

    @property
    def every_ns(self) -> int:
        return 0 if self.poller is None else self.poller.interval_ns

    @property
    def on_step(self):
        return None if self.poller is None else self.poller.poll

    def collector_within_reserve(self, prof: Profile) -> dict[str, int]:
        """The collector queue's peak; raises when reports took shared buffer."""
        with self.vs.locked() as e:
            stats = e.tm_queue_stats()
        reserved = int(prof.ports.get(COLLECTOR_PORT, {}).get("reserved_bytes", 0))
        return collector_port.check_reserve(stats, reserved, prof.cell_bytes)

    def seen(self, case_id: str) -> instrument.Seen:
        if self.poller is None:
            return instrument.from_collector(case_id, _collector(self.tr), INTERVAL_LOG2_US,
                                             self.unit)
        return self.poller.seen(case_id, self.unit)


def measure_burst(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick,
                  per_packet: bool = True) -> Tables:
    """`per_packet`: a report for every packet that leaves while a burst
    lasts (else only its start and end), when reports are captured."""
    bp = mbx.plan_of(case)
    unit = _unit(vs)
    on, off = bp.burst_on(unit), bp.burst_off(unit)
    vs.reset(prof, [Flow(p, bp.egress) for p in bp.ingress],
             {bp.egress: _tel(can_capture(), on, off, unit, per_packet)})
    tr = Traffic(vs)
    tr.trace([bp.egress])
    ins = _Instrument(vs, tr, bp.egress, unit)
    for i, port in enumerate(bp.ingress):
        tr.burst(i, port, bp.egress, bp.frame_size, bp.burst_frames, start_ns=0)
    tr.run_until_idle(tick, expected_ns=bp.duration_ns, every_ns=ins.every_ns,
                      on_step=ins.on_step)
    sinks = tr.sinks()
    mbx.sent_check(bp, sinks)
    truth = groundtruth.analyse(case.case_id, tr.trace_events(), on, off, unit)
    seen = ins.seen(case.case_id)
    row = mbx.result_row(case, bp, sinks, truth.peak_of(bp.egress)[0])
    row["mean_truth_bytes"] = truth.mean_of(bp.egress)
    row["sim_digest"] = tr.digest()
    row.update(ins.collector_within_reserve(prof))
    streams = sinks.assign(case_id=case.case_id, experiment=mbx.EXPERIMENT, profile=bp.profile,
                           scenario=bp.scenario, combination=bp.combination,
                           frame_size=bp.frame_size)
    err = instrument.error_row(case.case_id, mbx.EXPERIMENT, bp.profile, unit,
                               truth.peak_of(bp.egress, unit)[0], seen.peak(bp.egress, unit),
                               truth.bursts, seen.bursts_of(bp.egress), lost=seen.lost_reports)
    return {
        "microburst": pd.DataFrame([row]), "streams": streams,
        "ground_truth": truth.occupancy, "ground_truth_ingress": truth.by_ingress,
        "burst_events": pd.concat([truth.bursts, seen.bursts], ignore_index=True),
        "instrument_series": seen.series, "instrument_errors": pd.DataFrame([err]),
    }


def measure_incast(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick) -> Tables:
    ip = fx.plan_of(case)
    unit = _unit(vs)
    limit = prof.shared_bytes * prof.alpha / (1 + prof.alpha)
    mean = mix_mean_size(dict(ip.mix))
    on = int(0.1 * limit) if unit == "bytes" else max(2, int(0.1 * limit / prof.footprint(int(mean))))
    vs.reset(prof, [Flow(p, ip.egress) for p in ip.ingress],
             {ip.egress: _tel(can_capture(), on, on // 2, unit, per_packet=False)})
    tr = Traffic(vs)
    tr.trace([ip.egress])
    ins = _Instrument(vs, tr, ip.egress, unit)
    mix = dict(ip.mix)
    for i, port in enumerate(ip.ingress):
        tr.stream(i, port, ip.egress, mix, load=ip.load, start_ns=0, stop_ns=ip.duration_ns)
    w = ip.warmup_ns / ip.duration_ns
    tr.run_until(ip.warmup_ns, lambda f: tick(f * w), ins.every_ns, ins.on_step)
    rx0, d0 = tr.sinks(), vs.pair_counters(ip.egress, ip.ingress)
    tr.run_until(ip.duration_ns, lambda f: tick(w + f * (1 - w)), ins.every_ns, ins.on_step)
    rx1, d1 = tr.sinks(), vs.pair_counters(ip.egress, ip.ingress)
    # the sources have stopped: the queue drains, so the burst ends in the
    # trace and in the instrument's view (after the measurement window)
    tr.run_until_idle(every_ns=ins.every_ns, on_step=ins.on_step)
    window = _delta(rx1, rx0)
    streams = fx.stream_rows(case, ip, window)
    delivered = {p: (d1[p][0] - d0[p][0], d1[p][1] - d0[p][1]) for p in ip.ingress}
    inst = fx.instrument_rows(case, ip, delivered, streams)
    row = fx.case_row(case, ip, streams, inst)
    row["sim_digest"] = tr.digest()
    row.update(ins.collector_within_reserve(prof))
    truth = groundtruth.analyse(case.case_id, tr.trace_events(), on, on // 2, unit,
                                window=(ip.warmup_ns, ip.duration_ns))
    row["peak_truth_bytes"] = truth.peak_of(ip.egress)[0]
    row["mean_truth_bytes_window"] = truth.mean_of(ip.egress, window=True)
    seen = ins.seen(case.case_id)
    err = instrument.error_row(case.case_id, fx.EXPERIMENT, ip.profile, unit,
                               truth.peak_of(ip.egress, unit)[0], seen.peak(ip.egress, unit),
                               truth.bursts, seen.bursts_of(ip.egress),
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

