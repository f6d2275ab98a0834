"""The --mode split of the run commands measuring in both modes: every
option listed under one mode's --help panel is refused (exit 2, named) in
the other mode, before anything starts; a Mininet run's DUT names and a
virtual run's one profile are checked the same way for every command."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments import mode_cli
from p4scope.experiments.params import Mode, ParamError

runner = CliRunner()
COMMANDS = ("features", "lag-failover", "rfc2544", "rfc2889")


def _command(name: str) -> Any:
    """`p4scope run NAME` as the command line reads it."""
    return typer.main.get_command(app).commands["run"].commands[name]


def _given(param: Any) -> list[str]:
    """The option on a command line, with a value its type takes."""
    value = {"--cluster": "local:1"}.get(param.opts[0], "1")
    return [param.opts[0]] if param.is_flag else [param.opts[0], value]


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("mode", [Mode.virtual, Mode.mininet])
def test_every_option_of_the_other_mode_is_refused_by_name(name, mode):
    other = mode_cli.PANELS[Mode.mininet if mode is Mode.virtual else Mode.virtual]
    theirs = [p for p in _command(name).params if getattr(p, "rich_help_panel", None) == other]
    assert theirs, f"{name}: no option under {other!r}"
    for p in theirs:
        r = runner.invoke(app, ["run", name, "--mode", mode.value, *_given(p)])
        assert r.exit_code == 2, (p.opts, r.output)
        assert f"{p.opts[0]}: for --mode" in r.output, r.output
        assert f"(this run is --mode {mode.value})" in r.output


def test_a_mininet_runs_dut_names_are_checked_before_root(capsys):
    with pytest.raises(typer.Exit) as e:
        mode_cli.mininet_duts(["p4scope", "no-such-switch"], "rfc2544")
    assert e.value.exit_code == 2
    assert "no-such-switch" in capsys.readouterr().err


def test_a_virtual_run_takes_one_profile():
    assert mode_cli.one_profile("unfair", 16.0, 1.0, 256, 1).name == "unfair"
    with pytest.raises(ParamError, match="--profile: one profile"):
        mode_cli.one_profile("fair,unfair", 16.0, 1.0, 256, 1)
    with pytest.raises(ParamError, match="--buffer-mb"):
        mode_cli.one_profile("fair", -1.0, 1.0, 256, 1)


@pytest.mark.parametrize("name", ["features", "rfc2544"])
@pytest.mark.parametrize("pairs", ["\u00b2-3", "1_0-2", "1-2-3", "+1-2", "1-"])
def test_port_pairs_are_read_alike_and_refused_by_name(name, pairs):
    """A pair is two port numbers in digits; what Python's int() would also
    take (a superscript, an underscore, a sign) is refused, not a traceback."""
    r = runner.invoke(app, ["run", name, "--pairs", pairs])
    assert r.exit_code == 2, r.output
    assert f"--pairs: expected A-B port pairs, got {pairs!r}" in r.output


@pytest.mark.parametrize("name", ["features", "rfc2544"])
def test_the_search_resolution_says_each_modes_default(name):
    r = runner.invoke(app, ["run", name, "--help"], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "default 0.1 in virtual time, 1 in Mininet" in r.output
