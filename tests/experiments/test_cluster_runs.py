"""`p4scope run ... --cluster`: cases measured on a Dask cluster's workers
come back into the run folder as a run in this process stores them (same
tables), in plan order; a failure or Ctrl-C ends the run partial with the
cluster's pending cases cancelled; a bad address exits 2, a scheduler that
does not answer (or is not a Dask scheduler) exits 1; no worker process is
left behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed")

from p4scope.cli import app  # noqa: E402
from p4scope.experiments import cluster, sources  # noqa: E402
from p4scope.experiments.rundir import RunDir, load_table  # noqa: E402
from p4scope.experiments.runner import Case, Workers, run_cases  # noqa: E402
from tests.experiments import runner_workers  # noqa: E402


_children = runner_workers.run_processes


def _none_left(before: set) -> None:
    new = [c for c in _children() if c.pid not in before]
    gone, alive = psutil.wait_procs(new, timeout=10)
    assert not alive, f"worker processes left behind: {alive}"


@pytest.mark.parametrize("text, scheduler, local", [
    ("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786", 0),
    ("tcp://sched.example:8786", "tcp://sched.example:8786", 0),
    ("tcp://[::1]:8786", "tcp://[::1]:8786", 0),
    ("local:2", None, 2),
])
def test_addresses_understood(text, scheduler, local):
    a = cluster.parse_address(text)
    assert (a.scheduler, a.local, str(a)) == (scheduler, local, text)


@pytest.mark.parametrize("text", ["tcp://x", "10.0.0.5:8786", "http://h:1", "tcp://h:0",
                                  "tcp://h:99999", "tcp://h:1/path", "local:0", "local:x",
                                  "local:100000", ""])
def test_a_malformed_address_exits_2_naming_the_option(tmp_path, text):
    r = CliRunner().invoke(app, ["run", "microburst", "--cluster", text, "--results",
                                 str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert "--cluster" in r.output and "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


def test_cluster_is_for_virtual_time_only(tmp_path):
    r = CliRunner().invoke(app, ["run", "fairness", "--mode", "mininet", "--cluster",
                                 "local:2", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "--cluster: for --mode virtual only" in r.output


def test_no_scheduler_exits_1_without_a_run_folder(tmp_path, monkeypatch):
    """Nothing listens at the address: exit 1 within the timeout, a line
    saying so, no traceback, no run folder."""
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    r = CliRunner().invoke(app, ["run", "microburst", "--quick", "--profiles", "fair",
                                 "--cluster", f"tcp://127.0.0.1:{port}", "--no-progress",
                                 "--results", str(tmp_path)])
    assert r.exit_code == 1, r.output
    assert time.monotonic() - t0 < 30
    assert (f"--cluster: no Dask scheduler answered at tcp://127.0.0.1:{port} within 1 s"
            in r.output)
    assert "Traceback" not in r.output and not isinstance(r.exception, Exception)
    assert list(tmp_path.iterdir()) == []


class _NotDask:
    """A TCP server on 127.0.0.1 that is not a Dask scheduler: `silent`
    takes connections and never writes; `http` answers like a web server
    (a dashboard's port given by mistake)."""

    def __init__(self, kind: str):
        self.kind, self.conns = kind, []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            if self.kind == "http":
                c.recv(65536)
                c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        for c in self.conns:
            c.close()
        self.sock.close()
        self.thread.join(5)


@pytest.mark.parametrize("kind, why", [
    ("silent", "did not answer Dask's handshake within 1 s"),
    ("http", "answered in another protocol"),
])
def test_a_server_that_is_not_a_scheduler_exits_1(tmp_path, monkeypatch, kind, why):
    """Something else listens at the address: exit 1 within the timeout,
    a line saying what it is not, no traceback, no run folder (a Client
    would wait forever on the silent one and fail with a traceback on the
    web server)."""
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1.0)
    server = _NotDask(kind)
    try:
        t0 = time.monotonic()
        r = CliRunner().invoke(app, ["run", "microburst", "--quick", "--profiles", "fair",
                                     "--cluster", f"tcp://127.0.0.1:{server.port}",
                                     "--no-progress", "--results", str(tmp_path)])
        took = time.monotonic() - t0
    finally:
        server.close()
    assert r.exit_code == 1, r.output
    assert took < 10
    assert (f"--cluster: tcp://127.0.0.1:{server.port} is not a Dask scheduler: it took the "
            f"connection and {why}") in r.output
    assert "Traceback" not in r.output and not isinstance(r.exception, Exception)
    assert list(tmp_path.iterdir()) == []


