"""`p4scope run fairness --mode mininet`: the fairness cases in Mininet through the
driver, into the virtual-time runs' tables (fairness, streams,
instrument_shares; results/README.md), plus the seed-shaped CSVs with
rates in Mbit/s (Mininet links run at megabits, where Table 3's Gbps
would round to zero): table3_fairness_mbps.csv and fairness_summary.csv.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from ..experiments import seedtables as st
from ..experiments.rundir import RunDir, load_table
from ..experiments.runner import Case
from . import fairness as F
from .driver import EmuResult, TestbedPool, available_kinds, execute
from .incast import ping_receiver
from .testbed import DutBuild, Testbed

CSV_FILES = {
    "table3_fairness_mbps": "seed 000 Table 3's shape: per-stream Mbit/s (layer 1) per combination",
    "fairness_summary": "Jain's index, max/min share, bandwidth vs packet-rate share per case",
}


def table3_mbps(streams: pd.DataFrame) -> st.Rows:
    """Seed 000 Table 3's shape with per-stream Mbit/s (layer 1)."""
    s = streams.copy()
    s["gbps_l1"] = s["gbps_l1"] * 1000
    rows = st.table3_fairness(s, digits=3)
    return [[c.replace("Gbps", "Mbit/s") if isinstance(c, str) else c for c in r] for r in rows]


def write_csvs(run: RunDir) -> list[str]:
    written = []
    streams = load_table(run.path, "streams")
    if streams is not None and not streams.empty:
        run.write_csv("table3_fairness_mbps", table3_mbps(streams))
        written.append("table3_fairness_mbps")
    fair = load_table(run.path, "fairness")
    if fair is not None and not fair.empty:
        run.write_csv("fairness_summary", st.fairness_summary(fair))
        written.append("fairness_summary")
    run.meta["seed_tables"] = {k: CSV_FILES[k] for k in written}
    return written


def measure(p: F.MnFairnessParams, case: Case, tick: Callable[[float], None],
            pool: TestbedPool) -> dict[str, pd.DataFrame]:
    tb = pool.get(case.params["profile"])
    if pool.fresh:
        warm_up(tb, p)
    return F.measure(p, case, tick, tb)


def warm_up(tb: Testbed, p: F.MnFairnessParams) -> None:
    """ARP and learning before the first case: a ping from every sender."""
    ping_receiver(tb, p.senders, f"h{p.egress}")


def execute_fairness(p: F.MnFairnessParams, results: Path, run_id: Optional[str],
                     progress: bool, report: bool,
                     echo: Callable[[str], None] = print) -> EmuResult:
    p.check()
    kinds, skipped = available_kinds(p.kinds, echo)
    runnable = F.MnFairnessParams(**{**p.__dict__, "kinds": kinds}) if kinds else p
    cases = F.plan(runnable) if kinds else []
    meta: dict[str, Any] = {
        "parameters": {"fairness_mininet": F.params_dict(p)}, "skipped": skipped,
        "topology": p.topology().to_dict(),
        "method": ("seed 000 Table 3: N senders each offer line rate of the Tolly iMIX to one "
                   "receiver port; per-stream rate and share over the steady-state window"),
    }
    return execute("fairness-mininet", cases, meta, results, run_id,
                   lambda kind, d, dut: Testbed(runnable.topology(), d, dut, kind=kind),
                   lambda c, tick, pool: measure(runnable, c, tick, pool),
                   write_csvs, progress, report, echo)
