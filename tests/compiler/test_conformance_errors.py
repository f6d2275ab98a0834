"""`p4scope conformance errors`: p4c's negative tests, on a hand-made copy
of p4c's testdata layout."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from p4scope.conformance import errors as ce
from p4scope.cli import app

V1MODEL_OK = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { BODY } }
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""
# where BODY (control I's apply block) is: line and column
BODY_LINE = next(i for i, t in enumerate(V1MODEL_OK.splitlines(), 1) if "BODY" in t)
BODY_COL = V1MODEL_OK.splitlines()[BODY_LINE - 1].index("BODY") + 1


def stderr_at(name: str, line: int, source: str, col: int, message: str = "error text") -> str:
    return (f"{name}({line}): [--Wwarn=unused] warning: 'x' is unused\n{source}\n{' ' * (col - 1)}^\n"
            f"{name}({line}): [--Werror=type-error] error: {message}\n{source}\n{' ' * (col - 1)}^^^\n")


@pytest.fixture
def testdata(tmp_path: Path) -> Path:
    """Four programs: rejected where p4c says, rejected elsewhere, accepted,
    and a PSA program (p4scope has no psa.p4)."""
    errors = tmp_path / "p4_16_errors"
    outputs = tmp_path / "p4_16_errors_outputs"
    errors.mkdir()
    outputs.mkdir()
    bad_shift = V1MODEL_OK.replace("BODY", "hdr.h.a = 1 << hdr.h.a;")
    (errors / "a-match.p4").write_text(bad_shift)
    (outputs / "a-match.p4-stderr").write_text(stderr_at(
        "a-match.p4", BODY_LINE, bad_shift.splitlines()[BODY_LINE - 1], BODY_COL + len("hdr.h.a = ")))
    (errors / "b-elsewhere.p4").write_text(bad_shift)
    (outputs / "b-elsewhere.p4-stderr").write_text(stderr_at("b-elsewhere.p4", 3, "header h_t", 1))
    (errors / "c-accepted.p4").write_text(V1MODEL_OK.replace("BODY", ""))
    (outputs / "c-accepted.p4-stderr").write_text("c-accepted.p4(2): error: something\n")
    (errors / "d-psa.p4").write_text("#include <core.p4>\n#include <bmv2/psa.p4>\n")
    (outputs / "d-psa.p4-stderr").write_text("d-psa.p4(5): [--Werror=type-error] error: x\n")
    return tmp_path


# -- p4c's expected output -----------------------------------------------------------------

def test_first_error_skips_warnings_and_takes_the_caret_column():
    err = ce.p4c_first_error(stderr_at("x.p4", 7, "    a = b;", 9, "'b' is wrong"))
    assert (err.file, err.line, err.col) == ("x.p4", 7, 9)
    assert "'b' is wrong" in err.message


def test_caret_column_is_mapped_back_over_squeezed_blanks(tmp_path):
    # p4c shows the preprocessed line: cpp squeezed "0xF   )" to "0xF )"
    (tmp_path / "s.p4").write_text("x\n  (1, 0x1 &&& 0xF   ) : a(1);\n")
    shown = "  (1, 0x1 &&& 0xF ) : a(1);"
    text = f"s.p4(2): [--Werror=expected] error: e\n{shown}\n{' ' * shown.index(':')}^\n"
    assert ce.p4c_first_error(text, tmp_path).col == len("  (1, 0x1 &&& 0xF   ) ") + 1
    assert ce.p4c_first_error(text).col == shown.index(":") + 1   # source not found: as shown


@pytest.mark.parametrize("text, expected", [
    ("p.p4(47):syntax error, unexpected DEFAULT\n    default\n    ^^^^^^^\n", ("p.p4", 47, 5)),
    ("[--Werror=Target model error] error: NoAction not found\n", ("", None, None)),
    ("    x = 1; // { dg-error \"\" }\np.p4(3): [--Werror=type-error] error: 'x'\n", ("p.p4", 3, None)),
    ("p.p4(3:14): error: with a column\n", ("p.p4", 3, 14)),
])
def test_first_error_formats(text, expected):
    err = ce.p4c_first_error(text)
    assert (err.file, err.line, err.col) == expected


def test_no_error_in_stderr():
    assert ce.p4c_first_error("p.p4(3): [--Wwarn=unused] warning: 'x' is unused\n") is None


@pytest.mark.parametrize("text, arch", [
    ("#include <core.p4>\n#include <v1model.p4>\n", "v1model"),
    ("#include <core.p4>\ncontrol c() { apply {} }\n", "none"),
    ("#include <core.p4>\n#include <bmv2/psa.p4>\n", "psa"),
    ("#include <ebpf_model.p4>\n", "ebpf_model"),
    ("header_type h_t { fields { a : 8; } }\n", "p4-14"),
])
def test_program_arch(tmp_path, text, arch):
    (tmp_path / "p.p4").write_text(text)
    assert ce.program_arch(tmp_path / "p.p4") == arch


def test_program_arch_follows_quoted_includes(tmp_path):
    (tmp_path / "skeleton.p4").write_text("#include <v1model.p4>\n")
    (tmp_path / "p.p4").write_text('control c() { apply {} }\n#include "skeleton.p4"\n')
    assert ce.program_arch(tmp_path / "p.p4") == "v1model"


# -- running -------------------------------------------------------------------------------

def test_statuses(testdata):
    results = {r.name: r for r in ce.run_errors_conformance(testdata)}
    assert results["a-match.p4"].status == ce.MATCH
    assert "shift result type is arbitrary-precision int" in results["a-match.p4"].message
    assert results["b-elsewhere.p4"].status == ce.ELSEWHERE
    assert results["c-accepted.p4"].status == ce.ACCEPTED
    assert results["d-psa.p4"].status == ce.UNSUPPORTED
    assert results["d-psa.p4"].arch == "psa"


def test_internal_error_is_a_crash_not_an_exception(testdata, monkeypatch):
    import p4scope.compiler as compiler

    def broken(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(compiler, "compile_file", broken)
    r = ce.check_program(testdata / "p4_16_errors" / "a-match.p4",
                         testdata / "p4_16_errors_outputs" / "a-match.p4-stderr")
    assert r.status == ce.CRASHED and r.message.startswith("KeyError")


def test_table_and_summary(testdata):
    out = io.StringIO()
    ce.summarize(ce.run_errors_conformance(testdata), testdata, out)
    text = out.getvalue()
    assert "a-match.p4" in text and f"{BODY_LINE}:{BODY_COL + len('hdr.h.a = ')}" in text
    assert "ACCEPTED  c-accepted.p4" in text
    assert text.rstrip().splitlines()[-1] == (
        "errors conformance: 4 programs: 3 rejected (1 at p4c's position, 0 at p4c's line, "
        "other column, 1 elsewhere, 0 p4c gives no position, 1 rejected (unsupported)), "
        "1 accepted, 0 crashed")


def test_cli_exit_status(testdata, tmp_path):
    res = CliRunner().invoke(app, ["conformance", "errors", str(testdata)])
    assert res.exit_code == 1, res.output          # c-accepted.p4 is accepted
    assert "errors conformance: 4 programs" in res.output
    (testdata / "p4_16_errors" / "c-accepted.p4").unlink()
    res = CliRunner().invoke(app, ["conformance", "errors", str(testdata)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["conformance", "errors", str(testdata), "--filter", "zz*"])
    assert res.exit_code == 2
    res = CliRunner().invoke(app, ["conformance", "errors", str(tmp_path / "none")])
    assert res.exit_code == 2 and "p4_16_errors: no such folder" in res.output


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
def test_cli_bad_timeout_exits_2_naming_it(testdata, value):
    res = CliRunner().invoke(app, ["conformance", "errors", str(testdata), "--timeout", value])
    assert res.exit_code == 2
    assert "--timeout" in res.output
