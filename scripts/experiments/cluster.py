"""Cases measured on a Dask cluster (`p4scope run ... --cluster`): the
address checked, the scheduler reached (or a LocalCluster of N worker
processes started on this machine), and the cases submitted to it.

Each case is one Dask task that runs the function a --jobs worker runs
(runner.Workers: `init(*args)` once per worker process and run, then
`measure(case)`), so each worker builds its own engine and a case's tables
do not depend on where it was measured. The runner stores them in plan
order as they come back, as it does for --jobs. A worker process measures
one case at a time whatever its threads (one engine each), so start
workers with `--nthreads 1` and as many processes as cores.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import signal
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence
from urllib.parse import urlsplit

from . import sources
from .params import MAX_JOBS
from .runner import Case, Measured, _start_worker, worker_measure_chain, worker_tasks

if TYPE_CHECKING:
    from .runner import Workers, _Progress

CONNECT_TIMEOUT_S = 10.0
"""How long the scheduler (and a first worker) may take to answer."""
LOST_AFTER_S = 60.0
"""A case fails when the cluster has had no worker (or no scheduler) this long."""
POLL_S = 1.0
EXAMPLE = "tcp://HOST:PORT (a Dask scheduler, e.g. tcp://10.0.0.5:8786) or local:N"


class ClusterUnreachable(Exception):
    """The cluster cannot measure the run: no scheduler answered at the
    address, it has no worker, or its workers run other code than this
    machine."""


@dataclass(frozen=True)
class ClusterAddress:
    """Where the cases go: a scheduler's address, or `local` workers of a
    LocalCluster this run starts (and stops)."""

    text: str
    scheduler: Optional[str] = None
    local: int = 0

    def __str__(self) -> str:
        return self.text


def parse_address(text: str) -> ClusterAddress:
    """`tcp://HOST:PORT` or `local:N`; ValueError saying what is wrong."""
    t = text.strip()
    if t.startswith("local:"):
        n = t.removeprefix("local:")
        if not n.isdigit() or not 1 <= int(n) <= MAX_JOBS:
            raise ValueError(f"{text!r}: local:N takes N worker processes, 1..{MAX_JOBS}")
        return ClusterAddress(t, local=int(n))
    u = urlsplit(t)
    try:
        port = u.port
    except ValueError:
        port = None
    if (u.scheme != "tcp" or not u.hostname or port is None or not 1 <= port <= 65535
            or u.path not in ("", "/") or u.query or u.fragment or u.username):
        raise ValueError(f"{text!r}: expected {EXAMPLE}")
    return ClusterAddress(t, scheduler=f"tcp://{u.netloc}")


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while LocalCluster spawns its workers: they inherit
    it, so Ctrl-C in the terminal ends the run here (which stops them), not
    each worker with a traceback of its own. (A Ctrl-C while they start,
    about a second, is not seen.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextmanager
def _dask_logs_quiet() -> Iterator[None]:
    """Dask's own log records (with tracebacks: a lost scheduler, tasks
    cancelled by Ctrl-C) kept off stderr: the run says what happened, in
    its outcome and run.json."""
    importlib.import_module("distributed")  # its logging configured first (levels per logger)

    logs = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)
            if n == "distributed" or n.startswith("distributed.")]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)


@contextmanager
def connected(address: ClusterAddress, timeout: Optional[float] = None) -> Iterator[Any]:
    """A dask.distributed Client on `address` with at least one worker,
    closed afterwards (with the LocalCluster of `local:N`); raises
    ClusterUnreachable when none answers within `timeout` seconds
    (default CONNECT_TIMEOUT_S)."""
    with _dask_logs_quiet():
        with _client(address, CONNECT_TIMEOUT_S if timeout is None else timeout) as client:
            yield client


@contextmanager
def _client(address: ClusterAddress, timeout: float) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    cluster = None
    if address.local:
        with _sigint_ignored():
            cluster = LocalCluster(n_workers=address.local, threads_per_worker=1,
                                   processes=True, host="127.0.0.1", dashboard_address=None,
                                   memory_limit=0, silence_logs=logging.ERROR)
    try:
        if address.scheduler:
            _check_scheduler(address, timeout)
        try:
            client = Client(cluster if cluster is not None else address.scheduler,
                            timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            why = "" if str(e).startswith("Timed out") else f" ({e})"
            raise ClusterUnreachable(f"no Dask scheduler answered at {address} within "
                                     f"{timeout:g} s{why}") from None
        try:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError):
                raise ClusterUnreachable(
                    f"the Dask scheduler at {address} has no worker (start some with "
                    f"`dask worker {address} --nthreads 1`)") from None
            _check_code(client, address)
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _check_scheduler(address: ClusterAddress, timeout: float) -> None:
    """Raises ClusterUnreachable unless a Dask scheduler at `address` takes
    a connection and completes Dask's handshake within `timeout` seconds.
    A Client would wait forever on a server that accepts and stays silent,
    and fail with a traceback (and its cleanup with another, 20 s later)
    on one that speaks another protocol: a dashboard's port, a web server."""
    from distributed.comm import connect

    u = urlsplit(address.scheduler or "")
    deadline = time.monotonic() + timeout
    while True:  # a scheduler starting meanwhile is waited for, as Client does
        try:
            socket.create_connection((u.hostname, u.port),
                                     timeout=max(deadline - time.monotonic(), 0.1)).close()
            break
        except OSError as e:
            if time.monotonic() + 0.2 >= deadline:
                why = "" if isinstance(e, TimeoutError) else f" ({e.strerror or e})"
                raise ClusterUnreachable(f"no Dask scheduler answered at {address} within "
                                         f"{timeout:g} s{why}") from None
            time.sleep(0.2)

    async def handshake() -> None:
        comm = await connect(address.scheduler, timeout=timeout)
        await comm.close()

    left = max(deadline - time.monotonic(), 1.0)
    # on a thread of its own: the caller may run in an event loop (a notebook)
    with ThreadPoolExecutor(1) as pool:
        try:
            pool.submit(asyncio.run, asyncio.wait_for(handshake(), left)).result()
        except Exception as e:  # noqa: BLE001 - whatever the bytes made of Dask's reader
            what = (f"did not answer Dask's handshake within {timeout:g} s"
                    if isinstance(e, TimeoutError) else "answered in another protocol")
            raise ClusterUnreachable(f"{address} is not a Dask scheduler: it took the connection "
                                     f"and {what}") from None


