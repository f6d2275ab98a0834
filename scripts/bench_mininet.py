"""Benchmark: TCP throughput through one switch in Mininet (root).

    .venv/bin/p4scope bench mininet-tcp [--kinds p4scope,bmv2,bridge] [--seconds 5] [--parallel 1]

Two hosts, one switch running topologies/p4/wire.p4 (port 1 <-> port 2,
no tables, compiled with `p4scope compile`), iperf3 from h1 to h2. Kinds:
`p4scope` (p4scope switch), `bmv2` (simple_switch_grpc, when it is on PATH;
skipped otherwise) and `bridge` (the kernel bridge, as a ceiling). All
interfaces have offloads off, as in every p4scope run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import typer

from p4scope import topologies
from p4scope.topologies import builders, tcp
from p4scope.topologies.run import Network
from p4scope.topologies.spec import rename_switches, with_switch_defaults

WIRE = Path(topologies.__file__).parent / "p4" / "wire.p4"


def _compile(out_dir: Path) -> str:
    out = out_dir / "wire.json"
    exe = Path(sys.executable).parent / "p4scope"
    r = subprocess.run([str(exe if exe.exists() else "p4scope"), "compile", str(WIRE), "-o", str(out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"compiling {WIRE} failed: {r.stderr}")
    return str(out)


def _one(kind: str, program: str, seconds: float, parallel: int, run_dir: Path) -> dict:
    topo = builders.port_pairs(1)
    topo = rename_switches(topo, {"s1": f"b{uuid.uuid4().hex[:3]}"})
    extra = {} if kind == "bridge" else {"program": program, "log": "off"}
    topo = with_switch_defaults(topo, kind=kind, **extra)
    with Network(topo, run_dir) as net:
        h1, h2 = net.host("h1"), net.host("h2")
        server = tcp.Iperf3Server(h2, 5201)
        rep = tcp.Iperf3Client(h1, h2.IP(), 5201, seconds=seconds, parallel=parallel).result(
            timeout=seconds + 60)
        server.result(timeout=10)
    return tcp.summary(rep)


def bench_mininet_tcp(
    kinds: str = typer.Option("p4scope,bmv2,bridge", help="Switch kinds to measure, in order."),
    seconds: float = typer.Option(5.0, help="Seconds of iperf3 per kind."),
    parallel: int = typer.Option(1, help="Parallel TCP flows."),
) -> None:
    """TCP throughput through one switch in Mininet (root)."""
    if os.geteuid() != 0:
        typer.echo("bench mininet-tcp needs root (Mininet)", err=True)
        raise typer.Exit(2)
    typer.echo(f"iperf3 h1 -> h2 through one switch (wire.p4), {seconds:g} s, {parallel} flow(s); "
               f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    typer.echo(f"{'switch':<10} {'Mbit/s':>10} {'retransmits':>12}")
    with tempfile.TemporaryDirectory(prefix="p4scope-bench-") as tmp:
        program = _compile(Path(tmp))
        for kind in kinds.split(","):
            if kind == "bmv2" and shutil.which("simple_switch_grpc") is None:
                typer.echo(f"{kind:<10} {'-':>10} {'-':>12}  (simple_switch_grpc is not installed)")
                continue
            s = _one(kind, program, seconds, parallel, Path(tmp) / kind)
            mbps = (s["receiver_bps"] or 0) / 1e6
            typer.echo(f"{kind:<10} {mbps:>10.1f} {s['retransmits'] or 0:>12}")


def main() -> None:
    typer.run(bench_mininet_tcp)


if __name__ == "__main__":
    main()
