"""The checker pass: constant folding, expression types, and the errors a
user gets for ill-typed expressions."""

import pytest

from p4scope.compiler import CompileError, ast
from p4scope.compiler import types as compiler_types
from p4scope.compiler.driver import frontend_text

PRELUDE = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; int<8> s; }
struct hs_t { h_t h; }
struct m_t { bit<32> x; }
enum bit<8> Color { RED = 1, GREEN = 2 }
"""
PIPE = """
parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { BODY } }
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def frontend(consts: str = "", body: str = ""):
    return frontend_text(PRELUDE + consts + PIPE.replace("BODY", body), "t.p4")


def const(ir, name):
    return ir.checker.const_of_sym(ir.checker.glob.lookup(name))


@pytest.mark.parametrize("decl, value", [
    ("const bit<8> K = 250 + 10;", 4),            # wraps at the declared width
    ("const int<8> K = -1;", -1),
    ("const bit<4> K = 4w3 - 4w5;", 14),
    ("const bit<16> K = 8w1 ++ 8w2;", 0x0102),
    ("const bit<8> K = (bit<8>)16w0x1234;", 0x34),
    ("const bit<4> K = 8w0xab[7:4];", 0xa),
    ("const bit<8> K = 8w250 |+| 8w10;", 255),   # saturating
    ("const int<8> K = -8s100 |-| 8s100;", -128),
    ("const bool K = 3 < 4 && !(1 == 2);", True),
    ("const bit<8> K = (bit<8>)Color.GREEN;", 2),
    ("const bit<32> K = 1 << 20;", 1 << 20),
    ("const int K = 7 / 2 + 7 % 2;", 4),
])
def test_constants_are_folded_with_p4_widths(decl, value):
    assert const(frontend(decl), "K") == value


def test_expression_types():
    ir = frontend(body="m.x = (bit<32>)(hdr.h.a ++ hdr.h.b ++ hdr.h.a);")
    types = ir.checker.expr_types
    concat = [e for e in _exprs(ir) if isinstance(e, ast.Binary) and e.op == "++"]
    widths = sorted(types[e].width for e in concat)
    assert widths == [24, 32]


def test_enum_member_has_its_enum_type_and_value():
    ir = frontend("const Color K = Color.RED;")
    sym = ir.checker.glob.lookup("K")
    assert isinstance(sym.type, compiler_types.Enum) and sym.type.name == "Color"
    assert const(ir, "K") == 1


@pytest.mark.parametrize("body, message", [
    ("hdr.h.a = hdr.h.a << true;", "cannot shift"),
    ("if (hdr.h.a) { }", "if condition must be bool"),
    ("hdr.h.a = ~true;", "cannot be applied to bool"),
    ("hdr.h.a = hdr.h.b[20:13];", "out of range"),
    ("hdr.h.a = hdr.h.a + hdr.h.s;", "different types"),
    ("hdr.h.nosuch = 1;", "has no field nosuch"),
    ("m.x = hdr.h.isValid();", "cannot use bool"),
    ("hdr.h.a = 1; error e = error.NoSuchError;", "no such error"),
    ("digest<m_t>(1);", "missing argument for parameter data"),
    ("hdr.h.setValid(1);", "expected 0 argument"),
])
def test_ill_typed_expressions_are_errors(body, message):
    with pytest.raises(CompileError) as e:
        frontend(body=body)
    assert message in e.value.render()
    assert e.value.diagnostics[0].pos.file == "t.p4"


def test_duplicate_declaration_is_an_error():
    with pytest.raises(CompileError) as e:
        frontend("const bit<8> K = 1; const bit<8> K = 2;")
    assert "K: duplicate declaration" in e.value.render()


def _exprs(ir):
    from p4scope.compiler.p4info import _nodes_in
    for b in ir.blocks:
        yield from (n for n in _nodes_in(b.decl) if isinstance(n, ast.Expr))
