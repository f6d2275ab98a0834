"""`--instrument tap` where it is not supported (yet), or with a bad
value, exits 2 naming the option, before anything starts (no root needed
to be told)."""

import pytest
from typer.testing import CliRunner

from p4scope.cli import app

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["microburst", "--instrument", "tap", "--dut", "bridge"],
     "--dut 'bridge': in virtual time the tap runs around p4scope"),
    (["microburst", "--instrument", "tap", "--cluster", "local:2"],
     "--cluster: not with --instrument tap yet"),
    (["microburst", "--instrument", "tap", "--metrics-port", "0"],
     "--metrics-port: not with --instrument tap yet"),
    (["microburst", "--instrument", "tap", "--sizes", "10"], "--sizes"),
    (["microburst", "--instrument", "tap", "--alpha", "0"], "--alpha"),
    (["microburst", "--instrument", "nope"], "--instrument 'nope': give dut or tap"),
    (["microburst", "--dut", "bridge"], "--dut: only with --instrument tap"),
    (["microburst", "--mode", "mininet", "--dut", "bridge"], "--dut: only with --instrument tap"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--dut", "bmv2"],
     "--dut 'bmv2': the tap runs around bridge or p4scope"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--dut", "mininet.node:OVSSwitch"],
     "--dut 'mininet.node:OVSSwitch'"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--switch", "bmv2"],
     "--switch: picks the reference DUT's switch"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--bmv2"], "--bmv2: picks"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--live"],
     "--live: not with --instrument tap in Mininet yet"),
    (["microburst", "--mode", "mininet", "--instrument", "tap", "--sizes", "10"], "64..1518"),
    (["fairness", "--mode", "mininet", "--instrument", "tap"],
     "--instrument tap: this experiment runs the tap in virtual time"),
    (["fairness", "--instrument", "tap", "--dut", "bridge"],
     "--dut 'bridge': in virtual time the tap runs around p4scope"),
    (["fairness", "--instrument", "tap", "--cluster", "local:2"],
     "--cluster: not with --instrument tap yet"),
    (["fairness", "--instrument", "tap", "--metrics-port", "0"],
     "--metrics-port: not with --instrument tap yet"),
    (["fairness", "--instrument", "tap", "--tap-sample-us", "3"],
     "--tap-sample-us 3: give 0 (every frame) or a power of two"),
    (["fairness", "--instrument", "tap", "--tap-sample-us", "2097152"], "--tap-sample-us 2097152"),
    (["fairness", "--instrument", "tap", "--tap-sample-us", "-4"], "--tap-sample-us -4"),
    (["fairness", "--tap-sample-us", "4"], "--tap-sample-us: only with --instrument tap"),
    (["fairness", "--dut", "p4scope"], "--dut: only with --instrument tap"),
    (["fairness", "--instrument", "tap", "--ports", "1,1"], "--ports"),
    (["fairness", "--instrument", "tap", "--warmup-us", "700"], "--warmup-us"),
    (["fairness", "--instrument", "tap", "--live-port", "80"], "--live-port: only with --live"),
])
def test_the_tap_where_it_is_not_supported_exits_2_naming_the_option(tmp_path, args, message):
    r = runner.invoke(app, ["run", *args, "--results", str(tmp_path)], env={"COLUMNS": "200"})
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


def test_the_help_says_what_the_tap_needs():
    r = runner.invoke(app, ["run", "microburst", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    assert "--instrument" in r.output and "--dut" in r.output
