"""The dashboard on the command line: the `--live` options of the runs
(`p4scope run microburst|fairness --live`, in virtual time or in Mininet),
`p4scope watch RUN_DIR`, the replay of a stored run, and `p4scope watch --switch
ADDR --reports [ADDR:]PORT`, a switch that is already running (attach.py).

All serve on 127.0.0.1 only and print the page's address first; a port
that is taken, or a value out of range, exits 2 naming the option.
"""

from __future__ import annotations

import ipaddress
import time
from pathlib import Path
from typing import Any, Callable, Optional

import typer

MAX_PORT = 65535
MAX_LINGER_S = 86400.0
LIVE_PANEL = "Live dashboard"
LIVE = typer.Option(False, "--live", rich_help_panel=LIVE_PANEL,
                    help="Serve a dashboard of the run while it goes (queues, shares, bursts, "
                         "drops, progress) on http://127.0.0.1:PORT/; in Mininet it "
                         "switches the DUT's telemetry instrument on.")
LIVE_PORT = typer.Option(0, "--live-port", rich_help_panel=LIVE_PANEL,
                         help=f"Port of the --live dashboard, 0..{MAX_PORT} (0: a free one).")
LIVE_LINGER = typer.Option(0.0, "--live-linger", rich_help_panel=LIVE_PANEL,
                           help="Seconds the --live dashboard stays up after the run ends "
                                f"(Ctrl-C ends it sooner), 0..{MAX_LINGER_S:g}.")


def _fail(prog: str, msg: str) -> None:
    typer.echo(f"p4scope {prog}: error: {msg}", err=True)
    raise typer.Exit(2)


def check_port(port: int, prog: str = "run") -> int:
    if not 0 <= port <= MAX_PORT:
        _fail(prog, f"--live-port {port}: a port is 0..{MAX_PORT} (0: a free one)")
    return port


def check_options(live: bool, port: int, linger_s: float) -> None:
    """Exit 2 for a --live option out of range or given without --live."""
    check_port(port)
    if not (0 <= linger_s <= MAX_LINGER_S):
        _fail("run", f"--live-linger {linger_s:g}: 0..{MAX_LINGER_S:g} seconds")
    if not live:
        extra = [o for o, given in (("--live-port", port != 0), ("--live-linger", linger_s != 0))
                 if given]
        if extra:
            _fail("run", f"{', '.join(extra)}: only with --live")


def jobs_for(ctx: typer.Context, live: bool, jobs: int) -> int:
    """--live measures in this process (--jobs 1) unless --jobs was given:
    then the page follows the case in flight too, not only finished ones."""
    if live and ctx.get_parameter_source("jobs").name == "DEFAULT":
        return 1
    return jobs


def run_live(live: bool, port: int, linger_s: float,
             run: Callable[[Optional[Callable[[Any], None]]], None]) -> None:
    """Runs `run(on_event)`: with the dashboard when `live` (on_event feeds
    it), else `run(None)`. A taken port exits 2 before the run starts."""
    if not live:
        run(None)
        return
    from ..virtual_cli import run_observed
    from .server import PortInUse
    from .session import LiveSession

    try:
        session = LiveSession(port, echo=lambda s: typer.echo(s, err=True))
    except PortInUse as e:
        _fail("run", f"--live-port {port}: {e.strerror}")
    session.start()
    run_observed(run, session.on_event, session.on_trace, linger_s, session.close)


def run_live_mininet(live: bool, port: int, linger_s: float, run: Callable[[], None]) -> None:
    """Runs `run()`, a Mininet run: with the dashboard when `live`
    (testbed_session.py: it watches the run's testbeds), lingering as a
    virtual-time run's does. A taken port exits 2 before the run starts."""
    if not live:
        run()
        return
    from ..mininet.driver import testbeds_observed
    from ..virtual_cli import run_observed
    from .server import PortInUse
    from .testbed_session import TestbedSession

    try:
        session = TestbedSession(port, echo=lambda s: typer.echo(s, err=True))
    except PortInUse as e:
        _fail("run", f"--live-port {port}: {e.strerror}")
    session.start()

    def observed(_: Any) -> None:  # the runner's events come through the observer
        with testbeds_observed(session):
            run()
    run_observed(observed, session.on_event, session.on_trace, linger_s, session.close)


