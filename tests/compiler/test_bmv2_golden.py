"""Golden tests of the BMv2 backend: each tests/compiler/golden/<name>.p4
compiles to exactly <name>.json.  Regenerate after an intended change with

    P4SCOPE_REGEN=1 bash scripts/test.sh tests/compiler/test_bmv2_golden.py

and review the diff before committing it."""

import json
import os
from pathlib import Path

import pytest

from p4scope.compiler.driver import compile_file

GOLDEN = Path(__file__).parent / "golden"
PROGRAMS = sorted(GOLDEN.glob("*.p4"))
REGEN = os.environ.get("P4SCOPE_REGEN") == "1"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_bmv2_json_matches_golden(program: Path):
    result = compile_file(program, backends=("bmv2",))
    text = json.dumps(result.bmv2_json, indent=1, sort_keys=False) + "\n"
    golden = program.with_suffix(".json")
    if REGEN:
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden.name}: run with P4SCOPE_REGEN=1"
    assert json.loads(text) == json.loads(golden.read_text())
