"""What the live dashboard's tests share: a small stored run (a real
virtual-time microburst run, two tiny cases) and `served`, which starts
p4scope commands serving the dashboard and kills what is left of them."""

from __future__ import annotations

import signal
import subprocess

import pytest

from live_procs import ROOT, TINY_RUN, Served, p4scope


@pytest.fixture
def served():
    started: list[Served] = []

    def start(*args: str) -> Served:
        s = Served(list(args))
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop(signal.SIGKILL)


@pytest.fixture(scope="session")
def stored_run(tmp_path_factory) -> Path:
    """A finished virtual-time microburst run (2:1, 1518 B, Tests 1 and 2)."""
    root = tmp_path_factory.mktemp("live-results")
    r = subprocess.run(p4scope(*TINY_RUN, "--results", str(root), "--run-id", "tiny"), cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return root / "tiny"
