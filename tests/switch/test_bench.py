"""The P4Runtime benchmark runs (tiny sizes: a smoke test, not a timing)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from p4scope.bench.p4runtime import (print_load, print_results, run_bench, run_direct,
                                     run_lpm_load)
from p4scope.cli import app


def test_bench_smoke():
    for kind in ("exact", "lpm", "ternary"):
        res = run_bench(None, entries=200, batch=50, single=20, kind=kind, repeat=1,
                        p4info_path=None, json_path=None)
        assert [r.entries for r in res] == [200, 200, 200, 200, 20]
        assert all(r.rate > 0 and r.cpu_rate > 0 for r in res)
    lines = []
    print_results(res, lines.append)
    assert "entries/s" in lines[0] and "entries/CPU-s" in lines[0] and len(lines) == 6


def test_bench_without_grpc_and_the_lpm_load():
    res = run_direct(entries=300, batch=100, kind="ternary", repeat=1)
    assert [r.entries for r in res] == [300] * 4
    assert all("(Device, no gRPC)" in r.what and r.rate > 0 for r in res)
    load = run_lpm_load(None, entries=3000, batch=1000)
    assert load.entries == 3000 and load.rate > 0 and load.cpu_seconds > 0
    assert load.rss_before > 0 and load.rss_after > 0 and load.bytes_per_entry is not None
    lines = []
    print_load(load, lines.append)
    assert lines[0].startswith("LPM table load: 3,000 entries in ")
    assert "bytes per entry" in lines[1]


def test_bench_options_are_checked():
    r = CliRunner().invoke(app, ["bench", "p4runtime", "--load", "-1"])
    assert r.exit_code == 2 and "--load" in r.output
    r = CliRunner().invoke(app, ["bench", "p4runtime", "--kind", "range"])
    assert r.exit_code == 2 and "--kind" in r.output


def test_a_benchmark_whose_reader_goes_away_ends_without_a_traceback():
    """`python -m p4scope.bench.engine | head -1`: the benchmark ends as a
    Unix tool does when its reader is gone (SIGPIPE), with nothing on
    stderr."""
    import signal
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-m", "p4scope.bench.engine", "--packets", "3000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line
    err = p.stderr.read()
    p.wait(timeout=120)
    p.stderr.close()
    assert p.returncode == -signal.SIGPIPE and err == b""


def test_the_engine_benchmark_prints_the_median_of_its_runs_and_checks_repeats():
    import subprocess
    import sys

    ok = subprocess.run([sys.executable, "-m", "p4scope.bench.engine", "--packets", "3000",
                         "--repeats", "3"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "the median of 3 runs (best" in ok.stdout.splitlines()[0]
    bad = subprocess.run([sys.executable, "-m", "p4scope.bench.engine", "--repeats", "0"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--repeats" in bad.stderr and not bad.stdout


@pytest.mark.parametrize("args, option", [
    (["compile", "--repeat", "0"], "--repeat"),
    (["live", "--repeats", "0"], "--repeats"),
    (["realtime", "--seconds", "-1"], "--seconds"),
    (["realtime", "--size", "10"], "--size"),
    (["realtime", "--rate", "abc"], "--rate"),
    (["realtime", "--rate", "-5"], "--rate"),
    (["realtime", "--repeats", "0"], "--repeats"),
    (["trafgen", "--sizes", "64,abc"], "--sizes"),
    (["trafgen", "--sizes", "32"], "--sizes"),
    (["trafgen", "--seconds", "0"], "--seconds"),
    (["trafgen", "--batch", "0"], "--batch"),
])
def test_bad_benchmark_options_are_refused_by_name(args, option):
    """Exit 2 naming the option, before any namespace or run: these used to
    end in a traceback (an empty median, a frame size parsed late) or, for
    a negative --seconds, a run that never ended."""
    r = CliRunner().invoke(app, ["bench", *args])
    assert r.exit_code == 2 and option in r.output, r.output
    assert "Traceback" not in r.output


@pytest.mark.parametrize("module, args, option", [
    ("engine", ["--entries", "0"], "--entries"),
    ("engine", ["--packets", "0"], "--packets"),
    ("incast", ["--ms", "-1"], "--ms"),
    ("incast", ["--ports", "0"], "--ports"),
    ("incast", ["--first-port", "20"], "egress port 31"),
])
def test_the_module_benchmarks_refuse_bad_options_by_name(module, args, option):
    """`python -m p4scope.bench.engine --entries 0` divided by zero and
    `bench.incast --ms -1` overflowed, each with a traceback; an incast
    whose ingress ports took in the congested port ran regardless."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", f"p4scope.bench.{module}", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and option in r.stderr and not r.stdout, r.stderr
    assert "Traceback" not in r.stderr
