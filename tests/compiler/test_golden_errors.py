"""Golden error tests, as p4c's p4_16_errors / *.p4-stderr: each
tests/compiler/errors/<name>.p4 is a program with mistakes (its first line
says which pass catches them), and <name>.p4-stderr is exactly what
`p4scope compile` writes to stderr for it, with exit status 1.  Regenerate
after an intended change with

    P4SCOPE_REGEN=1 bash scripts/test.sh tests/compiler/test_golden_errors.py

and review the diff before committing it.  The compiler's own include
folder is written as <p4include> so the files do not depend on the clone.
"""

import os
from pathlib import Path

import pytest

import p4scope.compiler
from p4scope.commands.compile import run_compile
from p4scope.compiler import CompileError
from p4scope.compiler.driver import compile_text, pass_names

ERRORS = Path(__file__).parent / "errors"
PROGRAMS = sorted(ERRORS.glob("*.p4"))
REGEN = os.environ.get("P4SCOPE_REGEN") == "1"
P4INCLUDE = str(Path(p4scope.compiler.__file__).parent / "p4include")


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_errors_match_golden_stderr(program: Path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ERRORS)   # the program is named as a user in its folder would
    out = tmp_path / "out.json"
    code = run_compile(Path(program.name), str(out), None, None, [], [])
    stderr = capsys.readouterr().err.replace(P4INCLUDE, "<p4include>")
    golden = program.with_name(program.name + "-stderr")
    if REGEN:
        golden.write_text(stderr)
    assert golden.exists(), f"no golden file {golden.name}: run with P4SCOPE_REGEN=1"
    assert code == 1 and not out.exists()
    assert stderr == golden.read_text()


class _Reported(Exception):
    """Raised by the observer to stop at the first pass with errors."""


def _failing_pass(program: Path) -> str:
    """The pass that reported the program's first error, seen from the
    pass manager: the first pass that ran leaving errors behind, or the one
    that raised."""
    from p4scope.compiler.passlist import PASSES

    leaves = [p.name for _, p in PASSES.walk() if not p.passes]
    done: list[str] = []

    def observe(p, c):
        if not p.passes:
            done.append(p.name)
            if c.diags.errors:
                raise _Reported(p.name)

    try:
        compile_text(program.read_text(), program.name, observer=observe)
    except _Reported as stop:
        return str(stop)
    except CompileError:
        return leaves[len(done)]
    raise AssertionError(f"{program.name} compiled")


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_the_pass_named_in_the_header_reports_the_first_error(program: Path, monkeypatch):
    monkeypatch.chdir(ERRORS)
    header = program.read_text().splitlines()[0]
    assert header.startswith("// ") and ":" in header
    named = header[3:].split(":")[0].split(" + ")[0]
    assert named in pass_names()
    assert _failing_pass(program) == named
