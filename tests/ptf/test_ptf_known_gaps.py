"""The PTF suite's known gaps (ptf_tests/known_gaps.py) excuse only what
they list: an assertion wrapped in `known_gap("name")` for a gap no target
lists reads as if it might skip while it never does, and a gap of p4scope
that shows only sometimes would turn any failure of the checks it wraps
(the telemetry instrument's queue and burst checks were such) into a skip
on the switch this project ships."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

PTF_TESTS = Path(__file__).resolve().parents[2] / "ptf_tests"


def listed_gaps() -> dict:
    """known_gaps.GAPS, loaded from its file (PTF puts ptf_tests/ on the
    path; pytest does not)."""
    spec = importlib.util.spec_from_file_location("ptf_known_gaps", PTF_TESTS / "known_gaps.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module.GAPS


def gaps_used() -> dict[str, list[str]]:
    """Gap name -> where `self.known_gap("name")` wraps assertions."""
    used: dict[str, list[str]] = {}
    for path in sorted(PTF_TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "known_gap" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                used.setdefault(node.args[0].value, []).append(f"{path.name}:{node.lineno}")
    return used


def test_every_gap_a_test_names_is_listed_for_a_target():
    listed = {name for gaps in listed_gaps().values() for name in gaps}
    unlisted = {name: where for name, where in gaps_used().items() if name not in listed}
    assert not unlisted, f"known_gap() for gaps no target lists (plain assertions): {unlisted}"


def test_p4scope_lists_no_gap_that_passes_failures_as_skips():
    sometimes = [name for name, gap in listed_gaps().get("p4scope", {}).items() if not gap.always]
    assert sometimes == [], f"p4scope's timing-dependent gaps hide failing checks: {sometimes}"
