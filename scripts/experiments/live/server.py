"""The dashboard's server: an asyncio app (starlette, served by uvicorn in a
thread of its own) on loopback.

    GET /                    the page
    GET /assets/<name>       its script, its style, and plotly.js from the
                             installed plotly wheel (never a CDN)
    GET /events              server-sent events: `cases` (summaries of the
                             cases measured since the last one), `series`
                             (the newest case's series, reduced), `inflight`
                             (the case being measured, as far as virtual
                             time got; at most 2 a second), `status`
                             (progress, clocks, totals; on every change, and
                             every 100 ms while a run goes), `end`
    GET /api/status, /api/cases, /api/series?case=ID&t0=&t1=&px=,
        /api/inflight        the same as JSON (series for any window, one
                             value per pixel column; the case in flight, or
                             a watched switch's window, {} when none)

Read-only (GET and HEAD only) and closed: every path is one of the routes
above; assets are a fixed table of names, never looked up on the disk from
what a request says, so no path reaches a file it does not name. A Host
header other than the loopback names is refused (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import errno
import json
import math
import socket
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, AsyncIterator, Optional

from . import reduce as rx
from .model import RunModel  # or any model with its interface (switch_model.SwitchModel)

ASSETS = Path(__file__).with_name("assets")
HOST = "127.0.0.1"
HEARTBEAT_S = 0.1  # a status at least this often while a run goes
INFLIGHT_S = 0.5  # the case in flight at most this often (redrawing it is what costs a page)
TICK_S = 0.08  # how often a stream looks for news (at most 12.5 statuses a second)
SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'self' 'unsafe-eval'; "
                               "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                               "connect-src 'self'; font-src 'self' data:",
}


class PortInUse(OSError):
    """The port asked for is taken."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (0: a free port); PortInUse when the
    port is taken."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind((host, port))
        s.listen(64)
    except OSError as e:
        s.close()
        if e.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(e.errno, f"port {port} on {host} is taken ({e.strerror})") from None
        raise
    s.setblocking(False)
    return s


@lru_cache(maxsize=None)
def _plotly_js() -> bytes:
    import plotly.offline

    return plotly.offline.get_plotlyjs().encode("utf-8")


def _asset(name: str) -> bytes:
    return (ASSETS / name).read_bytes()


ASSET_TYPES = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "plotly.min.js": "text/javascript; charset=utf-8",
}


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def make_app(model: RunModel, stopping: Optional[threading.Event] = None,
             streams: Optional[list[int]] = None) -> Any:
    """The starlette app serving `model`. `stopping` ends every event stream;
    `streams[0]` counts the streams open (so a run can wait for the last
    status to go out)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    stopping = stopping or threading.Event()
    streams = streams if streams is not None else [0]
    assets = {n: (_asset(n) if n != "plotly.min.js" else None, t) for n, t in ASSET_TYPES.items()}
    index = _asset("index.html")

    def page(_: Request) -> Response:
        return Response(index, media_type="text/html; charset=utf-8",
                        headers={**SECURITY, "Cache-Control": "no-cache"})

    def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return not_found(request)
        body, ctype = assets[name]
        return Response(body if body is not None else _plotly_js(), media_type=ctype,
                        headers={**SECURITY, "Cache-Control": "max-age=3600"})

    def not_found(_: Request, exc: Any = None) -> Response:
        return Response("not found\n", status_code=404, media_type="text/plain",
                        headers=SECURITY)

    def status(_: Request) -> Response:
        return JSONResponse(model.status(), headers=SECURITY)

    def cases(_: Request) -> Response:
        return JSONResponse(model.summaries(), headers=SECURITY)

    def series(request: Request) -> Response:
        q = request.query_params
        c = model.case(q.get("case", ""))
        if c is None:
            return not_found(request)
        try:
            t0 = float(q["t0"]) if q.get("t0") else None
            t1 = float(q["t1"]) if q.get("t1") else None
            px = int(q.get("px", rx.DEFAULT_PX))
        except ValueError:
            return JSONResponse({"error": "t0, t1 are numbers (ns), px an integer"},
                                status_code=400, headers=SECURITY)
        if any(x is not None and not math.isfinite(x) for x in (t0, t1)):
            return JSONResponse({"error": "t0 and t1 must be finite"}, status_code=400,
                                headers=SECURITY)
        return JSONResponse(c.series(t0, t1, px), headers=SECURITY)

    def inflight(_: Request) -> Response:
        return JSONResponse(model.inflight_series(-1) or {}, headers=SECURITY)

    async def events(_: Request) -> Response:
        return StreamingResponse(_stream(model, stopping, streams), media_type="text/event-stream",
                                 headers={**SECURITY, "Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    routes = [Route("/", page, methods=["GET", "HEAD"]),
              Route("/assets/{name}", asset, methods=["GET", "HEAD"]),
              Route("/events", events, methods=["GET"]),
              Route("/api/status", status, methods=["GET"]),
              Route("/api/cases", cases, methods=["GET"]),
              Route("/api/series", series, methods=["GET"]),
              Route("/api/inflight", inflight, methods=["GET"])]
    return Starlette(routes=routes, exception_handlers={404: not_found},
                     middleware=[Middleware(TrustedHostMiddleware,
                                            allowed_hosts=["127.0.0.1", "localhost"])])


async def _stream(model: RunModel, stopping: threading.Event,
                  streams: list[int]) -> AsyncIterator[str]:
    """One page's event stream: everything so far, then what changes."""
    streams[0] += 1
    try:
        yield "retry: 1000\n\n"
        sent, version, pushed, flight, flown = 0, -1, 0.0, -1, 0.0
        while not stopping.is_set():
            n = model.count()
            if n > sent:
                new = model.summaries(sent)
                sent += len(new)
                yield _sse("cases", new)
                newest = model.case(new[-1]["id"])
                if newest is not None:
                    yield _sse("series", newest.series())
            now = time.monotonic()
            if now - flown >= INFLIGHT_S:
                d = model.inflight_series(flight)
                if d is not None:
                    flight, flown = d["version"], now
                    yield _sse("inflight", d)
            ended = model.ended
            if model.version != version or (not ended and now - pushed >= HEARTBEAT_S):
                version = model.version
                pushed = now
                yield _sse("status", model.status())
            if ended and sent >= model.count():
                yield _sse("end", model.status())
                return
            await asyncio.sleep(TICK_S)
    finally:
        streams[0] -= 1


class Dashboard:
    """The server for `model` on host:port, in a thread; `url` once bound.
    Binding happens at construction, so a taken port is known (PortInUse)
    before anything else starts."""

    def __init__(self, model: RunModel, port: int = 0, host: str = HOST):
        self.model = model
        self.sock = bind(host, port)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}/"
        self.stopping = threading.Event()
        self.streams = [0]
        self._server: Any = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "Dashboard":
        import uvicorn

        config = uvicorn.Config(make_app(self.model, self.stopping, self.streams),
                                log_level="error", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1, ws="none")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self.sock]},
                                        name="p4scope-live", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"the dashboard's server did not start on {self.url}")
        return self

    def flush(self, timeout: float = 2.0) -> None:
        """Waits (up to `timeout`) until every open page has had the run's
        end (each stream closes after sending it)."""
        deadline = time.monotonic() + timeout
        while self.streams[0] > 0 and time.monotonic() < deadline:
            time.sleep(0.02)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Dashboard":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
