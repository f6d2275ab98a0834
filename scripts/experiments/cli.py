"""`p4scope run microburst|fairness|all` and `p4scope report RUN_DIR`.

`microburst` and `fairness` run in virtual time, or with `--mode mininet`
through the reference DUT in Mininet (emulation.cli); each mode has options
of its own, and giving one of the other mode's is an error.

Every option is checked before anything starts; a bad value exits with
status 2 and says what is wrong. A run exits 0 when it completed, 1 when
it ended partial (Ctrl-C: 130; SIGTERM, e.g. from `timeout` or a
scheduler, ends it the same way: 143), and prints where the results and
the report are.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import typer

from ..emulation import cli as E
from .params import (ESG_4TO1_SIZES, MAX_BUFFER_MB, MAX_BURST_FRAMES, MAX_CELL,
                     MAX_DURATION_US, MAX_FRAME, MIN_BUFFER_MB, MIN_CELL, MIN_FRAME,
                     TABLE3_COMBINATIONS, TABLE4_SIZES, EngineOptions, FairnessParams,
                     MicroburstParams, Mode, ParamError, ns_from_us, parse_int_list, parse_mix)
from .run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel

run_app = typer.Typer(help="Run an experiment on the reference DUT: in virtual time on the "
                           "embedded switch, or (--mode mininet, root) with real traffic in Mininet.",
                      no_args_is_help=True)

QUICK_SIZES = (64, 512, 1518, 9216)
QUICK_4TO1 = (512, 9216)


def _fail(msg: str) -> None:
    typer.echo(f"p4scope run: error: {msg}", err=True)
    raise typer.Exit(2)


def _profiles(names: str, buffer_mb: float, alpha: float, cell_bytes: int, seed: int):
    """The profiles chosen, once the engine options (seed too) are checked."""
    return EngineOptions(buffer_mb, alpha, cell_bytes, seed).profiles(names)


def _only_for_mode(ctx: typer.Context, mode: Mode, others: dict[Mode, tuple[str, ...]]) -> None:
    """Exit 2 when an option of another mode was given."""
    for m, names in others.items():
        if m is mode:
            continue
        given = [p.opts[0] for p in ctx.command.params if p.name in names
                 and ctx.get_parameter_source(p.name).name != "DEFAULT"]
        if given:
            _fail(f"{', '.join(given)}: for --mode {m.value} only (this run is --mode {mode.value})")


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
                          duration_ns=ns_from_us(duration_us, "--duration-us", above=True),
                          warmup_ns=ns_from_us(warmup_us, "--warmup-us")).check()


def _execute(experiment: str, profiles, mb, fp, seed, results, run_id, program, progress, report):
    from ..compiler.diagnostics import CompileError
    from .driver import RunRequest, execute
    from .runner import interrupt_signal, sigterm_interrupts
    from .testbed import MissingEngineAPI

    req = RunRequest(experiment, profiles, mb, fp, seed, results, run_id, program, progress, report)
    try:
        with sigterm_interrupts():
            res = execute(req, echo=lambda s: typer.echo(s, err=True))
    except KeyboardInterrupt as e:  # before the run folder was made: nothing to keep
        typer.echo("p4scope run: interrupted before the run started", err=True)
        raise typer.Exit(128 + interrupt_signal(e))
    except MissingEngineAPI as e:
        typer.echo(f"p4scope run: {e}", err=True)
        raise typer.Exit(3)
    except CompileError as e:
        _fail(f"--program {program}: {e}")
    except (FileNotFoundError, ParamError, ValueError) as e:
        _fail(str(e))
    E.finish(res)


# shared options
VIRTUAL_PANEL = "Virtual time (--mode virtual)"
_MODE = typer.Option(Mode.virtual, "--mode", help="virtual: the embedded switch in virtual "
                     "time at 100GbE; mininet: real traffic through the DUT in Mininet (root).")
_PROFILES = typer.Option("fair,unfair", "--profiles", rich_help_panel=VIRTUAL_PANEL, help="Traffic-manager profiles, comma-separated.")
_BUFFER = typer.Option(16.0, "--buffer-mb", rich_help_panel=VIRTUAL_PANEL, help=f"Shared buffer in MB (2^20 bytes), {MIN_BUFFER_MB:g}..{MAX_BUFFER_MB:g}.")
_ALPHA = typer.Option(1.0, "--alpha", rich_help_panel=VIRTUAL_PANEL, help="Dynamic-threshold factor of the shared buffer, 1/128..64.")
_CELL = typer.Option(256, "--cell-bytes", rich_help_panel=VIRTUAL_PANEL, help=f"Buffer cell size in bytes, {MIN_CELL}..{MAX_CELL} (1: exact bytes).")
_SEED = typer.Option(1, "--seed", rich_help_panel=VIRTUAL_PANEL, help="Seed of the engine and the sources, 0..2^64-1 (runs are deterministic).")
_PROGRAM = typer.Option(Path("p4src/dut.p4"), "--program", rich_help_panel=VIRTUAL_PANEL, help="The reference DUT's P4 source.")
_QUICK = typer.Option(False, "--quick", rich_help_panel=VIRTUAL_PANEL, help="Fewer sizes (64, 512, 1518, 9216; 4:1 512, 9216) and one port combination per N.")
_SIZES = typer.Option("table4", "--sizes", help=f"2:1 frame sizes: 'table4' (the 18 of seed 000) or a list ({MIN_FRAME}..{MAX_FRAME} B).")
_SIZES4 = typer.Option("esg", "--sizes-4to1", help=f"4:1 frame sizes: 'esg' (seed 001), a list ({MIN_FRAME}..{MAX_FRAME} B), or 'none'.")
_BURST = typer.Option(None, "--burst-frames", help=f"Frames per port per burst, 1..{MAX_BURST_FRAMES:,} (default: from the buffer, 1.5x).")
_N = typer.Option("3,6,16", "--n", help="Numbers of source ports (Table 3's combinations of each).")
# the same for the commands with --mode
_SIZES_MODES = typer.Option(None, "--sizes", show_default=False, help=f"2:1 frame sizes: 'table4' (the 18 of seed 000; the default in virtual time) or a list ({MIN_FRAME}..{MAX_FRAME} B; Mininet: 64..1518, default 256,512,1518).")
_SIZES4_MODES = typer.Option(None, "--sizes-4to1", show_default=False, help="4:1 frame sizes: 'esg' (seed 001; the default in virtual time), a list (default in Mininet: 512,1518), or 'none'.")
_BURST_MODES = typer.Option(None, "--burst-frames", help=f"Frames per port per burst, 1..{MAX_BURST_FRAMES:,} (default: 1.5x what the buffer holds; in Mininet, the link queue; there 1..1,000,000).")
_N_MODES = typer.Option("3,6,16", "--n", help="Numbers of source ports (virtual time: Table 3's combinations of each; Mininet: senders).")
_PORTS = typer.Option([], "--ports", rich_help_panel=VIRTUAL_PANEL, help="A source-port combination, e.g. 1,2,3 (repeatable; replaces --n).")
_DUR = typer.Option(2000.0, "--duration-us", rich_help_panel=VIRTUAL_PANEL, help=f"Virtual time each incast lasts (us), up to {MAX_DURATION_US:,.0f}.")
_WARM = typer.Option(1000.0, "--warmup-us", rich_help_panel=VIRTUAL_PANEL, help="Time before the measurement window (us), 0 up to below --duration-us.")
_MIX = typer.Option("64:55,78:5,576:17,1518:23", "--mix", help=f"Frame-size mix SIZE:WEIGHT,... (Tolly iMIX; sizes {MIN_FRAME}..{MAX_FRAME}, weights >= 0).")


_VIRTUAL_ONLY = ("profiles", "buffer_mb", "alpha", "cell_bytes", "seed", "program", "quick")
_VIRTUAL_FAIRNESS = _VIRTUAL_ONLY + ("ports", "duration_us", "warmup_us")
_MININET_ONLY = ("link_bw", "queue_packets", "switch", "bmv2")
_MININET_FAIRNESS = _MININET_ONLY + ("load", "duration_s", "warmup_s")


@run_app.command("microburst")
def run_microburst(ctx: typer.Context, mode: Mode = _MODE, profiles: str = _PROFILES,
                   sizes: Optional[str] = _SIZES_MODES, sizes_4to1: Optional[str] = _SIZES4_MODES,
                   burst_frames: Optional[int] = _BURST_MODES, buffer_mb: float = _BUFFER,
                   alpha: float = _ALPHA, cell_bytes: int = _CELL, seed: int = _SEED,
                   results: Path = RESULTS, run_id: Optional[str] = RUN_ID,
                   program: Path = _PROGRAM, progress: bool = PROGRESS, report: bool = REPORT,
                   quick: bool = _QUICK, link_bw: str = E.LINK_BW,
                   queue_packets: int = E.BURST_QUEUE, switch: str = E.SWITCH,
                   bmv2: bool = E.BMV2) -> None:
    """Microburst absorption 2:1 (seed 000, Table 4) and 4:1 (seed 001); --mode virtual|mininet.

    --mode virtual (default): the embedded switch in virtual time at 100GbE, both
    traffic-manager profiles. --mode mininet (root): bursts at the htb rate into a
    link queue, real traffic through the reference DUT in Mininet."""
    _only_for_mode(ctx, mode, {Mode.virtual: _VIRTUAL_ONLY, Mode.mininet: _MININET_ONLY})
    if mode is Mode.mininet:
        E.run_microburst_mininet(sizes or E.MB_SIZES, sizes_4to1 or E.MB_SIZES_4TO1, link_bw,
                                 queue_packets, burst_frames, switch, bmv2, results, run_id,
                                 progress, report)
        return
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        mb = _microburst(sizes or "table4", sizes_4to1 or "esg", burst_frames, quick)
    except ParamError as e:
        _fail(str(e))
    _execute("microburst", profs, mb, None, seed, results, run_id, program, progress, report)


@run_app.command("fairness")
def run_fairness(ctx: typer.Context, mode: Mode = _MODE, profiles: str = _PROFILES, n: str = _N_MODES,
                 ports: list[str] = _PORTS, duration_us: float = _DUR, warmup_us: float = _WARM,
                 mix: str = _MIX, buffer_mb: float = _BUFFER, alpha: float = _ALPHA,
                 cell_bytes: int = _CELL, seed: int = _SEED, results: Path = RESULTS,
                 run_id: Optional[str] = RUN_ID, program: Path = _PROGRAM,
                 progress: bool = PROGRESS, report: bool = REPORT, quick: bool = _QUICK,
                 link_bw: str = E.LINK_BW, load: float = E.FAIR_LOAD,
                 duration_s: float = E.FAIR_DURATION_S, warmup_s: float = E.FAIR_WARMUP_S,
                 queue_packets: int = E.FAIR_QUEUE, switch: str = E.SWITCH,
                 bmv2: bool = E.BMV2) -> None:
    """N:1 incast fairness with iMIX (seed 000, Table 3); --mode virtual|mininet.

    --mode virtual (default): the embedded switch in virtual time at 100GbE, both
    traffic-manager profiles. --mode mininet (root): N senders at line rate on htb
    links, real traffic through the reference DUT in Mininet."""
    _only_for_mode(ctx, mode, {Mode.virtual: _VIRTUAL_FAIRNESS, Mode.mininet: _MININET_FAIRNESS})
    if mode is Mode.mininet:
        E.run_fairness_mininet(n, link_bw, load, duration_s, warmup_s, queue_packets, mix,
                               switch, bmv2, results, run_id, progress, report)
        return
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
        fp = _fairness(n, ports, duration_us, warmup_us, mix, quick)
    except ParamError as e:
        _fail(str(e))
    _execute("fairness", profs, None, fp, seed, results, run_id, program, progress, report)


_ALL = SimpleNamespace(**{k: without_panel(o) for k, o in dict(
    profiles=_PROFILES, ports=_PORTS, dur=_DUR, warm=_WARM, buffer=_BUFFER, alpha=_ALPHA,
    cell=_CELL, seed=_SEED, program=_PROGRAM, quick=_QUICK).items()})


@run_app.command("all")
def run_all(profiles: str = _ALL.profiles, sizes: str = _SIZES, sizes_4to1: str = _SIZES4,
            burst_frames: Optional[int] = _BURST, n: str = _N, ports: list[str] = _ALL.ports,
            duration_us: float = _ALL.dur, warmup_us: float = _ALL.warm, mix: str = _MIX,
            buffer_mb: float = _ALL.buffer, alpha: float = _ALL.alpha,
            cell_bytes: int = _ALL.cell, seed: int = _ALL.seed, results: Path = RESULTS,
            run_id: Optional[str] = RUN_ID, program: Path = _ALL.program,
            progress: bool = PROGRESS, report: bool = REPORT, quick: bool = _ALL.quick) -> None:
    """Microburst and fairness in virtual time, one run folder, one report."""
    try:
        profs = _profiles(profiles, buffer_mb, alpha, cell_bytes, seed)
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
        _execute("all", _profiles("fair,unfair", 16.0, 1.0, 256, 1),
                 _microburst("table4", "esg", None, False),
                 _fairness("3,6,16", [], 2000.0, 1000.0, "64:55,78:5,576:17,1518:23", False),
                 1, Path("results"), None, Path("p4src/dut.p4"), True, True)
    except typer.Exit as e:
        return int(e.exit_code or 0)
    return 0


def report_cmd(run_dir: Path = typer.Argument(..., help="A run folder (results/<run-id>)."),
               output: Optional[Path] = typer.Option(None, "-o", "--output",
                                                     help="HTML file (default RUN_DIR/report.html).")) -> None:
    """Render a run's report (HTML + PNGs) from its stored results, with the
    renderer run.json names (virtual time or Mininet)."""
    from .report import render_stored

    if not (run_dir / "run.json").is_file():
        typer.echo(f"p4scope report: error: {run_dir} is not a run folder (no run.json)", err=True)
        raise typer.Exit(2)
    try:
        out = render_stored(run_dir, output)
    except ValueError as e:
        typer.echo(f"p4scope report: error: {e}", err=True)
        raise typer.Exit(2)
    typer.echo(f"report: {out}")
