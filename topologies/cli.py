"""`p4scope clean` and `p4scope topo`: clean-up of runs, and topology files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

topo_app = typer.Typer(help="Topology files: check them, or write the standard ones.",
                       no_args_is_help=True, add_completion=False)


def clean_cmd(
    run_dirs: List[Path] = typer.Argument(None, help="Run directories (holding manifest.json)."),
    stale: bool = typer.Option(False, "--stale",
                               help="Clean every registered run whose owner process died."),
    force: bool = typer.Option(False, "--force",
                               help="Clean even while the run's owner still runs."),
) -> None:
    """Remove exactly the namespaces, interfaces and processes a run created."""
    from .clean import OwnerAlive, clean_run, clean_stale

    if not run_dirs and not stale:
        typer.echo("give RUN_DIR... or --stale", err=True)
        raise typer.Exit(2)
    code = 0
    for d in run_dirs or []:
        try:
            rep = clean_run(d, force=force)
        except (FileNotFoundError, ValueError, OwnerAlive) as e:
            typer.echo(f"p4scope clean: {e}", err=True)
            code = 1
            continue
        typer.echo(rep.summary())
        code = code or (1 if rep.problems else 0)
    if stale:
        reps = clean_stale(typer.echo)
        if not reps:
            typer.echo("no runs left behind")
        code = code or (1 if any(r.problems for r in reps) else 0)
    raise typer.Exit(code)


@topo_app.command("check")
def topo_check(files: List[Path] = typer.Argument(..., help="Topology JSON files.")) -> None:
    """Check topology files; print a summary of each or the first error."""
    from .spec import TopologyError, load

    code = 0
    for f in files:
        try:
            t = load(f)
        except TopologyError as e:
            typer.echo(str(e), err=True)
            code = 1
            continue
        typer.echo(f"{f}: {t.name}: {len(t.hosts)} hosts, {len(t.switches)} switches, "
                   f"{len(t.links)} links")
    raise typer.Exit(code)


@topo_app.command("up")
def topo_up(
    file: Path = typer.Argument(..., help="Topology JSON file."),
    run_dir: Path = typer.Option(..., "--run-dir", "-r", help="Run directory (manifest, logs, pcaps)."),
    cli: bool = typer.Option(False, "--cli", help="Open Mininet's command line instead of waiting."),
    ready_timeout: float = typer.Option(60.0, help="Seconds to wait for each switch's gRPC port."),
) -> None:
    """Build a topology and keep it up until Ctrl-C (or SIGTERM); then remove it."""
    import signal
    import threading

    from .run import Network, NetworkError
    from .spec import TopologyError, load

    try:
        topo = load(file)
    except TopologyError as e:
        typer.echo(str(e), err=True)
        raise typer.Exit(2)
    try:
        with Network(topo, run_dir, ready_timeout=ready_timeout) as net:
            for s in topo.switches:
                if s.kind == "bridge":
                    typer.echo(f"{s.name}: Linux bridge {s.name}-br")
                else:
                    typer.echo(f"{s.name}: {s.kind}, gRPC {net.grpc_addr(s.name)}, device {s.device_id}, "
                               f"log {run_dir}/logs/{s.name}.log")
            for h in topo.hosts:
                typer.echo(f"{h.name}: {h.ip} {h.mac}, ip netns exec {net.netns(h.name)} ...")
            if cli:
                from mininet.cli import CLI
                CLI(net.net)
            else:
                typer.echo("up; Ctrl-C to stop")
                stop = threading.Event()
                signal.signal(signal.SIGINT, lambda *_: stop.set())
                while not stop.wait(1.0):
                    pass
    except NetworkError as e:
        typer.echo(f"p4scope topo up: {e}", err=True)
        raise typer.Exit(1)
    typer.echo(net.clean_report.summary() if net.clean_report else "stopped")


@topo_app.command("write")
def topo_write(
    shape: str = typer.Argument(..., help="single, pairs, incast, chain, lag or leaf-spine."),
    args: List[int] = typer.Argument(None, help="The builder's numbers (e.g. incast 16)."),
    kind: str = typer.Option("p4scope", help="Switch kind: p4scope, bmv2 or bridge."),
    program: Optional[str] = typer.Option(None, help="BMv2 JSON for every switch (else --no-p4)."),
    bw: Optional[str] = typer.Option(None, help="Host link rate, e.g. 100M, 1G."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="File to write (else stdout)."),
) -> None:
    """Write one of the standard topologies as a JSON file."""
    from .builders import BUILDERS

    if shape not in BUILDERS:
        typer.echo(f"unknown shape {shape!r}; one of {', '.join(BUILDERS)}", err=True)
        raise typer.Exit(2)
    switch = {"kind": kind, **({"program": program} if program else {})}
    try:
        t = BUILDERS[shape](*(args or []), switch=switch, bw=bw)
    except (ValueError, TypeError) as e:
        typer.echo(f"{shape}: {e}", err=True)
        raise typer.Exit(2)
    text = json.dumps(t.to_dict(), indent=2) + "\n"
    if output:
        output.write_text(text)
    else:
        typer.echo(text, nl=False)
