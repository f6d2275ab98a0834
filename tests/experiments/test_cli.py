"""`p4scope run` and `p4scope report`: options are checked before anything starts."""

import pytest
from typer.testing import CliRunner

from p4scope.cli import app

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["run", "microburst", "--sizes", "10"], "frame size 10 is outside 64..9216"),
    (["run", "microburst", "--sizes", "64,x"], "comma-separated integers"),
    (["run", "microburst", "--profiles", "nope"], "unknown profile 'nope'"),
    (["run", "fairness", "--n", "5"], "Table 3 has 3, 6 and 16"),
    (["run", "fairness", "--ports", "1,31"], "egress port 31 is also an ingress port"),
    (["run", "fairness", "--ports", "1,1,2"], "ingress ports repeat"),
    (["run", "fairness", "--warmup-us", "5000"], "warm-up < duration"),
    (["run", "fairness", "--mix", "64:a"], "SIZE:WEIGHT"),
    (["run", "all", "--sizes-4to1", "70000"], "outside 64..9216"),
    # --mode: each mode's own options, checked before a Mininet run needs root
    (["run", "tcp-incast", "--mode", "virtual"], "runs in Mininet only"),
    (["run", "fairness", "--mode", "mininet", "--buffer-mb", "3", "--seed", "2"],
     "--buffer-mb, --seed: for --mode virtual only"),
    (["run", "microburst", "--link-bw", "5M"], "--link-bw: for --mode mininet only"),
    (["run", "microburst", "--mode", "mininet", "--sizes", "10"], "64..1518"),
    (["run", "fairness", "--mode", "mininet", "--n", "1"], "numbers of senders in 2..32"),
    (["run", "fairness", "--mode", "mininet", "--link-bw", "fast"], "not a rate"),
    # the option named, whatever check refuses the value
    (["run", "microburst", "--sizes", ""], "--sizes: empty"),
    (["run", "microburst", "--sizes-4to1", ""], "--sizes-4to1: empty"),
    (["run", "microburst", "--cell-bytes", "1000000000"], "--cell-bytes"),
    (["run", "fairness", "--mix", "x"], "--mix: expected SIZE:WEIGHT"),
    (["run", "fairness", "--mix", ""], "--mix: empty"),
    (["run", "fairness", "--ports", "99"], "--ports 99"),
    (["run", "fairness", "--ports", "1,1"], "--ports 1,1: ingress ports repeat"),
])
def test_bad_options_exit_2_with_a_message(tmp_path, args, message):
    r = runner.invoke(app, args + ["--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []  # no run folder was made


_HOSTILE = ("nan", "inf", "-inf", "-1", "1e9")
_VIRTUAL_NUMBERS = [(c, o, v) for c in ("microburst", "fairness", "all")
                    for o in ("--buffer-mb", "--alpha") for v in _HOSTILE]
_VIRTUAL_NUMBERS += [(c, o, v) for c in ("fairness", "all")
                     for o in ("--duration-us", "--warmup-us") for v in _HOSTILE]
_OTHERS = [
    (["microburst"], "--cell-bytes", "0"), (["all"], "--cell-bytes", "16385"),
    (["microburst"], "--burst-frames", "0"), (["all"], "--burst-frames", "1000000000000"),
    (["microburst"], "--seed", "-1"), (["fairness"], "--seed", str(2**64)),
    (["all"], "--seed", "-1"),
    (["fairness"], "--mix", "64:nan"), (["all"], "--mix", "64:inf,128:1"),
    (["fairness"], "--mix", "64:1e308,128:1e308"),
    (["fairness", "--mode", "mininet"], "--mix", "64:nan"),
    (["fairness", "--mode", "mininet"], "--load", "nan"),
    (["fairness", "--mode", "mininet"], "--duration-s", "inf"),
    (["fairness", "--mode", "mininet"], "--warmup-s", "nan"),
    (["fairness", "--mode", "mininet"], "--queue-packets", "-3"),
    (["tcp-incast"], "--flow-bytes", "nan"), (["tcp-incast"], "--flow-bytes", "inf"),
    (["tcp-incast"], "--flow-bytes", "1e30"), (["tcp-incast"], "--window", "nan"),
    (["tcp-incast"], "--bin-ms", "nan"),
]


@pytest.mark.parametrize("command, option, value",
                         [([c], o, v) for c, o, v in _VIRTUAL_NUMBERS] + _OTHERS)
def test_every_number_is_checked_before_the_run(tmp_path, command, option, value):
    """nan, inf, negative and huge values exit 2 at once, naming the option:
    no traceback, no run folder, no minute of planning."""
    r = runner.invoke(app, ["run", *command, f"{option}={value}", "--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert option in r.output and "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


def test_ranges_are_in_the_help():
    r = runner.invoke(app, ["run", "all", "--help"], env={"COLUMNS": "300"})
    assert r.exit_code == 0
    for text in ("0.125..1024", "1/128..64", "1..16384", "0..2^64-1", "64..9216"):
        assert text in r.output


def test_a_bad_program_or_results_path_exits_2(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text("garbage {\n")
    r = runner.invoke(app, ["run", "microburst", "--program", str(bad),
                            "--results", str(tmp_path / "r")])
    assert r.exit_code == 2 and "--program" in r.output and "syntax error" in r.output
    a_file = tmp_path / "file"
    a_file.write_text("")
    r = runner.invoke(app, ["run", "microburst", "--results", str(a_file / "sub")],
                      env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "--results" in r.output and "not a folder" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.p4", "file"]


@pytest.mark.parametrize("command", ["fairness", "microburst", "tcp-incast"])
def test_help_names_both_modes(command):
    r = runner.invoke(app, ["run", command, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "--mode" in r.output and "virtual|mininet" in r.output


@pytest.mark.parametrize("command", [["microburst"], ["fairness"], ["all"],
                                     ["fairness", "--mode", "mininet"], ["tcp-incast"]])
@pytest.mark.parametrize("run_id", ["../../escaped", "ABSOLUTE", "a/b", "..", ".", "",
                                    "-x", "a\0b", "a b", "x" * 129])
def test_run_id_is_a_name_not_a_path(tmp_path, command, run_id):
    results = tmp_path / "a" / "results"
    run_id = str(tmp_path / "abs") if run_id == "ABSOLUTE" else run_id
    r = runner.invoke(app, ["run", *command, "--results", str(results), f"--run-id={run_id}"],
                      env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "--run-id" in r.output and "not a path" in r.output
    assert list(tmp_path.iterdir()) == []  # nothing made, inside or outside --results


def test_report_needs_a_run_folder(tmp_path):
    r = runner.invoke(app, ["report", str(tmp_path)])
    assert r.exit_code == 2 and "not a run folder" in r.output


def test_report_draws_its_pngs_in_as_many_processes_as_asked(tmp_path):
    from tests.experiments.fixture_run import make_run
    from tests.experiments.runner_workers import run_processes

    run = make_run(tmp_path)
    r = runner.invoke(app, ["report", str(run), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    assert (run / "report.html").is_file() and list((run / "figures").glob("*.png"))
    assert not run_processes()


@pytest.mark.parametrize("jobs", ["0", "257", "x"])
def test_report_jobs_out_of_range_exit_2_naming_the_option(tmp_path, jobs):
    from tests.experiments.fixture_run import make_run

    run = make_run(tmp_path)
    r = runner.invoke(app, ["report", str(run), "--jobs", jobs])
    assert r.exit_code == 2 and "--jobs" in r.output, r.output
    assert not (run / "report.html").exists()
