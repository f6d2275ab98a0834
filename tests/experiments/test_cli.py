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
])
def test_bad_options_exit_2_with_a_message(tmp_path, args, message):
    r = runner.invoke(app, args + ["--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []  # no run folder was made


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
