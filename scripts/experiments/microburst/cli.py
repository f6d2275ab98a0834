"""`p4scope run microburst`: microburst absorption 2:1 (seed 000, Table 4)
and 4:1 (seed 001), in virtual time (default) or in Mininet."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer

from .. import virtual_cli
from ..live import cli as live_cli
from ..metrics import cli as metrics_cli
from ..mininet import cli as mininet_cli
from ..params import MAX_BURST_FRAMES, MAX_FRAME, MIN_FRAME, Mode, ParamError, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from ..tap import cli as tap_cli
from .mininet import MnBurstParams
from .params import ESG_4TO1_SIZES, TABLE4_SIZES, MicroburstParams

QUICK_SIZES = (64, 512, 1518, 9216)
QUICK_4TO1 = (512, 9216)
MB_SIZES = "256,512,1518"
MB_SIZES_4TO1 = "512,1518"
BURST_QUEUE = typer.Option(100, "--queue-packets", rich_help_panel=mininet_cli.MININET_PANEL,
                           help="Packets the receiver link's queue holds (the buffer measured), 4..10000.")
SIZES = typer.Option("table4", "--sizes", help=f"2:1 frame sizes: 'table4' (the 18 of seed 000) or a list ({MIN_FRAME}..{MAX_FRAME} B).")
SIZES4 = typer.Option("esg", "--sizes-4to1", help=f"4:1 frame sizes: 'esg' (seed 001), a list ({MIN_FRAME}..{MAX_FRAME} B), or 'none'.")
BURST = typer.Option(None, "--burst-frames", help=f"Frames per port per burst, 1..{MAX_BURST_FRAMES:,} (default: from the buffer, 1.5x).")
SIZES_MODES = typer.Option(None, "--sizes", show_default=False, help=f"2:1 frame sizes: 'table4' (the 18 of seed 000; the default in virtual time) or a list ({MIN_FRAME}..{MAX_FRAME} B; Mininet: 64..1518, default 256,512,1518).")
SIZES4_MODES = typer.Option(None, "--sizes-4to1", show_default=False, help="4:1 frame sizes: 'esg' (seed 001; the default in virtual time), a list (default in Mininet: 512,1518), or 'none'.")
BURST_MODES = typer.Option(None, "--burst-frames", help=f"Frames per port per burst, 1..{MAX_BURST_FRAMES:,} (default: 1.5x what the buffer holds; in Mininet, the link queue; there 1..1,000,000).")


def params_from_options(sizes: str, sizes_4to1: str, burst_frames: Optional[int], quick: bool):
    s2 = QUICK_SIZES if quick and sizes == "table4" else (
        TABLE4_SIZES if sizes == "table4" else parse_int_list(sizes, "--sizes"))
    if sizes_4to1 == "none":
        s4: tuple[int, ...] = ()
    elif sizes_4to1 == "esg":
        s4 = QUICK_4TO1 if quick else ESG_4TO1_SIZES
    else:
        s4 = parse_int_list(sizes_4to1, "--sizes-4to1")
    return MicroburstParams(sizes_2to1=s2, sizes_4to1=s4, burst_frames=burst_frames).check()


def command(ctx: typer.Context, mode: Mode = virtual_cli.MODE, profiles: str = virtual_cli.PROFILES,
            sizes: Optional[str] = SIZES_MODES, sizes_4to1: Optional[str] = SIZES4_MODES,
            burst_frames: Optional[int] = BURST_MODES, buffer_mb: float = virtual_cli.BUFFER,
            alpha: float = virtual_cli.ALPHA, cell_bytes: int = virtual_cli.CELL, seed: int = virtual_cli.SEED,
            results: Path = RESULTS, run_id: Optional[str] = RUN_ID,
            program: Path = virtual_cli.PROGRAM, progress: bool = PROGRESS, report: bool = REPORT,
            quick: bool = virtual_cli.QUICK, jobs: int = virtual_cli.JOBS, cluster: Optional[str] = virtual_cli.CLUSTER,
            link_bw: str = mininet_cli.LINK_BW,
            queue_packets: int = BURST_QUEUE, switch: str = mininet_cli.SWITCH,
            bmv2: bool = mininet_cli.BMV2, live: bool = live_cli.LIVE, live_port: int = live_cli.LIVE_PORT,
            live_linger: float = live_cli.LIVE_LINGER, metrics_port: Optional[int] = metrics_cli.METRICS_PORT,
            metrics_address: str = metrics_cli.METRICS_ADDRESS,
            metrics_linger: float = metrics_cli.METRICS_LINGER, instrument: str = tap_cli.INSTRUMENT,
            dut: Optional[str] = tap_cli.DUT) -> None:
    """Microburst absorption 2:1 (seed 000, Table 4) and 4:1 (seed 001); --mode virtual|mininet.

    --mode virtual (default): the embedded switch in virtual time at 100GbE, both
    traffic-manager profiles. --mode mininet (root): bursts at the htb rate into a
    link queue, real traffic through the reference DUT in Mininet; with --instrument tap
    --dut bridge, through another switch with the tap in its path (in virtual time: the
    reference DUT with its own profile, the tap scored against its ground truth)."""
    virtual_cli.only_for_mode(ctx, mode, {Mode.virtual: virtual_cli.VIRTUAL_ONLY, Mode.mininet: virtual_cli.MININET_ONLY})
    tap = tap_cli.tap_dut(ctx, mode, instrument, dut, live)
    if tap is not None and mode is Mode.virtual:
        from .tap_virtual import run_cli as run_tap_virtual

        live_cli.check_options(live, live_port, live_linger)
        run_tap_virtual(profiles, buffer_mb, alpha, cell_bytes, seed, sizes, sizes_4to1,
                        burst_frames, quick, results, run_id, program, progress, report,
                        live_cli.jobs_for(ctx, live, jobs),
                        lambda run: live_cli.run_live(live, live_port, live_linger, run))
        return
    if tap is not None:
        from .tap import run_cli

        run_cli(tap, MB_SIZES if sizes is None else sizes,
                MB_SIZES_4TO1 if sizes_4to1 is None else sizes_4to1, link_bw, queue_packets,
                burst_frames, results, run_id, progress, report)
        return
    live_cli.check_options(live, live_port, live_linger)
    metrics_cli.check_options(metrics_port, metrics_address, metrics_linger, mode is Mode.virtual)
    jobs = live_cli.jobs_for(ctx, live or metrics_port is not None, jobs)
    if mode is Mode.mininet:
        run_mininet(MB_SIZES if sizes is None else sizes,
                    MB_SIZES_4TO1 if sizes_4to1 is None else sizes_4to1, link_bw, queue_packets,
                    burst_frames, switch, bmv2, results, run_id, progress, report,
                    lambda run: live_cli.run_live_mininet(live, live_port, live_linger, run))
        return
    try:
        profs = virtual_cli.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        mb = params_from_options("table4" if sizes is None else sizes,
                                 "esg" if sizes_4to1 is None else sizes_4to1, burst_frames, quick)
    except ParamError as e:
        virtual_cli.fail(str(e))
    metrics_cli.run_metrics(metrics_port, metrics_address, metrics_linger, lambda tell: live_cli.run_live(
        live, live_port, live_linger, lambda on_event: virtual_cli.execute(
            "microburst", profs, {"microburst": mb}, seed, results, run_id, program, progress,
            report, jobs, metrics_cli.both(on_event, tell), cluster)))


def run_mininet(sizes: str, sizes_4to1: str, link_bw: str, queue_packets: int,
                burst_frames: Optional[int], switch: str, bmv2: bool, results: Path,
                run_id: Optional[str], progress: bool, report: bool,
                watch: Callable[[Callable[[], None]], None] = lambda run: run()) -> None:
    """`p4scope run microburst --mode mininet`: microburst absorption 2:1 and 4:1 (seeds
    000, 001) at rates the software switch sustains; the virtual-time run's tables and report."""
    try:
        p = MnBurstParams(
            sizes_2to1=tuple(parse_int_list(sizes, "--sizes")),
            sizes_4to1=() if sizes_4to1 == "none" else tuple(parse_int_list(sizes_4to1, "--sizes-4to1")),
            link_bw=link_bw, queue_packets=queue_packets, burst_frames=burst_frames,
            kinds=mininet_cli.kinds_option(switch, bmv2)).check()
    except ParamError as e:
        mininet_cli.fail(str(e))
    from .mininet import execute_microburst

    watch(lambda: mininet_cli.execute_in_mininet("microburst-mininet", execute_microburst, p, results,
                                       run_id, progress, report))
