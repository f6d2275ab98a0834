"""A chain of switches in one virtual-time run: what it costs, and the
per-layer latency it measures (seed 003's set-up, the tester on the first
and the last switch).

    p4scope bench fabric [--us 1000] [--size 64] [--chain 4] [--repeats 3]
    .venv/bin/python -m p4scope.bench.fabric ...

Cost: a stream each way between the tester's two ports at 100 % of 100GbE
through the reference DUT, alone (the single-switch tester, Engine.run),
as a fabric of one switch, and as a chain of N; per set-up the wall time
(best of the repeats), frames through per second, frame-hops (a frame
crossing one switch) per second, events per second and the run's digest.
Latency: seed 003's table per layer (a chain of 1..N switches) and frame
size, from the tester; then the hops of the longest chain from the
switches' ground truth, and the largest difference between the tester's
latency and the hops plus wires over every frame.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

MAX_US = 100_000.0


@dataclass
class Cost:
    label: str
    switches: int
    wall_s: float
    frames: int
    events: int
    digest: str

    @property
    def hop_frames(self) -> int:
        return self.frames * self.switches


def _streams(add, vf, size: int, us: float) -> None:
    for src, dst in ((vf.first, vf.last), (vf.last, vf.first)):
        add(src, size=size, rate_pct=100.0, duration_ns=int(us * 1000),
            **vf.addresses(src, dst))


def measure(vf, size: int, us: float, fabric: bool) -> tuple[float, int, int, str]:
    """One run on a fresh `vf`: (wall s, frames through, events, digest)."""
    vf.reset()
    if fabric:
        with vf.locked() as f:
            _streams(lambda end, **kw: f.add_stream(end[0], end[1], **kw), vf, size, us)
            t0 = time.perf_counter()
            events = f.run(drain=True)
            wall = time.perf_counter() - t0
            rows, digest = f.stream_stats(), f.sim_digest()
    else:
        with vf.switches[0].locked() as e:
            _streams(lambda end, **kw: e.add_stream(end[1], **kw), vf, size, us)
            t0 = time.perf_counter()
            events = e.run(drain=True)
            wall = time.perf_counter() - t0
            rows, digest = e.stream_stats(), e.sim_digest()
    return wall, sum(int(r["rx_frames"]) for r in rows), int(events), str(digest)


def cost(program, profile, n: int, size: int, us: float, repeats: int) -> list[Cost]:
    from p4scope.experiments.fabric import chain

    out = []
    for label, length, fabric in (("one switch, Engine.run", 1, False),
                                  ("one switch, Fabric", 1, True),
                                  (f"chain of {n}, Fabric", n, True)):
        with chain(program, length, profile) as vf:
            runs = [measure(vf, size, us, fabric) for _ in range(repeats)]
        if len({r[1:] for r in runs}) != 1:
            raise SystemExit(f"{label}: runs of the same set-up differ: {runs}")
        best = min(runs)
        out.append(Cost(label, length, best[0], best[1], best[2], best[3]))
    return out


def print_cost(costs: list[Cost], out=None) -> None:
    out = out or sys.stdout
    base = costs[0].hop_frames / costs[0].wall_s
    print(f"{'set-up':<24} {'frames':>9} {'frame-hops':>10} {'wall s':>7} {'frames/s':>10} "
          f"{'hops/s':>10} {'events/s':>10} {'hops/s vs alone':>15}  digest", file=out)
    for c in costs:
        hps = c.hop_frames / c.wall_s
        print(f"{c.label:<24} {c.frames:>9,} {c.hop_frames:>10,} {c.wall_s:>7.2f} "
              f"{c.frames / c.wall_s:>10,.0f} {hps:>10,.0f} {c.events / c.wall_s:>10,.0f} "
              f"{hps / base:>15.2f}  {c.digest}", file=out)


def latency(program, profile, n: int, frames: int, delay_ns: int, out=None) -> None:
    out = out or sys.stdout
    import pandas as pd

    from p4scope.experiments import chain_latency as cl
    from p4scope.experiments.fabric import chain

    rows, hops = cl.layer_latency(program, profile, n, cl.SEED_SIZES, pct=50.0, frames=frames,
                                  delay_ns=delay_ns)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(cl.seed_table(rows).to_string(index=False), file=out)
        print(f"\nhops of the chain of {n} (east; ns; residence from each switch's trace):",
              file=out)
        east = hops[hops["direction"] == "east"]
        print(east[["frame_size", "hop", "switch", "residence_min_ns", "residence_avg_ns",
                    "residence_max_ns", "wire_in_ns", "wire_in_measured_ns"]]
              .to_string(index=False), file=out)
    worst = 0.0
    with chain(program, n, profile, delay_ns=delay_ns) as vf:
        for size in cl.SEED_SIZES:
            run = cl.run_chain(vf, size, 50.0, frames)
            worst = max(worst, float(cl.sum_check(run)["difference_ns"].abs().max()))
    print(f"\nlatency = hops (ground truth) + wires, every frame and size: largest "
          f"difference {worst:.2f} ns (one 64 B frame time: 6.72 ns)", file=out)


def run(us: float, size: int, n: int, repeats: int, frames: int, delay_ns: int,
        program_path: Path, skip_latency: bool = False) -> int:
    from p4scope.experiments.params import default_profiles
    from p4scope.experiments.testbed import compile_dut

    program = compile_dut(program_path)
    profile = default_profiles()["fair"]
    load = os.getloadavg()[0]
    print(f"p4scope bench fabric: the reference DUT ({program_path}, profile fair), "
          f"{size} B both ways at 100 % of 100GbE for {us:g} us of virtual time, best of "
          f"{repeats}; {os.cpu_count()} CPUs, load {load:.2f}")
    print_cost(cost(program, profile, n, size, us, repeats))
    if not skip_latency:
        print(f"\nlatency per layer (a chain of 1..{n}, tester on the first and last switch, "
              f"{frames} frames each way at 50 %, links {delay_ns} ns), us:")
        latency(program, profile, n, frames, delay_ns)
    return 0


def check(us: float, size: int, n: int, repeats: int, frames: int, delay_ns: int) -> Optional[str]:
    """The first bad option, as the message to exit 2 with."""
    if not 0 < us <= MAX_US:
        return f"--us: {us:g} is not in (0, {MAX_US:g}]"
    if not 64 <= size <= 9216:
        return f"--size: {size} is not in 64..9216"
    if not 1 <= n <= 64:
        return f"--chain: {n} is not in 1..64"
    if not 1 <= repeats <= 20:
        return f"--repeats: {repeats} is not in 1..20"
    if not 1 <= frames <= 1_000_000:
        return f"--frames: {frames} is not in 1..1000000"
    if not 0 <= delay_ns <= 10**9:
        return f"--delay-ns: {delay_ns} is not in 0..1000000000"
    return None


def bench_fabric(
    us: float = typer.Option(1000.0, "--us", help="Virtual time per cost run (us)."),
    size: int = typer.Option(64, "--size", help="Frame size of the cost runs (B, FCS in)."),
    n: int = typer.Option(4, "--chain", help="Switches in the chain."),
    repeats: int = typer.Option(3, "--repeats", help="Runs per set-up (the best is shown)."),
    frames: int = typer.Option(1000, "--frames", help="Frames each way per latency run."),
    delay_ns: int = typer.Option(0, "--delay-ns", help="The links' propagation delay (ns)."),
    program: Path = typer.Option(Path("p4src/dut.p4"), "--program",
                                 help="The reference DUT's source."),
    no_latency: bool = typer.Option(False, "--no-latency", help="The cost only."),
) -> None:
    """Cost of a chain of switches in one virtual-time run vs one switch,
    and seed 003's latency per layer."""
    bad = check(us, size, n, repeats, frames, delay_ns)
    if bad is None and not program.is_file():
        bad = f"--program: {program} is not a file (run from the repository's top folder)"
    if bad:
        typer.echo(f"p4scope bench fabric: {bad}", err=True)
        raise typer.Exit(2)
    raise typer.Exit(run(us, size, n, repeats, frames, delay_ns, program, no_latency))


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="p4scope bench fabric", description=__doc__.split("\n\n")[0])
    ap.add_argument("--us", type=float, default=1000.0, help="virtual time per cost run (us)")
    ap.add_argument("--size", type=int, default=64, help="frame size of the cost runs (B, FCS in)")
    ap.add_argument("--chain", type=int, default=4, help="switches in the chain")
    ap.add_argument("--repeats", type=int, default=3, help="runs per set-up (the best is shown)")
    ap.add_argument("--frames", type=int, default=1000, help="frames each way per latency run")
    ap.add_argument("--delay-ns", type=int, default=0, help="the links' propagation delay")
    ap.add_argument("--program", type=Path, default=Path("p4src/dut.p4"),
                    help="the reference DUT's source")
    ap.add_argument("--no-latency", action="store_true", help="the cost only")
    a = ap.parse_args(argv)
    bad = check(a.us, a.size, a.chain, a.repeats, a.frames, a.delay_ns)
    if bad:
        ap.error(bad)
    if not a.program.is_file():
        ap.error(f"--program: {a.program} is not a file (run from the repository's top folder)")
    return run(a.us, a.size, a.chain, a.repeats, a.frames, a.delay_ns, a.program, a.no_latency)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
