"""The options every `p4scope run` command takes, whatever its mode: where
the run folder goes, its name, progress and report."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Optional

import typer

from .rundir import MAX_RUN_ID, check_run_id


def _run_id(value: Optional[str]) -> Optional[str]:
    """--run-id is checked while the command line is read (exit 2)."""
    if value is None:
        return None
    try:
        return check_run_id(value)
    except ValueError as e:
        raise typer.BadParameter(str(e).removeprefix("--run-id ")) from None


def _results(value: Path) -> Path:
    """--results must be a folder, or a path where one can be made: its
    nearest existing ancestor is a folder (exit 2 otherwise)."""
    p = Path(value)
    for q in (p, *p.parents):
        if q.exists() or q.is_symlink():
            if not q.is_dir():
                what = "is not a folder" if q == p else f"is inside {q}, which is not a folder"
                raise typer.BadParameter(f"{str(value)!r} {what}")
            break
    return value


RESULTS = typer.Option(Path("results"), "--results", callback=_results,
                       help="Folder the run folder is made in.")
RUN_ID = typer.Option(None, "--run-id", callback=_run_id,
                      help="Name of the run folder under --results (default: UTC time + "
                           f"experiment): up to {MAX_RUN_ID} letters, digits, . _ - +; "
                           "not a path.")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Show progress while the run goes.")
REPORT = typer.Option(True, "--report/--no-report", help="Render report.html when done.")


def without_panel(opt):
    """The option without its --help heading, for a command that has one
    mode only (`run all`, `run tcp-incast`)."""
    o = copy.copy(opt)
    o.rich_help_panel = None
    return o
