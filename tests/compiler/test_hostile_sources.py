"""Hostile P4 sources end in a positioned compile error (exit 1), never in a
hang or an internal error: exponential macros, absurd widths, huge literals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4scope.compiler.diagnostics import Diagnostics
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
