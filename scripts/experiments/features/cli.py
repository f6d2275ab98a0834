"""`p4scope run features`: seed 001's throughput and latency with and
without 24 ACL rules, and ESG's fairness with the rules on, against the
reference DUT in virtual time (--mode virtual) or with real traffic
through it in Mininet (--mode mininet, root: p4scope switch or BMv2, the
rules written over P4Runtime).

Each mode has options of its own; giving one of the other mode's exits 2.
A Mininet run exits 3 when this machine cannot run it (not root, Mininet
or the DUT missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from .. import mode_cli, virtual_cli
from ..mode_cli import MININET_PANEL
from ..params import Mode, ParamError, check_rate, parse_int_list, parse_pairs
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from .params import (ESG_FAIRNESS, ESG_PAIRS, ESG_SIZES, MODE_DEFAULTS, TESTS, FeaturesParams,
                     fairness_text, pairs_text, parse_fairness)

_M = MODE_DEFAULTS["mininet"]


def command(
        ctx: typer.Context,
        mode: Mode = mode_cli.mode_option("real traffic through the reference DUT in Mininet "
                                          "(root)."),
        sizes: str = typer.Option(",".join(map(str, ESG_SIZES)), "--sizes",
                                  help="Packet sizes of the throughput and latency tests (B, FCS "
                                       "included), comma-separated."),
        pairs: Optional[str] = typer.Option(
            None, "--pairs", show_default=False,
            help=f"Adjacent port pairs A-B, comma-separated; each pair sends both ways, all "
                 f"pairs at once (default {pairs_text(ESG_PAIRS)}; in Mininet the first of "
                 f"these, one per two cores of this machine)."),
        tests: str = typer.Option(",".join(TESTS), "--tests", help="Which tests: "
                                  + ", ".join(TESTS) + "."),
        fairness: str = typer.Option(fairness_text(ESG_FAIRNESS), "--fairness",
                                     help="Fairness scenarios N:1@SIZE, comma-separated: N "
                                          "source ports at line rate into port 32, rules on."),
        tolerance: float = typer.Option(0.0, "--tolerance-pct", help="Loss a throughput trial "
                                        "may have, % (0: RFC 2544)."),
        resolution: Optional[float] = mode_cli.resolution_option(MODE_DEFAULTS),
        latency_trials: int = typer.Option(20, "--latency-trials", help="Latency trials per size "
                                           "and rule setting (RFC 2544: 20)."),
        trial_frames: int = typer.Option(10_000, "--trial-frames", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                         help="Frames each stream sends per throughput or "
                                              "latency trial, 100..10,000,000."),
        fairness_us: float = typer.Option(100.0, "--fairness-us", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                          help="Virtual time each fairness trial offers its "
                                               "load, 1..100000 us."),
        profile: str = typer.Option("fair", "--profile", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                    help="The traffic-manager profile (fair or unfair)."),
        buffer_mb: float = virtual_cli.BUFFER, alpha: float = virtual_cli.ALPHA, cell_bytes: int = virtual_cli.CELL,
        seed: int = virtual_cli.SEED, program: Path = virtual_cli.PROGRAM,
        dut: str = typer.Option("p4scope", "--dut", rich_help_panel=MININET_PANEL,
                                help="The reference DUT's switch: p4scope (p4scope switch) or "
                                     "bmv2 (simple_switch_grpc, if installed); the rules are "
                                     "written over P4Runtime."),
        line_rate: str = typer.Option(f"{_M['rate_bps'] / 1e6:g}M", "--line-rate",
                                      rich_help_panel=MININET_PANEL,
                                      help="What the tester says a port is (1M..100G): offered "
                                           "loads are shares of it."),
        trial_s: float = typer.Option(_M["trial_s"], "--trial-s", rich_help_panel=MININET_PANEL,
                                      help="Seconds each trial lasts (fairness's too), "
                                           "0.05..60."),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT,
        jobs: int = virtual_cli.JOBS,
        cluster: Optional[str] = virtual_cli.CLUSTER) -> None:
    """Throughput and latency with and without 24 ACL rules (seed 001, ESG Figure 11) on
    six port pairs at 64, 82, 97 B, and their difference; fairness N:1, rules on (Fig. 12, 13);
    --mode virtual|mininet."""
    mode_cli.refuse_other_mode(ctx, mode)
    try:
        common: dict[str, Any] = dict(
            sizes=parse_int_list(sizes, "--sizes"),
            pairs=parse_pairs(pairs) if pairs is not None else None,
            tests=tuple(x.strip() for x in tests.split(",") if x.strip()),
            tolerance_pct=tolerance, resolution_pct=resolution, latency_trials=latency_trials,
            fairness=parse_fairness(fairness))
        if mode is Mode.mininet:
            p = FeaturesParams.for_mode("mininet", **common, dut=dut.strip(), trial_s=trial_s,
                                        rate_bps=check_rate(line_rate, "--line-rate")).check()
        else:
            p = FeaturesParams.for_mode("virtual", **common, trial_frames=trial_frames,
                                        fairness_us=fairness_us).check()
            prof = mode_cli.one_profile(profile, buffer_mb, alpha, cell_bytes, seed)
    except ParamError as e:
        virtual_cli.fail(str(e))
    from .run import execute, execute_mininet

    if mode is Mode.mininet:
        mode_cli.mininet_duts([p.dut], "features")
        virtual_cli.run_to_end(lambda: execute_mininet(p, results, run_id, progress, report,
                                                       echo=virtual_cli.echo))
        return
    virtual_cli.run_to_end(lambda: execute(p, prof, seed, results, run_id, program, progress,
                                           report, jobs=jobs, cluster=cluster,
                                           echo=virtual_cli.echo), program)
