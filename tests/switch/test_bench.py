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


@pytest.fixture(scope="module")
def program_files(tmp_path_factory):
    """The benchmark's built-in program as P4Info (text) and BMv2 JSON files,
    and a file that is no P4Info."""
    from p4scope.bench.p4runtime import _compile
    from p4scope.compiler.p4info_io import write_p4info

    d = tmp_path_factory.mktemp("bench_program")
    p4info, device_json = _compile()
    write_p4info(p4info, d / "p.txt")
    (d / "p.json").write_bytes(device_json)
    (d / "bad.bin").write_bytes(b"\x08\xff\xff\xff not a P4Info")
    return d


@pytest.mark.parametrize("args, option, says", [
    (["--p4info", "{d}/p.txt"], "--p4info", "only with --address"),
    (["--json", "{d}/p.json"], "--json", "only with --address"),
    (["--address", "nohost", "--p4info", "{d}/p.txt"], "--address", "expected HOST:PORT"),
    (["--address", "127.0.0.1:99999", "--p4info", "{d}/p.txt"], "--address", "expected HOST:PORT"),
    (["--address", "127.0.0.1:1"], "--p4info", "--address needs --p4info"),
    (["--address", "127.0.0.1:1", "--p4info", "{d}/none.txt"], "--p4info", "No such file"),
    (["--address", "127.0.0.1:1", "--p4info", "{d}/bad.bin"], "--p4info", "Error parsing"),
    (["--address", "127.0.0.1:1", "--p4info", "{d}/p.txt", "--json", "{d}/none.json"],
     "--json", "no such file"),
    (["--entries", "2000000"], "--entries", "the exact table holds 1,048,576"),
    (["--load", "1048577"], "--load", "the lpm table holds 1,048,576"),
])
def test_bad_program_options_exit_2_naming_the_option(program_files, args, option, says):
    args = [a.format(d=program_files) for a in args]
    r = CliRunner().invoke(app, ["bench", "p4runtime", *args])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.replace("│", " ").split())
    assert f"Invalid value for {option}" in text and says in text, text
    assert "Traceback" not in r.output and "P4Runtime benchmark:" not in r.output


def _remote_args(port: int, d, *more: str) -> list[str]:
    return ["bench", "p4runtime", "--address", f"127.0.0.1:{port}", "--p4info", f"{d}/p.txt",
            "--entries", "100", "--single", "10", "--repeat", "1", "--load", "0", *more]


def test_a_switch_that_is_not_there_exits_1(program_files, monkeypatch):
    import socket

    from p4scope.bench import p4runtime

    monkeypatch.setattr(p4runtime, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = CliRunner().invoke(app, _remote_args(port, program_files, "--json",
                                             f"{program_files}/p.json"))
    assert r.exit_code == 1, r.output
    assert f"--address: no gRPC server answered at 127.0.0.1:{port} within 1 s" in r.output
    assert "Traceback" not in r.output


def test_a_running_switch_is_measured_and_its_refusals_reported(program_files, tmp_path):
    """--address: a p4scope switch (a gRPC server in this process) measured
    like any other; a JSON that is no BMv2 program is refused by the switch
    with the P4Runtime status, printed without a traceback."""
    from p4scope.switch.device import Device, DeviceOptions
    from p4scope.switch.p4runtime.server import make_server

    server, port = make_server(Device(DeviceOptions()), "127.0.0.1:0")
    try:
        r = CliRunner().invoke(app, _remote_args(port, program_files, "--json",
                                                 f"{program_files}/p.json"))
        assert r.exit_code == 0, r.output
        assert f"P4Runtime benchmark: 127.0.0.1:{port}, exact table, 100 entries" in r.output
        assert "INSERT, one entry per Write" in r.output
        (tmp_path / "not.json").write_text('{"not": "a BMv2 program"}')
        r = CliRunner().invoke(app, _remote_args(port, program_files, "--json",
                                                 str(tmp_path / "not.json")))
        assert r.exit_code == 1, r.output
        assert f"p4scope bench p4runtime: the switch at 127.0.0.1:{port} answered " \
               "INVALID_ARGUMENT: " in r.output
        assert "Traceback" not in r.output
    finally:
        server.stop(None)


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


def test_the_incast_benchmark_holds_every_run_to_the_first_and_gives_their_median():
    """Several runs of a short incast: each line, the median of the walls,
    and every run's output and statistics the first's."""
    import re
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "p4scope.bench.incast", "--ms", "0.05", "--ports", "4",
                        "--repeats", "3"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    walls = [float(w) for w in re.findall(r"run \d: ([0-9.]+) s wall", out)]
    assert len(walls) == 3
    median = float(re.search(r"wall: median ([0-9.]+) s of 3 runs", out).group(1))
    assert median == pytest.approx(sorted(walls)[1], abs=0.006)
    assert re.search(r"determinism: digest [0-9a-f]{16}, every run's output and statistics "
                     r"identical to the first's", out)


def test_an_incast_run_that_differs_from_the_first_fails_the_benchmark(monkeypatch, capsys):
    """The third run's statistics made to differ: exit 1, and the summary
    says so (the check covers every run, not only the first two)."""
    from p4scope.bench import incast

    outcomes = iter([("d", 1), ("d", 1), ("d", 2)])
    monkeypatch.setattr(incast, "outcome_of", lambda e: next(outcomes))
    monkeypatch.setattr("sys.argv", ["incast", "--ms", "0.01", "--ports", "2", "--repeats", "3"])
    with pytest.raises(SystemExit) as end:
        incast.main()
    assert end.value.code == 1
    assert "every run's output and statistics NOT identical to the first's" in capsys.readouterr().out


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
    (["instructions", "--workload", "nope"], "--workload"),
    (["instructions", "--packets", "10"], "--packets"),
    (["instructions", "--top", "-1"], "--top"),
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
    ("incast", ["--repeats", "1"], "--repeats"),
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
