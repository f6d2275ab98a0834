"""`--instrument tap --dut bridge|p4scope` on the experiments that run
with the tap (`p4scope run microburst`): the options and their checks
(exit 2 naming the option). In Mininet the tap runs around a Linux bridge
or p4scope switch; in virtual time around the reference DUT with its own
traffic-manager profile (--profiles, --buffer-mb, --alpha), in one
engine Fabric with the taps (microburst/tap_virtual.py)."""

from __future__ import annotations

from typing import Optional

import typer

from ..mininet import cli as mininet_cli
from ..params import Mode
from . import placement as pl

INSTRUMENTS = ("dut", "tap")
INSTRUMENT = typer.Option(
    "dut", "--instrument",
    help="Where the telemetry instrument is: dut (the reference DUT's own, p4src/dut.p4) or tap "
         "(p4src/tap.p4 in a p4scope switch on every link of another switch, --dut, inferring "
         "its queues; in virtual time scored against that switch's ground truth).")
DUT = typer.Option(
    None, "--dut", show_default=False,
    help="With --instrument tap: the switch the tap watches. --mode mininet: bridge (the Linux "
         "bridge; the default) or p4scope (the reference DUT in p4scope switch). --mode "
         "virtual: p4scope (the reference DUT with its own profile, --profiles).")
VIRTUAL_DUTS = ("p4scope",)
NOT_WITH_TAP_VIRTUAL = ("metrics_port", "cluster")
"""Options of a virtual-time run the tap does not take (yet)."""


def tap_dut(ctx: typer.Context, mode: Mode, instrument: str, dut: Optional[str],
            live: bool = False) -> Optional[str]:
    """The switch to run the tap around, or None for the reference DUT's own
    instrument; a combination not supported (yet) exits 2 naming the option."""
    if instrument not in INSTRUMENTS:
        mininet_cli.fail(f"--instrument {instrument!r}: give {' or '.join(INSTRUMENTS)}")
    if instrument == "dut":
        if dut is not None:
            mininet_cli.fail("--dut: only with --instrument tap (the reference DUT's own instrument "
                   "measures only itself; --switch picks the switch it runs in)")
        return None
    if live:
        mininet_cli.fail("--live: not with --instrument tap yet")
    if mode is Mode.virtual:
        return _virtual_dut(ctx, dut)
    for name in ("switch", "bmv2"):
        if ctx.get_parameter_source(name).name != "DEFAULT":
            mininet_cli.fail(f"--{name}: picks the reference DUT's switch; with --instrument tap the "
                   "switch measured is --dut")
    d = (dut or "bridge").strip()
    if d not in pl.DUT_KINDS:
        mininet_cli.fail(f"--dut {d!r}: the tap runs around {' or '.join(pl.DUT_KINDS)} (not yet others)")
    return d


def _virtual_dut(ctx: typer.Context, dut: Optional[str]) -> str:
    d = (dut or "p4scope").strip()
    if d not in VIRTUAL_DUTS:
        mininet_cli.fail(f"--dut {d!r}: in virtual time the tap runs around "
               f"{' or '.join(VIRTUAL_DUTS)} (the reference DUT with its own profile); "
               "other switches need --mode mininet")
    for p in ctx.command.params:
        if p.name in NOT_WITH_TAP_VIRTUAL and ctx.get_parameter_source(p.name).name != "DEFAULT":
            mininet_cli.fail(f"{p.opts[0]}: not with --instrument tap yet")
    return d
