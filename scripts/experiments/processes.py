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
import multiprocessing.pool
from multiprocessing.context import BaseContext

PRELOAD = ("pandas", "pyarrow.parquet", "p4scope_dataplane", "p4scope.control",
           "p4scope.switch.device", "p4scope.experiments.driver", "p4scope.experiments.testbed",
           "p4scope.experiments.traffic", "p4scope.experiments.plots_png", "p4scope.cli")
"""What the forkserver imports before it forks (a module that fails to
import is left to the processes, which then import it as they would).
p4scope.cli: each process runs the run's main script again (as spawn's
do), and the `p4scope` script imports the command line (0.1-0.2 s each)."""


def context() -> BaseContext:
    """The multiprocessing context to start a run's processes with."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    return ctx


def start_server() -> None:
    """Starts context()'s forkserver now, so it imports PRELOAD while this
    process goes on (the main job: imports its commands, compiles the P4
    programs) rather than when the first process is asked of it."""
    from multiprocessing import forkserver

    context()
    forkserver.ensure_running()


class Pool(multiprocessing.pool.Pool):
    """multiprocessing's Pool, but its worker-keeping thread does not wake
    for results. CPython's waits on the result pipe too, so while a large
    result is read (a case's tables: tens of MB) the pipe stays readable
    and that thread spins, checking every worker: 1.3 s of CPU in the
    README's main job, taken from the cases. It still wakes when a worker
    ends, on close() and terminate(), and when the last task is done (the
    task cache tells it), which is all it acts on."""

    def _get_sentinels(self) -> list:
        return [self._change_notifier._reader]


def pool(processes: int, initializer, initargs: tuple) -> Pool:
    """`processes` workers forked by context()'s server."""
    return Pool(processes, initializer, initargs, context=context())
