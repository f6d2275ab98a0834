"""The `p4scope ptf` command line (the work is in runner.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def ptf_cmd(
    ctx: typer.Context,
    target: str = typer.Option("p4scope", "--target",
                               help="p4scope (p4scope switch) or bmv2 (simple_switch_grpc)."),
    program: str = typer.Option("dut", "--program",
                                help="A program in p4src/ (dut) or a path to a .p4 file."),
    ports: int = typer.Option(5, "--ports", help="Switch ports 1..N, each a veth pair."),
    run_dir: Optional[Path] = typer.Option(
        None, "--run-dir", help="Keep the build, logs and manifest here (default: a "
                                "temporary directory, removed after a passing run)."),
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary run directory."),
    compiler: str = typer.Option("auto", "--compiler",
                                 help="auto (p4c-bm2-ss for bmv2 when installed), p4scope or p4c."),
    switch_binary: Optional[str] = typer.Option(
        None, "--switch-binary", help="Another program taking simple_switch_grpc's command line."),
    switch_log: str = typer.Option("off", "--switch-log",
                                   help="The switch's log level (trace..error) or off."),
    test_dir: Optional[Path] = typer.Option(None, "--test-dir",
                                            help="PTF test directory (default: ptf_tests/)."),
    timeout: float = typer.Option(0.0, "--timeout",
                                  help="Stop ptf after this many seconds (0: no limit)."),
) -> None:
    """Run the PTF suite against a switch started in a namespace of its own
    (arguments after -- go to ptf)."""
    from .runner import DEFAULT_TEST_DIR, PtfOptions, run

    o = PtfOptions(target=target, program=program, ports=ports, ptf_args=list(ctx.args),
                   run_dir=run_dir, keep=keep, compiler=compiler, switch_binary=switch_binary,
                   switch_log_level=switch_log, test_dir=test_dir or DEFAULT_TEST_DIR,
                   timeout=timeout)
    raise typer.Exit(run(o, log=lambda s: typer.echo(s, err=True)))
