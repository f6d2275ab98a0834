"""`--instrument tap --dut bridge|p4scope` on the experiments that run
with the tap (`p4scope run microburst|fairness`): the options and their
checks (exit 2 naming the option). In Mininet the tap runs around a Linux
bridge or p4scope switch (microburst); in virtual time around the
reference DUT with its own traffic-manager profile (--profiles,
--buffer-mb, --alpha), in one engine Fabric with the taps
(microburst/tap_virtual.py, fairness/tap_virtual.py), --live showing
what the taps infer."""

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
SAMPLE_US = typer.Option(
    0, "--tap-sample-us", show_default=False,
    help="With --instrument tap: the taps report the first frame of every N us in each "
         "direction (N a power of two up to 2^20) instead of every frame (0, the default): "
         "runs of any length, the delivered shares estimated from the samples.")
VIRTUAL_DUTS = ("p4scope",)
NOT_WITH_TAP_VIRTUAL = ("metrics_port", "cluster")
"""Options of a virtual-time run the tap does not take (yet)."""


def tap_dut(ctx: typer.Context, mode: Mode, instrument: str, dut: Optional[str],
            live: bool = False, in_mininet: bool = True) -> Optional[str]:
    """The switch to run the tap around, or None for the reference DUT's own
    instrument; a combination not supported (yet) exits 2 naming the option
    (`in_mininet` False: the experiment runs the tap in virtual time only)."""
    if instrument not in INSTRUMENTS:
        mininet_cli.fail(f"--instrument {instrument!r}: give {' or '.join(INSTRUMENTS)}")
    if instrument == "dut":
        if dut is not None:
            mininet_cli.fail("--dut: only with --instrument tap (the reference DUT's own instrument "
                   "measures only itself; --switch picks the switch it runs in)")
        return None
    if mode is Mode.virtual:
        return _virtual_dut(ctx, dut)
    if not in_mininet:
        mininet_cli.fail("--instrument tap: this experiment runs the tap in virtual time "
                         "(--mode virtual); in Mininet, microburst does")
    if live:
        mininet_cli.fail("--live: not with --instrument tap in Mininet yet")
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


def sample_log2_us(instrument: str, sample_us: int) -> Optional[int]:
    """--tap-sample-us as the taps' interval_log2_us (None: every frame);
    exit 2 naming it when it is not 0 or a power of two up to 2^20, or
    given without --instrument tap."""
    if sample_us == 0:
        return None
    if instrument != "tap":
        mininet_cli.fail("--tap-sample-us: only with --instrument tap")
    n = int(sample_us).bit_length() - 1
    if sample_us < 0 or 2 ** n != sample_us or n > pl.MAX_SAMPLE_LOG2_US:
        mininet_cli.fail(f"--tap-sample-us {sample_us}: give 0 (every frame) or a power of two "
                         f"up to {2 ** pl.MAX_SAMPLE_LOG2_US:,} us")
    return n