WATCH_SWITCH = "Watching a running switch"
MIN_POLL_S, MAX_POLL_S = 0.02, 60.0
MIN_WINDOW_S, MAX_WINDOW_S = 1.0, 3600.0


def watch_cmd(run_dir: Optional[Path] = typer.Argument(
                  None, help="A run folder (results/<run-id>) to replay."),
              live_port: int = typer.Option(
                  0, "--live-port", "--port",
                  help=f"Port on 127.0.0.1, 0..{MAX_PORT} (0: a free one)."),
              switch: Optional[str] = typer.Option(
                  None, "--switch", rich_help_panel=WATCH_SWITCH, show_default=False,
                  help="A running switch's P4Runtime address (HOST:PORT): its telemetry "
                       "instrument is read there, read-only (never primary, never a write)."),
              reports: Optional[str] = typer.Option(
                  None, "--reports", rich_help_panel=WATCH_SWITCH, show_default=False,
                  help="Take the instrument's INT reports (UDP) on [ADDRESS:]PORT (address "
                       "default 127.0.0.1): the collector address the switch sends them to."),
              device_id: int = typer.Option(0, "--device-id", rich_help_panel=WATCH_SWITCH,
                                            help="The switch's P4Runtime device id."),
              poll_s: float = typer.Option(0.2, "--poll", rich_help_panel=WATCH_SWITCH,
                                           help=f"Seconds between two reads over P4Runtime, "
                                                f"{MIN_POLL_S:g}..{MAX_POLL_S:g}."),
              window_s: float = typer.Option(60.0, "--window", rich_help_panel=WATCH_SWITCH,
                                             help=f"Seconds of wall clock the page shows, "
                                                  f"{MIN_WINDOW_S:g}..{MAX_WINDOW_S:g}."),
              metrics_port: Optional[int] = typer.Option(
                  None, "--metrics-port", rich_help_panel=WATCH_SWITCH, show_default=False,
                  help=f"Also serve what the watch sees (queue occupancy, per-ingress bytes and "
                       f"packets, bursts, drops, INT hop latency) for Prometheus on "
                       f"http://ADDRESS:PORT/metrics, 0..{MAX_PORT} (0: a free one)."),
              metrics_address: str = typer.Option(
                  "127.0.0.1", "--metrics-address", rich_help_panel=WATCH_SWITCH,
                  help="Address the --metrics-port endpoint listens on (an IP).")) -> None:
    """Replay a stored run in the live dashboard (queues, shares, bursts, drops,
    with a time slider), or watch a running switch's queues live (--switch,
    --reports; --metrics-port for Prometheus); served on 127.0.0.1 until Ctrl-C."""
    from ..metrics.cli import check_endpoint

    check_port(live_port, "watch")
    check_endpoint(metrics_port, metrics_address, "watch")
    if metrics_port is None and metrics_address != "127.0.0.1":
        _fail("watch", "--metrics-address: only with --metrics-port")
    if run_dir is None:
        if switch is None and reports is None:
            _fail("watch", "give RUN_DIR (a stored run to replay) or --switch/--reports "
                           "(a running switch to watch)")
        _watch_switch(live_port, switch, reports, device_id, poll_s, window_s,
                      (metrics_port, metrics_address))
        return
    attach = [o for o, given in (("--switch", switch is not None),
                                 ("--reports", reports is not None),
                                 ("--device-id", device_id != 0), ("--poll", poll_s != 0.2),
                                 ("--window", window_s != 60.0),
                                 ("--metrics-port", metrics_port is not None)) if given]
    if attach:
        _fail("watch", f"{', '.join(attach)}: watch a running switch, not a stored run "
                       f"(give RUN_DIR or {attach[0]}, not both)")
    if not (run_dir / "run.json").is_file():
        _fail("watch", f"{run_dir} is not a run folder (no run.json)")
    from ..runner import sigterm_interrupts
    from .model import from_run_dir
    from .server import Dashboard, PortInUse
    from .session import watch_until_stopped

    try:
        model = from_run_dir(run_dir)
    except (OSError, ValueError, KeyError) as e:
        _fail("watch", f"{run_dir}: cannot read the run: {type(e).__name__}: {e}")
    try:
        dash = Dashboard(model, live_port)
    except PortInUse as e:
        _fail("watch", f"--live-port {live_port}: {e.strerror}")
    with sigterm_interrupts():
        dash.start()
        typer.echo(f"p4scope watch: {model.run_id}: {model.count()} cases ({model.state}); "
                   f"dashboard at {dash.url} (Ctrl-C stops it)", err=True)
        watch_until_stopped(dash)


