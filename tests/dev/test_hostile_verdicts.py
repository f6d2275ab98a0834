"""The hostile pass's judge (scripts/dev/hostile_core.py): a run that
crashed, gave the wrong exit status or made a file is never counted as
handled, so a clean table means what it says."""

from __future__ import annotations

from pathlib import Path

from p4scope.dev.hostile_core import CRASHED, HANDLED, WRONG, Cli, Expect, Ran, judge, tree


def verdict(tmp_path: Path, ran: Ran, expect: Expect, make: str = ""):
    before = tree(tmp_path)
    if make:
        (tmp_path / make).write_text("x")
    return judge(ran, tmp_path, before, {}, expect).status


def test_crashes_are_never_handled(tmp_path):
    expect = Expect(codes=(1,))
    tb = "Traceback (most recent call last):\n  File ...\nValueError: x\n"
    assert verdict(tmp_path, Ran([], 1, err=tb), expect) == CRASHED
    assert verdict(tmp_path, Ran([], 3, err="x"), Expect(codes=(3,))) == CRASHED
    assert verdict(tmp_path, Ran([], None, signal=11), expect) == CRASHED
    assert verdict(tmp_path, Ran([], None, timed_out=True, seconds=30), expect) == CRASHED
    assert verdict(tmp_path, Ran([], 1, err="x.p4: internal compiler error: KeyError"),
                   expect) == CRASHED


def test_wrong_answers_are_never_handled(tmp_path):
    expect = Expect(codes=(2,), says=("--seed",), may_make=("res",))
    assert verdict(tmp_path, Ran([], 0, err=""), expect) == WRONG
    assert verdict(tmp_path, Ran([], 2, err="error: bad value"), expect) == WRONG
    assert verdict(tmp_path, Ran([], 2, err="error: --seed -1"), expect, make="x.json") == WRONG
    assert verdict(tmp_path, Ran([], 2, err="error: --seed -1"), expect, make="res") == HANDLED


def test_a_forked_command_line_reports_its_exit_status_and_output(tmp_path):
    ran = Cli("fork").run(["compile", "nope.p4", "--p4v", "14"], tmp_path, timeout=60)
    assert (ran.code, ran.signal, ran.timed_out) == (2, None, False), ran.err
    assert "--p4v 14" in ran.err and ran.crash() is None
