"""The run driver's plumbing (plan, embedded switch, run folder, report) with
a stand-in for the measurement; the real measurement is tested end to end
in test_end_to_end.py once the engine offers sources and sinks."""

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import p4scope_dataplane
import pytest

from p4scope.experiments import driver, sources  # noqa: E402
from p4scope.experiments.fairness.params import FairnessParams  # noqa: E402
from p4scope.experiments.microburst.params import MicroburstParams  # noqa: E402
from p4scope.experiments.params import ParamError, default_profiles  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _req(tmp_path, **kw):
    return driver.RunRequest(
        "all", default_profiles(1 << 20),
        {"microburst": MicroburstParams(sizes_2to1=(64, 1518), sizes_4to1=(),
                                        combos_2to1=(("Test 1", (1, 2)),)),
         "fairness": FairnessParams(combinations=((1, 2, 3),), duration_ns=20_000,
                                    warmup_ns=10_000)},
        results=tmp_path, run_id="r", progress=False, **kw)


def test_driver_writes_run_folder_and_report(tmp_path):
    seen = []

    def factory(vs, profiles):
        assert vs.sw is not None and set(profiles) == {"fair", "unfair"}

        def measure(case, tick):
            seen.append(case.case_id)
            tick(1.0)
            return {}
        return measure

    res = driver.execute(_req(tmp_path), measure_factory=factory, echo=lambda s: None)
    assert res.outcome.complete and res.outcome.done == 6
    assert seen[0] == "microburst/2to1-test1/64B/fair"
    assert "fairness/3to1-1-3/imix/unfair" in seen
    meta = json.loads((res.path / "run.json").read_text())
    assert meta["status"] == "complete" and meta["experiment"] == "all"
    assert meta["program"]["name"] == "dut" and len(meta["program"]["json_sha256"]) == 64
    tm = meta["parameters"]["profiles"]["unfair"]["tm_config"]
    assert tm["defaults"]["arbitration"]["mode"] == "groups"
    assert tm["defaults"]["rate_bps"] == 100_000_000_000
    assert meta["parameters"]["microburst"]["sizes_2to1"] == [64, 1518]
    assert any(t["what"].startswith("2:1 burst: what 2 VOQs") for t in meta["theory"])
    assert "p4scope_dataplane" in meta["versions"]
    assert meta["versions"]["p4scope_dataplane_sources"] == p4scope_dataplane.SOURCE_HASH
    assert meta["versions"]["p4scope_sources"] == sources.python_sources()
    assert res.report == res.path / "report.html" and res.report.is_file()


def test_a_stale_engine_is_told_before_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "stale_engine", lambda: "warning: the engine is old")
    lines = []

    def factory(vs, profiles):
        return lambda case, tick: {}

    res = driver.execute(_req(tmp_path, report=False), measure_factory=factory, echo=lines.append)
    assert res.outcome.complete
    assert lines[0] == "p4scope run: warning: the engine is old"


def test_no_cases_is_an_error(tmp_path):
    req = driver.RunRequest("microburst", default_profiles(), {}, results=tmp_path,
                            progress=False)
    with pytest.raises(ValueError):
        driver.execute(req, measure_factory=lambda vs, p: None, echo=lambda s: None)
    assert list(tmp_path.iterdir()) == []


def _p4rt_stream_threads():
    return {t for t in threading.enumerate() if t.name.startswith("p4rt-stream")}


def test_a_failed_case_ends_the_run_partial_and_returns(tmp_path):
    before = _p4rt_stream_threads()

    def factory(vs, profiles):
        def measure(case, tick):
            if case.case_id.endswith("/unfair"):
                raise RuntimeError("injected failure")
            return {}
        return measure

    res = driver.execute(_req(tmp_path), measure_factory=factory, echo=lambda s: None)
    o = res.outcome
    assert not o.complete and isinstance(o.error, RuntimeError)
    assert "microburst/2to1-test1/64B/unfair" in o.reason and "injected failure" in o.reason
    meta = json.loads((res.path / "run.json").read_text())
    assert meta["status"] == "partial" and meta["partial_reason"] == o.reason
    assert meta["ended"] and meta["cases"]["done"] == o.done == 2  # 64 and 1518 B, fair
    assert _p4rt_stream_threads() <= before  # the embedded server was stopped


def test_a_switch_that_fails_to_start_ends_the_run_and_stops_its_server(tmp_path):
    """The embedded switch failing while it starts (here: its traffic
    manager cannot be configured) ends the run partial with the reason, and
    stops the server it started: its open stream would keep a worker thread
    busy and the process would never exit."""
    before = _p4rt_stream_threads()

    def bad_profile(engine, profile):
        raise RuntimeError("no such traffic manager")

    res = driver.execute(_req(tmp_path), measure_factory=lambda vs, p: None,
                         echo=lambda s: None, apply_profile=bad_profile)
    o = res.outcome
    assert not o.complete and o.done == 0 and o.error is not None
    assert o.reason.startswith("failed before the first case") and "no such traffic manager" in o.reason
    meta = json.loads((res.path / "run.json").read_text())
    assert meta["status"] == "partial" and meta["partial_reason"] == o.reason
    assert "error_traceback" in meta
    deadline = time.monotonic() + 5
    while _p4rt_stream_threads() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _p4rt_stream_threads() - before


