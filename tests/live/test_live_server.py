"""The dashboard's server as a client meets it: only its own assets (path
traversal tried), read-only, loopback names only, a taken port refused
with exit 2 before anything starts, the replay's figures those stored."""

from __future__ import annotations

import http.client
import json
import signal
import socket

import pandas as pd
import pytest

from tests.live.live_procs import TINY_RUN


def _get(url: str, path: str, method: str = "GET", host: str | None = None):
    """A raw request: the path goes out exactly as written (no client-side
    normalisation of .. or %2f)."""
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    c.putheader("Host", host or f"127.0.0.1:{port}")
    c.endheaders()
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body


TRAVERSALS = [
    "/assets/../run.json", "/assets/..%2frun.json", "/assets/..%2Frun.json",
    "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/../../../../etc/passwd",
    "/assets/../../../../../../etc/passwd", "/assets/%2fetc%2fpasswd", "//etc/passwd",
    "/assets/dashboard.js/../../run.json", "/assets/..\\..\\run.json", "/run.json",
    "/assets/index.html/..", "/assets/model.py", "/assets/__init__.py", "/assets/",
    "/static/../run.json", "/api/series?case=../../run.json", "/events/../run.json",
]


def test_serves_only_its_own_assets(stored_run, served):
    s = served("watch", str(stored_run))
    url = s.url()
    status, body = _get(url, "/assets/dashboard.js")
    assert status == 200 and b"EventSource" in body
    status, body = _get(url, "/assets/plotly.min.js")
    assert status == 200 and len(body) > 1_000_000  # the wheel's bundle, served locally
    status, body = _get(url, "/")
    assert status == 200 and b"cdn" not in body.lower()
    for path in TRAVERSALS:
        status, body = _get(url, path)
        assert status in (400, 404), (path, status)
        assert b"root:" not in body and b"run_id" not in body, path
    assert s.stop(signal.SIGINT) == 0


def test_read_only_and_loopback_names_only(stored_run, served):
    s = served("watch", str(stored_run), "--live-port", "0")
    url = s.url()
    assert _get(url, "/", method="POST")[0] == 405
    assert _get(url, "/api/status", method="DELETE")[0] == 405
    assert _get(url, "/", host="evil.example:80")[0] == 400  # DNS rebinding
    assert _get(url, "/", host="localhost")[0] == 200
    assert _get(url, "/api/series?case=nope")[0] == 404
    assert _get(url, "/api/series?case=microburst/2to1-test1/1518B/fair&t0=x")[0] == 400
    assert s.stop(signal.SIGTERM) == 0


def test_replay_figures_are_the_stored_ones(stored_run, served):
    s = served("watch", str(stored_run))
    url = s.url()
    st = json.loads(_get(url, "/api/status")[1])
    err = pd.read_parquet(stored_run / "instrument_errors.parquet")
    be = pd.read_parquet(stored_run / "burst_events.parquet")
    assert st["mode"] == "replay" and st["state"] == "complete" and st["done"] == 2
    assert st["totals"]["peak_truth"] == err["peak_truth"].max()
    assert st["totals"]["peak_instrument"] == err["peak_instrument"].max()
    assert st["totals"]["bursts_instrument"] == (be["source"] == "instrument").sum() >= 2
    assert st["totals"]["bursts_truth"] == (be["source"] == "truth").sum()
    # one value per pixel column, the largest: the peak survives any width
    cid = "microburst/2to1-test1/1518B/fair"
    gt = pd.read_parquet(stored_run / "ground_truth.parquet")
    top = gt[gt["case_id"] == cid]["occupancy_bytes"].max()
    for px in (16, 300, 4000):
        d = json.loads(_get(url, f"/api/series?case={cid}&px={px}")[1])
        assert d["px"] == px and len(d["queues"][0]["v"]) == px
        assert max(d["queues"][0]["v"]) == top
    assert s.stop() == 0


def _taken_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s, s.getsockname()[1]


def test_a_taken_port_exits_2_naming_the_option(stored_run, served, tmp_path):
    blocker, port = _taken_port()
    try:
        w = served("watch", str(stored_run), "--live-port", str(port))
        assert w.wait(60) == 2
        assert f"--live-port {port}" in "".join(w.err) and "taken" in "".join(w.err)
        results = tmp_path / "results"
        r = served(*TINY_RUN, "--results", str(results), "--live", "--live-port", str(port))
        assert r.wait(60) == 2
        assert f"--live-port {port}" in "".join(r.err)
        assert not results.exists() or not any(results.iterdir())  # nothing started
    finally:
        blocker.close()


@pytest.mark.parametrize("args, msg", [
    (["--live-port", "70000", "--live"], "--live-port 70000"),
    (["--live-port", "8000"], "--live-port: only with --live"),
    (["--live", "--live-linger", "-1"], "--live-linger"),
])
def test_bad_live_options_exit_2(args, msg, served, tmp_path):
    r = served(*TINY_RUN, "--results", str(tmp_path), *args)
    assert r.wait(60) == 2
    assert msg in "".join(r.err)
    assert not any(tmp_path.iterdir())


def test_watch_refuses_a_folder_that_is_not_a_run(served, tmp_path):
    r = served("watch", str(tmp_path))
    assert r.wait(60) == 2
    assert "not a run folder" in "".join(r.err)


def test_sigterm_ends_a_live_run_as_without_live(served, tmp_path):
    """The dashboard neither holds a stopped run up nor outlives it."""
    import time

    results = tmp_path / "results"
    r = served("run", "microburst", "--sizes", "64,512,1518,9216", "--sizes-4to1", "512",
               "--burst-frames", "20000", "--profiles", "fair", "--no-report", "--no-progress",
               "--results", str(results), "--run-id", "t", "--live", "--live-linger", "600")
    url = r.url()
    deadline = time.monotonic() + 120
    while not list((results / "t" / "parts" / "cases").glob("*.parquet")):
        assert r.proc.poll() is None and time.monotonic() < deadline, "".join(r.err)
        time.sleep(0.05)
    assert _get(url, "/api/status")[0] == 200
    r.proc.send_signal(signal.SIGTERM)
    assert r.wait(30) == 143  # no linger after a signal
    meta = json.loads((results / "t" / "run.json").read_text())
    assert meta["status"] == "partial" and meta["partial_reason"] == "terminated (SIGTERM)"
    with pytest.raises(OSError):
        _get(url, "/api/status")  # the server went with the run