def test_the_check_works_from_inside_an_event_loop():
    """A caller already in an event loop (a notebook) reaches a scheduler
    as any other caller does, and is told the same about a web server."""
    import asyncio

    from distributed import LocalCluster

    lc = LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None)
    server = _NotDask("http")

    async def inside(address: str) -> None:
        cluster._check_scheduler(cluster.parse_address(address), 5.0)

    try:
        asyncio.run(inside(lc.scheduler_address))
        with pytest.raises(cluster.ClusterUnreachable, match="answered in another protocol"):
            asyncio.run(inside(f"tcp://127.0.0.1:{server.port}"))
    finally:
        server.close()
        lc.close()


def _cases(extra: dict[int, dict] = {}) -> list[Case]:  # noqa: B006 (read only)
    # the first case is the slowest: later ones finish before it
    return [Case(f"c{i}", "probe", f"case {i}", {"sleep": 0.6 if i == 0 else 0.0,
                                                 **extra.get(i, {})}) for i in range(5)]


def _run_on(client, tmp_path, cases, run_id: str, tag: str = "w", on_event=None):
    run = RunDir.create(tmp_path, "probe", run_id)
    run.start({})
    out = run_cases(run, cases, None, progress=False, on_event=on_event,
                    workers=Workers(0, runner_workers.start, (tag,), runner_workers.measure,
                                    client=client))
    return run, out


def test_local_cluster_runs_in_plan_order_and_ends_partial_on_failure(tmp_path):
    """local:2: two worker processes; cases stored in plan order whichever
    ends first; a failing case ends the run partial with its error; a
    worker whose start fails fails its cases; a second run on the same
    workers starts them anew. The workers are gone afterwards."""
    before = {c.pid for c in _children()}
    with cluster.connected(cluster.parse_address("local:2")) as client:
        run, out = _run_on(client, tmp_path, _cases(), "ok")
        assert out.complete and out.done == 5
        rows = load_table(run.path, "rows")
        assert list(rows["case_id"]) == [f"c{i}" for i in range(5)]
        assert set(rows["tag"]) == {"w"}
        assert rows["pid"].nunique() == 2 and os.getpid() not in set(rows["pid"])

        run, out = _run_on(client, tmp_path, _cases({2: {"fail": True}}), "fails", tag="again")
        assert not out.complete and out.done == 2
        assert out.reason == "case c2 failed: RuntimeError: boom in c2"
        assert list(load_table(run.path, "cases")["status"]) == ["complete", "complete", "failed"]
        assert set(load_table(run.path, "rows")["tag"]) == {"again"}

        run, out = _run_on(client, tmp_path, _cases(), "broken", tag="broken")
        assert not out.complete and out.done == 0
        assert out.reason == ("case c0 failed: RuntimeError: the worker could not start: "
                              "OSError: no switch here")
    _none_left(before)


def test_a_worker_that_dies_fails_its_case_and_the_run_ends_partial(tmp_path):
    """A worker process that dies with a case (the engine crashed, say):
    the case fails with Dask's reason, the run ends partial, no hang."""
    import dask

    from tests.experiments import cluster_probe

    before = {c.pid for c in _children()}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with cluster.connected(cluster.parse_address("local:2")) as client:
            run = RunDir.create(tmp_path, "probe", "dies")
            run.start({})
            out = run_cases(run, _cases({1: {"die": True}}), None, progress=False,
                            workers=Workers(0, runner_workers.start, ("w",),
                                            cluster_probe.measure, client=client))
    assert not out.complete and out.done == 1
    assert out.reason.startswith("case c1 failed: on the Dask cluster: KilledWorker"), out.reason
    assert list(load_table(run.path, "cases")["status"]) == ["complete", "failed"]
    _none_left(before)


def test_ctrl_c_cancels_the_pending_cases_and_ends_partial(tmp_path):
    """SIGINT while the cluster measures: the cases stored are kept, the one
    waited for is recorded as interrupted, the rest are cancelled on the
    cluster, and the run says why."""
    before = {c.pid for c in _children()}
    slow = {i: {"sleep": 2.0} for i in range(1, 5)}
    timers = []

    def on_event(ev):
        if ev.kind == "case_end" and ev.index == 0:
            t = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
            timers.append(t)
            t.start()

    with cluster.connected(cluster.parse_address("local:2")) as client:
        cases = [Case("c0", "probe", "case 0", {})] + _cases(slow)[1:]
        run, out = _run_on(client, tmp_path, cases, "int", on_event=on_event)
        assert not out.complete and out.signal == signal.SIGINT
        assert out.reason == "interrupted by the user (Ctrl-C)"
        assert list(load_table(run.path, "cases")["status"]) == ["complete", "interrupted"]
        deadline = time.monotonic() + 10
        while any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(client.processing().values()), "the pending cases were cancelled"
    for t in timers:
        t.join()
    _none_left(before)


