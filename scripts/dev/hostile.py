"""The hostile pass: bad inputs against the installed p4scope,
each with the clean answer it is due.

    .venv/bin/python scripts/dev/hostile.py [--fast] [--spawn] [--area NAME] [-q] [--keep]

Areas: the compiler's command line, the switch's P4Runtime server and its
BMv2 Thrift server, STF tests, the experiments' options, and packets into
the engine.  Every probe is handled (the error or status due), wrong (an
answer, but not the one due) or crashed (traceback, internal error, panic,
signal, hang); see hostile_core.py.  Everything runs in a temporary folder
of its own, servers on free loopback ports; every process started is ended.

Prints a table per area, a summary, and last
``hostile: N tried, N handled, N wrong, N crashed``; exit status 0 only
when nothing was wrong and nothing crashed.  --fast leaves out the slowest
probes (CI runs it: tests/dev/test_hostile_pass.py); --spawn runs each
command line as its own `p4scope` process instead of a fork of this one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_core import (CRASHED, HANDLED, WRONG, AreaContext, Cli, Result,  # noqa: E402
                          Workspace, run_areas)

AREA_MODULES = {
    "compiler": "hostile_compiler",
    "p4runtime": "hostile_p4runtime",
    "thrift": "hostile_thrift",
    "stf": "hostile_stf",
    "options": "hostile_options",
    "packets": "hostile_packets",
}
AREA_TIME_LIMIT_S = {True: 180.0, False: 1800.0}  # per area: --fast or not


def load_areas(keys: list[str]):
    import importlib
    return [(k, importlib.import_module(AREA_MODULES[k]).AREA) for k in keys]


def warm_up() -> None:
    """Import what every forked command line would import anyway; a
    failure here shows in the probes themselves (as tracebacks)."""
    try:
        import p4scope.cli  # noqa: F401
        from hostile_programs import warm_compiler
        warm_compiler()
    except Exception as e:  # noqa: BLE001
        print(f"hostile: warming up failed ({type(e).__name__}: {e}); going on", file=sys.stderr)


def print_area_table(name: str, results: list[Result], quiet: bool) -> None:
    if quiet:
        bad = [r for r in results if r.status != HANDLED]
        if not bad:
            return
        results = bad
    print(f"\n{name}")
    width = max(len(r.probe) for r in results)
    for r in results:
        print(f"  {r.status:8s} {r.seconds:6.2f}s  {r.probe:{width}s}  {r.detail}")
    sys.stdout.flush()


def counts(results: list[Result]) -> tuple[int, int, int, int]:
    return (len(results), sum(r.status == HANDLED for r in results),
            sum(r.status == WRONG for r in results), sum(r.status == CRASHED for r in results))


def print_summary(per_area: list[tuple[str, list[Result], float]]) -> None:
    print("\narea                  tried  handled  wrong  crashed    time")
    for name, results, seconds in per_area:
        n, h, w, c = counts(results)
        print(f"{name:20s} {n:6d} {h:8d} {w:6d} {c:8d} {seconds:6.1f}s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="The hostile pass: bad inputs against p4scope.")
    ap.add_argument("--fast", action="store_true", help="leave out the slowest probes (CI)")
    ap.add_argument("--spawn", action="store_true",
                    help="run each command line as a new p4scope process (slower)")
    ap.add_argument("--area", action="append", choices=sorted(AREA_MODULES),
                    help="only this area (repeatable)")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="list only the probes not handled")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--jobs", type=int, default=2, metavar="N",
                    help="areas run at once (default 2)")
    o = ap.parse_args(argv)
    if o.jobs < 1:
        ap.error("--jobs: at least 1")
    # SIGTERM ends the pass as Ctrl-C does: the areas' processes are ended too
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    keys = o.area or list(AREA_MODULES)
    areas = load_areas(keys)
    cli = Cli("spawn" if o.spawn else "fork")
    if cli.mode == "fork":
        warm_up()
    root = Path(tempfile.mkdtemp(prefix="p4scope-hostile-"))
    t_start = time.monotonic()
    done: dict[str, tuple[list[Result], float]] = {}

    def on_done(area, results, seconds) -> None:
        done[area.name] = (results, seconds)
        print_area_table(area.name, results, o.quiet)

    try:
        plans = [(area, AreaContext(Workspace(root / key), cli, o.fast)) for key, area in areas]
        run_areas(plans, o.jobs, AREA_TIME_LIMIT_S[o.fast], on_done)
    finally:
        if o.keep:
            print(f"\nkept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    per_area = [(area.name, *done[area.name]) for _, area in areas]
    everything = [r for _, rs, _ in per_area for r in rs]
    print_summary(per_area)
    n, h, w, c = counts(everything)
    mode = ("fast" if o.fast else "full") + (", spawn" if o.spawn else "")
    print(f"({mode}; {time.monotonic() - t_start:.1f} s; {os.cpu_count()} CPUs)")
    print(f"hostile: {n} tried, {h} handled, {w} wrong, {c} crashed")
    return 0 if w == 0 and c == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
