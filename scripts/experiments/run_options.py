"""The options every `p4scope run` command takes, whatever its mode: where
the run folder goes, its name, progress and report."""

from __future__ import annotations

import copy
from pathlib import Path

import typer

RESULTS = typer.Option(Path("results"), "--results", help="Folder the run folder is made in.")
RUN_ID = typer.Option(None, "--run-id", help="Name of the run folder (default: UTC time + experiment).")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Show progress while the run goes.")
REPORT = typer.Option(True, "--report/--no-report", help="Render report.html when done.")


def without_panel(opt):
    """The option without its --help heading, for a command that has one
    mode only (`run all`, `run tcp-incast`)."""
    o = copy.copy(opt)
    o.rich_help_panel = None
    return o
