"""`p4scope run NAME` for every registered experiment (registry.py), `p4scope
run all` (microburst and fairness in one run folder: the main job) and
`p4scope report RUN_DIR`.

Every option is checked before anything starts; a bad value exits with
status 2 and says what is wrong. A run exits 0 when it completed, 1 when
it ended partial, 128 + the signal when one ended it (Ctrl-C: 130,
SIGTERM: 143), and prints where the results and the report are.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import typer

from . import registry
from . import virtual_cli
from .fairness import cli as FC
from .microburst import cli as MC
from .params import MAX_JOBS, ParamError, check_int
from .run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel

run_app = typer.Typer(help="Run an experiment: on the reference DUT in virtual time (the "
                           "embedded switch), or (--mode mininet, root) with real traffic in "
                           "Mininet.", no_args_is_help=True)
for _e in registry.experiments().values():
    run_app.command(_e.name)(_e.command)


_ALL = SimpleNamespace(**{k: without_panel(o) for k, o in dict(
    profiles=virtual_cli.PROFILES, ports=FC.PORTS, dur=FC.DUR, warm=FC.WARM, buffer=virtual_cli.BUFFER,
    alpha=virtual_cli.ALPHA, cell=virtual_cli.CELL, seed=virtual_cli.SEED, program=virtual_cli.PROGRAM, quick=virtual_cli.QUICK,
    jobs=virtual_cli.JOBS, cluster=virtual_cli.CLUSTER).items()})


@run_app.command("all")
def run_all(profiles: str = _ALL.profiles, sizes: str = MC.SIZES, sizes_4to1: str = MC.SIZES4,
            burst_frames: Optional[int] = MC.BURST, n: str = FC.N, ports: list[str] = _ALL.ports,
            duration_us: float = _ALL.dur, warmup_us: float = _ALL.warm, mix: str = FC.MIX,
            buffer_mb: float = _ALL.buffer, alpha: float = _ALL.alpha,
            cell_bytes: int = _ALL.cell, seed: int = _ALL.seed, results: Path = RESULTS,
            run_id: Optional[str] = RUN_ID, program: Path = _ALL.program,
            progress: bool = PROGRESS, report: bool = REPORT, quick: bool = _ALL.quick,
            jobs: int = _ALL.jobs, cluster: Optional[str] = _ALL.cluster) -> None:
    """Microburst and fairness in virtual time, one run folder, one report."""
    try:
        profs = virtual_cli.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        mb = MC.params_from_options(sizes, sizes_4to1, burst_frames, quick)
        fp = FC.params_from_options(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        virtual_cli.fail(str(e))
    virtual_cli.execute("all", profs, {"microburst": mb, "fairness": fp}, seed, results, run_id, program,
              progress, report, jobs, cluster=cluster)


def main_run() -> int:
    """README's main job after the compile step: microburst and fairness as
    the seed reports ran them, both profiles, one run folder and report.
    Returns the exit status."""
    try:
        virtual_cli.execute("all", virtual_cli.profiles("fair,unfair", 16.0, 1.0, 256, 1),
                  {"microburst": MC.params_from_options("table4", "esg", None, False),
                   "fairness": FC.params_from_options("3,6,16", [], 2000.0, 1000.0,
                                                      FC.MIX.default, False)},
                  1, Path("results"), None, Path("p4src/dut.p4"), True, True, os.cpu_count() or 1)
    except typer.Exit as e:
        return int(e.exit_code or 0)
    return 0


def report_cmd(run_dir: Path = typer.Argument(..., help="A run folder (results/<run-id>)."),
               output: Optional[Path] = typer.Option(None, "-o", "--output",
                                                     help="HTML file (default RUN_DIR/report.html)."),
               jobs: int = typer.Option(os.cpu_count() or 1, "--jobs",
                                        help=f"Processes drawing the PNGs, 1..{MAX_JOBS} (default: the "
                                             f"machine's cores); the PNGs are the same for any number.")
               ) -> None:
    """Render a run's report (HTML + PNGs) from its stored results (every
    experiment of the run, virtual time or Mininet)."""
    from .report import render_stored

    try:  # ParamError is a ValueError
        check_int(jobs, 1, MAX_JOBS, "--jobs")
        if not (run_dir / "run.json").is_file():
            raise ValueError(f"{run_dir} is not a run folder (no run.json)")
        out = render_stored(run_dir, output, jobs)
    except ValueError as e:
        typer.echo(f"p4scope report: error: {e}", err=True)
        raise typer.Exit(2)
    typer.echo(f"report: {out}")
