"""sources.fingerprint: which code measures a run. The Python half
changes with any byte or name of the package's .py files and not with
where the package lies; the engine half is the module's SOURCE_HASH,
16 hex digits made from the sources it was built from, which the module
computes again for sources on disk, so a run from a checkout whose engine
sources moved on since setup built it says so."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import p4scope_dataplane
import pytest

from p4scope.experiments import sources


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "a" / "scripts"
    (root / "experiments").mkdir(parents=True)
    (root / "__init__.py").write_text("x = 1\n")
    (root / "experiments" / "run.py").write_text("def run():\n    return 2\n")
    (root / "notes.txt").write_text("not code\n")
    (root / "sw").mkdir()
    (root / "sw" / "daemon.py").write_text("PORT = 9559\n")

    def hashed(at=root):
        monkeypatch.setattr(sources, "package_folders", lambda: [("", at), ("switch/", at / "sw")])
        sources.python_sources.cache_clear()
        return sources.python_sources()

    yield root, hashed
    sources.python_sources.cache_clear()


def test_python_sources_follow_the_code_not_its_place(package, tmp_path):
    root, hashed = package
    first = hashed()
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    copy = tmp_path / "elsewhere" / "scripts"
    shutil.copytree(root, copy)
    assert hashed(copy) == first
    (root / "notes.txt").write_text("changed, but not code\n")
    assert hashed() == first
    (root / "experiments" / "run.py").write_text("def run():\n    return 3\n")
    assert hashed() != first
    (root / "experiments" / "run.py").write_text("def run():\n    return 2\n")
    assert hashed() == first
    (root / "experiments" / "run.py").rename(root / "experiments" / "go.py")
    assert hashed() != first
    (root / "experiments" / "go.py").rename(root / "experiments" / "run.py")
    (root / "sw" / "daemon.py").write_text("PORT = 9560\n")  # a subpackage's folder counts too
    assert hashed() != first


def test_the_engine_half_is_the_modules_source_hash():
    assert re.fullmatch(r"[0-9a-f]{16}", p4scope_dataplane.SOURCE_HASH)
    assert sources.fingerprint()["p4scope_dataplane_sources"] == p4scope_dataplane.SOURCE_HASH


def test_differences_name_each_half_that_differs():
    here = {"p4scope_sources": "aa", "p4scope_dataplane_sources": "bb"}
    assert sources.differences(here, dict(here)) == []
    assert sources.differences(here, {"p4scope_sources": "aa", "p4scope_dataplane_sources": "cc"}) \
        == ["p4scope_dataplane_sources: bb here, cc there"]
    assert sources.differences(here, {}) == ["p4scope_sources: aa here, none there",
                                             "p4scope_dataplane_sources: bb here, none there"]


REPO = Path(__file__).resolve().parents[2]


def test_the_installed_engine_was_built_from_the_checkouts_sources():
    """setup.sh built the module from dataplane/ as it is (a failure here
    means the sources changed since: run scripts/setup.sh)."""
    assert sources.checkout_engine() == REPO / "dataplane"
    assert p4scope_dataplane.source_hash(str(REPO / "dataplane")) == p4scope_dataplane.SOURCE_HASH
    assert sources.stale_engine() is None


def test_an_engine_source_changed_since_the_build_is_told(tmp_path, monkeypatch):
    tree = tmp_path / "checkout"
    shutil.copytree(REPO / "dataplane" / "src", tree / "dataplane" / "src")
    shutil.copy(REPO / "dataplane" / "Cargo.toml", tree / "dataplane")
    shutil.copytree(REPO / "crates" / "afpacket" / "src", tree / "crates" / "afpacket" / "src")
    shutil.copy(REPO / "crates" / "afpacket" / "Cargo.toml", tree / "crates" / "afpacket")
    shutil.copy(REPO / "Cargo.lock", tree)
    (tree / "dataplane" / "README.md").write_text("not a source\n")
    engine = tree / "dataplane"
    assert p4scope_dataplane.source_hash(str(engine)) == p4scope_dataplane.SOURCE_HASH
    monkeypatch.setattr(sources, "checkout_engine", lambda: engine)
    assert sources.stale_engine() is None
    lib = engine / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "// changed\n")
    now = p4scope_dataplane.source_hash(str(engine))
    assert now != p4scope_dataplane.SOURCE_HASH
    assert sources.stale_engine() == (
        f"warning: the installed engine was built from other sources than {engine} holds now "
        f"({p4scope_dataplane.SOURCE_HASH} then, {now} now), so it measures the old code: "
        "run `bash scripts/setup.sh` to rebuild it")
    (tree / "Cargo.lock").write_text("")
    assert p4scope_dataplane.source_hash(str(engine)) not in (now, p4scope_dataplane.SOURCE_HASH)


def test_without_a_checkout_nothing_is_told(monkeypatch):
    monkeypatch.setattr(sources, "checkout_engine", lambda: None)
    assert sources.stale_engine() is None


def test_a_tester_run_starts_with_the_warning(tmp_path, monkeypatch):
    """The RFC suites' runs (tester.run.begin) say it too, before the run folder's line."""
    from p4scope.experiments.runner import Case
    from p4scope.experiments.tester import run

    monkeypatch.setattr(sources, "stale_engine", lambda: "warning: the engine is old")
    lines = []
    run.begin("rfc2544", "virtual", tmp_path, "r", [Case("c", "rfc2544", "c", {})], {},
              lines.append)
    assert lines[0] == "p4scope run: warning: the engine is old"
    assert lines[1].startswith("p4scope run: 1 cases into ")
