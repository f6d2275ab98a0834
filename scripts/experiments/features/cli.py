"""`p4scope run features`: seed 001's throughput and latency with and
without 24 ACL rules, and ESG's fairness with the rules on, against the
reference DUT in virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli as V
from ..params import ParamError, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import (ESG_FAIRNESS, ESG_PAIRS, ESG_SIZES, TESTS, FeaturesParams, fairness_text,
                     pairs_text, parse_fairness, parse_pairs)


def command(
        sizes: str = typer.Option(",".join(map(str, ESG_SIZES)), "--sizes",
                                  help="Packet sizes of the throughput and latency tests (B, FCS "
                                       "included), comma-separated."),
        pairs: str = typer.Option(pairs_text(ESG_PAIRS), "--pairs",
                                  help="Adjacent port pairs A-B, comma-separated; each pair "
                                       "sends both ways, all pairs at once."),
        tests: str = typer.Option(",".join(TESTS), "--tests", help="Which tests: "
                                  + ", ".join(TESTS) + "."),
        fairness: str = typer.Option(fairness_text(ESG_FAIRNESS), "--fairness",
                                     help="Fairness scenarios N:1@SIZE, comma-separated: N "
                                          "source ports at line rate into port 32, rules on."),
        fairness_us: float = typer.Option(100.0, "--fairness-us", help="Virtual time each "
                                          "fairness trial offers its load, 1..100000 us."),
        tolerance: float = typer.Option(0.0, "--tolerance-pct", help="Loss a throughput trial "
                                        "may have, % (0: RFC 2544)."),
        resolution: float = typer.Option(0.1, "--resolution-pct", help="Throughput search "
                                         "resolution, % of line rate (0.001..10)."),
        trial_frames: int = typer.Option(10_000, "--trial-frames", help="Frames each stream "
                                         "sends per throughput or latency trial, "
                                         "100..10,000,000."),
        latency_trials: int = typer.Option(20, "--latency-trials", help="Latency trials per size "
                                           "and rule setting (RFC 2544: 20)."),
        profile: str = typer.Option("fair", "--profile", help="The traffic-manager profile "
                                    "(fair or unfair)."),
        buffer_mb: float = without_panel(V.BUFFER),
        alpha: float = without_panel(V.ALPHA), cell_bytes: int = without_panel(V.CELL),
        seed: int = without_panel(V.SEED), program: Path = without_panel(V.PROGRAM),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT) -> None:
    """Throughput and latency with and without 24 ACL rules (seed 001, ESG Figure 11) on
    six port pairs at 64, 82, 97 B, and their difference; fairness N:1, rules on (Fig. 12, 13)."""
    from .run import execute

    try:
        p = FeaturesParams(sizes=parse_int_list(sizes, "--sizes"), pairs=parse_pairs(pairs),
                           tests=tuple(x.strip() for x in tests.split(",") if x.strip()),
                           tolerance_pct=tolerance, resolution_pct=resolution,
                           trial_frames=trial_frames, latency_trials=latency_trials,
                           fairness=parse_fairness(fairness), fairness_us=fairness_us).check()
        profs = V.profiles(profile, buffer_mb, alpha, cell_bytes, seed)
        if len(profs) != 1:
            raise ParamError("--profile: one profile (fair or unfair)")
    except ParamError as e:
        V.fail(str(e))
    V.run_to_end(lambda: execute(p, next(iter(profs.values())), seed, results, run_id, program,
                                 progress, report, echo=lambda s: typer.echo(s, err=True)),
                 program)
