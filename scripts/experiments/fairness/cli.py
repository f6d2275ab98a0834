"""`p4scope run fairness`: N:1 incast fairness with iMIX (seed 000, Table
3), in virtual time (default) or in Mininet."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer

from .. import virtual_cli
from ..live import cli as live_cli
from ..metrics import cli as metrics_cli
from ..mininet import cli as mininet_cli
from ..params import (EGRESS, MAX_DURATION_US, MAX_FRAME, MIN_FRAME, Mode, ParamError,
                      check_ports, combination_name, ns_from_us, parse_int_list, parse_mix)
from ..linerate import TOLLY_IMIX
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from ..tap import cli as tap_cli
from .mininet import MnFairnessParams
from .params import TABLE3_COMBINATIONS, FairnessParams

N = typer.Option("3,6,16", "--n", help="Numbers of source ports (Table 3's combinations of each).")
N_MODES = typer.Option("3,6,16", "--n", help="Numbers of source ports (virtual time: Table 3's combinations of each; Mininet: senders).")
PORTS = typer.Option([], "--ports", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="A source-port combination, e.g. 1,2,3 (repeatable; replaces --n).")
DUR = typer.Option(2000.0, "--duration-us", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help=f"Virtual time each incast lasts (us), up to {MAX_DURATION_US:,.0f}.")
WARM = typer.Option(1000.0, "--warmup-us", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="Time before the measurement window (us), 0 up to below --duration-us.")
MIX = typer.Option(",".join(f"{s}:{w}" for s, w in TOLLY_IMIX.items()), "--mix", help=f"Frame-size mix SIZE:WEIGHT,... (Tolly iMIX; sizes {MIN_FRAME}..{MAX_FRAME}, weights >= 0).")
FAIR_LOAD = typer.Option(1.0, "--load", rich_help_panel=mininet_cli.MININET_PANEL,
                         help="Fraction of line rate each sender offers, 0.05..1.")
FAIR_DURATION_S = typer.Option(4.0, "--duration-s", rich_help_panel=mininet_cli.MININET_PANEL,
                               help="Seconds each case's streams last, up to 120.")
FAIR_WARMUP_S = typer.Option(1.5, "--warmup-s", rich_help_panel=mininet_cli.MININET_PANEL,
                             help="Seconds before the measurement window, below --duration-s.")
FAIR_QUEUE = typer.Option(200, "--queue-packets", rich_help_panel=mininet_cli.MININET_PANEL,
                          help="Packets the receiver link's queue holds, 1..100000 (0: the kernel's default).")
VIRTUAL_FAIRNESS = virtual_cli.VIRTUAL_ONLY + ("ports", "duration_us", "warmup_us")
MININET_FAIRNESS = virtual_cli.MININET_ONLY + ("load", "duration_s", "warmup_s")


def params_from_options(n: str, ports: list[str], duration_us: float, warmup_us: float,
                        mix: str, quick: bool):
    combos: list[tuple[int, ...]] = [parse_int_list(p, "--ports") for p in ports]
    for c in combos:
        check_ports(c, EGRESS, f"--ports {combination_name(c)}")
    if not combos:
        for k in parse_int_list(n, "--n"):
            if k not in TABLE3_COMBINATIONS:
                raise ParamError(f"--n {k}: Table 3 has 3, 6 and 16 source ports; give "
                                 "other combinations with --ports")
            cs = TABLE3_COMBINATIONS[k]
            # quick: the second combination of each N, one that straddles
            # port groups (where Table 3's Broadcom was unfair)
            combos += list(cs[1:2] if quick else cs)
    return FairnessParams(combinations=tuple(combos), mix=parse_mix(mix),
                          duration_ns=ns_from_us(duration_us, "--duration-us", above=True),
                          warmup_ns=ns_from_us(warmup_us, "--warmup-us")).check()


def command(ctx: typer.Context, mode: Mode = virtual_cli.MODE, profiles: str = virtual_cli.PROFILES, n: str = N_MODES,
            ports: list[str] = PORTS, duration_us: float = DUR, warmup_us: float = WARM,
            mix: str = MIX, buffer_mb: float = virtual_cli.BUFFER, alpha: float = virtual_cli.ALPHA,
            cell_bytes: int = virtual_cli.CELL, seed: int = virtual_cli.SEED, results: Path = RESULTS,
            run_id: Optional[str] = RUN_ID, program: Path = virtual_cli.PROGRAM,
            progress: bool = PROGRESS, report: bool = REPORT, quick: bool = virtual_cli.QUICK,
            jobs: int = virtual_cli.JOBS, cluster: Optional[str] = virtual_cli.CLUSTER,
            link_bw: str = mininet_cli.LINK_BW, load: float = FAIR_LOAD,
            duration_s: float = FAIR_DURATION_S, warmup_s: float = FAIR_WARMUP_S,
            queue_packets: int = FAIR_QUEUE, switch: str = mininet_cli.SWITCH,
            bmv2: bool = mininet_cli.BMV2, live: bool = live_cli.LIVE, live_port: int = live_cli.LIVE_PORT,
            live_linger: float = live_cli.LIVE_LINGER, metrics_port: Optional[int] = metrics_cli.METRICS_PORT,
            metrics_address: str = metrics_cli.METRICS_ADDRESS,
            metrics_linger: float = metrics_cli.METRICS_LINGER,
            instrument: str = tap_cli.INSTRUMENT, dut: Optional[str] = tap_cli.DUT,
            tap_sample_us: int = tap_cli.SAMPLE_US) -> None:
    """N:1 incast fairness with iMIX (seed 000, Table 3); --mode virtual|mininet.

    --mode virtual (default): the embedded switch in virtual time at 100GbE, both
    traffic-manager profiles; with --instrument tap, the reference DUT with its own
    profile and a tap on each of its links, the taps' shares scored against its ground
    truth. --mode mininet (root): N senders at line rate on htb links, real traffic
    through the reference DUT in Mininet."""
    virtual_cli.only_for_mode(ctx, mode, {Mode.virtual: VIRTUAL_FAIRNESS, Mode.mininet: MININET_FAIRNESS})
    live_cli.check_options(live, live_port, live_linger)
    metrics_cli.check_options(metrics_port, metrics_address, metrics_linger, mode is Mode.virtual)
    jobs = live_cli.jobs_for(ctx, live or metrics_port is not None, jobs)
    sample = tap_cli.sample_log2_us(instrument, tap_sample_us)
    if tap_cli.tap_dut(ctx, mode, instrument, dut, live, in_mininet=False) is not None:
        run_tap(ctx, sample, profiles, n, ports, duration_us, warmup_us, mix, buffer_mb, alpha,
                cell_bytes, seed, results, run_id, program, progress, report, quick, jobs,
                lambda run: live_cli.run_live(live, live_port, live_linger, run))
        return
    if mode is Mode.mininet:
        run_mininet(n, link_bw, load, duration_s, warmup_s, queue_packets, mix, switch, bmv2,
                    results, run_id, progress, report,
                    lambda run: live_cli.run_live_mininet(live, live_port, live_linger, run))
        return
    try:
        profs = virtual_cli.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        fp = params_from_options(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        virtual_cli.fail(str(e))
    metrics_cli.run_metrics(metrics_port, metrics_address, metrics_linger, lambda tell: live_cli.run_live(
        live, live_port, live_linger, lambda on_event: virtual_cli.execute(
            "fairness", profs, {"fairness": fp}, seed, results, run_id, program, progress,
            report, jobs, metrics_cli.both(on_event, tell), cluster)))


def run_tap(ctx: typer.Context, sample_log2_us: Optional[int], profiles: str, n: str,
            ports: list[str], duration_us: float, warmup_us: float, mix: str, buffer_mb: float,
            alpha: float, cell_bytes: int, seed: int, results: Path, run_id: Optional[str],
            program: Path, progress: bool, report: bool, quick: bool, jobs: int,
            live: Callable[[Callable], None]) -> None:
    """`p4scope run fairness --instrument tap` (virtual time): with a report
    of every frame the window is shorter unless given (tap_virtual.py says
    why); the options checked, the run to its end."""
    from ..driver import RunRequest
    from .tap_virtual import TAP_DURATION_US, TAP_WARMUP_US, run_cli

    if sample_log2_us is None:
        if ctx.get_parameter_source("duration_us").name == "DEFAULT":
            duration_us = TAP_DURATION_US
        if ctx.get_parameter_source("warmup_us").name == "DEFAULT":
            warmup_us = TAP_WARMUP_US * duration_us / TAP_DURATION_US
    try:
        profs = virtual_cli.profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        fp = params_from_options(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        virtual_cli.fail(str(e))
    req = RunRequest("fairness", profs, {"fairness": fp}, seed, results, run_id, program,
                     progress, report, jobs)
    run_cli(req, sample_log2_us, program, live)


def run_mininet(n: str, link_bw: str, load: float, duration_s: float, warmup_s: float,
                queue_packets: int, mix: str, switch: str, bmv2: bool, results: Path,
                run_id: Optional[str], progress: bool, report: bool,
                watch: Callable[[Callable[[], None]], None] = lambda run: run()) -> None:
    """`p4scope run fairness --mode mininet`: fairness N:1 with iMIX (seed 000, Table 3)
    at rates the software switch sustains; the virtual-time run's tables and report."""
    try:
        p = MnFairnessParams(
            n=tuple(parse_int_list(n, "--n")), link_bw=link_bw, load=load,
            duration_s=duration_s, warmup_s=warmup_s, queue_packets=queue_packets or None,
            mix=tuple((int(s), float(w)) for s, w in parse_mix(mix)),
            kinds=mininet_cli.kinds_option(switch, bmv2)).check()
    except ParamError as e:
        mininet_cli.fail(str(e))
    from .mininet import execute_fairness

    watch(lambda: mininet_cli.execute_in_mininet("fairness-mininet", execute_fairness, p, results, run_id,
                                       progress, report))


