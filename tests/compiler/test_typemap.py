"""The type map keeps an expression's type when a pass rewrites the node
(`dataclasses.replace`), which keying by id(node) did not."""

import dataclasses

from p4scope.compiler import ast
from p4scope.compiler import types
from p4scope.compiler.diagnostics import Pos

from tests.compiler.test_checker import _exprs, frontend


def _concat(ir) -> ast.Binary:
    return next(e for e in _exprs(ir) if isinstance(e, ast.Binary) and e.op == "++")


def test_rewritten_expression_keeps_its_type():
    ir = frontend(body="m.x = (bit<32>)(hdr.h.a ++ hdr.h.b);")
    concat = _concat(ir)
    moved = dataclasses.replace(concat, pos=Pos("t.p4", 99, 1))
    rebuilt = dataclasses.replace(concat, left=dataclasses.replace(concat.left))
    for node in (moved, rebuilt):
        assert node is not concat
        t = ir.checker.type_of(node)
        assert isinstance(t, types.Bits) and t.width == 24
        assert ir.checker.type_of(node.left) == ir.checker.type_of(concat.left)


def test_a_new_node_has_no_type_until_a_pass_gives_it_one():
    ir = frontend(body="m.x = (bit<32>)(hdr.h.a ++ hdr.h.b);")
    concat = _concat(ir)
    fresh = ast.Binary("++", concat.left, concat.right, pos=concat.pos)
    assert fresh == concat                      # same shape, but another node
    assert isinstance(ir.checker.type_of(fresh), types.Unknown)
    ir.checker.expr_types[fresh] = types.Bits(24)
    assert ir.checker.type_of(fresh) == types.Bits(24)
    ir.checker.expr_types.forget(fresh)
    assert isinstance(ir.checker.type_of(fresh), types.Unknown)


def test_a_rewritten_control_keeps_its_checked_scope():
    from p4scope.compiler.frontend import BodyChecker

    ir = frontend(body="m.x = 1;")
    control = next(d for d in ir.program.decls if isinstance(d, ast.ControlDecl) and d.name == "I")
    body = BodyChecker(ir.checker)
    scope = body.control_scope(control)
    assert body.control_scope(dataclasses.replace(control)) is scope
    assert scope.lookup("m") is not None
