"""The report's PNGs drawn in processes of their own (matplotlib holds the
GIL: threads would not help), while the report goes on with its tables
and interactive plots; the PNGs are the ones drawn in the report's own
process, byte for byte.

    with pool(jobs) as p:         # None for jobs <= 1: draw in this process
        p.submit(draw_png, drawing, path)
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional


def save_figure(fig: Any, path: Path) -> None:
    """Saves a matplotlib figure as `path` (through a temporary name, so a
    reader never sees half a PNG) and closes it."""
    import matplotlib.pyplot as plt

    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, bbox_inches="tight")
    finally:
        plt.close(fig)
    tmp.replace(path)


def draw_png(drawing: Any, path: Path) -> None:
    """Draws a report.Drawing and saves it as `path`."""
    draw = drawing.draw
    if isinstance(draw, str):
        from . import plots_png

        draw = getattr(plots_png, draw)
    save_figure(draw(*drawing.args), path)


def _ready() -> None:
    """A drawing process's start: the plotting modules imported before the
    first PNG comes; Ctrl-C is the report's process's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from . import plots_png  # noqa: F401 (matplotlib, its rcParams)


def _nothing() -> None:
    pass


MAX_PROCESSES = 4
"""A report has a dozen PNGs or so: more processes would only import."""


@contextmanager
def pool(jobs: int) -> Iterator[Optional[Any]]:
    """`jobs` drawing processes (MAX_PROCESSES at most), started at once
    (forked by processes.context()'s server, not by this process), or None when
    jobs <= 1. PNGs still being drawn when the block ends by an exception
    are dropped."""
    if jobs <= 1:
        yield None
        return
    jobs = min(jobs, MAX_PROCESSES)
    from concurrent.futures import ProcessPoolExecutor

    from .processes import context

    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=context(), initializer=_ready)
    try:
        for _ in range(jobs):  # each start needs a task: the processes import meanwhile
            ex.submit(_nothing)
        yield ex
    except BaseException:
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
