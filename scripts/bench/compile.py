"""Compile-time benchmark: how long p4scope takes per program, per stage.

    p4scope bench compile [FILES...] [--repeat N] [-I DIR]
    python -m p4scope.bench.compile [FILES...]

Without FILES it times every program in p4src/ (with -I p4src/include, as
the main job compiles them).  Stage times come from wrapping the stage
functions the driver calls (preprocess, parse, run_frontend, build_p4info,
build_bmv2_json) for the duration of the run; the driver itself is not
changed, and a stage whose module does not exist yet is simply not shown.
Each number is the best of --repeat runs; the first run of the process also
pays for imports, so --repeat 2 or more gives steady-state numbers.
"""

from __future__ import annotations

import importlib
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(help="Benchmarks of p4scope's components.", no_args_is_help=True)

# (stage label, module under p4scope.compiler, function the driver looks up)
STAGES = [
    ("preprocess", "preprocess", "preprocess"),
    ("parse", "parser", "parse"),
    ("frontend", "frontend", "run_frontend"),
    ("p4info", "p4info", "build_p4info"),
    ("bmv2", "bmv2", "build_bmv2_json"),
]


@dataclass
class Timing:
    program: str
    total: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)
    error: str = ""


@contextmanager
def stage_timers(sink: dict[str, float]):
    """Temporarily wrap each stage function so calls add their time to sink.

    The driver imports the stage functions inside compile_text at call time,
    so replacing the module attribute is enough to see every call."""
    patched = []
    for label, module_name, func_name in STAGES:
        try:
            module = importlib.import_module(f"p4scope.compiler.{module_name}")
            original = getattr(module, func_name)
        except Exception:  # noqa: BLE001 - the stage is not written yet
            continue

        def timed(*args, __f=original, __label=label, **kwargs):
            t0 = time.perf_counter()
            try:
                return __f(*args, **kwargs)
            finally:
                sink[__label] = sink.get(__label, 0.0) + time.perf_counter() - t0

        setattr(module, func_name, timed)
        patched.append((module, func_name, original))
    try:
        yield
    finally:
        for module, func_name, original in patched:
            setattr(module, func_name, original)


def time_program(path: Path, include_dirs: list[str], repeat: int = 1) -> Timing:
    """Best-of-`repeat` total and stage times of compiling one program."""
    from p4scope.compiler import compile_file

    best = Timing(str(path), total=float("inf"))
    for _ in range(max(repeat, 1)):
        stages: dict[str, float] = {}
        t0 = time.perf_counter()
        error = ""
        with stage_timers(stages):
            try:
                compile_file(path, include_dirs)
            except Exception as e:  # noqa: BLE001 - reported, not raised
                error = _first_line(e)
        total = time.perf_counter() - t0
        if total < best.total:
            best = Timing(str(path), total, stages, error)
    return best


def _first_line(e: BaseException) -> str:
    from p4scope.compiler import CompileError

    if isinstance(e, CompileError) and e.diagnostics:
        d = e.diagnostics[0]
        return f"{d.pos}: {d.message}"
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def default_programs(root: Path = Path("p4src")) -> list[Path]:
    return sorted(root.glob("*.p4"))


def print_table(timings: list[Timing], out=None) -> None:
    out = out or sys.stdout
    labels = [s[0] for s in STAGES if any(s[0] in t.stages for t in timings)]
    width = max([len("program")] + [len(t.program) for t in timings])
    head = f"{'program':<{width}}  {'total ms':>9}" + "".join(f"  {l:>10}" for l in labels)
    print(head, file=out)
    for t in timings:
        row = f"{t.program:<{width}}  {t.total * 1000:9.1f}"
        row += "".join(f"  {t.stages[l] * 1000:10.1f}" if l in t.stages else f"  {'-':>10}"
                       for l in labels)
        if t.error:
            row += f"  failed: {t.error}"
        print(row, file=out)
    if len(timings) > 1:
        total = sum(t.total for t in timings)
        print(f"{'all':<{width}}  {total * 1000:9.1f}", file=out)


def run(files: list[Path], include_dirs: list[str], repeat: int) -> int:
    programs = list(files) or default_programs()
    if not programs:
        print("bench compile: no programs given and none in p4src/", file=sys.stderr)
        return 2
    dirs = list(include_dirs)
    if not files and Path("p4src/include").is_dir():
        dirs.append("p4src/include")
    timings = [time_program(p, dirs, repeat) for p in programs]
    print_table(timings)
    return 1 if any(t.error for t in timings) else 0


@app.command("compile")
def compile_bench(
    files: List[Path] = typer.Argument(None, help="P4 programs (default: every p4src/*.p4)."),
    include: List[Path] = typer.Option([], "-I", help="Add a directory to the include path."),
    repeat: int = typer.Option(3, "--repeat", "-r", min=1, max=100,
                               help="Runs per program; the best is shown."),
) -> None:
    """Time compiling each program, with preprocess/parse/frontend/backend stages."""
    raise typer.Exit(run(list(files or []), [str(i) for i in include], repeat))


if __name__ == "__main__":
    from . import as_script

    as_script(lambda: run([Path(a) for a in sys.argv[1:]], [], 3))
