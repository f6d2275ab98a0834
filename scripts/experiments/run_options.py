"""The options every `p4scope run` command takes, whatever its mode: where
the run folder goes, its name, progress and report."""

from __future__ import annotations

from pathlib import Path

import typer

RESULTS = typer.Option(Path("results"), "--results", help="Folder the run folder is made in.")
RUN_ID = typer.Option(None, "--run-id", help="Name of the run folder (default: UTC time + experiment).")
PROGRESS = typer.Option(True, "--progress/--no-progress", help="Show progress while the run goes.")
REPORT = typer.Option(True, "--report/--no-report", help="Render report.html when done.")
