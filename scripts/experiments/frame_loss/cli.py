"""`p4scope run frame-loss`: Tolly's frame loss at line rate per frame size
against the reference DUT in virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli
from ..params import ParamError, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import SCENARIOS, TOLLY_SIZES, FrameLossParams


def command(
        sizes: str = typer.Option(",".join(map(str, TOLLY_SIZES)), "--sizes",
                                  help="Frame sizes (B, FCS included), comma-separated."),
        scenarios: str = typer.Option(",".join(SCENARIOS), "--scenarios",
                                      help="Tolly's: " + "; ".join(f"{k}: {v}" for k, v in
                                                                   SCENARIOS.items())
                                      + "; or any pairsN (N even) or meshN, N up to 63, -l3 routed."),
        load_pct: float = typer.Option(100.0, "--load-pct", help="What every port offers, % of "
                                       "line rate (Tolly: 100)."),
        trial_frames: int = typer.Option(10_000, "--trial-frames", help="Frames each port sends "
                                         "per trial, 100..10,000,000."),
        profile: str = typer.Option("fair", "--profile", help="The traffic-manager profile "
                                    "(fair or unfair)."), buffer_mb: float = without_panel(virtual_cli.BUFFER),
        alpha: float = without_panel(virtual_cli.ALPHA), cell_bytes: int = without_panel(virtual_cli.CELL),
        seed: int = without_panel(virtual_cli.SEED), program: Path = without_panel(virtual_cli.PROGRAM),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT,
        jobs: int = without_panel(virtual_cli.JOBS),
        cluster: Optional[str] = without_panel(virtual_cli.CLUSTER)) -> None:
    """Frame loss at 100 % of line rate per frame size (seed 000, Tolly Tables 1 and 2):
    32 ports in port pairs and in a full mesh, 6 ports in pairs, 19 sizes 64..9216 B."""
    from .run import execute

    try:
        p = FrameLossParams(sizes=parse_int_list(sizes, "--sizes"),
                            scenarios=tuple(x.strip() for x in scenarios.split(",") if x.strip()),
                            load_pct=load_pct, trial_frames=trial_frames).check()
        profs = virtual_cli.profiles(profile, buffer_mb, alpha, cell_bytes, seed)
        if len(profs) != 1:
            raise ParamError("--profile: one profile (fair or unfair)")
    except ParamError as e:
        virtual_cli.fail(str(e))
    virtual_cli.run_to_end(lambda: execute(p, next(iter(profs.values())), seed, results, run_id, program,
                                 progress, report, jobs=jobs, cluster=cluster,
                                 echo=lambda s: typer.echo(s, err=True)))
