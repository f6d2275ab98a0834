"""Worker functions for the runner's worker-process tests (spawned workers
import them by name, so they live in a module, not in a test)."""

from __future__ import annotations

import os
import time

import pandas as pd

STATE: dict = {}

HELPERS = ("resource_tracker", "forkserver")


def run_processes() -> list:
    """This process's descendants but multiprocessing's helpers, which live
    as long as this process by design: its resource tracker and the
    forkserver a run's processes are forked from (experiments/processes.py;
    those processes, the forkserver's children, do count)."""
    import psutil

    me = psutil.Process()
    helpers = {c.pid for c in me.children() if any(h in " ".join(c.cmdline()) for h in HELPERS)}
    return [c for c in me.children(recursive=True) if c.pid not in helpers]


def start(tag: str) -> None:
    if tag == "broken":
        raise OSError("no switch here")
    STATE["tag"] = tag


def measure(case) -> dict:
    if case.params.get("fail"):
        raise RuntimeError(f"boom in {case.case_id}")
    time.sleep(case.params.get("sleep", 0.0))
    return {"rows": pd.DataFrame([{"case_id": case.case_id, "tag": STATE["tag"],
                                   "pid": os.getpid()}])}


def measure_in_turn(case) -> dict:
    """The case's turn in its worker (0: the first it measured)."""
    turn = STATE["turns"] = STATE.get("turns", -1) + 1
    return {"rows": pd.DataFrame([{"case_id": case.case_id, "turn": turn}])}


def measure_chained(case) -> dict:
    """Stores two trial rows as it goes (runner.worker_store), then its row:
    the case its worker measured before it in its chain ("" for none)."""
    from p4scope.experiments.runner import worker_store

    key = ("chain", case.chain)
    before = STATE.get(key, "") if case.chain is not None else ""
    STATE[key] = case.case_id
    time.sleep(case.params.get("sleep", 0.0))
    worker_store("trials", pd.DataFrame([{"case_id": case.case_id, "trial": k} for k in range(2)]))
    if case.params.get("fail"):
        raise RuntimeError(f"boom in {case.case_id}")
    return {"rows": pd.DataFrame([{"case_id": case.case_id, "before": before,
                                   "pid": os.getpid()}])}
