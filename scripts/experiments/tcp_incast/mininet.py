"""`p4scope run tcp-incast --mode mininet`: the incast cases through the
driver, their tables, and the seed-shaped CSVs.

Tables (results/<run-id>/, see results/README.md for the common files):

    incast_jobs.parquet         one row per case: job completion time, flow
                                completion times (min/median/p99/max),
                                mean and busy rates, utilization of the
                                bottleneck, retransmissions, link drops
    incast_flows.parquet        one row per flow
    incast_rate.parquet         aggregate rate over time (receiver app and
                                switch port), seconds from the common start
    instrument_series.parquet   the DUT instrument's queue reports (interval
                                maxima) of the receiver port, same time axis
    instrument_delivered.parquet  per sender: bytes the DUT delivered to the
                                receiver port (tel_delivered polls) and rates
    link_queue.parquet          the receiver link's qdisc: backlog, drops

CSVs: incast_summary.csv (the jobs), incast_rate_mbps.csv (seed 001
Figure 4's shape: time down, one column per case, Mbit/s in 100 ms),
incast_completion_s.csv (Figure 5's shape: transfer size down, switch
kinds across, job completion seconds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ...control.fabric import FabricOptions, TelemetryOptions
from ..rundir import RunDir, load_table
from ..runner import Case
from ..seedcsv import derive_csvs
from . import job as tcp_incast_job
from ..mininet.driver import EmuResult, TestbedPool, available_kinds, execute
from ..mininet.testbed import DutBuild, Testbed

CSV_FILES = {
    "incast_summary": "one row per job: completion times, rates, retransmissions",
    "incast_rate_mbps": "seed 001 Figure 4 shape: aggregate rate into the receiver over time",
    "incast_completion_s": "seed 001 Figure 5 shape: job completion time per transfer size",
}


def fabric_options(p: tcp_incast_job.IncastParams) -> FabricOptions:
    return FabricOptions(telemetry=TelemetryOptions(
        ports=(p.receiver_port,), burst_threshold=16, burst_end=4,
        interval_log2_us=tcp_incast_job.TEL_INTERVAL_LOG2_US, report_intervals=True,
        report_burst_packets=False))


def make_testbed(p: tcp_incast_job.IncastParams, kind: str, run_dir: Path, dut: DutBuild) -> Testbed:
    return Testbed(p.topology(), run_dir, dut, kind=kind, options=fabric_options(p))


def measure(p: tcp_incast_job.IncastParams, case: Case, tick: Callable[[float], None],
            pool: TestbedPool) -> dict[str, pd.DataFrame]:
    kind, size = case.params["kind"], case.params["flow_bytes"]
    tb = pool.get(kind)
    if pool.fresh:
        tcp_incast_job.warm_up(tb, p)
    job = tcp_incast_job.run_job(tb, p, size, tcp_incast_job.new_collector(), tick)
    flows = tcp_incast_job.flow_table(case, job)
    rates = tcp_incast_job.rate_table(case, job)
    q = tcp_incast_job.queue_tables(case, job, p.receiver_port)
    jobs = pd.DataFrame([tcp_incast_job.job_row(case, p, size, kind, flows, rates, job, q["link_queue"])])
    return {"incast_jobs": jobs, "incast_flows": flows, "incast_rate": rates, **q}


def rate_columns(rates: pd.DataFrame, step_s: float = 0.1) -> pd.DataFrame:
    """Receiver-side aggregate Mbit/s per `step_s`, one column per case."""
    app = rates[rates["source"] == "receiver"]
    cols = {}
    for cid, g in app.groupby("case_id", sort=False):
        b = np.floor(g["t_s"] / step_s).astype(int)
        s = g.groupby(b)["bps"].mean() / 1e6
        cols[cid] = s
    if not cols:
        return pd.DataFrame()
    df = pd.DataFrame(cols).sort_index()
    df.index = [round((i + 0.5) * step_s, 3) for i in df.index]
    df.index.name = "time_s"
    return df.reset_index()


def write_csvs(run: RunDir) -> list[str]:
    written = []
    jobs = load_table(run.path, "incast_jobs")
    if jobs is not None and not jobs.empty:
        run.write_csv("incast_summary", jobs)
        comp = jobs.pivot_table(index="flow_bytes", columns="switch", values="job_completion_s",
                                aggfunc="mean").reset_index()
        comp.insert(1, "total_bytes", comp["flow_bytes"] * int(jobs["flows"].iloc[0]))
        run.write_csv("incast_completion_s", comp)
        written += ["incast_summary", "incast_completion_s"]
    rates = load_table(run.path, "incast_rate")
    if rates is not None and not rates.empty:
        run.write_csv("incast_rate_mbps", rate_columns(rates))
        written.append("incast_rate_mbps")
    return written


def execute_incast(p: tcp_incast_job.IncastParams, results: Path, run_id: Optional[str], progress: bool,
                   report: bool, echo: Callable[[str], None] = print) -> EmuResult:
    p.check()
    kinds, skipped = available_kinds(p.kinds, echo)
    runnable = tcp_incast_job.IncastParams(**{**p.__dict__, "kinds": kinds}) if kinds else p
    cases = tcp_incast_job.plan(runnable) if kinds else []
    meta: dict[str, Any] = {
        "parameters": {"tcp_incast": tcp_incast_job.params_dict(p)}, "skipped": skipped,
        "topology": p.topology().to_dict(),
        "method": ("seed 001: 16 senders x 16 flows of one transfer size to one TCP server; "
                   "aggregate rate over time at the server, flow and job completion times"),
    }
    return execute(tcp_incast_job.EXPERIMENT, cases, meta, results, run_id,
                   lambda kind, d, dut: make_testbed(runnable, kind, d, dut),
                   lambda c, tick, pool: measure(runnable, c, tick, pool),
                   derive_csvs, progress, report, echo)