def test_a_process_whose_switch_fails_to_start_exits(tmp_path):
    """The same failure in a real `p4scope run`: exit 1 within seconds (it
    hung after the traceback before)."""
    script = (
        "from p4scope.experiments import testbed\n"
        "def boom(self):\n"
        "    raise RuntimeError('injected at start')\n"
        "testbed.VirtualSwitch._configure = boom\n"
        "from p4scope.cli import app\n"
        "app(['run', 'microburst', '--sizes', '64', '--sizes-4to1', 'none', '--profiles',"
        " 'fair', '--jobs', '1', '--no-progress', '--no-report', '--run-id', 'r', '--results', "
        f"{str(tmp_path)!r}])\n")
    p = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "injected at start" in p.stdout
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["status"] == "partial" and "injected at start" in meta["partial_reason"]


def test_a_bad_seed_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ParamError, match="--seed -1"):
        driver.execute(_req(tmp_path, seed=-1), measure_factory=lambda vs, p: None,
                       echo=lambda s: None)
    assert list(tmp_path.iterdir()) == []


def test_sigterm_ends_a_real_run_as_ctrl_c_does(tmp_path):
    """`timeout` and schedulers send SIGTERM: the cases stored are kept, the
    folder is finished (partial, with the reason) and the exit status is
    143. (SIGTERM killed the process at once before, leaving parts.)"""
    run = tmp_path / "r"
    p = subprocess.Popen(
        [sys.executable, "-m", "p4scope.cli", "run", "microburst", "--quick", "--profiles",
         "fair", "--sizes-4to1", "none", "--no-report", "--no-progress", "--run-id", "r",
         "--results", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 120
        while not list((run / "parts" / "cases").glob("*.parquet")):
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()
            time.sleep(0.02)
        import psutil

        workers = psutil.Process(p.pid).children(recursive=True)  # --jobs: the machine's cores
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"worker processes left behind: {alive}"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, err
    assert "terminated (SIGTERM)" in out
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "partial" and meta["partial_reason"] == "terminated (SIGTERM)"
    assert meta["ended"] and 1 <= meta["cases"]["done"] < meta["cases"]["planned"] == 8
    assert not (run / "parts").exists()  # consolidated
    assert "microburst" in meta["tables"] and (run / "microburst.parquet").is_file()


def test_workers_measure_the_same_tables_as_one_process(tmp_path):
    """--jobs: cases measured in worker processes, each with its own switch,
    give the tables one process gives, row for row."""
    import pandas as pd

    one = driver.execute(_req(tmp_path / "one", report=False), echo=lambda s: None)
    two = driver.execute(_req(tmp_path / "two", report=False, jobs=2), echo=lambda s: None)
    assert one.outcome.complete and two.outcome.complete
    tables = sorted(p.name for p in one.path.glob("*.parquet"))
    assert tables == sorted(p.name for p in two.path.glob("*.parquet"))
    assert "microburst.parquet" in tables and "fairness.parquet" in tables
    for name in tables:
        a, b = pd.read_parquet(one.path / name), pd.read_parquet(two.path / name)
        if name == "cases.parquet":
            a, b = a.drop(columns="wall_s"), b.drop(columns="wall_s")
        pd.testing.assert_frame_equal(a, b, obj=name)
    for csv in one.path.glob("*.csv"):
        assert csv.read_bytes() == (two.path / csv.name).read_bytes(), csv.name


def test_workers_measure_the_dut_the_run_compiled(tmp_path):
    """--jobs workers are handed the run's compiled DUT (no compile of their
    own): they measure what run.json names even when the source is gone
    by the time they start."""
    import shutil

    src = tmp_path / "p4src"
    shutil.copytree(ROOT / "p4src", src)

    def on_event(ev):
        if ev.kind == "start":
            shutil.rmtree(src)

    res = driver.execute(_req(tmp_path / "res", report=False, jobs=2, program=src / "dut.p4",
                              on_event=on_event), echo=lambda s: None)
    assert res.outcome.reason is None
    assert res.outcome.complete and res.outcome.done == 6
    assert not src.exists()


def test_the_report_takes_the_tables_the_run_just_stored(tmp_path, monkeypatch):
    """The run's report is drawn from the tables as consolidated, in memory:
    no Parquet file is read back once they are stored (the instrument's
    series alone is millions of rows), and they equal the stored files."""
    import pandas as pd

    stored = {}
    read_parquet = pd.read_parquet

    def no_reads(*a, **kw):
        raise AssertionError(f"read back from disk: {a[0]}")

    def on_event(ev):
        if ev.kind == "end":  # consolidated and derived; the report comes next
            stored.update(ev.rundir.tables)
            monkeypatch.setattr(pd, "read_parquet", no_reads)

    res = driver.execute(_req(tmp_path, on_event=on_event), echo=lambda s: None)
    monkeypatch.setattr(pd, "read_parquet", read_parquet)
    assert res.outcome.complete and res.report is not None and res.report.is_file()
    names = sorted(p.stem for p in res.path.glob("*.parquet"))
    assert sorted(stored) == names and "instrument_series" in names
    for name in names:
        pd.testing.assert_frame_equal(stored[name], pd.read_parquet(res.path / f"{name}.parquet"),
                                      obj=name)
