"""`p4scope bench mininet-tcp`: interleaved runs, their medians and each
switch's ratio to the bridge; bad options refused by name."""

import re
import subprocess

import pytest
from typer.testing import CliRunner

from p4scope.bench.mininet import _medians
from p4scope.cli import app


def test_medians_and_the_ratio_to_the_bridge():
    runs = {("p4scope", "wire"): [4000.0, 5000.0, 4500.0], ("p4scope", "dut"): [3000.0, 3600.0],
            ("bridge", "-"): [5000.0, 6000.0, 4000.0]}
    assert _medians(runs) == [("p4scope", "wire", 4500.0, 0.9), ("p4scope", "dut", 3300.0, 0.66),
                              ("bridge", "-", 5000.0, 1.0)]
    # without the bridge there is nothing to compare with
    assert _medians({("p4scope", "wire"): [1.0, 3.0]}) == [("p4scope", "wire", 2.0, None)]


@pytest.mark.parametrize("args, option", [
    (["--kinds", "p4scope,ovs"], "--kinds"),
    (["--kinds", ","], "--kinds"),
    (["--programs", "tap"], "--programs"),
    (["--repeats", "0"], "--repeats"),
    (["--seconds", "0"], "--seconds"),
    (["--parallel", "0"], "--parallel"),
])
def test_bad_options_are_refused_by_name(args, option):
    r = CliRunner().invoke(app, ["bench", "mininet-tcp", *args])
    assert r.exit_code == 2 and option in r.output
    assert "Traceback" not in r.output


def _netns_and_links() -> tuple[set[str], set[str]]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return ({line.split()[0] for line in ns.splitlines() if line.strip()},
            {line.split()[0] for line in links.splitlines() if line.strip()})


@pytest.mark.usefixtures("mininet_ok")
def test_two_interleaved_runs_give_medians_and_leave_nothing_behind():
    before = _netns_and_links()
    r = CliRunner().invoke(app, ["bench", "mininet-tcp", "--kinds", "p4scope,bridge",
                                 "--programs", "wire", "--seconds", "1", "--repeats", "2"])
    assert r.exit_code == 0, r.output
    runs = re.findall(r"^([12])\s+(p4scope|bridge)\s+(wire|-)\s+([\d.]+)\s+\d+\s+\d+%$", r.output,
                      re.M)
    # every switch once, then again
    assert [(n, k) for n, k, _, _ in runs] == [("1", "p4scope"), ("1", "bridge"),
                                               ("2", "p4scope"), ("2", "bridge")]
    assert all(float(m) > 0 for *_, m in runs), r.output
    summary = r.output.split("medians of 2 run(s):")[1]
    wire = re.search(r"^p4scope\s+wire\s+([\d.]+)\s+([\d.]+)$", summary, re.M)
    bridge = re.search(r"^bridge\s+-\s+([\d.]+)\s+1\.00$", summary, re.M)
    assert wire and bridge, r.output
    assert float(wire.group(2)) == pytest.approx(float(wire.group(1)) / float(bridge.group(1)),
                                                 abs=0.01)
    assert _netns_and_links() == before
