"""The Mininet side of `p4scope run`: `tcp-incast` (Mininet only), and the
`--mode mininet` runs of `fairness` and `microburst`, whose commands
(experiments.cli) take this module's options and call its runners (root).

Options are checked before anything starts (exit status 2 with the
reason); a run exits 0 when complete, 1 when partial or failed (130 after
Ctrl-C), 3 when this machine cannot run Mininet (not root, tools
missing), and prints where the results and the report are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..experiments.params import Mode
from ..experiments.run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel


def sigterm_as_interrupt() -> None:
    """`kill PID` ends a run as Ctrl-C does: the cases measured so far are
    kept, the run folder says partial, and the Mininet testbed is removed
    (a SIGKILL leaves that to the next run's start or `p4scope clean --stale`).
    For the rest of the process; `runner.sigterm_interrupts()` for a block."""
    from ..experiments.runner import install_sigterm_interrupt

    install_sigterm_interrupt()


def _fail(msg: str, code: int = 2) -> None:
    typer.echo(f"p4scope run: error: {msg}", err=True)
    raise typer.Exit(code)


def kinds_option(switch: str, bmv2: bool) -> tuple[str, ...]:
    kinds = [k.strip() for k in switch.split(",") if k.strip()]
    if bmv2 and "bmv2" not in kinds:
        kinds.append("bmv2")
    bad = [k for k in kinds if k not in ("p4scope", "bmv2")]
    if bad or not kinds:
        _fail(f"--switch {switch!r}: give p4scope and/or bmv2")
    return tuple(kinds)


def finish(res, skipped: Optional[dict[str, str]] = None) -> None:
    """Print how a run ended (and the switch kinds it `skipped`), where its
    results and report are; exit 1 when it failed or is partial, 128 + the
    signal when one ended it (Ctrl-C: 130, SIGTERM: 143). Virtual-time runs
    (experiments.cli) end here too."""
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
    from ..experiments.runner import sigterm_interrupts
    from .driver import NeedsRoot, check_host

    try:
        check_host()
    except NeedsRoot as e:
        _fail(f"{e} ({name} runs in Mininet)", 3)
    try:
        with sigterm_interrupts():
            res = execute(params, results, run_id, progress, report,
                          echo=lambda s: typer.echo(s, err=True))
    except ValueError as e:
        _fail(str(e))
    finish(res, res.skipped)


MININET_PANEL = "Mininet (--mode mininet)"

SWITCH = typer.Option("p4scope", "--switch", rich_help_panel=MININET_PANEL,
                      help="Switch kinds in the nodes: p4scope, bmv2 or both (p4scope,bmv2).")
BMV2 = typer.Option(False, "--bmv2", rich_help_panel=MININET_PANEL,
                    help="Also run every case with BMv2 (simple_switch_grpc) in the nodes; "
                         "skipped, saying why, where it is not installed.")
LINK_BW = typer.Option("10M", "--link-bw", rich_help_panel=MININET_PANEL,
                       help="Rate of every host link (htb), 1k..400G.")
FAIR_LOAD = typer.Option(1.0, "--load", rich_help_panel=MININET_PANEL,
                         help="Fraction of line rate each sender offers, 0.05..1.")
FAIR_DURATION_S = typer.Option(4.0, "--duration-s", rich_help_panel=MININET_PANEL,
                               help="Seconds each case's streams last, up to 120.")
FAIR_WARMUP_S = typer.Option(1.5, "--warmup-s", rich_help_panel=MININET_PANEL,
                             help="Seconds before the measurement window, below --duration-s.")
FAIR_QUEUE = typer.Option(200, "--queue-packets", rich_help_panel=MININET_PANEL,
                          help="Packets the receiver link's queue holds, 1..100000 (0: the kernel's default).")
BURST_QUEUE = typer.Option(100, "--queue-packets", rich_help_panel=MININET_PANEL,
                           help="Packets the receiver link's queue holds (the buffer measured), 4..10000.")
MB_SIZES = "256,512,1518"
MB_SIZES_4TO1 = "512,1518"



def run_tcp_incast(
    mode: Mode = typer.Option(Mode.mininet, "--mode",
                              help="mininet, the only mode of this run: the virtual-time engine "
                                   "has no TCP stacks."),
    senders: int = typer.Option(16, "--senders", help="Sending hosts, 1..64 (seed 001: 16)."),
    flows: int = typer.Option(16, "--flows", help="TCP flows per sender, 1..64 (seed 001: 16)."),
    flow_bytes: str = typer.Option("256K", "--flow-bytes", help="Bytes per flow, 1..64G; a comma list runs one job per size (seed 001: 200M..10G at 100GbE; scale to the link)."),
    link_bw: str = typer.Option("100M", "--link-bw", help="Rate of every host link (htb), 1k..400G."),
    receiver_bw: Optional[str] = typer.Option(None, "--receiver-bw", help="Rate of the receiver's link (default: --link-bw)."),
    queue_packets: int = typer.Option(200, "--queue-packets", help="Packets the receiver link's queue holds, 1..100000 (0: the kernel's default)."),
    window: str = typer.Option("256K", "--window", help="Socket buffer of every flow, 4K..64M (seed 001: 256KB TCP window)."),
    repeats: int = typer.Option(1, "--repeats", help="Jobs per size and switch, 1..100."),
    bin_ms: float = typer.Option(10.0, "--bin-ms", help="Bins of the aggregate rate at the receiver (ms), 1..1000."),
    switch: str = without_panel(SWITCH), bmv2: bool = without_panel(BMV2), results: Path = RESULTS,
    run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS, report: bool = REPORT,
) -> None:
    """TCP incast (seed 001), in Mininet only (root).

    Senders x flows to one receiver through the reference DUT; aggregate rate over
    time, flow and job completion times, queue telemetry alongside."""
    from . import incast as I

    if mode is not Mode.mininet:
        _fail(f"--mode {mode.value}: tcp-incast needs real TCP stacks, so it runs in Mininet only "
              "(--mode mininet); the virtual-time engine has no TCP")
    try:
        p = I.IncastParams(
            senders=senders, flows=flows,
            flow_bytes=tuple(I.parse_size(x, "--flow-bytes") for x in flow_bytes.split(",") if x.strip()),
            link_bw=link_bw, receiver_bw=receiver_bw,
            queue_packets=queue_packets or None, window_bytes=I.parse_size(window, "--window"),
            repeats=repeats, bin_ms=bin_ms, kinds=kinds_option(switch, bmv2)).check()
    except I.ParamError as e:
        _fail(str(e))
    from .incast_run import execute_incast

    execute_in_mininet("tcp-incast", execute_incast, p, results, run_id, progress, report)


def run_fairness_mininet(n: str, link_bw: str, load: float, duration_s: float, warmup_s: float,
                         queue_packets: int, mix: str, switch: str, bmv2: bool, results: Path,
                         run_id: Optional[str], progress: bool, report: bool) -> None:
    """`p4scope run fairness --mode mininet`: fairness N:1 with iMIX (seed 000, Table 3)
    at rates the software switch sustains; the virtual-time run's tables and report."""
    from ..experiments.params import ParamError as VParamError
    from ..experiments.params import parse_int_list, parse_mix
    from . import fairness as F
    from .incast import ParamError

    try:
        p = F.MnFairnessParams(
            n=tuple(parse_int_list(n, "--n")), link_bw=link_bw, load=load,
            duration_s=duration_s, warmup_s=warmup_s, queue_packets=queue_packets or None,
            mix=tuple((int(s), float(w)) for s, w in parse_mix(mix)),
            kinds=kinds_option(switch, bmv2)).check()
    except (ParamError, VParamError) as e:
        _fail(str(e))
    from .fairness_run import execute_fairness

    execute_in_mininet("fairness-mininet", execute_fairness, p, results, run_id, progress, report)


def run_microburst_mininet(sizes: str, sizes_4to1: str, link_bw: str, queue_packets: int,
                           burst_frames: Optional[int], switch: str, bmv2: bool, results: Path,
                           run_id: Optional[str], progress: bool, report: bool) -> None:
    """`p4scope run microburst --mode mininet`: microburst absorption 2:1 and 4:1 (seeds
    000, 001) at rates the software switch sustains; the virtual-time run's tables and report."""
    from ..experiments.params import ParamError as VParamError
    from ..experiments.params import parse_int_list
    from . import microburst as M
    from .incast import ParamError

    try:
        p = M.MnBurstParams(
            sizes_2to1=tuple(parse_int_list(sizes, "--sizes")),
            sizes_4to1=() if sizes_4to1 == "none" else tuple(parse_int_list(sizes_4to1, "--sizes-4to1")),
            link_bw=link_bw, queue_packets=queue_packets, burst_frames=burst_frames,
            kinds=kinds_option(switch, bmv2)).check()
    except (ParamError, VParamError) as e:
        _fail(str(e))
    from .microburst_run import execute_microburst

    execute_in_mininet("microburst-mininet", execute_microburst, p, results, run_id, progress, report)
