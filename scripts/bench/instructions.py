"""Instructions a packet of the engine, counted by callgrind: the figure a
shared machine cannot move (its wall clock drifts by 10-50 % from one
minute to the next, so a change of a few % is only seen in instructions).

    p4scope bench instructions [--workload engine|incast] [--packets N] [--top K]
    .venv/bin/python -m p4scope.bench.instructions ...

Runs the workload twice under valgrind's callgrind, the second run twice as
long, in the installed module (the build setup.sh makes), and prints the
difference of the two per packet: the program's total and, per function as
that build inlined them, its own instructions (the K largest). Start-up,
program loading and compiling fall out of the difference.

* engine: `p4scope.bench.engine`'s L2/L3 program, 300 routes, packets
  handed over in batches from Rust (`Engine.process_repeat`); a packet is
  one through the switch.
* incast: `p4scope.bench.incast`'s 16x100GbE iMIX 16:1 incast (fair
  arbitration) run for a span of virtual time; a packet is a frame offered
  by the tester (most are dropped at the congested port).

Needs valgrind (setup.sh installs it). The figure repeats for a given
build and machine type, but for the set-up's few instructions that the
difference does not cancel (hash tables seeded per process: an instruction
or two a packet over 9,000 packets, none at the defaults). Another CPU
counts otherwise (glibc picks its memcpy and memset for it), and so does
another build: setup.sh's is profile-guided, and two such builds of the
same code differ by a few % (each training run's profile differs). To
weigh a change, count plain builds of the code before and after: the
module a `maturin build --release` wheel holds, unpacked into a folder
given as PYTHONPATH (the runs inherit the environment).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

WORKLOADS = ("engine", "incast")
DEFAULT_PACKETS = {"engine": 30_000, "incast": 400_000}

INCAST_FRAMES_PER_US = 395
"""Frames the incast offers per microsecond of virtual time (16 ports of
100GbE iMIX), to turn --packets into a span."""

_ROW = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?)(?:\s+\[([^\]]*)\])?\s*$")

GENERATED = "(machine code built at load: the parser, deparser, actions, controls)"
"""What callgrind counts under an address in no object file: the code
Cranelift generated for the program."""


@dataclass
class Count:
    """What one callgrind run counted: the total, and per function."""
    total: int
    packets: int
    functions: Counter


def _child_code(workload: str, packets: int) -> str:
    """The Python a callgrind run executes; prints the packets it ran."""
    if workload == "engine":
        return ("from p4scope.bench.engine import l2l3_engine\n"
                "e, pkts = l2l3_engine(300)\n"
                f"reps = max(1, {packets} // len(pkts))\n"
                "e.process_repeat(pkts, reps)\n"
                "print(reps * len(pkts))\n")
    return ("from p4scope.bench.incast import build\n"
            "e = build(16, 1, 'fair')\n"
            f"e.run(duration_ns={max(1, packets // INCAST_FRAMES_PER_US) * 1000})\n"
            "print(sum(s['tx_frames'] for s in e.stream_stats()))\n")


def function_name(where: str) -> str:
    """`file:function` of a callgrind_annotate row -> the function."""
    _, sep, rest = where.partition(":")
    # (the file is "???" or a path; a Rust path's "::" is not a file's colon)
    return rest if sep and not rest.startswith(":") else where


def parse_annotate(text: str) -> tuple[int, Counter]:
    """callgrind_annotate's output -> (program total, instructions per function)."""
    total = None
    functions: Counter = Counter()
    for line in text.splitlines():
        if line.startswith("-- Auto-annotated") or line.startswith("-- User-annotated"):
            break  # (source listings follow the function table)
        m = _ROW.match(line)
        if not m:
            continue
        n, where, obj = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
        if where == "PROGRAM TOTALS":
            total = n
        elif total is not None and not where.startswith(("=> ", "< ", "* ")):
            name = function_name(where)
            functions[GENERATED if obj == "???" and name.startswith("0x") else name] += n
    if total is None:
        raise ValueError("callgrind_annotate printed no PROGRAM TOTALS")
    return total, functions


def count(workload: str, packets: int, folder: Path) -> Count:
    """One run of the workload under callgrind."""
    out = folder / f"callgrind.{workload}.{packets}"
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c",
         _child_code(workload, packets)],
        capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if run.returncode != 0 or not out.exists():
        raise RuntimeError(f"callgrind run failed (status {run.returncode}): {run.stderr.strip()[-2000:]}")
    said = run.stdout.split()
    if not said or not said[-1].isdigit():
        raise RuntimeError(f"the callgrind run printed no packet count: {run.stdout.strip()[-200:]!r}")
    annotate = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", str(out)],
                              capture_output=True, text=True, check=True)
    total, functions = parse_annotate(annotate.stdout)
    return Count(total, int(said[-1]), functions)


def per_packet(short: Count, long: Count) -> tuple[float, list[tuple[float, str]]]:
    """The difference of two runs per packet: total, and per function
    (largest first)."""
    n = long.packets - short.packets
    if n <= 0:
        raise ValueError("the longer run did not run more packets")
    rows = [((long.functions[f] - short.functions.get(f, 0)) / n, f) for f in long.functions]
    rows.sort(reverse=True)
    return (long.total - short.total) / n, rows


def bench_instructions(
        workload: str = typer.Option("engine", help="engine (bench.engine's L2/L3 program) or incast "
                                                    "(bench.incast's 16:1 iMIX incast)."),
        packets: Optional[int] = typer.Option(
            None, min=1000, max=10_000_000,
            help="Packets of the shorter run, the longer runs twice as many (default: engine 30000; "
                 "incast 400000, about 1 ms, past the buffer's filling)."),
        top: int = typer.Option(15, min=0, max=200, help="Functions listed (0: the total only)."),
) -> None:
    """Instructions a packet through the engine (callgrind; deterministic)."""
    if workload not in WORKLOADS:
        raise typer.BadParameter(f"{workload!r}: give one of {', '.join(WORKLOADS)}",
                                 param_hint="'--workload'")
    packets = packets or DEFAULT_PACKETS[workload]
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            typer.echo(f"bench instructions: needs {tool} (apt-get install valgrind; setup.sh installs it)",
                       err=True)
            raise typer.Exit(1)
    with tempfile.TemporaryDirectory(prefix="p4scope-callgrind-") as tmp:
        try:
            short = count(workload, packets, Path(tmp))
            long = count(workload, 2 * packets, Path(tmp))
            total, rows = per_packet(short, long)
        except (RuntimeError, ValueError, subprocess.CalledProcessError) as e:
            typer.echo(f"bench instructions: {e}", err=True)
            raise typer.Exit(1)
    typer.echo(f"{workload}: {total:,.0f} instructions a packet (callgrind, the difference of runs of "
               f"{short.packets:,} and {long.packets:,} packets)")
    shown = [(n, f) for n, f in rows[:top] if n >= 0.5]
    if shown:
        typer.echo("  own instructions a packet, by function as the installed build inlines them:")
        for n, f in shown:
            typer.echo(f"  {n:8,.0f}  {f}")


if __name__ == "__main__":
    from . import as_script

    app = typer.Typer(add_completion=False)
    app.command()(bench_instructions)
    as_script(app)
