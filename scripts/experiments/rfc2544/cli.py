"""`p4scope run rfc2544`: the RFC 2544 suite against the reference DUT in
virtual time (--mode virtual), or against a DUT in Mininet with real
traffic (--mode mininet, root: the reference DUT in p4scope switch or
BMv2, the Linux bridge, or a Mininet switch class of the user's), or
against several DUTs one after another, compared in one table.

Each mode has options of its own; giving one of the other mode's exits 2
(as `p4scope run microburst|fairness` do). A Mininet run exits 3 when this
machine cannot run it (not root, Mininet or every DUT missing; a DUT not
installed is skipped when another can run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from .. import mode_cli, virtual_cli
from ..mode_cli import MININET_PANEL
from ..params import (Mode, ParamError, check_rate, default_profiles, parse_int_list,
                      parse_pairs)
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from ..virtual_cli import VIRTUAL_PANEL
from .params import JUMBO_SIZES, MODE_DEFAULTS, STANDARD_SIZES, TESTS, Rfc2544Params

_M = MODE_DEFAULTS["mininet"]


def _fail(msg: str, code: int = 2) -> NoReturn:
    virtual_cli.fail(msg, code, "rfc2544")


def run_rfc2544(
        ctx: typer.Context,
        mode: Mode = mode_cli.mode_option("real traffic through a DUT in Mininet (root)."),
        sizes: str = typer.Option(",".join(map(str, STANDARD_SIZES)), "--sizes",
                                  help="Frame sizes (B, FCS included), comma-separated."),
        jumbo: bool = typer.Option(False, "--jumbo", help=f"Add the jumbo sizes "
                                   f"{', '.join(map(str, JUMBO_SIZES))}."),
        pairs: str = typer.Option("1-2", "--pairs", help="Port pairs A-B, comma-separated; each "
                                  "pair sends both ways, all pairs at once."),
        tests: str = typer.Option(",".join(TESTS), "--tests", help="Which tests: "
                                  + ", ".join(TESTS) + "."),
        tolerance: float = typer.Option(0.0, "--tolerance-pct", help="Loss a throughput trial may "
                                        "have, % (0: RFC 2544; 0.01 or 0.5: partial drop rate)."),
        resolution: Optional[float] = mode_cli.resolution_option(MODE_DEFAULTS),
        latency_trials: int = typer.Option(20, "--latency-trials", help="Latency trials per size "
                                           "(RFC 2544: at least 20)."),
        b2b_max: Optional[int] = typer.Option(None, "--b2b-max-frames", help="Longest burst "
                                              "tried (default: twice what the buffer holds; in "
                                              "Mininet, one trial at line rate)."),
        dut_rate: float = typer.Option(100.0, "--dut-rate-pct", help="Shape the DUT's ports to "
                                       "this % of line rate (a DUT with a known limit; in "
                                       "Mininet a P4 DUT's queue rate, over Thrift)."),
        trial_frames: Optional[int] = typer.Option(
            None, "--trial-frames", rich_help_panel=VIRTUAL_PANEL, help="Frames per stream in a "
            "trial (default: an overload of one resolution step shows as 50 frames)."),
        buffer_mb: float = typer.Option(16.0, "--buffer-mb", rich_help_panel=VIRTUAL_PANEL,
                                        help="Shared buffer, MB (0.01..1024)."),
        alpha: float = typer.Option(1.0, "--alpha", rich_help_panel=VIRTUAL_PANEL,
                                    help="Dynamic-threshold factor (0..64]."),
        seed: int = typer.Option(1, "--seed", rich_help_panel=VIRTUAL_PANEL,
                                 help="Seed of the engine and the sources."),
        program: Path = typer.Option(Path("p4src/dut.p4"), "--program",
                                     rich_help_panel=VIRTUAL_PANEL,
                                     help="The reference DUT's P4 source."),
        dut: str = typer.Option("p4scope", "--dut", rich_help_panel=MININET_PANEL,
                                help="The switch under test: p4scope (the reference DUT, "
                                     "configured by the controller), bmv2 (the same in "
                                     "simple_switch_grpc), bridge (the Linux bridge) or "
                                     "module:Class (a Mininet switch class); several, "
                                     "comma-separated (bridge,p4scope,bmv2), are measured "
                                     "one after another and compared; one not installed "
                                     "here is skipped, saying why."),
        line_rate: str = typer.Option("100M", "--line-rate", rich_help_panel=MININET_PANEL,
                                      help="What the tester says a port is (1M..100G): offered "
                                           "loads are shares of it."),
        link_bw: Optional[str] = typer.Option(None, "--link-bw", rich_help_panel=MININET_PANEL,
                                              help="Shape every link with htb to this rate "
                                                   "(a DUT with slower ports; default unshaped)."),
        link_queue: Optional[int] = typer.Option(
            None, "--link-queue", rich_help_panel=MININET_PANEL,
            help="Packets each shaped link queues, 1..100000 (with --link-bw; default the "
                 "kernel's)."),
        trial_s: float = typer.Option(_M["trial_s"], "--trial-s", rich_help_panel=MININET_PANEL,
                                      help="Seconds a trial lasts, 0.05..60."),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID,
        progress: bool = PROGRESS, report: bool = REPORT,
        jobs: int = virtual_cli.JOBS,
        cluster: Optional[str] = virtual_cli.CLUSTER) -> None:
    """RFC 2544 throughput, latency (FIFO and LIFO), frame loss rate,
    back-to-back frames and system recovery per frame size; --mode virtual|mininet.

    --mode virtual (default): in virtual time at 100GbE against the reference
    DUT. --mode mininet (root): real traffic from tester hosts through --dut
    in Mininet, at --line-rate."""
    mode_cli.refuse_other_mode(ctx, mode)
    try:
        size_list = parse_int_list(sizes, "--sizes") + (JUMBO_SIZES if jumbo else ())
        common: dict[str, Any] = dict(
            sizes=tuple(dict.fromkeys(size_list)), pairs=parse_pairs(pairs),
            tests=tuple(t.strip() for t in tests.split(",") if t.strip()),
            tolerance_pct=tolerance, resolution_pct=resolution, latency_trials=latency_trials,
            b2b_max_frames=b2b_max, dut_rate_pct=dut_rate)
        if mode is Mode.mininet:
            duts = ",".join(d.strip() for d in dut.split(","))
            p = Rfc2544Params.for_mode("mininet", **common, dut=duts, trial_s=trial_s,
                                       rate_bps=check_rate(line_rate, "--line-rate"),
                                       link_bw_bps=check_rate(link_bw, "--link-bw"),
                                       link_queue=link_queue).check()
        else:
            import math
            if not (math.isfinite(buffer_mb) and 0.01 <= buffer_mb <= 1024):
                raise ParamError(f"--buffer-mb: {buffer_mb!r} is outside 0.01..1024")
            if not (math.isfinite(alpha) and 0 < alpha <= 64):
                raise ParamError(f"--alpha: {alpha!r} is outside (0, 64]")
            if not 0 <= seed < 2**63:
                raise ParamError(f"--seed: {seed} is outside 0..2^63-1")
            p = Rfc2544Params.for_mode("virtual", **common, trial_frames=trial_frames).check()
            profile = default_profiles(int(buffer_mb * 2**20), alpha)["fair"].check()
    except ParamError as e:
        _fail(str(e))
    from .run import execute, execute_mininet

    if mode is Mode.mininet:
        # a DUT not installed here is skipped, saying why (exit 3 when none is left)
        _, skipped = mode_cli.mininet_duts(p.duts, "rfc2544", _fail)
        virtual_cli.run_to_end(lambda: execute_mininet(p, results, run_id, progress, report,
                                                       echo=virtual_cli.echo, skipped=skipped))
        return
    virtual_cli.run_to_end(lambda: execute(p, profile, seed, results, run_id, program, progress,
                                           report, jobs=jobs, cluster=cluster,
                                           echo=virtual_cli.echo), program)
