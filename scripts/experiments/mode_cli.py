"""The --mode virtual|mininet split that the run commands measuring in both
modes share (features, lag-failover, rfc2544, rfc2889): the --mode option,
which options belong to one mode (the --help panel each is listed under),
the refusal of the other mode's (exit 2 naming them), a virtual run's one
traffic-manager profile, and what a Mininet run checks before it starts
(the DUTs named right, root and Mininet, the DUTs installed: exit 2 or 3).
A command states only its own options, each under its mode's panel."""

from __future__ import annotations

from typing import Any, Callable, Mapping, NoReturn, Sequence

import typer

from . import virtual_cli
from .params import Mode, ParamError, Profile
from .virtual_cli import VIRTUAL_PANEL

MININET_PANEL = "Mininet (--mode mininet, root)"
PANELS = {Mode.virtual: VIRTUAL_PANEL, Mode.mininet: MININET_PANEL}
"""The --help panel of the options of one mode only."""
Fail = Callable[[str, int], NoReturn]


def mode_option(mininet: str) -> Any:
    """--mode, `mininet` saying what a Mininet run measures."""
    return typer.Option(Mode.virtual, "--mode", help="virtual: the embedded switch in virtual "
                        f"time at 100GbE; mininet: {mininet}")


def resolution_option(defaults: Mapping[str, Mapping[str, Any]]) -> Any:
    """--resolution-pct of a throughput search, not given: the mode's default
    (`defaults`: the experiment's MODE_DEFAULTS)."""
    return typer.Option(
        None, "--resolution-pct", show_default=False,
        help=f"Throughput search resolution, % of line rate (0.001..10; default "
             f"{defaults['virtual']['resolution_pct']:g} in virtual time, "
             f"{defaults['mininet']['resolution_pct']:g} in Mininet).")


def refuse_other_mode(ctx: typer.Context, mode: Mode) -> None:
    """Exit 2 naming the options given that are listed under another mode's panel."""
    virtual_cli.only_for_mode(ctx, mode, {
        m: tuple(str(p.name) for p in ctx.command.params
                 if getattr(p, "rich_help_panel", None) == panel)
        for m, panel in PANELS.items()})


def one_profile(name: str, buffer_mb: float, alpha: float, cell_bytes: int,
                seed: int) -> Profile:
    """--profile's one profile, the engine options checked (ParamError)."""
    profs = virtual_cli.profiles(name, buffer_mb, alpha, cell_bytes, seed)
    if len(profs) != 1:
        raise ParamError("--profile: one profile (fair or unfair)")
    return next(iter(profs.values()))


def mininet_duts(names: Sequence[str], command: str,
                 fail: Fail = virtual_cli.fail) -> tuple[list[Any], dict[str, str]]:
    """Before a Mininet run: every DUT named right (else exit 2; 3 for a
    switch class that cannot be imported here), this host able to run
    Mininet (else exit 3), and the DUTs (tester.mininet.Dut) installed
    here, with why each other one is skipped; exit 3 when none is left."""
    from .mininet.driver import NeedsRoot, check_host
    from .tester.mininet import DutError, parse_dut
    from .tester.run import available_duts

    duts = []
    for name in names:
        try:
            duts.append(parse_dut(name))
        except DutError as e:
            fail(str(e), 2)
        except ImportError as e:  # a switch class cannot be checked without Mininet
            fail(f"--dut {name}: {e}", 3)
    try:
        check_host()
    except NeedsRoot as e:
        fail(f"{e} ({command} --mode mininet runs in Mininet)", 3)
    keep, skipped = available_duts(duts)
    if not keep:
        fail("; ".join(f"--dut {name}: {why}" for name, why in skipped.items()), 3)
    return keep, skipped
