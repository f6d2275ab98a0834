"""An N:1 incast case in virtual time on the embedded switch: N ports
stream a frame-size mix at line rate into one egress port; after a
warm-up, a steady-state window is measured (per-stream rates, the
instrument's per-ingress shares); then the queue drains."""

from __future__ import annotations

import pandas as pd

from .. import groundtruth, instrument
from ..linerate import mix_mean_size
from ..measure import InstrumentReader, depth_unit, telemetry_config
from ..params import Profile
from ..runner import Case, Tables, Tick
from ..testbed import Flow, VirtualSwitch
from ..traffic import Traffic
from . import plan as fx


def measure_incast(vs: VirtualSwitch, prof: Profile, case: Case, tick: Tick) -> Tables:
    ip = fx.plan_of(case)
    unit = depth_unit(vs)
    limit = prof.shared_bytes * prof.alpha / (1 + prof.alpha)
    mean = mix_mean_size(dict(ip.mix))
    on = int(0.1 * limit) if unit == "bytes" else max(2, int(0.1 * limit / prof.footprint(int(mean))))
    vs.reset(prof, [Flow(p, ip.egress) for p in ip.ingress],
             {ip.egress: telemetry_config(True, on, on // 2, unit, per_packet=False)})
    tr = Traffic(vs)
    tr.trace([ip.egress])
    ins = InstrumentReader(vs, tr, ip.egress, unit)
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
    window = delta(rx1, rx0)
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


def delta(after: pd.DataFrame, before: pd.DataFrame) -> pd.DataFrame:
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