def _check_code(client: Any, address: ClusterAddress) -> None:
    """Raises ClusterUnreachable when a worker's code (sources.fingerprint:
    the engine's sources and the package's) differs from this machine's,
    or the worker cannot say (a p4scope without the question)."""
    mine = sources.fingerprint()
    theirs = client.run(sources.fingerprint, on_error="return")
    bad = {}
    for worker, fp in sorted(theirs.items()):
        d = sources.differences(mine, fp) if isinstance(fp, dict) else [f"{type(fp).__name__}: {fp}"]
        if d:
            bad[worker] = d
    if bad:
        worker, d = next(iter(bad.items()))
        raise ClusterUnreachable(
            f"{len(bad)} of {len(theirs)} workers at {address} run other p4scope code than this "
            f"machine (the first, {worker}: {'; '.join(d)}): set every machine up at the same "
            f"commit with scripts/setup.sh")


def worker_count(client: Any) -> int:
    return len(client.scheduler_info().get("workers", {}))


def _has_workers(client: Any) -> bool:
    """Whether the scheduler is there and has a worker (False when asking fails)."""
    try:
        return client.status == "running" and worker_count(client) > 0
    except Exception:  # noqa: BLE001 - the scheduler went away meanwhile
        return False


_ONE_CASE_AT_A_TIME = threading.Lock()
_RUN_ON_THIS_WORKER: list[Optional[str]] = [None]


def _measure_on_worker(run: str, code: dict[str, str], init: Any, args: tuple, measure: Any,
                       cases: list[Case]) -> list[Measured]:
    """In a Dask worker process: the worker's engine started for `run`
    (anew when the worker measured another run before), then the cases (a
    runner.worker_tasks task) measured as a --jobs worker measures them. A
    worker that joined after the run's check, with other code than `code`,
    fails them."""
    with _ONE_CASE_AT_A_TIME:
        if _RUN_ON_THIS_WORKER[0] != run:
            d = sources.differences(sources.fingerprint(), code)
            if d:
                raise RuntimeError(f"this worker runs other p4scope code than the machine that "
                                   f"runs the run ({'; '.join(d)}): set it up at the same commit "
                                   f"with scripts/setup.sh")
            _RUN_ON_THIS_WORKER[0] = run
            _start_worker(init, args)
        return worker_measure_chain(measure, cases)


def _failed(text: str) -> Measured:
    text = " ".join(text.split())  # one line (Dask's messages may have several)
    return "failed", {}, RuntimeError(text), text, 0.0, []


def _result(client: Any, future: Any) -> "list[Measured] | Measured":
    """The task's outcomes; one failure when the task was lost (its workers
    died, the scheduler went away) or the cluster stayed without a worker
    for LOST_AFTER_S."""
    lost_since: Optional[float] = None
    while True:
        try:
            return future.result(timeout=POLL_S)
        except TimeoutError:
            if _has_workers(client):
                lost_since = None
            elif lost_since is None:
                lost_since = time.monotonic()
            elif time.monotonic() - lost_since > LOST_AFTER_S:
                return _failed(f"the Dask cluster has had no worker for {LOST_AFTER_S:g} s")
        except (Exception, asyncio.CancelledError) as e:  # noqa: BLE001 - the case failed
            return _failed(f"on the Dask cluster: {type(e).__name__}: {e}")


def measure_on_cluster(cases: Sequence[Case], w: "Workers", bar: "_Progress") -> Iterator[Measured]:
    """The runner's outcomes of `cases` measured on `w.client`'s cluster,
    in plan order; the futures still pending are cancelled when the run
    ends (Ctrl-C, a failure)."""
    client = w.client
    run = uuid.uuid4().hex
    code = sources.fingerprint()
    futures: list[Any] = []
    given: dict[int, tuple[Any, int]] = {}
    for n, task in enumerate(worker_tasks(cases)):
        futures.append(client.submit(_measure_on_worker, run, code, w.init, w.args, w.measure,
                                     [cases[i] for i in task], key=f"p4scope-{run}-{n}",
                                     priority=-n, pure=False))
        given.update((i, (futures[-1], k)) for k, i in enumerate(task))
    try:
        for i, case in enumerate(cases):
            bar.begin(case, i)
            fut, k = given[i]
            got = _result(client, fut)
            yield got[k] if isinstance(got, list) else got
    finally:
        client.cancel(futures)
