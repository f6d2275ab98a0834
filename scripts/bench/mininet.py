"""Benchmark: TCP throughput through one switch in Mininet (root).

    .venv/bin/p4scope bench mininet-tcp [--kinds p4scope,bmv2,bridge] [--programs wire,dut]
                                        [--seconds 5] [--parallel 1] [--repeats 3]
                                        [--rt-priority N]

Two hosts, one switch, iperf3 from h1 to h2, each measurement `--repeats`
times, interleaved (every switch once, then again), so that a neighbour's
load falls on all of them alike; then each one's median, and its ratio to
the bridge's median when the bridge was measured. Each run also says how
much of the machine's CPU time was idle meanwhile (/proc/stat): on a small
machine the switch's share of the CPUs is what bounds it. Programs: `wire`
(topologies/p4/wire.p4: port 1 <-> port 2, no tables) and `dut` (the
reference DUT, p4src/dut.p4, configured by the controller from the
topology: flooding, learning by the controller, the instrument's counters
on the way). Kinds: `p4scope` (p4scope switch), `bmv2` (simple_switch_grpc,
when it is on PATH; skipped, saying so, otherwise) and `bridge` (the
kernel bridge, a ceiling; no program). All interfaces have offloads off,
as in every p4scope run. Every switch runs the same compiled JSON.
`--rt-priority` sets the p4scope switches' $P4SCOPE_RT_PRIORITY (their
real-time loop's SCHED_FIFO priority; 0: normal scheduling).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Optional

import typer

from p4scope import topologies
from p4scope.switch.ports import RT_PRIORITY_ENV
from p4scope.switch.ports import rt_priority as rt_priority_now
from p4scope.topologies import builders, tcp
from p4scope.topologies.run import Network
from p4scope.topologies.spec import SWITCH_KINDS, rename_switches, with_switch_defaults

WIRE = Path(topologies.__file__).parent / "p4" / "wire.p4"
PROGRAMS = ("wire", "dut")


def _compile(out_dir: Path) -> str:
    out = out_dir / "wire.json"
    exe = Path(sys.executable).parent / "p4scope"
    r = subprocess.run([str(exe if exe.exists() else "p4scope"), "compile", str(WIRE), "-o", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"compiling {WIRE} failed: {r.stderr}")
    return str(out)


def _cpu_jiffies() -> tuple[int, int]:
    """(idle, total) CPU time of the whole machine so far (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], sum(v)


def _iperf(h1, h2, seconds: float, parallel: int) -> dict:
    server = tcp.Iperf3Server(h2, 5201)
    before = _cpu_jiffies()
    rep = tcp.Iperf3Client(h1, h2.IP(), 5201, seconds=seconds, parallel=parallel).result(
        timeout=seconds + 60)
    after = _cpu_jiffies()
    server.result(timeout=10)
    total = after[1] - before[1]
    # how much of the machine the flow left idle: the bridge's one softirq
    # chain leaves a CPU part idle, a switch in user space uses every CPU
    return {**tcp.summary(rep), "idle": (after[0] - before[0]) / total if total else None}


def _wire(kind: str, program: str, seconds: float, parallel: int, run_dir: Path) -> dict:
    topo = builders.port_pairs(1)
    topo = rename_switches(topo, {"s1": f"b{uuid.uuid4().hex[:3]}"})
    extra = {} if kind == "bridge" else {"program": program, "log": "off"}
    topo = with_switch_defaults(topo, kind=kind, **extra)
    with Network(topo, run_dir) as net:
        return _iperf(net.host("h1"), net.host("h2"), seconds, parallel)


def _dut(kind: str, dut, seconds: float, parallel: int, run_dir: Path) -> dict:
    from p4scope.experiments.mininet.testbed import Testbed

    with Testbed(builders.port_pairs(1), run_dir, dut, kind=kind, log="off",
                 watch_links=False) as tb:
        h1, h2 = tb.host("h1"), tb.host("h2")
        h1.cmd(f"ping -c 1 -W 2 {h2.IP()}")  # ARP and learning before the measurement
        return _iperf(h1, h2, seconds, parallel)


def _measure(kind: str, prog: str, wire: Optional[str], dut, seconds: float, parallel: int,
             run_dir: Path) -> dict:
    if prog == "dut":
        return _dut(kind, dut, seconds, parallel, run_dir)
    return _wire(kind, wire or "", seconds, parallel, run_dir)


