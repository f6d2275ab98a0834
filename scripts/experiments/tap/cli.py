"""`--instrument tap --dut bridge|p4scope` on the experiments that run
with the tap (`p4scope run microburst`): the options and their checks
(exit 2 naming the option)."""

from __future__ import annotations

from typing import Optional

import typer

from ..mininet import cli as M
from ..params import Mode
from . import placement as pl

INSTRUMENTS = ("dut", "tap")
INSTRUMENT = typer.Option(
    "dut", "--instrument",
    help="Where the telemetry instrument is: dut (the reference DUT's own, p4src/dut.p4) or tap "
         "(p4src/tap.p4 in a p4scope switch on every link of another switch, --dut, inferring "
         "its queues; --mode mininet only, for now).")
DUT = typer.Option(
    None, "--dut", rich_help_panel=M.MININET_PANEL, show_default=False,
    help="With --instrument tap: the switch the tap watches, bridge (the Linux bridge; the "
         "default) or p4scope (the reference DUT in p4scope switch).")


def tap_dut(ctx: typer.Context, mode: Mode, instrument: str, dut: Optional[str],
            live: bool = False) -> Optional[str]:
    """The switch to run the tap around, or None for the reference DUT's own
    instrument; a combination not supported (yet) exits 2 naming the option."""
    if instrument not in INSTRUMENTS:
        M.fail(f"--instrument {instrument!r}: give {' or '.join(INSTRUMENTS)}")
    if instrument == "dut":
        if dut is not None:
            M.fail("--dut: only with --instrument tap (the reference DUT's own instrument "
                   "measures only itself; --switch picks the switch it runs in)")
        return None
    if mode is not Mode.mininet:
        M.fail(f"--instrument tap: not with --mode {mode.value} yet (--mode mininet runs it, as root)")
    for name in ("switch", "bmv2"):
        if ctx.get_parameter_source(name).name != "DEFAULT":
            M.fail(f"--{name}: picks the reference DUT's switch; with --instrument tap the "
                   "switch measured is --dut")
    if live:
        M.fail("--live: not with --instrument tap yet")
    d = (dut or "bridge").strip()
    if d not in pl.DUT_KINDS:
        M.fail(f"--dut {d!r}: the tap runs around {' or '.join(pl.DUT_KINDS)} (not yet others)")
    return d
