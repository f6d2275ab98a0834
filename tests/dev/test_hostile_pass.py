"""The hostile pass in CI: scripts/dev/hostile.py --fast tries
bad inputs against the compiler's command line, the switch's P4Runtime and
Thrift servers, STF tests, the experiments' options and the engine's
packets; every one must be handled (none wrong, none crashed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest


SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "dev" / "hostile.py"
SUMMARY = re.compile(r"hostile: (\d+) tried, (\d+) handled, (\d+) wrong, (\d+) crashed")


def run_pass(*args: str, timeout: float = 600) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the pass; past `timeout` it gets
    SIGTERM, on which it ends the processes it started."""
    proc = subprocess.Popen([sys.executable, str(SCRIPT), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"the hostile pass took over {timeout:.0f} s:\n{out}\n{err[-3000:]}")
    return proc.returncode, out, err


def test_hostile_pass_fast_set_is_all_handled():
    code, out, err = run_pass("--fast", "--quiet")
    lines = out.strip().splitlines()
    report = out + (f"\nstderr:\n{err[-3000:]}" if err.strip() else "")
    m = SUMMARY.fullmatch(lines[-1]) if lines else None
    assert m, f"no summary line (exit {code}):\n{report}"
    tried, handled, wrong, crashed = map(int, m.groups())
    assert tried >= 100 and handled + wrong + crashed == tried, report
    assert (wrong, crashed) == (0, 0), report
    assert code == 0, report
