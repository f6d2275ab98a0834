"""Every program the testbed ships in p4src/ compiles to BMv2 JSON and P4Info
that the engine loads."""

from pathlib import Path

import pytest

from p4scope.compiler import compile_file

ROOT = Path(__file__).parents[2]
PROGRAMS = sorted((ROOT / "p4src").glob("*.p4"))


def test_there_are_programs():
    assert PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_p4src_program_compiles_and_loads(program):
    import json

    import p4scope_dataplane as dp

    result = compile_file(program, [str(ROOT / "p4src" / "include")])
    assert result.p4info.tables
    dp.Engine(json.dumps(result.bmv2_json))  # raises if the engine rejects it
