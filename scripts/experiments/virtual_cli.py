"""What the `p4scope run` commands measured on the reference DUT in virtual
time share: their options (profiles, buffer, seed, program, mode), the
check that no option of the other mode was given, and the run itself
(driver.py), ending as every run ends (mininet/cli.finish)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional

import typer

from .params import (MAX_BUFFER_MB, MAX_CELL, MAX_JOBS, MIN_BUFFER_MB, MIN_CELL, EngineOptions,
                     Mode, ParamError)


def fail(msg: str, code: int = 2, command: str = "") -> NoReturn:
    """Exit `code` with `msg` (`command`: the run command that says it)."""
    typer.echo(f"p4scope run{' ' + command if command else ''}: error: {msg}", err=True)
    raise typer.Exit(code)


def echo(line: str) -> None:
    """A run's lines as it goes, on stderr."""
    typer.echo(line, err=True)


def _cluster(value: Optional[str]) -> Optional[str]:
    """--cluster is checked while the command line is read (exit 2)."""
    from .cluster import parse_address

    if value is None:
        return None
    try:
        return str(parse_address(value))
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


def profiles(names: str, buffer_mb: float, alpha: float, cell_bytes: int, seed: int):
    """The profiles chosen, once the engine options (seed too) are checked."""
    return EngineOptions(buffer_mb, alpha, cell_bytes, seed).profiles(names)


def only_for_mode(ctx: typer.Context, mode: Mode, others: dict[Mode, tuple[str, ...]]) -> None:
    """Exit 2 when an option of another mode was given."""
    for m, names in others.items():
        if m is mode:
            continue
        given = [p.opts[0] for p in ctx.command.params
                 if p.name is not None and p.name in names and _given(ctx, p.name)]
        if given:
            fail(f"{', '.join(given)}: for --mode {m.value} only (this run is --mode {mode.value})")


def _given(ctx: typer.Context, name: str) -> bool:
    """The option was given (on the command line or from the environment)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def run_to_end(start: Callable[[], Any], program: Optional[Path] = None) -> None:
    """Runs `start()` (a run; it returns the run's result) with SIGTERM as an
    interrupt, and ends as every run ends (mininet.cli.finish): a bad value
    exits 2, a Dask scheduler that
    does not answer 1, an interrupt before the run folder exists 128 + the
    signal."""
    from ..compiler.diagnostics import CompileError
    from .cluster import ClusterUnreachable
    from .mininet.cli import finish
    from .runner import interrupt_signal, sigterm_interrupts

    try:
        with sigterm_interrupts():
            res = start()
    except KeyboardInterrupt as e:  # before the run folder was made: nothing to keep
        typer.echo("p4scope run: interrupted before the run started", err=True)
        raise typer.Exit(128 + interrupt_signal(e))
    except ClusterUnreachable as e:
        typer.echo(f"p4scope run: --cluster: {e}", err=True)
        raise typer.Exit(1)
    except CompileError as e:
        fail(f"--program {program}: {e}")
    except (FileNotFoundError, ParamError, ValueError) as e:
        fail(str(e))
    finish(res)


def run_observed(run: Callable[[Callable], None], on_event: Callable, on_trace: Callable,
                 linger_s: float, close: Callable[[float], None]) -> None:
    """Runs `run(on_event)` with the ground-truth trace handed to `on_trace`
    (traffic.trace_observed), then `close(linger)`: `linger_s` when the run
    ended by itself (complete or partial), 0 when a signal ended it; SIGTERM
    is an interrupt meanwhile. The live dashboard and the metrics endpoint
    watch a run this way."""
    from .runner import sigterm_interrupts
    from .traffic import trace_observed

    linger = 0.0
    try:
        with trace_observed(on_trace):
            run(on_event)
        linger = linger_s
    except typer.Exit as e:
        if (e.exit_code or 0) in (0, 1):  # the run ended (complete or partial), not a signal
            linger = linger_s
        raise
    finally:
        with sigterm_interrupts():
            close(linger)


def execute(experiment: str, profiles, parts: dict[str, Any], seed, results, run_id, program,
            progress, report, jobs: int = 1, on_event: Optional[Callable] = None,
            cluster: Optional[str] = None) -> None:
    """A run on the reference DUT in virtual time (driver.py) of the
    registered experiments in `parts`, to its end, on the Dask `cluster`
    when one is given; `on_event` is told as it goes (runner.RunEvent)."""
    from .driver import RunRequest, execute

    req = RunRequest(experiment, profiles, parts, seed, results, run_id, program, progress, report,
                     jobs, on_event, cluster)
    run_to_end(lambda: execute(req, echo=echo), program)


VIRTUAL_PANEL = "Virtual time (--mode virtual)"
MODE = typer.Option(Mode.virtual, "--mode", help="virtual: the embedded switch in virtual "
                     "time at 100GbE; mininet: real traffic through the DUT in Mininet (root).")
PROFILES = typer.Option("fair,unfair", "--profiles", rich_help_panel=VIRTUAL_PANEL, help="Traffic-manager profiles, comma-separated.")
BUFFER = typer.Option(16.0, "--buffer-mb", rich_help_panel=VIRTUAL_PANEL, help=f"Shared buffer in MB (2^20 bytes), {MIN_BUFFER_MB:g}..{MAX_BUFFER_MB:g}.")
ALPHA = typer.Option(1.0, "--alpha", rich_help_panel=VIRTUAL_PANEL, help="Dynamic-threshold factor of the shared buffer, 1/128..64.")
CELL = typer.Option(256, "--cell-bytes", rich_help_panel=VIRTUAL_PANEL, help=f"Buffer cell size in bytes, {MIN_CELL}..{MAX_CELL} (1: exact bytes).")
SEED = typer.Option(1, "--seed", rich_help_panel=VIRTUAL_PANEL, help="Seed of the engine and the sources, 0..2^64-1 (runs are deterministic).")
PROGRAM = typer.Option(Path("p4src/dut.p4"), "--program", rich_help_panel=VIRTUAL_PANEL, help="The reference DUT's P4 source.")
JOBS = typer.Option(os.cpu_count() or 1, "--jobs", rich_help_panel=VIRTUAL_PANEL, help=f"Worker processes measuring cases at once, 1..{MAX_JOBS} (default: the machine's cores); the tables are the same for any number.")
CLUSTER = typer.Option(None, "--cluster", callback=_cluster, rich_help_panel=VIRTUAL_PANEL, metavar="ADDRESS", help="Measure the cases on a Dask cluster instead of --jobs worker processes: tcp://HOST:PORT of a scheduler (`dask scheduler`; workers: `dask worker tcp://HOST:PORT --nthreads 1` with this p4scope), or local:N for N worker processes here; the tables are the same.")
QUICK = typer.Option(False, "--quick", rich_help_panel=VIRTUAL_PANEL, help="Fewer sizes (64, 512, 1518, 9216; 4:1 512, 9216) and one port combination per N.")


VIRTUAL_ONLY = ("profiles", "buffer_mb", "alpha", "cell_bytes", "seed", "program", "quick", "jobs",
                "cluster")
MININET_ONLY = ("link_bw", "queue_packets", "switch", "bmv2")
