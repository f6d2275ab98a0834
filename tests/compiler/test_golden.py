"""Golden tests: each tests/compiler/golden/<name>.p4 compiles to exactly
<name>.p4info.txtpb.  Regenerate after an intended change with

    P4SCOPE_REGEN=1 bash scripts/test.sh tests/compiler/test_golden.py

and review the diff before committing it.
"""

import os
from pathlib import Path

import pytest

from p4scope.compiler.driver import compile_file
from p4scope.compiler.p4info_io import to_text

GOLDEN = Path(__file__).parent / "golden"
PROGRAMS = sorted(GOLDEN.glob("*.p4"))
REGEN = os.environ.get("P4SCOPE_REGEN") == "1"


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_p4info_matches_golden(program: Path):
    result = compile_file(program, backends=("p4info",))
    text = to_text(result.p4info)
    golden = program.with_suffix(".p4info.txtpb")
    if REGEN:
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden.name}: run with P4SCOPE_REGEN=1"
    assert text == golden.read_text()