def reports_address(value: str) -> tuple[str, int]:
    """[ADDRESS:]PORT as (address, port); ValueError says what is wrong."""
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    ipaddress.ip_address(host)  # ValueError: not an IP address
    p = int(port)
    if not 1 <= p <= MAX_PORT:
        raise ValueError(f"port {p} is not 1..{MAX_PORT}")
    return host, p


def _watch_switch(live_port: int, switch: Optional[str], reports: Optional[str], device_id: int,
                  poll_s: float, window_s: float,
                  metrics_at: tuple[Optional[int], str] = (None, "127.0.0.1")) -> None:
    """The dashboard over a running switch until Ctrl-C/SIGTERM; with
    `metrics_at` (port, address) a port, the Prometheus endpoint too (its
    series labelled switch=<--switch>, or reports@<--reports> without it)."""
    if not MIN_POLL_S <= poll_s <= MAX_POLL_S:
        _fail("watch", f"--poll {poll_s:g}: {MIN_POLL_S:g}..{MAX_POLL_S:g} seconds")
    if not MIN_WINDOW_S <= window_s <= MAX_WINDOW_S:
        _fail("watch", f"--window {window_s:g}: {MIN_WINDOW_S:g}..{MAX_WINDOW_S:g} seconds")
    if device_id < 0:
        _fail("watch", f"--device-id {device_id}: a device id is 0 or more")
    if switch is None and (poll_s != 0.2 or device_id != 0):
        _fail("watch", "--poll, --device-id: only with --switch")
    addr = None
    if reports is not None:
        try:
            addr = reports_address(reports)
        except ValueError as e:
            _fail("watch", f"--reports {reports}: give PORT or ADDRESS:PORT ({e})")
    from ..runner import sigterm_interrupts
    from .attach import AttachError, Attached, ReportFeed, RuntimeFeed
    from .server import Dashboard, PortInUse
    from .switch_model import SwitchModel

    model = SwitchModel(switch or f"reports on {reports}", window_s)
    feeds: list[Any] = []
    metrics = endpoint = None
    try:
        try:
            dash = Dashboard(model, live_port)
        except PortInUse as e:
            _fail("watch", f"--live-port {live_port}: {e.strerror}")
        feeds.append(dash)
        if metrics_at[0] is not None:
            from ..metrics.cli import open_endpoint
            from ..metrics.telemetry import Telemetry
            from ..metrics.watch_feed import WatchFeed

            telemetry = Telemetry(run=False)
            endpoint = open_endpoint(telemetry, metrics_at[0], metrics_at[1], "watch")
            feeds.append(endpoint)
            metrics = WatchFeed(telemetry, switch or f"reports@{addr[0]}:{addr[1]}")
        if addr is not None:
            try:
                feeds.append(ReportFeed.listen(model, *addr, metrics=metrics))
            except OSError as e:
                _fail("watch", f"--reports {reports}: cannot listen there ({e.strerror or e})")
        if switch is not None:
            feeds.append(RuntimeFeed(model, switch, device_id, metrics=metrics))
    except AttachError as e:
        _close(feeds)
        _fail("watch", f"{e.option} {switch}: {e}")
    except typer.Exit:
        _close(feeds)
        raise
    rf = next((f for f in feeds if isinstance(f, ReportFeed)), None)
    rt = next((f for f in feeds if isinstance(f, RuntimeFeed)), None)
    attached = Attached(model, rf, rt, poll_s)
    with sigterm_interrupts():
        dash.start()
        what = ([f"P4Runtime {switch} (read-only)"] if rt else []) + (
            [f"INT reports on udp {rf.address}"] if rf else [])
        typer.echo(f"p4scope watch: {' and '.join(what)}; dashboard at {dash.url} "
                   f"(Ctrl-C stops it)", err=True)
        try:
            while dash.alive():
                attached.step()
                time.sleep(0.1)
        except KeyboardInterrupt:
            pass
        finally:
            model.end("the watch stopped")
            attached.stop()
            dash.flush()
            dash.stop()
            if endpoint is not None:
                endpoint.stop()


def _close(things: list[Any]) -> None:
    for t in things:
        t.stop()
