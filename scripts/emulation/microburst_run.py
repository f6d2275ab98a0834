"""`p4scope run microburst --mode mininet`: the microburst cases in Mininet through
the driver, into the virtual-time runs' `microburst` and `streams` tables
and their seed-shaped CSVs (Table 4 in MB and frames, the 4:1 figure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from ..experiments.runner import Case
from ..experiments.seedcsv import write_seed_csvs
from . import microburst as M
from .driver import EmuResult, TestbedPool, available_kinds, execute
from .testbed import Testbed


def measure(p: M.MnBurstParams, case: Case, tick: Callable[[float], None],
            pool: TestbedPool) -> dict[str, pd.DataFrame]:
    tb = pool.get(case.params["profile"])
    if pool.fresh:
        rcv = tb.host(f"h{p.egress}")
        for i in range(1, p.senders + 1):
            out = tb.host(f"h{i}").cmd(f"ping -c 2 -i 0.2 -W 2 {rcv.IP()}")
            if " 0% packet loss" not in out and " 50% packet loss" not in out:
                raise RuntimeError(f"h{i} cannot reach the receiver through the DUT: {out}")
    return M.measure(p, case, tick, tb)


def execute_microburst(p: M.MnBurstParams, results: Path, run_id: Optional[str],
                       progress: bool, report: bool,
                       echo: Callable[[str], None] = print) -> EmuResult:
    p.check()
    kinds, skipped = available_kinds(p.kinds, echo)
    runnable = M.MnBurstParams(**{**p.__dict__, "kinds": kinds}) if kinds else p
    cases = M.plan(runnable) if kinds else []
    meta: dict[str, Any] = {
        "parameters": {"microburst_mininet": M.params_dict(p)}, "skipped": skipped,
        "topology": p.topology().to_dict(),
        "method": ("seed 000 (2:1) and seed 001 (4:1): k senders each burst N frames at line "
                   "rate to one port; buffered = forwarded - N (Tolly)"),
    }
    return execute("microburst-mininet", cases, meta, results, run_id,
                   lambda kind, d, dut: Testbed(runnable.topology(), d, dut, kind=kind),
                   lambda c, tick, pool: measure(runnable, c, tick, pool),
                   write_seed_csvs, progress, report, echo)
