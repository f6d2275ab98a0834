"""The dashboard on the command line: the `--live` options of the
virtual-time runs (`p4scope run microburst|fairness --live`) and
`p4scope watch RUN_DIR`, the replay of a stored run.

Both serve on 127.0.0.1 only and print the page's address first; a port
that is taken, or a value out of range, exits 2 naming the option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import typer

MAX_PORT = 65535
MAX_LINGER_S = 86400.0
LIVE_PANEL = "Live dashboard"
LIVE = typer.Option(False, "--live", rich_help_panel=LIVE_PANEL,
                    help="Serve a dashboard of the run while it goes (queues, shares, bursts, "
                         "drops, progress) on http://127.0.0.1:PORT/; virtual time only.")
LIVE_PORT = typer.Option(0, "--live-port", rich_help_panel=LIVE_PANEL,
                         help=f"Port of the --live dashboard, 0..{MAX_PORT} (0: a free one).")
LIVE_LINGER = typer.Option(0.0, "--live-linger", rich_help_panel=LIVE_PANEL,
                           help="Seconds the --live dashboard stays up after the run ends "
                                f"(Ctrl-C ends it sooner), 0..{MAX_LINGER_S:g}.")


def _fail(prog: str, msg: str) -> None:
    typer.echo(f"p4scope {prog}: error: {msg}", err=True)
    raise typer.Exit(2)


def check_port(port: int, prog: str = "run") -> int:
    if not 0 <= port <= MAX_PORT:
        _fail(prog, f"--live-port {port}: a port is 0..{MAX_PORT} (0: a free one)")
    return port


def check_options(live: bool, port: int, linger_s: float, virtual: bool) -> None:
    """Exit 2 for a --live option out of range, given without --live, or
    --live on a run it cannot follow (Mininet, for now)."""
    check_port(port)
    if not (0 <= linger_s <= MAX_LINGER_S):
        _fail("run", f"--live-linger {linger_s:g}: 0..{MAX_LINGER_S:g} seconds")
    if not live:
        extra = [o for o, given in (("--live-port", port != 0), ("--live-linger", linger_s != 0))
                 if given]
        if extra:
            _fail("run", f"{', '.join(extra)}: only with --live")
    elif not virtual:
        _fail("run", "--live: the dashboard follows virtual-time runs only (for now); "
                     "a Mininet run can be replayed with `p4scope watch RUN_DIR` afterwards")


def jobs_for(ctx: typer.Context, live: bool, jobs: int) -> int:
    """--live measures in this process (--jobs 1) unless --jobs was given:
    then the page follows the case in flight too, not only finished ones."""
    if live and ctx.get_parameter_source("jobs").name == "DEFAULT":
        return 1
    return jobs


def run_live(live: bool, port: int, linger_s: float,
             run: Callable[[Optional[Callable[[Any], None]]], None]) -> None:
    """Runs `run(on_event)`: with the dashboard when `live` (on_event feeds
    it), else `run(None)`. A taken port exits 2 before the run starts."""
    if not live:
        run(None)
        return
    from ..virtual_cli import run_observed
    from .server import PortInUse
    from .session import LiveSession

    try:
        session = LiveSession(port, echo=lambda s: typer.echo(s, err=True))
    except PortInUse as e:
        _fail("run", f"--live-port {port}: {e.strerror}")
    session.start()
    run_observed(run, session.on_event, session.on_trace, linger_s, session.close)


def watch_cmd(run_dir: Path = typer.Argument(..., help="A run folder (results/<run-id>)."),
              live_port: int = typer.Option(0, "--live-port", "--port",
                                            help=f"Port on 127.0.0.1, 0..{MAX_PORT} (0: a free one).")
              ) -> None:
    """Replay a stored run in the live dashboard (queues, shares, bursts, drops,
    with a time slider), served on 127.0.0.1 until Ctrl-C."""
    check_port(live_port, "watch")
    if not (run_dir / "run.json").is_file():
        _fail("watch", f"{run_dir} is not a run folder (no run.json)")
    from ..runner import sigterm_interrupts
    from .model import from_run_dir
    from .server import Dashboard, PortInUse
    from .session import watch_until_stopped

    try:
        model = from_run_dir(run_dir)
    except (OSError, ValueError, KeyError) as e:
        _fail("watch", f"{run_dir}: cannot read the run: {type(e).__name__}: {e}")
    try:
        dash = Dashboard(model, live_port)
    except PortInUse as e:
        _fail("watch", f"--live-port {live_port}: {e.strerror}")
    with sigterm_interrupts():
        dash.start()
        typer.echo(f"p4scope watch: {model.run_id}: {model.count()} cases ({model.state}); "
                   f"dashboard at {dash.url} (Ctrl-C stops it)", err=True)
        watch_until_stopped(dash)
