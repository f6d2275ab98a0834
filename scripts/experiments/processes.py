"""Where a run's processes come from: its case workers (--jobs) and the
report's drawing processes are forked by one forkserver, which imported
what they use once (pandas, pyarrow, the engine, the testbed, matplotlib)
instead of each of four spawned processes importing it again (about half
a second of CPU each, while the cases already want both cores). The
forkserver is a fresh process of its own, as a spawned one is: no thread
of the run's process is copied into them. On the README's main job, three
runs each, alternated: wall 32.2-32.9 s -> 31.6-32.1 s.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import BaseContext

PRELOAD = ("pandas", "pyarrow.parquet", "p4scope_dataplane", "p4scope.control",
           "p4scope.switch.device", "p4scope.experiments.driver", "p4scope.experiments.testbed",
           "p4scope.experiments.traffic", "p4scope.experiments.plots_png")
"""What the forkserver imports before it forks (a module that fails to
import is left to the processes, which then import it as they would)."""


def context() -> BaseContext:
    """The multiprocessing context to start a run's processes with."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    return ctx
