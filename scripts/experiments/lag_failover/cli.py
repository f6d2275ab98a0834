"""`p4scope run lag-failover`: seed 004's trunk throughput and failover on
the reference DUT in virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli as V
from ..params import ParamError, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import (FAILOVER, SEED_CLIENTS, SEED_FRAME, SEED_MEMBERS, LagFailoverParams,
                     parse_names, parse_ports)
from .policies import POLICIES

_D = LagFailoverParams()


def command(
        clients: str = typer.Option(",".join(map(str, SEED_CLIENTS)), "--clients",
                                    help="Client counts, each a case (clients on ports 1..N), "
                                         "1..8."),
        policies: str = typer.Option(",".join(_D.policies), "--policies",
                                     help="Load-balancing policies: "
                                          + "; ".join(f"{k} ({v.label})"
                                                      for k, v in POLICIES.items())
                                          + ". Round robin is reported as not possible on "
                                            "the reference DUT."),
        failover: str = typer.Option(",".join(FAILOVER), "--failover",
                                     help="controller (the controller rewrites the LAG after "
                                          "its reaction delay), dataplane (watch ports), or "
                                          "both."),
        members: str = typer.Option(",".join(map(str, SEED_MEMBERS)), "--members",
                                    help="The trunk's member ports on the DUT (1..4 ports)."),
        frame_size: int = typer.Option(SEED_FRAME, "--frame-size",
                                       help="Frame size in bytes, FCS included."),
        client_load: float = typer.Option(_D.client_load_pct, "--client-load-pct",
                                          help="Throughput test: each client's load, % of its "
                                               "line rate."),
        failover_load: float = typer.Option(_D.failover_load_pct, "--failover-load-pct",
                                            help="Failover test: all clients together, % of "
                                                 "one member's line rate."),
        throughput_us: float = typer.Option(_D.throughput_us, "--throughput-us",
                                            help="Virtual time of a throughput trial, us."),
        warmup_us: float = typer.Option(_D.warmup_us, "--warmup-us",
                                        help="Warm-up of a throughput trial, not measured, us."),
        interval_us: float = typer.Option(_D.interval_us, "--interval-us",
                                          help="The seed's 30 s between link events, scaled "
                                               "to virtual us (600: 1:50,000)."),
        reaction_us: float = typer.Option(_D.reaction_us, "--reaction-us",
                                          help="The controller's reaction to a port-status "
                                               "event, virtual us (10: the seed's 0.5 s at the "
                                               "same scale)."),
        iterations: int = typer.Option(_D.iterations, "--iterations",
                                       help="Iterations averaged, each with new UDP source "
                                            "ports, 1..100."),
        bin_us: float = typer.Option(_D.bin_us, "--bin-us",
                                     help="Time bin of the throughput-over-time plot, us."),
        profile: str = typer.Option("fair", "--profile", help="The traffic-manager profile "
                                    "(fair or unfair)."),
        buffer_mb: float = without_panel(V.BUFFER),
        alpha: float = without_panel(V.ALPHA), cell_bytes: int = without_panel(V.CELL),
        seed: int = without_panel(V.SEED), program: Path = without_panel(V.PROGRAM),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT) -> None:
    """Link aggregation (seed 004): a 2-member trunk's throughput with 2 and 3 clients per
    policy, and the outage and recovery when a member is pulled and restored under load, with
    failover by the controller and in the data plane (watch ports)."""
    from .run import execute

    try:
        p = LagFailoverParams(
            clients=parse_int_list(clients, "--clients"),
            policies=parse_names(policies, POLICIES, "--policies"),
            failover=parse_names(failover, FAILOVER, "--failover"),
            members=parse_ports(members, "--members"), frame_size=frame_size,
            client_load_pct=client_load, failover_load_pct=failover_load,
            throughput_us=throughput_us, warmup_us=warmup_us, interval_us=interval_us,
            reaction_us=reaction_us, iterations=iterations, bin_us=bin_us).check()
        profs = V.profiles(profile, buffer_mb, alpha, cell_bytes, seed)
        if len(profs) != 1:
            raise ParamError("--profile: one profile (fair or unfair)")
    except ParamError as e:
        V.fail(str(e))
    V.run_to_end(lambda: execute(p, next(iter(profs.values())), seed, results, run_id, program,
                                 progress, report, echo=lambda s: typer.echo(s, err=True)),
                 program)
