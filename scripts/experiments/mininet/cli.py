"""What the `p4scope run` commands share in Mininet (root): the options
for the switches and links, the check that this machine can run Mininet,
SIGTERM as an interrupt, and how every run ends (virtual-time runs too).

Options are checked before anything starts (exit status 2 with the
reason); a run exits 0 when complete, 1 when partial or failed (130 after
Ctrl-C), 3 when this machine cannot run Mininet (not root, tools
missing), and prints where the results and the report are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer



def sigterm_as_interrupt() -> None:
    """`kill PID` ends a run as Ctrl-C does: the cases measured so far are
    kept, the run folder says partial, and the Mininet testbed is removed
    (a SIGKILL leaves that to the next run's start or `p4scope clean --stale`).
    For the rest of the process; `runner.sigterm_interrupts()` for a block."""
    from ..runner import install_sigterm_interrupt

    install_sigterm_interrupt()


def fail(msg: str, code: int = 2) -> None:
    typer.echo(f"p4scope run: error: {msg}", err=True)
    raise typer.Exit(code)


def kinds_option(switch: str, bmv2: bool) -> tuple[str, ...]:
    kinds = [k.strip() for k in switch.split(",") if k.strip()]
    if bmv2 and "bmv2" not in kinds:
        kinds.append("bmv2")
    bad = [k for k in kinds if k not in ("p4scope", "bmv2")]
    if bad or not kinds:
        fail(f"--switch {switch!r}: give p4scope and/or bmv2")
    return tuple(kinds)


def finish(res, skipped: Optional[dict[str, str]] = None) -> None:
    """Print how a run ended (and the switch kinds it `skipped`), where its
    results and report are; exit 1 when it failed or is partial, 128 + the
    signal when one ended it (Ctrl-C: 130, SIGTERM: 143). Virtual-time runs
    end here too."""
    o = res.outcome
    state = "complete" if o.complete else f"partial ({o.reason})"
    typer.echo(f"p4scope run: {o.done}/{o.planned} cases, {state}")
    for kind, why in (skipped or {}).items():
        typer.echo(f"skipped {kind}: {why}")
    typer.echo(f"results: {res.path}")
    if res.report is not None:
        typer.echo(f"report:  {res.report}")
    if o.error is not None and not isinstance(o.error, KeyboardInterrupt):
        raise typer.Exit(1)
    if not o.complete:
        raise typer.Exit(128 + o.signal if o.signal else 1)


def execute_in_mininet(name: str, execute, params, results: Path, run_id, progress: bool,
                       report: bool) -> None:
    """The common tail of every Mininet run: check that this host can run
    Mininet (exit 3 if not), make SIGTERM an interrupt, run, print where the
    results are."""
    from ..runner import sigterm_interrupts
    from .driver import NeedsRoot, check_host

    try:
        check_host()
    except NeedsRoot as e:
        fail(f"{e} ({name} runs in Mininet)", 3)
    try:
        with sigterm_interrupts():
            res = execute(params, results, run_id, progress, report,
                          echo=lambda s: typer.echo(s, err=True))
    except ValueError as e:
        fail(str(e))
    finish(res, res.skipped)


MININET_PANEL = "Mininet (--mode mininet)"

SWITCH = typer.Option("p4scope", "--switch", rich_help_panel=MININET_PANEL,
                      help="Switch kinds in the nodes: p4scope, bmv2 or both (p4scope,bmv2).")
BMV2 = typer.Option(False, "--bmv2", rich_help_panel=MININET_PANEL,
                    help="Also run every case with BMv2 (simple_switch_grpc) in the nodes; "
                         "skipped, saying why, where it is not installed.")
LINK_BW = typer.Option("10M", "--link-bw", rich_help_panel=MININET_PANEL,
                       help="Rate of every host link (htb), 1k..400G.")