OTHER = "0123456789abcdef"


def test_workers_with_other_code_are_refused_before_the_run(monkeypatch):
    """Workers whose code differs from this machine's (here: this
    machine's Python sources pretend to differ) are refused when the
    cluster is reached, naming what differs; the workers are stopped."""
    before = {c.pid for c in _children()}
    real = sources.python_sources()
    monkeypatch.setattr(sources, "python_sources", lambda: OTHER)
    with pytest.raises(cluster.ClusterUnreachable) as e:
        with cluster.connected(cluster.parse_address("local:2")):
            pytest.fail("connected to workers with other code")
    assert re.fullmatch(
        r"2 of 2 workers at local:2 run other p4scope code than this machine \(the first, "
        rf"tcp://127\.0\.0\.1:\d+: p4scope_sources: {OTHER} here, {real} there\): set every "
        r"machine up at the same commit with scripts/setup\.sh", str(e.value)), str(e.value)
    _none_left(before)


def test_a_worker_with_other_code_fails_its_cases(tmp_path, monkeypatch):
    """A worker that joined after the check, with other code (here: the
    run's code pretends to differ once the cluster was reached), fails the
    case it is given, saying why, and the run ends partial."""
    before = {c.pid for c in _children()}
    real = sources.python_sources()
    with cluster.connected(cluster.parse_address("local:1")) as client:
        monkeypatch.setattr(sources, "python_sources", lambda: OTHER)
        run, out = _run_on(client, tmp_path, _cases(), "other")
    assert not out.complete and out.done == 0
    assert out.reason == (
        "case c0 failed: on the Dask cluster: RuntimeError: this worker runs other p4scope "
        f"code than the machine that runs the run (p4scope_sources: {real} here, {OTHER} "
        "there): set it up at the same commit with scripts/setup.sh")
    _none_left(before)


def test_a_local_cluster_measures_the_tables_a_local_run_measures(tmp_path):
    """The same small run measured here (one process) and on a LocalCluster
    of two worker processes reached over tcp://: the same tables, row for
    row, and the same CSVs, byte for byte."""
    from distributed import LocalCluster

    from p4scope.experiments import driver
    from p4scope.experiments.fairness.params import FairnessParams
    from p4scope.experiments.microburst.params import MicroburstParams
    from p4scope.experiments.params import default_profiles

    def request(results: Path, cluster_address=None):
        return driver.RunRequest(
            "all", default_profiles(1 << 20),
            {"microburst": MicroburstParams(sizes_2to1=(64, 1518), sizes_4to1=(),
                                            combos_2to1=(("Test 1", (1, 2)),)),
             "fairness": FairnessParams(combinations=((1, 2, 3),), duration_ns=20_000,
                                        warmup_ns=10_000)},
            results=results, run_id="r", progress=False, report=False, jobs=1,
            cluster=cluster_address)

    before = {c.pid for c in _children()}
    here = driver.execute(request(tmp_path / "here"), echo=lambda s: None)
    lc = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None)
    try:
        there = driver.execute(request(tmp_path / "there", lc.scheduler_address),
                               echo=lambda s: None)
    finally:
        lc.close()
    _none_left(before)
    assert here.outcome.complete and there.outcome.complete
    assert there.outcome.done == 6
    tables = sorted(p.name for p in here.path.glob("*.parquet"))
    assert tables == sorted(p.name for p in there.path.glob("*.parquet"))
    assert "microburst.parquet" in tables and "fairness.parquet" in tables
    for name in tables:
        a, b = pd.read_parquet(here.path / name), pd.read_parquet(there.path / name)
        if name == "cases.parquet":
            a, b = a.drop(columns="wall_s"), b.drop(columns="wall_s")
        pd.testing.assert_frame_equal(a, b, obj=name)
    csvs = sorted(p.name for p in here.path.glob("*.csv"))
    assert csvs and csvs == sorted(p.name for p in there.path.glob("*.csv"))
    for name in csvs:
        assert (here.path / name).read_bytes() == (there.path / name).read_bytes(), name
    import json

    meta = json.loads((there.path / "run.json").read_text())
    assert meta["cluster"] == {"scheduler": lc.scheduler_address, "workers": 2}
