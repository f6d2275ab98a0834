"""The test tree is a package tree with one set of fixtures: every folder
holding Python files has an __init__.py (two tests of the same basename in
different folders once broke collection), helpers are imported by their
full name (tests.<folder>.<module>), never by a bare name that works only
when pytest happens to put their folder on sys.path, and fixtures come from
tests/conftest.py's plugins (tests/fixtures/), not per-folder conftests."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_folder_with_python_files_is_a_package():
    folders = {p.parent for p in python_files()}
    missing = sorted(str(f.relative_to(TESTS.parent)) for f in folders
                     if not (f / "__init__.py").exists())
    assert missing == [], f"folders without __init__.py: {missing}"


def test_one_conftest_for_the_whole_tree():
    extra = [str(p.relative_to(TESTS.parent)) for p in python_files()
             if p.name == "conftest.py" and p.parent != TESTS]
    assert extra == [], f"fixtures belong in tests/fixtures/: {extra}"


def bare_imports(path: Path, local_names: set[str]) -> list[str]:
    """Imports of a module of the test tree by its bare name, and sys.path
    changes, in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            tops = []
        found += [f"line {node.lineno}: import {t}" for t in tops if t in local_names]
        if (isinstance(node, ast.Attribute) and node.attr in ("insert", "append")
                and isinstance(node.value, ast.Attribute) and node.value.attr == "path"
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "sys"):
            found.append(f"line {node.lineno}: sys.path.{node.attr}")
    return found


def test_helpers_are_imported_by_their_full_name():
    local_names = {p.stem for p in python_files()} - {"__init__"}
    offenders = {str(p.relative_to(TESTS.parent)): bad for p in python_files()
                 if (bad := bare_imports(p, local_names))}
    assert offenders == {}, f"use `from tests.<folder>.<module> import ...`: {offenders}"
