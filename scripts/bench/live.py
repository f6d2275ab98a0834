"""Benchmark: what the live dashboard costs a run, and how often its page
is updated.

    .venv/bin/p4scope bench live [--repeats 2] [--browser/--no-browser]

Runs `p4scope run microburst --quick --profiles fair` (virtual time) into a
temporary folder without --live (as it runs by default: --jobs = the
machine's cores), without --live with --jobs 1, with --live (which
measures in this process, --jobs 1, to draw the case in flight) and no
page open, and with --live and the page open in headless Chromium
(Debian's chromium and chromium-driver, driven by selenium), in turns;
prints each run's wall time, and for the runs with a page the updates it
applied per second while the run went (server-sent events: statuses,
cases, series, the case in flight).
"""

from __future__ import annotations

import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

import typer

URL = re.compile(r"dashboard at (http://127\.0\.0\.1:\d+/)")
RUN = ["run", "microburst", "--quick", "--profiles", "fair", "--no-progress"]


def _browser(profile: Path):
    """Headless Chromium, started before the run so its start-up is not
    counted in the run's time."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--disable-quic"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def _page(drv, url: str, done: threading.Event, out: dict) -> None:
    drv.get(url)
    while not done.is_set():
        s = drv.execute_script("return window.p4scopeLive || null")
        if s and s.get("ended"):
            break
        time.sleep(0.2)
    out.update(drv.execute_script("return window.p4scopeLive || null") or {})


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _one(mode: str, root: Path) -> tuple[float, float, Optional[float], int]:
    args = [sys.executable, "-m", "p4scope.cli", *RUN, "--results", str(root)]
    if mode == "jobs1":
        args += ["--jobs", "1"]
    elif mode != "off":
        args.append("--live")
    drv = _browser(root / "profile") if mode == "page" else None
    cpu0 = _cpu_children()
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    done, stats, th, err = threading.Event(), {}, None, []
    try:
        for line in p.stderr:
            err.append(line)
            m = URL.search(line)
            if m and mode == "page":
                th = threading.Thread(target=_page, args=(drv, m.group(1), done, stats),
                                      daemon=True)
                th.start()
        rc = p.wait()
        wall = time.perf_counter() - t0
        cpu = _cpu_children() - cpu0  # the run's CPU seconds (workers too; not the browser's)
        done.set()
        if th is not None:
            th.join(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if drv is not None:
            drv.quit()
    if rc != 0:
        raise RuntimeError(f"the run exited {rc}: " + "".join(err[-20:]))
    rate = None
    if stats.get("updates", 0) > 1 and stats.get("last", 0) > stats.get("first", 0):
        rate = (stats["updates"] - 1) / ((stats["last"] - stats["first"]) / 1000)
    return wall, cpu, rate, int(stats.get("updates", 0))


def bench_live(repeats: int = typer.Option(2, min=1, max=50, help="Runs of each kind, in turns."),
               browser: bool = typer.Option(True, help="Also runs with the page open in "
                                                       "headless Chromium."),
               only: str = typer.Option("", help="Only these kinds, comma-separated: off, "
                                                 "jobs1, live, page.")) -> None:
    """Wall time of a quick microburst run with and without --live; page updates per second."""
    modes = ["off", "jobs1", "live"] + (["page"] if browser else [])
    if only:
        modes = [m for m in only.split(",") if m in ("off", "jobs1", "live", "page")]
        if not modes:
            typer.echo("p4scope bench live: error: --only: off, jobs1, live or page", err=True)
            raise typer.Exit(2)
    walls: dict[str, list[float]] = {m: [] for m in modes}
    cpus: dict[str, list[float]] = {m: [] for m in modes}
    rates: list[float] = []
    for r in range(repeats):
        for m in modes:
            with tempfile.TemporaryDirectory(prefix="p4scope-bench-live-") as d:
                wall, cpu, rate, n = _one(m, Path(d))
            walls[m].append(wall)
            cpus[m].append(cpu)
            extra = f", {n} page updates, {rate:.1f}/s" if rate is not None else ""
            typer.echo(f"[{r + 1}/{repeats}] {m:<5} {wall:6.1f} s wall, {cpu:6.1f} s CPU{extra}")
            if rate is not None:
                rates.append(rate)
    names = {"off": "without --live", "jobs1": "without --live, --jobs 1",
             "live": "--live, no page open",
             "page": "--live, page open in Chromium"}
    typer.echo("\n`p4scope run microburst --quick --profiles fair`, median wall time, "
               "median CPU time of the run's processes:")
    for m in modes:
        typer.echo(f"  {names[m]:<32} {statistics.median(walls[m]):6.1f} s "
                   f"({', '.join(f'{w:.1f}' for w in walls[m])}), CPU "
                   f"{statistics.median(cpus[m]):6.1f} s")
    if rates:
        typer.echo(f"page updates per second while the run went: median {statistics.median(rates):.1f} "
                   f"({', '.join(f'{x:.1f}' for x in rates)})")


if __name__ == "__main__":
    from . import as_script

    as_script(lambda: typer.run(bench_live))
