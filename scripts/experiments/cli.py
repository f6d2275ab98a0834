"""`p4scope run microburst|fairness|all` and `p4scope report RUN_DIR`.

Every option is checked before anything starts; a bad value exits with
status 2 and says what is wrong. A run exits 0 when it completed, 1 when
it ended partial (Ctrl-C: 130), and prints where the results and the
report are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .params import (ESG_4TO1_SIZES, TABLE3_COMBINATIONS, TABLE4_SIZES, FairnessParams,
                     MicroburstParams, ParamError, default_profiles, parse_int_list, parse_mix)

run_app = typer.Typer(help="Run an experiment in virtual time on the embedded reference DUT.",
                      no_args_is_help=True)

QUICK_SIZES = (64, 512, 1518, 9216)
QUICK_4TO1 = (512, 9216)


def _fail(msg: str) -> None:
    typer.echo(f"p4scope run: error: {msg}", err=True)
    raise typer.Exit(2)


def _profiles(names: str, buffer_mb: float, alpha: float, cell_bytes: int):
    all_p = default_profiles(int(buffer_mb * 1024 * 1024), alpha, cell_bytes)
    chosen = {}
    for n in [x.strip() for x in names.split(",") if x.strip()]:
        if n not in all_p:
            _fail(f"unknown profile {n!r} (known: {', '.join(all_p)})")
        chosen[n] = all_p[n].check()
    if not chosen:
        _fail("no profiles")
    return chosen


def _microburst(sizes: str, sizes_4to1: str, burst_frames: Optional[int], quick: bool):
    s2 = QUICK_SIZES if quick and sizes == "table4" else (
        TABLE4_SIZES if sizes == "table4" else parse_int_list(sizes, "--sizes"))
    if sizes_4to1 == "none":
        s4: tuple[int, ...] = ()
    elif sizes_4to1 == "esg":
        s4 = QUICK_4TO1 if quick else ESG_4TO1_SIZES
    else:
        s4 = parse_int_list(sizes_4to1, "--sizes-4to1")
    return MicroburstParams(sizes_2to1=s2, sizes_4to1=s4, burst_frames=burst_frames).check()


def _fairness(n: str, ports: list[str], duration_us: float, warmup_us: float, mix: str,
              quick: bool):
    combos: list[tuple[int, ...]] = [parse_int_list(p, "--ports") for p in ports]
    if not combos:
        for k in parse_int_list(n, "--n"):
            if k not in TABLE3_COMBINATIONS:
                raise ParamError(f"--n {k}: Table 3 has 3, 6 and 16 source ports; give "
                                 "other combinations with --ports")
            cs = TABLE3_COMBINATIONS[k]
            # quick: the second combination of each N, one that straddles
            # port groups (where Table 3's Broadcom was unfair)
            combos += list(cs[1:2] if quick else cs)
    return FairnessParams(combinations=tuple(combos), mix=parse_mix(mix),
                          duration_ns=int(duration_us * 1000),
                          warmup_ns=int(warmup_us * 1000)).check()


def _execute(experiment: str, profiles, mb, fp, seed, results, run_id, program, progress, report):
    from .driver import RunRequest, execute
    from .testbed import MissingEngineAPI

    req = RunRequest(experiment, profiles, mb, fp, seed, results, run_id, program, progress, report)
    try:
        res = execute(req, echo=lambda s: typer.echo(s, err=True))
    except MissingEngineAPI as e:
        typer.echo(f"p4scope run: {e}", err=True)
        raise typer.Exit(3)
    except (FileNotFoundError, ParamError, ValueError) as e:
        _fail(str(e))
    o = res.outcome
    state = "complete" if o.complete else f"partial ({o.reason})"
    typer.echo(f"p4scope run: {o.done}/{o.planned} cases, {state}")
    typer.echo(f"results: {res.path}")
    if res.report is not None:
        typer.echo(f"report:  {res.report}")
    if o.error is not None and not isinstance(o.error, KeyboardInterrupt):
        raise typer.Exit(1)
    if not o.complete:
        raise typer.Exit(130 if o.reason and "Ctrl-C" in o.reason else 1)


# shared options
_PROFILES = typer.Option("fair,unfair", "--profiles", help="Traffic-manager profiles, comma-separated.")
_BUFFER = typer.Option(16.0, "--buffer-mb", help="Shared buffer in MB (2^20 bytes).")
_ALPHA = typer.Option(1.0, "--alpha", help="Dynamic-threshold factor of the shared buffer.")
_CELL = typer.Option(256, "--cell-bytes", help="Buffer cell size in bytes (1: exact bytes).")
_SEED = typer.Option(1, "--seed", help="Seed of the engine and the sources (runs are deterministic).")
_RESULTS = typer.Option(Path("results"), "--results", help="Folder the run folder is made in.")
_RUN_ID = typer.Option(None, "--run-id", help="Name of the run folder (default: UTC time + experiment).")
_PROGRAM = typer.Option(Path("p4src/dut.p4"), "--program", help="The reference DUT's P4 source.")
_PROGRESS = typer.Option(True, "--progress/--no-progress", help="Show a progress bar.")
_REPORT = typer.Option(True, "--report/--no-report", help="Render report.html when done.")
_QUICK = typer.Option(False, "--quick", help="Fewer sizes (64, 512, 1518, 9216; 4:1 512, 9216) and one port combination per N.")
_SIZES = typer.Option("table4", "--sizes", help="2:1 frame sizes: 'table4' (the 18 of seed 000) or a list.")
_SIZES4 = typer.Option("esg", "--sizes-4to1", help="4:1 frame sizes: 'esg' (seed 001), a list, or 'none'.")
_BURST = typer.Option(None, "--burst-frames", help="Frames per port per burst (default: from the buffer, 1.5x).")
_N = typer.Option("3,6,16", "--n", help="Numbers of source ports (Table 3's combinations of each).")
_PORTS = typer.Option([], "--ports", help="A source-port combination, e.g. 1,2,3 (repeatable; replaces --n).")
_DUR = typer.Option(2000.0, "--duration-us", help="Virtual time each incast lasts (us).")
_WARM = typer.Option(1000.0, "--warmup-us", help="Time before the measurement window (us).")
_MIX = typer.Option("64:55,78:5,576:17,1518:23", "--mix", help="Frame-size mix SIZE:WEIGHT,... (Tolly iMIX).")


@run_app.command("microburst")
def run_microburst(profiles: str = _PROFILES, sizes: str = _SIZES, sizes_4to1: str = _SIZES4,
                   burst_frames: Optional[int] = _BURST, buffer_mb: float = _BUFFER,
                   alpha: float = _ALPHA, cell_bytes: int = _CELL, seed: int = _SEED,
                   results: Path = _RESULTS, run_id: Optional[str] = _RUN_ID,
                   program: Path = _PROGRAM, progress: bool = _PROGRESS, report: bool = _REPORT,
                   quick: bool = _QUICK) -> None:
    """Microburst absorption 2:1 (seed 000, Table 4) and 4:1 (seed 001)."""
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes)
        mb = _microburst(sizes, sizes_4to1, burst_frames, quick)
    except ParamError as e:
        _fail(str(e))
    _execute("microburst", profs, mb, None, seed, results, run_id, program, progress, report)


@run_app.command("fairness")
def run_fairness(profiles: str = _PROFILES, n: str = _N, ports: list[str] = _PORTS,
                 duration_us: float = _DUR, warmup_us: float = _WARM, mix: str = _MIX,
                 buffer_mb: float = _BUFFER, alpha: float = _ALPHA, cell_bytes: int = _CELL,
                 seed: int = _SEED, results: Path = _RESULTS, run_id: Optional[str] = _RUN_ID,
                 program: Path = _PROGRAM, progress: bool = _PROGRESS, report: bool = _REPORT,
                 quick: bool = _QUICK) -> None:
    """N:1 incast fairness with iMIX (seed 000, Table 3)."""
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes)
        fp = _fairness(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        _fail(str(e))
    _execute("fairness", profs, None, fp, seed, results, run_id, program, progress, report)


@run_app.command("all")
def run_all(profiles: str = _PROFILES, sizes: str = _SIZES, sizes_4to1: str = _SIZES4,
            burst_frames: Optional[int] = _BURST, n: str = _N, ports: list[str] = _PORTS,
            duration_us: float = _DUR, warmup_us: float = _WARM, mix: str = _MIX,
            buffer_mb: float = _BUFFER, alpha: float = _ALPHA, cell_bytes: int = _CELL,
            seed: int = _SEED, results: Path = _RESULTS, run_id: Optional[str] = _RUN_ID,
            program: Path = _PROGRAM, progress: bool = _PROGRESS, report: bool = _REPORT,
            quick: bool = _QUICK) -> None:
    """Microburst and fairness in one run folder, one report."""
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes)
        mb = _microburst(sizes, sizes_4to1, burst_frames, quick)
        fp = _fairness(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        _fail(str(e))
    _execute("all", profs, mb, fp, seed, results, run_id, program, progress, report)


def main_run() -> int:
    """README's main job after the compile step: microburst and fairness as
    the seed reports ran them, both profiles, one run folder and report.
    Returns the exit status."""
    try:
        _execute("all", _profiles("fair,unfair", 16.0, 1.0, 256),
                 _microburst("table4", "esg", None, False),
                 _fairness("3,6,16", [], 2000.0, 1000.0, "64:55,78:5,576:17,1518:23", False),
                 1, Path("results"), None, Path("p4src/dut.p4"), True, True)
    except typer.Exit as e:
        return int(e.exit_code or 0)
    return 0


def report_cmd(run_dir: Path = typer.Argument(..., help="A run folder (results/<run-id>)."),
               output: Optional[Path] = typer.Option(None, "-o", "--output",
                                                     help="HTML file (default RUN_DIR/report.html).")) -> None:
    """Render a run's report (HTML + PNGs) from its stored results."""
    from .report import render

    if not (run_dir / "run.json").is_file():
        typer.echo(f"p4scope report: error: {run_dir} is not a run folder (no run.json)", err=True)
        raise typer.Exit(2)
    out = render(run_dir, output)
    typer.echo(f"report: {out}")
