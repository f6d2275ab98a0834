"""mypy over the parts of p4scope that are type-clean, so they stay so:
the engine's boundary (its stub, the switch's adapter, the experiments'
traffic and instrument reading) and whole packages once clean. Checked
on the package laid out as it installs (a tree of links, as
scripts/test.sh does for the import contracts: mypy cannot follow the
editable install's folder mapping). Grow CHECKED as more is cleaned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED_PACKAGES = ("p4scope.topologies", "p4scope.control", "p4scope.experiments.tester",
                    "p4scope.experiments.lag_failover", "p4scope.experiments.features",
                    "p4scope.experiments.rfc2544", "p4scope.experiments.rfc2889")
CHECKED_MODULES = ("p4scope.switch.engine", "p4scope.switch.queue_maxima",
                   "p4scope.experiments.traffic", "p4scope.experiments.measure",
                   "p4scope.experiments.cluster", "p4scope.dev.engine_stub",
                   "p4scope.experiments.params", "p4scope.experiments.linerate",
                   "p4scope.experiments.virtual_cli", "p4scope.experiments.mode_cli",
                   "p4scope.experiments.run_options", "p4scope.experiments.registry",
                   "p4scope.experiments.testbed", "p4scope.experiments.seedcsv",
                   "p4scope.experiments.figures", "p4scope.experiments.groundtruth",
                   "p4scope.experiments.plotdata", "p4scope.experiments.plots_web",
                   "p4scope.experiments.fabric")


def package_tree(into: Path) -> Path:
    pkg = into / "p4scope"
    pkg.mkdir(parents=True)
    for f in (ROOT / "scripts").iterdir():
        (pkg / f.name).symlink_to(f)
    for d in ("compiler", "switch", "control", "topologies"):
        (pkg / d).symlink_to(ROOT / d)
    return into


def test_the_checked_parts_are_type_clean(tmp_path):
    tree = package_tree(tmp_path / "tree")
    args = [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent",
            "--cache-dir", str(tmp_path / "cache"), "--no-color-output"]
    for p in CHECKED_PACKAGES:
        args += ["-p", p]
    for m in CHECKED_MODULES:
        args += ["-m", m]
    r = subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found" in r.stdout
