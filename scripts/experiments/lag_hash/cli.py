"""`p4scope run lag-hash`: seed 002's 1..12 fixed-rate streams over one
port and over a LAG of the reference DUT, in virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli
from ..params import ParamError
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import (FIELDS, HASHES, SEED_FRAME, SEED_LAG, SEED_PORT_GBPS, SEED_RUNS,
                     SEED_STREAM_GBPS, SEED_STREAMS, SETUPS, LagHashParams, parse_lag,
                     parse_setups, parse_streams, streams_text)


def command(
        streams: str = typer.Option(streams_text(SEED_STREAMS), "--streams",
                                    help="Stream counts, each a case: a range (1-12) or a list "
                                         "(1,4,8), 1..64."),
        runs: int = typer.Option(SEED_RUNS, "--runs", help="Runs per stream count, each with new "
                                 "L4 ports (a seed per run), 1..1000."),
        stream_gbps: float = typer.Option(SEED_STREAM_GBPS, "--stream-gbps",
                                          help="Each stream's fixed rate, Gbit/s (layer 1)."),
        frame_size: int = typer.Option(SEED_FRAME, "--frame-size", help="Frame size in bytes, "
                                       "FCS included (9018: MTU 9000, as the seed)."),
        lag: str = typer.Option(f"{SEED_LAG[0]}x{SEED_LAG[1]:g}", "--lag",
                                help="The LAG: MEMBERSxGBPS (members 1..16)."),
        port_gbps: float = typer.Option(SEED_PORT_GBPS, "--port-gbps",
                                        help="The single port's rate, Gbit/s."),
        setups: str = typer.Option(",".join(SETUPS), "--setups",
                                   help="Which egress: port (one port), lag, or port,lag (both)."),
        hash_: str = typer.Option("crc32", "--hash", help="The DUT's LAG selector algorithm "
                                  "(compiled in): " + ", ".join(HASHES) + "."),
        fields: str = typer.Option("layer3+4", "--hash-fields", help="The selector's key: "
                                   + "; ".join(f"{k} ({v})" for k, v in FIELDS.items()) + "."),
        duration_us: float = typer.Option(2300.0, "--duration-us", help="Virtual time of each "
                                          "run, us (up to 100000)."),
        warmup_us: float = typer.Option(300.0, "--warmup-us", help="Warm-up at the start of "
                                        "each run, not measured, us."),
        profile: str = typer.Option("fair", "--profile", help="The traffic-manager profile "
                                    "(fair or unfair)."),
        buffer_mb: float = without_panel(virtual_cli.BUFFER),
        alpha: float = without_panel(virtual_cli.ALPHA), cell_bytes: int = without_panel(virtual_cli.CELL),
        seed: int = without_panel(virtual_cli.SEED), program: Path = without_panel(virtual_cli.PROGRAM),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT,
        jobs: int = without_panel(virtual_cli.JOBS),
        cluster: Optional[str] = without_panel(virtual_cli.CLUSTER)) -> None:
    """LAG hashing (seed 002): 1..12 fixed-rate streams, 15 runs each with new L4 ports, out
    of one 100G port and out of a 4x25G LAG: per-stream rate, its spread, the sum vs the
    target, per-member load, beside what a uniform hash predicts."""
    from .run import execute

    try:
        members, member_gbps = parse_lag(lag)
        p = LagHashParams(streams=parse_streams(streams), runs=runs, stream_gbps=stream_gbps,
                          frame_size=frame_size, members=members, member_gbps=member_gbps,
                          port_gbps=port_gbps, setups=parse_setups(setups), hash=hash_,
                          fields=fields, duration_us=duration_us, warmup_us=warmup_us).check()
        profs = virtual_cli.profiles(profile, buffer_mb, alpha, cell_bytes, seed)
        if len(profs) != 1:
            raise ParamError("--profile: one profile (fair or unfair)")
    except ParamError as e:
        virtual_cli.fail(str(e))
    virtual_cli.run_to_end(lambda: execute(p, next(iter(profs.values())), seed, results, run_id, program,
                                 progress, report, jobs=jobs, cluster=cluster,
                                 echo=lambda s: typer.echo(s, err=True)),
                 program)
