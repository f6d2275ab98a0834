"""Hostile P4 sources end in a positioned compile error (exit 1), never in a
hang or an internal error: exponential macros, absurd widths, huge literals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4scope.compiler import ast
from p4scope.compiler.diagnostics import CompileError, Diagnostics
from p4scope.compiler.driver import compile_text
from p4scope.compiler.exprtext import int_text
from p4scope.compiler.lexer import parse_integer
from p4scope.compiler.preprocess import clear_cache, preprocess


def compile_cli(path: Path):
    return subprocess.run([sys.executable, "-m", "p4scope.cli", "compile", str(path),
                           "-o", str(path.with_suffix(".json"))],
                          capture_output=True, text=True, timeout=60)  # a hang fails


def doubling_macros(n: int) -> str:
    """A0..An where each is twice the one before: An has 2**n operands."""
    return "#define A0 1\n" + "".join(f"#define A{i} (A{i - 1}+A{i - 1})\n" for i in range(1, n + 1))


V1MODEL_MAIN = """#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { }
parser P(packet_in pkt, out h_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control C(inout h_t hdr, inout m_t m) { apply { } }
control I(inout h_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in h_t hdr) { apply { } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_cache()
    yield
    clear_cache()


# -- item: exponential macro expansion -----------------------------------------

def test_exponential_macro_is_an_error_at_its_use_not_a_hang(tmp_path):
    src = tmp_path / "boom.p4"
    src.write_text(doubling_macros(30) + "const bit<32> x = A30;\n" + V1MODEL_MAIN)
    r = compile_cli(src)
    assert r.returncode == 1, r.stderr
    assert f"{src}:32:19: error: expansion of macro 'A30' is too large" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("use, line, col", [
    ("#if A30 > 0\n#endif\n", 32, 5),                  # in a directive
    ("#define D(x) x x\nconst bit<8> y = 1 + D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(D(1))))))))))))))))))))))));\n",
     33, 22),                                            # through arguments
])
def test_exponential_expansion_is_reported_where_the_macro_is_used(use, line, col):
    diags = Diagnostics()
    preprocess(doubling_macros(30) + use, "m.p4", [], {}, diags)
    [err] = diags.errors
    assert (err.pos.file, err.pos.line, err.pos.col) == ("m.p4", line, col)
    assert "is too large" in err.message


def test_many_large_expansions_are_bounded_in_all():
    # each use is fine on its own; thousands of them are not
    body = "".join(f"const bit<32> x{i} = A12;\n" for i in range(3000))
    diags = Diagnostics()
    preprocess(doubling_macros(12) + body, "m.p4", [], {}, diags)
    [err] = diags.errors
    assert "in all" in err.message and err.pos.line > 13


def test_ordinary_nested_macros_still_expand():
    diags = Diagnostics()
    out = preprocess(doubling_macros(10) + "const bit<32> x = A10;\n", "m.p4", [], {}, diags)
    assert not diags.errors
    assert out.count("1+1") == 512


# -- item: absurd widths and huge literals ---------------------------------------

BIG = "1" * 10_000          # over Python's 4300-digit int/str conversion limit


def compile_errors(decls: str) -> list[str]:
    """The rendered first lines of the errors compiling `decls` (before a
    small v1model program) gives, [] when it compiles."""
    try:
        compile_text(decls + V1MODEL_MAIN, "w.p4")
    except CompileError as e:
        return [d.render().splitlines()[0] for d in e.diagnostics]
    return []


@pytest.mark.parametrize("decls, error", [
    # as p4c: a width that does not fit an int, then its 2048-bit maximum
    ("const bit<99999999999999999999999> x = 1;\n",
     "w.p4:1:11: error: 99999999999999999999999: this implementation does not support bitstrings this large"),
    ("const bit<4096> x = 1;\n", "w.p4:1:7: error: bit<4096>: Compiler only supports widths up to 2048"),
    ("const int<2049> x = 1;\n", "w.p4:1:7: error: int<2049>: Compiler only supports widths up to 2048"),
    (f"const int W = {BIG};\nconst bit<W> x = 1;\n",
     "w.p4:2:11: error: W: this implementation does not support bitstrings this large"),
    ("header v_t { varbit<4294967296> v; }\n",
     "w.p4:1:21: error: 4294967296: this implementation does not support bitstrings this large"),
    ("const bit<32> x = 4096w1;\n",
     "w.p4:1:19: error: 4096w1: width 4096 too large (the compiler supports widths up to 2048)"),
    # as p4c (its issue2496): a shift that would build a number wider than 2048 bits
    ("const int x = 1 << 1152921504606846976;\n",
     "w.p4:1:15: error: 1 << 1152921504606846976: Compiler only supports widths up to 2048"),
    (f"const bit<32> x = {BIG}w1;\n",
     "w.p4:1:19: error: 1111111111111111111111111111111111111...: width 1111111111111111111111111111111111111..."
     " too large (the compiler supports widths up to 2048)"),
])
def test_too_wide_is_a_positioned_source_error(decls, error):
    assert compile_errors(decls) == [error]


@pytest.mark.parametrize("decls", [
    "const bit<2048> x = 1;\nconst int<2048> y = 2048s1;\nheader v_t { varbit<65536> v; }\n",
    f"const bit<32> x = {BIG};\nconst int y = {BIG};\nconst bit<8> z = (bit<8>)(y % 256);\n",
    f"const bit<32> x = 0x{'f' * 10_000};\nconst bit<32> y = 32w0d{BIG};\n",
    # a sized shift keeps its width, however far it shifts
    "const bit<8> x = 8w1 << 1152921504606846976;\nconst int y = 1 << 2040;\n",
])
def test_widest_types_and_huge_literals_compile(decls):
    assert compile_errors(decls) == []


def test_huge_literal_keeps_its_value_and_text():
    value, width, signed = parse_integer("0d" + BIG)
    assert value == (10 ** 10_000 - 1) // 9 and (width, signed) == (None, False)
    assert int_text(ast.IntLit(value, None, False, BIG)) == BIG


@pytest.mark.parametrize("decls, status, needle", [
    ("const bit<99999999999999999999999> x = 1;\n", 1, ":1:11: error: 99999999999999999999999: "),
    (f"const bit<32> x = {BIG};\n", 0, ""),
])
def test_cli_exit_status_for_wide_types_and_huge_literals(tmp_path, decls, status, needle):
    src = tmp_path / "w.p4"
    src.write_text(decls + V1MODEL_MAIN)
    r = compile_cli(src)
    assert (r.returncode, "internal" in r.stderr) == (status, False), r.stderr
    assert needle in r.stderr