def _medians(runs: dict[tuple[str, str], list[float]]) -> list[tuple[str, str, float, Optional[float]]]:
    """(kind, program, median Mbit/s, ratio to the bridge's median or None)
    per measurement, in the order measured."""
    med = {k: statistics.median(v) for k, v in runs.items() if v}
    bridge = med.get(("bridge", "-"))
    return [(kind, prog, m, m / bridge if bridge else None) for (kind, prog), m in med.items()]


def bench_mininet_tcp(
    kinds: str = typer.Option("p4scope,bmv2,bridge", help="Switch kinds to measure, in order."),
    programs: str = typer.Option("wire,dut", help="P4 programs: wire (no tables) and/or dut "
                                                  "(the reference DUT with its controller)."),
    seconds: float = typer.Option(5.0, min=0.5, help="Seconds of iperf3 per measurement."),
    parallel: int = typer.Option(1, min=1, max=128, help="Parallel TCP flows."),
    repeats: int = typer.Option(3, min=1, max=50, help="Runs of each measurement, interleaved; "
                                                       "the summary gives their medians."),
    rt_priority: Optional[int] = typer.Option(
        None, min=0, max=99, help="SCHED_FIFO priority of the p4scope switches' real-time loop "
                                  "(0: normal scheduling; default: the switch's own, 1)."),
) -> None:
    """TCP throughput through one switch in Mininet (root)."""
    from p4scope.experiments.mininet.testbed import bmv2_missing, build_dut

    if os.geteuid() != 0:
        typer.echo("bench mininet-tcp needs root (Mininet)", err=True)
        raise typer.Exit(2)
    progs = [p.strip() for p in programs.split(",") if p.strip()]
    bad = [p for p in progs if p not in PROGRAMS]
    if bad or not progs:
        typer.echo(f"--programs: give {' and/or '.join(PROGRAMS)}", err=True)
        raise typer.Exit(2)
    kind_list = [k.strip() for k in kinds.split(",") if k.strip()]
    bad = [k for k in kind_list if k not in SWITCH_KINDS]
    if bad or not kind_list:
        typer.echo(f"--kinds: give one or more of {', '.join(SWITCH_KINDS)}", err=True)
        raise typer.Exit(2)
    if rt_priority is not None:  # the switch daemons inherit it
        os.environ[RT_PRIORITY_ENV] = str(rt_priority)
    typer.echo(f"iperf3 h1 -> h2 through one switch, {seconds:g} s, {parallel} flow(s), "
               f"{repeats} run(s) each, interleaved; {os.cpu_count()} CPUs, load "
               f"{os.getloadavg()[0]:.2f}; p4scope loop priority {rt_priority_now()}")
    plan = [(kind, prog) for kind in kind_list for prog in (["-"] if kind == "bridge" else progs)]
    if "bmv2" in kind_list and bmv2_missing():
        for prog in progs:
            typer.echo(f"{'bmv2':<10} {prog:<8} skipped: simple_switch_grpc is not installed")
        plan = [(kind, prog) for kind, prog in plan if kind != "bmv2"]
    runs: dict[tuple[str, str], list[float]] = {m: [] for m in plan}
    typer.echo(f"{'run':<4} {'switch':<10} {'program':<8} {'Mbit/s':>10} {'retransmits':>12} "
               f"{'CPUs idle':>10}")
    with tempfile.TemporaryDirectory(prefix="p4scope-bench-") as tmp:
        wire = _compile(Path(tmp)) if "wire" in progs else None
        dut = build_dut(Path(tmp) / "dut") if "dut" in progs else None
        for r in range(1, repeats + 1):
            for kind, prog in plan:
                s = _measure(kind, prog, wire, dut, seconds, parallel, Path(tmp) / f"{kind}-{prog}-{r}")
                mbps = (s["receiver_bps"] or 0) / 1e6
                runs[(kind, prog)].append(mbps)
                idle = "-" if s["idle"] is None else f"{100 * s['idle']:.0f}%"
                typer.echo(f"{r:<4} {kind:<10} {prog:<8} {mbps:>10.1f} {s['retransmits'] or 0:>12} "
                           f"{idle:>10}")
    typer.echo(f"medians of {repeats} run(s):")
    typer.echo(f"{'switch':<10} {'program':<8} {'Mbit/s':>10} {'of bridge':>10}")
    for kind, prog, m, ratio in _medians(runs):
        typer.echo(f"{kind:<10} {prog:<8} {m:>10.1f} {'-' if ratio is None else f'{ratio:.2f}':>10}")


def main() -> None:
    typer.run(bench_mininet_tcp)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
