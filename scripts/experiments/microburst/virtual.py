"""A microburst case in virtual time on the embedded switch: k ports burst
N frames each at line rate into one egress port; the run goes on until
the switch is empty; sinks, ground truth and the instrument are read."""

from __future__ import annotations

import pandas as pd

from .. import groundtruth, instrument
from ..measure import InstrumentReader, depth_unit, telemetry_config
from ..params import Profile
from ..runner import Case, Tables, Tick
from ..testbed import Flow, VirtualSwitch
from ..traffic import Traffic
from . import plan as mbx


def measure_burst(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick,
                  per_packet: bool = True, reports: bool = True) -> Tables:
    """`per_packet`: a report for every packet that leaves while a burst
    lasts (else only its start and end), when reports are captured;
    `reports` False: the instrument is polled over P4Runtime instead."""
    bp = mbx.plan_of(case)
    unit = depth_unit(vs)
    on, off = bp.burst_on(unit), bp.burst_off(unit)
    vs.reset(prof, [Flow(p, bp.egress) for p in bp.ingress],
             {bp.egress: telemetry_config(reports, on, off, unit, per_packet)})
    tr = Traffic(vs)
    tr.trace([bp.egress])
    ins = InstrumentReader(vs, tr, bp.egress, unit, reports)
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
