"""`p4scope run lag-failover`: seed 004's trunk throughput and failover on
the reference DUT in virtual time (--mode virtual) or with real traffic
through it in Mininet (--mode mininet, root: p4scope switch or BMv2, the
member links taken down and up with `ip link set`).

Each mode has options of its own; giving one of the other mode's exits 2.
A Mininet run exits 3 when this machine cannot run it (not root, Mininet
or the DUT missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from .. import mode_cli, virtual_cli
from ..mode_cli import MININET_PANEL
from ..params import Mode, ParamError, check_rate, check_seed, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .mininet_params import MininetLagParams
from .params import (FAILOVER, SEED_CLIENTS, SEED_FRAME, SEED_MEMBERS, LagFailoverParams,
                     parse_names, parse_ports)
from .policies import POLICIES

_D = LagFailoverParams()
_M = MininetLagParams()
POLICIES_HELP = ("Load-balancing policies: "
                 + "; ".join(f"{k} ({v.label})" for k, v in POLICIES.items())
                 + ". Round robin is reported as not possible on the reference DUT.")


def command(
        ctx: typer.Context,
        mode: Mode = mode_cli.mode_option("real traffic through the reference DUT in Mininet "
                                          "(root), member links taken down with `ip link set`."),
        clients: str = typer.Option(",".join(map(str, SEED_CLIENTS)), "--clients",
                                    help="Client counts, each a case (clients on ports 1..N), "
                                         "1..8."),
        policies: str = typer.Option(",".join(_D.policies), "--policies", help=POLICIES_HELP),
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
        iterations: int = typer.Option(_D.iterations, "--iterations",
                                       help="Iterations averaged, each with new UDP source "
                                            "ports, 1..100."),
        seed: int = without_panel(virtual_cli.SEED), program: Path = without_panel(virtual_cli.PROGRAM),
        throughput_us: float = typer.Option(_D.throughput_us, "--throughput-us",
                                            rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                            help="Virtual time of a throughput trial, us."),
        warmup_us: float = typer.Option(_D.warmup_us, "--warmup-us",
                                        rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                        help="Warm-up of a throughput trial, not measured, us."),
        interval_us: float = typer.Option(_D.interval_us, "--interval-us",
                                          rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                          help="The seed's 30 s between link events, scaled "
                                               "to virtual us (600: 1:50,000)."),
        reaction_us: float = typer.Option(_D.reaction_us, "--reaction-us",
                                          rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                          help="The controller's reaction to a port-status "
                                               "event, virtual us (10: the seed's 0.5 s at the "
                                               "same scale)."),
        bin_us: float = typer.Option(_D.bin_us, "--bin-us", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                     help="Time bin of the throughput-over-time plot, us."),
        profile: str = typer.Option("fair", "--profile", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                    help="The traffic-manager profile (fair or unfair)."),
        buffer_mb: float = virtual_cli.BUFFER, alpha: float = virtual_cli.ALPHA, cell_bytes: int = virtual_cli.CELL,
        dut: str = typer.Option(_M.dut, "--dut", rich_help_panel=MININET_PANEL,
                                help="The reference DUT's switch: p4scope (p4scope switch) or "
                                     "bmv2 (simple_switch_grpc, if installed); the LAG is "
                                     "written over P4Runtime."),
        line_rate: str = typer.Option(f"{_M.rate_bps / 1e6:g}M", "--line-rate",
                                      rich_help_panel=MININET_PANEL,
                                      help="What a port is (1M..10G): every DUT link is shaped "
                                           "to it and loads are shares of it."),
        throughput_s: float = typer.Option(_M.throughput_s, "--throughput-s",
                                           rich_help_panel=MININET_PANEL,
                                           help="Seconds a throughput trial lasts, 0.2..60."),
        warmup_s: float = typer.Option(_M.warmup_s, "--warmup-s", rich_help_panel=MININET_PANEL,
                                       help="Warm-up of a throughput trial, not measured, s."),
        interval_s: float = typer.Option(_M.interval_s, "--interval-s",
                                         rich_help_panel=MININET_PANEL,
                                         help="The seed's 30 s between link events, scaled "
                                              "(2: 1:15), 0.2..60 s."),
        bin_ms: float = typer.Option(_M.bin_ms, "--bin-ms", rich_help_panel=MININET_PANEL,
                                     help="How often the member links' counters are read (the "
                                          "throughput-over-time plot's bin), ms."),
        link_queue: int = typer.Option(_M.link_queue, "--link-queue",
                                       rich_help_panel=MININET_PANEL,
                                       help="Packets each shaped DUT link queues, 10..100000."),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT,
        jobs: int = virtual_cli.JOBS,
        cluster: Optional[str] = virtual_cli.CLUSTER) -> None:
    """Link aggregation (seed 004): a 2-member trunk's throughput with 2 and 3 clients per
    policy, and the outage and recovery when a member is pulled and restored under load, with
    failover by the controller and in the data plane (watch ports); --mode virtual|mininet."""
    from .run import execute

    mode_cli.refuse_other_mode(ctx, mode)
    try:
        trunk: dict[str, Any] = dict(
            clients=parse_int_list(clients, "--clients"),
            policies=parse_names(policies, POLICIES, "--policies"),
            failover=parse_names(failover, FAILOVER, "--failover"),
            members=parse_ports(members, "--members"), frame_size=frame_size,
            client_load_pct=client_load, failover_load_pct=failover_load, iterations=iterations)
        if mode is Mode.mininet:
            m = MininetLagParams(**trunk, dut=dut.strip(),
                                 rate_bps=check_rate(line_rate, "--line-rate"),
                                 throughput_s=throughput_s, warmup_s=warmup_s,
                                 interval_s=interval_s, bin_ms=bin_ms,
                                 link_queue=link_queue).check()
            check_seed(seed)
        else:
            p = LagFailoverParams(**trunk, throughput_us=throughput_us, warmup_us=warmup_us,
                                  interval_us=interval_us, reaction_us=reaction_us,
                                  bin_us=bin_us).check()
            prof = mode_cli.one_profile(profile, buffer_mb, alpha, cell_bytes, seed)
    except ParamError as e:
        virtual_cli.fail(str(e))
    if mode is Mode.mininet:
        from .mininet_run import execute_mininet

        mode_cli.mininet_duts([m.dut], "lag-failover")
        virtual_cli.run_to_end(lambda: execute_mininet(
            m, seed, program, results, run_id, progress, report, echo=virtual_cli.echo), program)
        return
    virtual_cli.run_to_end(lambda: execute(p, prof, seed, results, run_id, program, progress,
                                           report, jobs=jobs, cluster=cluster,
                                           echo=virtual_cli.echo), program)
