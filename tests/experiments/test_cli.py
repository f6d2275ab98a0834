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
])
def test_bad_options_exit_2_with_a_message(tmp_path, args, message):
    r = runner.invoke(app, args + ["--results", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert list(tmp_path.iterdir()) == []  # no run folder was made


def test_report_needs_a_run_folder(tmp_path):
    r = runner.invoke(app, ["report", str(tmp_path)])
    assert r.exit_code == 2 and "not a run folder" in r.output
