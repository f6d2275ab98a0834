"""The Prometheus endpoint on the command line: the `--metrics-*` options
of the virtual-time runs (`p4scope run microburst|fairness --metrics-port N`)
and of a watched switch (`p4scope watch --switch/--reports ... --metrics-port N`).

The endpoint listens on 127.0.0.1 unless --metrics-address says otherwise
and prints its address first; a value out of range, or a port that is
taken, exits 2 naming the option.
"""

from __future__ import annotations

import errno
import ipaddress
import time
from typing import Any, Callable, Optional

import typer

MAX_PORT = 65535
MAX_LINGER_S = 86400.0
PANEL = "Prometheus endpoint"
METRICS_PORT = typer.Option(None, "--metrics-port", rich_help_panel=PANEL, show_default=False,
                            help=f"Serve the run's telemetry (queue occupancy, per-ingress bytes "
                                 f"and packets, bursts, drops, INT hop latency) for Prometheus on "
                                 f"http://ADDRESS:PORT/metrics, 0..{MAX_PORT} (0: a free one); "
                                 f"virtual time only.")
METRICS_ADDRESS = typer.Option("127.0.0.1", "--metrics-address", rich_help_panel=PANEL,
                               help="Address the --metrics-port endpoint listens on (an IP).")
METRICS_LINGER = typer.Option(0.0, "--metrics-linger", rich_help_panel=PANEL,
                              help="Seconds the endpoint stays up after the run ends, for a last "
                                   f"scrape (Ctrl-C ends it sooner), 0..{MAX_LINGER_S:g}.")

Observer = Callable[[Any], None]


def _fail(msg: str, prog: str = "run") -> None:
    typer.echo(f"p4scope {prog}: error: {msg}", err=True)
    raise typer.Exit(2)


def check_endpoint(port: Optional[int], address: str, prog: str) -> None:
    """Exit 2 for a --metrics-port out of range or a --metrics-address that
    is not an IP address."""
    if port is not None and not 0 <= port <= MAX_PORT:
        _fail(f"--metrics-port {port}: a port is 0..{MAX_PORT} (0: a free one)", prog)
    try:
        ipaddress.ip_address(address)
    except ValueError:
        _fail(f"--metrics-address {address!r}: not an IP address (e.g. 127.0.0.1)", prog)


def check_options(port: Optional[int], address: str, linger_s: float, virtual: bool) -> None:
    """Exit 2 for a --metrics-* value out of range, given without
    --metrics-port, or --metrics-port on a run it cannot follow (Mininet)."""
    check_endpoint(port, address, "run")
    if not 0 <= linger_s <= MAX_LINGER_S:
        _fail(f"--metrics-linger {linger_s:g}: 0..{MAX_LINGER_S:g} seconds")
    if port is None:
        extra = [o for o, given in (("--metrics-address", address != "127.0.0.1"),
                                    ("--metrics-linger", linger_s != 0)) if given]
        if extra:
            _fail(f"{', '.join(extra)}: only with --metrics-port")
    elif not virtual:
        _fail("--metrics-port: the endpoint follows virtual-time runs only (for now)")


def both(a: Optional[Observer], b: Optional[Observer]) -> Optional[Observer]:
    """One on_event that tells `a` then `b` (either may be None)."""
    if a is None or b is None:
        return a or b

    def tell(ev: Any) -> None:
        a(ev)
        b(ev)
    return tell


class Endpoint:
    """The HTTP server of one telemetry store (prometheus_client's, in a
    thread). Binding happens here: a taken port raises OSError before
    the run starts."""

    def __init__(self, telemetry: Any, port: int, address: str = "127.0.0.1"):
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        registry.register(telemetry)
        self.httpd, self._thread = start_http_server(port, address, registry)
        host = f"[{address}]" if ":" in address else address
        self.url = f"http://{host}:{self.httpd.server_port}/metrics"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def open_endpoint(telemetry: Any, port: int, address: str, prog: str = "run") -> Endpoint:
    """The endpoint, listening, its address printed; a taken port or an
    address it cannot listen on exits 2 naming the option."""
    try:
        endpoint = Endpoint(telemetry, port, address)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            _fail(f"--metrics-port {port}: port {port} on {address} is taken ({e.strerror})", prog)
        _fail(f"--metrics-address {address}: cannot listen there ({e.strerror or e})", prog)
    typer.echo(f"p4scope metrics: Prometheus endpoint at {endpoint.url}", err=True)
    return endpoint


def run_metrics(port: Optional[int], address: str, linger_s: float,
                run: Callable[[Optional[Observer]], None]) -> None:
    """Runs `run(on_event)`: with the endpoint when `port` is given (on_event
    and the trace of the case in flight feed it), else `run(None)`."""
    if port is None:
        run(None)
        return
    from ..virtual_cli import run_observed
    from .feed import RunFeed
    from .telemetry import Telemetry

    telemetry = Telemetry()
    feed = RunFeed(telemetry)
    endpoint = open_endpoint(telemetry, port, address)

    def close(linger: float) -> None:
        try:
            if linger > 0:
                typer.echo(f"p4scope metrics: the endpoint stays at {endpoint.url} for "
                           f"{linger:g} s (Ctrl-C stops it)", err=True)
                time.sleep(linger)
        except KeyboardInterrupt:
            pass
        finally:
            endpoint.stop()

    run_observed(run, feed.on_event, feed.on_trace, linger_s, close)
