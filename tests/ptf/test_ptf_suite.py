"""The PTF suite (ptf_tests/) against p4scope's switch, run as a user runs
it: `p4scope ptf --target p4scope`. The run happens once per session; each
PTF test then shows up here as a test of its own with PTF's verdict (a
PTF skip, e.g. a known gap of the target, is a skip here with its reason).

Also checked: the run's exit status and time, that it leaves no namespace
behind, and that a runner killed mid-run leaves only what the next run's
clean-up removes.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest


from p4scope.topologies import procs  # noqa: E402
from p4scope.topologies.clean import clean_stale  # noqa: E402
from p4scope.topologies.manifest import NETNS_DIR, Manifest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEST_DIR = ROOT / "ptf_tests"
PTF = Path(sys.executable).parent / "ptf"
SUITE_BUDGET_S = 110
"""The whole PTF run (compile, lab, switch, every test, clean-up) must stay
well under two minutes on a 2-core machine; it takes ~15 s today."""

_LINE = re.compile(r"^(?P<name>\w+\.\w+) \.\.\. (?P<verdict>ok|FAIL|ERROR|skipped(?: (?P<why>.*))?"
                   r"|expected failure|unexpected success)$")
_SECTION = re.compile(r"^(FAIL|ERROR): (\w+\.\w+)$")


def ptf_names() -> list[str]:
    """module.Class of every PTF test, as `ptf --list-test-names` gives them."""
    if not PTF.exists():
        return ["<ptf is not installed: bash scripts/setup.sh>"]
    # ptf writes a log file even to list tests, and deletes it first: give it
    # a file in a folder of its own (never /dev/null: as root ptf would
    # replace the device node with a regular file)
    with tempfile.TemporaryDirectory(prefix="p4scope-ptf-list-") as tmp:
        r = subprocess.run([sys.executable, str(PTF), "--test-dir", str(TEST_DIR),
                            "--list-test-names", "--log-file", str(Path(tmp) / "ptf.log")],
                           capture_output=True, text=True, timeout=120)
    names = [ln.strip() for ln in r.stdout.splitlines() if re.fullmatch(r"\w+\.\w+", ln.strip())]
    if r.returncode != 0 or not names:
        return [f"<listing the PTF tests failed: {(r.stderr or r.stdout).strip()[-300:]}>"]
    return names


@dataclass
class SuiteRun:
    status: int
    output: str
    seconds: float
    run_dir: Path
    verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """name -> (verdict, skip reason or failure report)."""


def parse(output: str) -> dict[str, tuple[str, str]]:
    """PTF's unittest report (verbosity 2) -> {name: (verdict, detail)}."""
    verdicts: dict[str, tuple[str, str]] = {}
    lines = output.splitlines()
    for ln in lines:
        m = _LINE.match(ln.strip())
        if m:
            why = (m.group("why") or "").strip("'\"")
            verdicts[m.group("name")] = (m.group("verdict").split()[0], why)
    current, buf = None, []
    for ln in lines + ["=" * 70]:
        if ln.startswith("=" * 20) or ln.startswith("Ran "):
            if current and current in verdicts:
                verdicts[current] = (verdicts[current][0], "\n".join(buf).strip())
            current, buf = None, []
            continue
        m = _SECTION.match(ln)
        if m:
            current = m.group(2)
            continue
        if current:
            buf.append(ln)
    return verdicts


@pytest.fixture(scope="module")
def suite(netns_ok, tmp_path_factory) -> SuiteRun:
    run_dir = tmp_path_factory.mktemp("ptf-run")
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "p4scope.cli", "ptf", "--target", "p4scope",
                            "--run-dir", str(run_dir)], cwd=ROOT, capture_output=True,
                           text=True, timeout=SUITE_BUDGET_S + 60)
        out, status = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = f"{e.stdout or ''}{e.stderr or ''}\n<timed out>"
        status = -1
    return SuiteRun(status, out if isinstance(out, str) else out.decode(),
                    time.monotonic() - t0, run_dir, parse(out if isinstance(out, str) else ""))


def test_listing_leaves_dev_null_a_device():
    """Listing the PTF tests (as collection does) must not replace /dev/null
    with a regular file, as handing it to ptf's --log-file did."""
    names = ptf_names()
    assert names and not names[0].startswith("<"), names
    mode = os.stat("/dev/null").st_mode
    assert stat.S_ISCHR(mode), "/dev/null is no longer a character device"


@pytest.mark.parametrize("name", ptf_names())
def test_ptf(suite: SuiteRun, name: str) -> None:
    got = suite.verdicts.get(name)
    if got is None:
        pytest.fail(f"PTF test {name} did not run (exit status {suite.status}); end of the "
                    f"output:\n{suite.output[-3000:]}")
    verdict, detail = got
    if verdict == "skipped":
        pytest.skip(detail or "skipped by PTF")
    assert verdict == "ok", f"PTF: {verdict}\n{detail}"


def test_ptf_run_status_time_and_clean_up(suite: SuiteRun) -> None:
    assert suite.status == 0, suite.output[-3000:]
    assert suite.seconds < SUITE_BUDGET_S, f"the PTF run took {suite.seconds:.0f}s"
    m = Manifest.load(suite.run_dir)
    assert m.state == "cleaned"
    assert m.namespaces and not any((NETNS_DIR / n).exists() for n in m.namespaces)
    assert not any(procs.is_same(p["pid"], p["start"]) for p in m.processes)


def test_killed_runner_leaves_only_what_clean_up_removes(netns_ok, tmp_path) -> None:
    """SIGKILL the runner while ptf runs: its children stop with it
    (PR_SET_PDEATHSIG) and the namespace it leaves is removed by the next
    run's clean-up (clean_stale), found through the run registry."""
    run_dir = tmp_path / "run"
    runner = subprocess.Popen([sys.executable, "-m", "p4scope.cli", "ptf", "--run-dir",
                               str(run_dir), "--", "test_l2.Ageing"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        m = None
        while time.monotonic() < deadline:
            try:
                m = Manifest.load(run_dir)
            except (FileNotFoundError, ValueError):
                m = None
            if m is not None and any(p["what"] == "ptf" for p in m.processes):
                break
            assert runner.poll() is None, "the runner ended before ptf started"
            time.sleep(0.05)
        assert m is not None and m.namespaces, "ptf never started"
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait(10)
        assert (NETNS_DIR / m.namespaces[0]).exists()     # left behind, for now
        clean_stale()
        assert not any((NETNS_DIR / n).exists() for n in m.namespaces)
        ids = [(p["pid"], p["start"]) for p in m.processes]
        assert procs.wait_gone(ids, 5.0) == []
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait(10)
        clean_stale()
