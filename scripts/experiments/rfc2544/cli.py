"""`p4scope run rfc2544`: the RFC 2544 suite against the reference DUT in
virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..params import ParamError, default_profiles, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from .params import JUMBO_SIZES, STANDARD_SIZES, TESTS, Rfc2544Params, parse_pairs


def _fail(msg: str) -> None:
    typer.echo(f"p4scope run rfc2544: error: {msg}", err=True)
    raise typer.Exit(2)


def run_rfc2544(
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
        resolution: float = typer.Option(0.1, "--resolution-pct", help="Throughput search "
                                         "resolution, % of line rate (0.001..10)."),
        trial_frames: Optional[int] = typer.Option(None, "--trial-frames", help="Frames per "
                                                   "stream in a trial (default: an overload of "
                                                   "one resolution step shows as 50 frames)."),
        latency_trials: int = typer.Option(20, "--latency-trials", help="Latency trials per size "
                                           "(RFC 2544: at least 20)."),
        b2b_max: Optional[int] = typer.Option(None, "--b2b-max-frames", help="Longest burst "
                                              "tried (default: twice what the buffer holds)."),
        dut_rate: float = typer.Option(100.0, "--dut-rate-pct", help="Shape the DUT's ports to "
                                       "this % of line rate (a DUT with a known limit)."),
        buffer_mb: float = typer.Option(16.0, "--buffer-mb", help="Shared buffer, MB (0.01..1024)."),
        alpha: float = typer.Option(1.0, "--alpha", help="Dynamic-threshold factor (0..64]."),
        seed: int = typer.Option(1, "--seed", help="Seed of the engine and the sources."),
        program: Path = typer.Option(Path("p4src/dut.p4"), "--program",
                                     help="The reference DUT's P4 source."),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID,
        progress: bool = PROGRESS, report: bool = REPORT) -> None:
    """RFC 2544 throughput, latency (FIFO and LIFO), frame loss rate,
    back-to-back frames and system recovery per frame size, in virtual time
    at 100GbE against the reference DUT."""
    from ..mininet.cli import finish
    from .run import execute

    try:
        size_list = parse_int_list(sizes, "--sizes") + (JUMBO_SIZES if jumbo else ())
        size_list = tuple(dict.fromkeys(size_list))
        import math
        if not (math.isfinite(buffer_mb) and 0.01 <= buffer_mb <= 1024):
            raise ParamError(f"--buffer-mb: {buffer_mb!r} is outside 0.01..1024")
        if not (math.isfinite(alpha) and 0 < alpha <= 64):
            raise ParamError(f"--alpha: {alpha!r} is outside (0, 64]")
        if not 0 <= seed < 2**63:
            raise ParamError(f"--seed: {seed} is outside 0..2^63-1")
        p = Rfc2544Params(sizes=size_list, pairs=parse_pairs(pairs),
                          tests=tuple(t.strip() for t in tests.split(",") if t.strip()),
                          tolerance_pct=tolerance, resolution_pct=resolution,
                          trial_frames=trial_frames, latency_trials=latency_trials,
                          b2b_max_frames=b2b_max, dut_rate_pct=dut_rate).check()
        profile = default_profiles(int(buffer_mb * 2**20), alpha)["fair"].check()
    except ParamError as e:
        _fail(str(e))
    try:
        res = execute(p, profile, seed, results, run_id, program, progress, report,
                      echo=lambda s: typer.echo(s, err=True))
    except (FileNotFoundError, ParamError, ValueError) as e:
        _fail(str(e))
    finish(res)
