"""Lowering P4 expressions to BMv2 operands (p4c's ExpressionConverter).

BMv2 arithmetic is unbounded, so like p4c the result of every operation that
can leave its type's range is brought back: ``& mask`` for bit<W>,
``two_comp_mod`` for int<W>.

    a + b          (bit<8>)   {"op": "&", left: {"op": "+", a, b}, right: "0xff"}
    a + b          (int<8>)   {"op": "two_comp_mod", left: {"op": "+", a, b}, right: "0x8"}
    x[7:4]                    (x >> 4) & 0xf
    a ++ b  (b: bit<8>)       ((a << 8) | (b & 0xff)) & mask(a ++ b)
    (bit<4>) y (y: bit<8>)    y & 0xf
    (bool) b1                 d2b(b1)
    h.isValid()               d2b(h.$valid$)
    a |+| b                   usat_cast(a + b, W)

Constant operands are folded at compile time.  Needs: checker types for
every expression.  Calls with a result (functions, lookahead, ...) are
handed to the statement lowerer (`sink.call_value`), which emits their
primitives first and returns where the result is.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from ..checker import ConstError
from .env import ActionBinding, BlockBinding, ConstBinding, Env, ExternBinding, FunctionBinding, PacketBinding, TableBinding, ValueSetB
from .values import (HeaderV, InvalidV, Leaf, StackV, StructV, UnionV, Value, as_bool, as_data,
                     bool_node, expr_node, hexstr, leaf_const, mask, describe)


class TypeRefV(Value):
    """A name that denotes a type (the `E` in `E.member`)."""

    def __init__(self, t: types.Type) -> None:
        self.type = t


class ExpressionConverter:
    def __init__(self, ctx, sink) -> None:
        self.ctx = ctx
        self.c = ctx.checker
        self.sink = sink

    # ----------------------------------------------------------- helpers

    def type_of(self, e: ast.Expr) -> types.Type:
        return self.c.expr_types.of(e)

    def unsupported(self, e: ast.Node, what: str) -> Leaf:
        self.ctx.unsupported(e.pos, what)
        return Leaf(hexstr(0), types.Unknown(), "data", 0)

    def fit(self, node: dict, t: types.Type) -> dict:
        """Bring an unbounded result back into the range of type `t`."""
        b = types.bits_of(t)
        if b is None:
            return node
        if b.signed:
            return expr_node("two_comp_mod", node, {"type": "hexstr", "value": hex(b.width)})
        return expr_node("&", node, hexstr(mask(b.width), b.width))

    # ----------------------------------------------------------- entry points

    def leaf(self, e: ast.Expr, env: Env) -> Leaf:
        v = self.value(e, env)
        if isinstance(v, Leaf):
            return v
        return self.unsupported(e, f"{describe(v)} used as a scalar value")

    def bool_operand(self, e: ast.Expr, env: Env) -> dict:
        return as_bool(self.leaf(e, env))

    def data_operand(self, e: ast.Expr, env: Env) -> dict:
        return as_data(self.leaf(e, env))

    def const(self, e: ast.Expr, env: Env) -> Any:
        """The compile-time value of `e` (int, bool, or a tuple of those for
        list expressions); raises ConstError when it is not constant."""
        if isinstance(e, ast.ListExpr):
            return tuple(self.const(x, env) for x in e.elems)
        v = self.value(e, env)
        if isinstance(v, Leaf) and v.is_const:
            return v.const
        raise ConstError("not a compile-time constant")

    # ---------------------------------------------------------------- values

    def value(self, e: ast.Expr, env: Env) -> Value:
        ov = self.ctx.apply_overrides.get(id(e))
        if ov is not None:
            return ov
        m = getattr(self, "_" + type(e).__name__, None)
        if m is None:
            return self.unsupported(e, f"expression {type(e).__name__}")
        return m(e, env)

    def _IntLit(self, e: ast.IntLit, env: Env) -> Value:
        t = self.type_of(e)
        if e.width is not None:
            t = types.Bits(e.width, e.signed)
        if types.bits_of(t) is None:
            return Leaf(hexstr(e.value), types.InfInt(), "data", e.value)
        return leaf_const(e.value, t)

    def _BoolLit(self, e: ast.BoolLit, env: Env) -> Value:
        return leaf_const(e.value, types.Bool())

    def _StringLit(self, e: ast.StringLit, env: Env) -> Value:
        return Leaf({"type": "string", "value": e.value}, types.String(), "data", e.value)

    def _ErrorMember(self, e: ast.ErrorMember, env: Env) -> Value:
        return self.error_const(e.name)

    def error_const(self, name: str) -> Leaf:
        errs = self.c.errors
        idx = errs.index(name) if name in errs else 0
        return Leaf(hexstr(idx), types.Error(), "data", idx)

    def enum_const(self, t: types.Enum, member: str) -> Leaf:
        if t.base is not None:
            return leaf_const(t.values.get(member, 0), t)
        idx = t.members.index(member) if member in t.members else 0
        return Leaf(hexstr(idx, 32), t, "data", idx)

    def _DontCare(self, e, env) -> Value:
        return Leaf(hexstr(0), types.DontCareT(), "data", None)

    def _InvalidExpr(self, e, env) -> Value:
        return InvalidV()

    # ------------------------------------------------------------------ names

    def _Name(self, e: ast.Name, env: Env) -> Any:
        b = None if e.toplevel else env.lookup(e.name)
        if b is None:
            b = self.global_binding(e.name, e)
        if isinstance(b, ConstBinding):
            return self.const_to_value(b.value, b.type, e)
        return b

    def global_binding(self, name: str, where: ast.Node) -> Any:
        sym = self.c.glob.lookup(name)
        if sym is None:
            return self.unsupported(where, f"name {name}")
        if sym.kind == "const":
            try:
                v = self.c.const_of_sym(sym)
            except ConstError:
                return self.unsupported(where, f"constant {name}")
            return self.const_to_value(v, sym.type or types.Unknown(), where)
        if sym.kind == "action":
            return ActionBinding(sym.decl, None, self.ctx.root_env, True)  # type: ignore[arg-type]
        if sym.kind == "function":
            d = sym.decl
            if isinstance(d, ast.FunctionDecl):
                return FunctionBinding(d, self.ctx.root_env)
            return sym  # an extern function: the caller looks at the name
        if sym.kind == "instance":
            return self.ctx.global_instance(sym.decl)
        if sym.kind in ("type", "extern", "block"):
            return TypeRefV(self.c.sym_type(sym) if sym.kind != "block" else types.Block(sym.decl))
        return self.unsupported(where, f"use of {sym.kind} {name}")

    def const_to_value(self, v: Any, t: types.Type, where: ast.Node) -> Value:
        """A Value for a compile-time constant as the checker computes them."""
        ts = types.strip_newtype(t)
        if isinstance(v, tuple) and v and v[0] == "error":
            return self.error_const(v[1])
        if isinstance(v, tuple) and v and v[0] == "enum":
            et = ts if isinstance(ts, types.Enum) else None
            if et is None:
                sym = self.c.glob.lookup(v[1])
                et = self.c.sym_type(sym) if sym is not None else None
            if isinstance(et, types.Enum):
                return self.enum_const(et, v[2])
            return self.unsupported(where, "enum constant")
        if isinstance(v, dict) and isinstance(ts, types.StructLike):
            sv = StructV(ts)
            for n, ft in ts.fields:
                if n in v:
                    sv.fields[n] = self.const_to_value(v[n], ft, where)
            return sv
        if isinstance(v, tuple):
            elems = ts.elems if isinstance(ts, types.Tuple) else tuple(types.InfInt() for _ in v)
            if isinstance(ts, types.StructLike):
                elems = tuple(ft for _, ft in ts.fields)
            sv = StructV(ts)
            names = [n for n, _ in ts.fields] if isinstance(ts, types.StructLike) else [f"f{i}" for i in range(len(v))]
            for n, x, xt in zip(names, v, elems):
                sv.fields[n] = self.const_to_value(x, xt, where)
            return sv
        if isinstance(v, bool):
            if isinstance(ts, types.Bool) or types.bits_of(ts) is None:
                return leaf_const(v, types.Bool())
            return leaf_const(int(v), t)
        if isinstance(v, int):
            if types.bits_of(ts) is None:
                return Leaf(hexstr(v), types.InfInt(), "data", v)
            return leaf_const(v, t)
        if isinstance(v, str):
            return Leaf({"type": "string", "value": v}, types.String(), "data", v)
        return self.unsupported(where, f"constant of type {t}")

    # ---------------------------------------------------------------- members

    def _TypeMember(self, e: ast.TypeMember, env: Env) -> Value:
        t = self.c.resolve_type(e.type, self.ctx.type_scope(env))
        return self._type_member(t, e.name, e)

    def _type_member(self, t: types.Type, name: str, e: ast.Node) -> Value:
        t = types.strip_newtype(t) if not isinstance(t, types.Enum) else t
        if isinstance(t, types.Enum):
            return self.enum_const(t, name)
        if isinstance(t, types.Error):
            return self.error_const(name)
        if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
            return TypeSizeV(t, name)
        return self.unsupported(e, f"member {name} of type {t}")

    def _Member(self, e: ast.Member, env: Env) -> Any:
        if isinstance(e.expr, ast.Name) and e.expr.name == "error" and env.lookup("error") is None:
            return self.error_const(e.name)
        base = self.value(e.expr, env)
        return self.member(base, e.name, e, env)

    def member(self, base: Any, name: str, e: ast.Member, env: Env) -> Any:
        if isinstance(base, TypeRefV):
            return self._type_member(base.type, name, e)
        if isinstance(base, StructV):
            if name in base.fields:
                return base.fields[name]
            return self.unsupported(e, f"member {name}")
        if isinstance(base, HeaderV):
            if base.type.field_type(name) is not None:
                return base.field(name)
            return MethodV(base, name)
        if isinstance(base, UnionV):
            if name in base.members:
                return base.members[name]
            return MethodV(base, name)
        if isinstance(base, StackV):
            return self.stack_member(base, name, e, env)
        if isinstance(base, (ExternBinding, TableBinding, BlockBinding, PacketBinding, ValueSetB)):
            return MethodV(base, name)
        if isinstance(base, NextV) and base.stack.union_stack:
            return UnionMemberOfNext(base.stack, name)
        if isinstance(base, ApplyResultV):
            return self.sink.apply_result_member(base, name, e, env)
        if isinstance(base, Leaf) and base.type == types.Unknown():
            return base
        return self.unsupported(e, f"member {name} of {describe(base)}")

    def stack_member(self, s: StackV, name: str, e: ast.Node, env: Env) -> Any:
        size = s.type.size
        if name == "size":
            return leaf_const(size, types.Bits(32))
        if name in ("push_front", "pop_front"):
            return MethodV(s, name)
        if name == "lastIndex":
            node = expr_node("last_stack_index", None, s.node())
            return Leaf(node, types.Bits(32), "data")
        if name == "last":
            if s.union_stack:
                return self.unsupported(e, "last of a header union stack")
            idx = expr_node("last_stack_index", None, s.node())
            return HeaderV(None, s.type.elem, node=expr_node("dereference_header_stack", s.node(), idx))  # type: ignore[arg-type]
        if name == "next":
            return NextV(s)
        return self.unsupported(e, f"stack member {name}")

    def _Index(self, e: ast.Index, env: Env) -> Value:
        base = self.value(e.expr, env)
        idx = self.leaf(e.index, env)
        if isinstance(base, StackV):
            if idx.is_const:
                i = int(idx.const)
                if not 0 <= i < base.type.size:
                    return self.unsupported(e, f"stack index {i} out of range")
                if base.union_stack:
                    return base.unions[i]  # type: ignore[attr-defined]
                return base.elems[i]
            if base.union_stack:
                return self.unsupported(e, "a union stack indexed at run time")
            node = expr_node("dereference_header_stack", base.node(), as_data(idx))
            return HeaderV(None, base.type.elem, node=node)  # type: ignore[arg-type]
        if isinstance(base, StructV) and idx.is_const:
            key = f"f{int(idx.const)}"
            if key in base.fields:
                return base.fields[key]
        return self.unsupported(e, "indexing this value")

    # --------------------------------------------------------------- operators

    def _Slice(self, e: ast.Slice, env: Env) -> Value:
        v = self.leaf(e.expr, env)
        hi = int(self.const(e.hi, env))
        lo = int(self.const(e.lo, env))
        w = hi - lo + 1
        t = types.Bits(w)
        if v.is_const:
            return leaf_const((int(v.const) >> lo) & mask(w), t)
        node = as_data(v)
        if lo:
            node = expr_node(">>", node, {"type": "hexstr", "value": hex(lo)})
        return Leaf(expr_node("&", node, hexstr(mask(w), w)), t)

    def _Unary(self, e: ast.Unary, env: Env) -> Value:
        v = self.leaf(e.expr, env)
        t = self.type_of(e)
        if e.op == "!":
            if v.is_const:
                return leaf_const(not v.const, types.Bool())
            return Leaf(expr_node("not", None, as_bool(v)), types.Bool(), "bool")
        if e.op == "+":
            return v
        if types.bits_of(t) is None:
            t = v.type
        if v.is_const:
            r = -v.const if e.op == "-" else ~v.const
            if types.bits_of(t) is None:
                return Leaf(hexstr(r), types.InfInt(), "data", r)
            return leaf_const(r, t)
        if e.op == "-":
            return Leaf(self.fit(expr_node("-", hexstr(0), as_data(v)), t), t)
        if e.op == "~":
            return Leaf(self.fit(expr_node("~", None, as_data(v)), t), t)
        return self.unsupported(e, f"operator {e.op}")

    def _Binary(self, e: ast.Binary, env: Env) -> Value:
        op = e.op
        if op in ("&&", "||"):
            lv = self.leaf(e.left, env)
            if has_call(e.right) and not lv.is_const:
                return self.sink.logic_with_effects(e, lv, env)
            if lv.is_const:
                if (op == "&&" and not lv.const) or (op == "||" and lv.const):
                    return leaf_const(bool(lv.const), types.Bool())
                rv = self.leaf(e.right, env)
                if rv.is_const:
                    return leaf_const(bool(rv.const), types.Bool())
                return Leaf(as_bool(rv), types.Bool(), "bool")
            rv = self.leaf(e.right, env)
            if rv.is_const and ((op == "&&" and rv.const) or (op == "||" and not rv.const)):
                return Leaf(as_bool(lv), types.Bool(), "bool")
            jop = "and" if op == "&&" else "or"
            return Leaf(expr_node(jop, as_bool(lv), as_bool(rv)), types.Bool(), "bool")
        lt = self.type_of(e.left)
        if isinstance(types.strip_newtype(lt), (types.StructLike, types.Stack, types.Tuple)) and op in ("==", "!="):
            return self.aggregate_equality(e, env)
        lv = self.leaf(e.left, env)
        if has_call(e.right) and not lv.is_const:
            lv = self.sink.snapshot(lv, e.left)  # the right side may change it
        rv = self.leaf(e.right, env)
        return self.binop(op, lv, rv, self.type_of(e), e)

    def binop(self, op: str, lv: Leaf, rv: Leaf, t: types.Type, e: ast.Node) -> Leaf:
        """`lv op rv` for scalar operands, the result of type `t`."""
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return self.compare(op, lv, rv)
        if types.bits_of(t) is None and isinstance(types.strip_newtype(t), types.Bool) and op in ("&", "|", "^"):
            # bitwise operators on booleans
            if lv.is_const and rv.is_const:
                r = {"&": lv.const and rv.const, "|": lv.const or rv.const, "^": lv.const != rv.const}[op]
                return leaf_const(bool(r), types.Bool())
            node = expr_node(op, as_data(lv), as_data(rv))
            return Leaf(node, types.Bool(), "data")
        if op == "++":
            return self.concat(lv, rv, e)
        if types.bits_of(t) is None:
            t = lv.type if types.bits_of(lv.type) is not None else rv.type
        if lv.is_const and rv.is_const and isinstance(lv.const, int) and isinstance(rv.const, int):
            return self.fold(op, lv.const, rv.const, t, e)
        if op in ("+", "-", "*", "<<"):
            node = expr_node(op, as_data(lv), as_data(rv))
            if op == "<<" and rv.is_const and types.bits_of(t) is not None and rv.const >= types.bits_of(t).width:  # type: ignore[union-attr]
                return leaf_const(0, t)
            return Leaf(self.fit(node, t), t)
        if op == ">>":
            return Leaf(expr_node(">>", as_data(lv), as_data(rv)), t)
        if op in ("&", "|", "^"):
            return Leaf(expr_node(op, as_data(lv), as_data(rv)), t)
        if op in ("|+|", "|-|"):
            b = types.bits_of(t)
            if b is None:
                return self.unsupported(e, f"operator {op} on {t}")
            inner = expr_node("+" if op == "|+|" else "-", as_data(lv), as_data(rv))
            cast = "sat_cast" if b.signed else "usat_cast"
            return Leaf(expr_node(cast, inner, {"type": "hexstr", "value": hex(b.width)}), t)
        if op in ("/", "%") and lv.is_const and lv.const == 0:
            return leaf_const(0, t) if types.bits_of(t) is not None else Leaf(hexstr(0), types.InfInt(), "data", 0)
        if op in ("/", "%"):
            b = types.bits_of(t)
            d = rv.const if rv.is_const else None
            if b is not None and not b.signed and isinstance(d, int) and d > 0 and d & (d - 1) == 0:
                # unsigned division by a power of two: a shift or a mask
                k = d.bit_length() - 1
                if op == "/":
                    return Leaf(expr_node(">>", as_data(lv), {"type": "hexstr", "value": hex(k)}), t)
                return Leaf(expr_node("&", as_data(lv), hexstr(d - 1, b.width)), t)
            return self.unsupported(e, f"operator {op} on values not known at compile time")
        return self.unsupported(e, f"operator {op}")

    def fold(self, op: str, a: int, b: int, t: types.Type, e: ast.Node) -> Leaf:
        bt = types.bits_of(t)
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "<<":
            if b < 0 or (bt is not None and b >= bt.width) or (bt is None and b > 4096):
                if bt is None:
                    return self.unsupported(e, "a shift of an unsized constant by more than 4096")
                return leaf_const(0, t)
            r = a << b
        elif op == ">>":
            r = a >> b
        elif op == "&":
            r = a & b
        elif op == "|":
            r = a | b
        elif op == "^":
            r = a ^ b
        elif op in ("/", "%"):
            if b == 0:
                return self.unsupported(e, "division by zero")
            r = a // b if op == "/" else a % b
        elif op in ("|+|", "|-|"):
            r = a + b if op == "|+|" else a - b
            if bt is not None:
                lo, hi = ((-(1 << (bt.width - 1)), (1 << (bt.width - 1)) - 1) if bt.signed
                          else (0, mask(bt.width)))
                r = max(lo, min(hi, r))
        else:
            return self.unsupported(e, f"operator {op}")
        if bt is None:
            return Leaf(hexstr(r), types.InfInt(), "data", r)
        return leaf_const(r, t)

    def compare(self, op: str, lv: Leaf, rv: Leaf) -> Leaf:
        if lv.is_const and rv.is_const:
            a, b = lv.const, rv.const
            r = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
            return leaf_const(bool(r), types.Bool())
        if op in ("==", "!=") and (lv.kind == "bool" or rv.kind == "bool"):
            return Leaf(expr_node(op, as_data(lv), as_data(rv)), types.Bool(), "bool")
        return Leaf(expr_node(op, as_data(lv), as_data(rv)), types.Bool(), "bool")

    def concat(self, lv: Leaf, rv: Leaf, e: ast.Binary) -> Leaf:
        lb, rb = types.bits_of(lv.type), types.bits_of(rv.type)
        if lb is None or rb is None:
            return self.unsupported(e, "concatenation of unsized values")
        t = types.Bits(lb.width + rb.width, lb.signed)
        if lv.is_const and rv.is_const:
            return leaf_const(((int(lv.const) & mask(lb.width)) << rb.width) | (int(rv.const) & mask(rb.width)), t)
        left = expr_node("&", as_data(lv), hexstr(mask(lb.width), lb.width)) if not lv.is_const else \
            hexstr(int(lv.const) & mask(lb.width), lb.width)
        shifted = expr_node("<<", left, {"type": "hexstr", "value": hex(rb.width)})
        right = expr_node("&", as_data(rv), hexstr(mask(rb.width), rb.width)) if not rv.is_const else \
            hexstr(int(rv.const) & mask(rb.width), rb.width)
        node = expr_node("|", shifted, right)
        return Leaf(self.fit(node, t), t)

    def _Mux(self, e: ast.Mux, env: Env) -> Value:
        c = self.leaf(e.cond, env)
        if c.is_const:
            return self.value(e.then if c.const else e.else_, env)
        if has_call(e.then) or has_call(e.else_):
            # only the chosen branch may run its calls
            return self.sink.mux_with_effects(e, c, env)
        a = self.value(e.then, env)
        b = self.value(e.else_, env)
        if not (isinstance(a, Leaf) and isinstance(b, Leaf)):
            return self.sink.mux_aggregate(e, c, a, b, env)
        t = self.type_of(e)
        if types.bits_of(t) is None and not isinstance(types.strip_newtype(t), types.Bool):
            t = a.type if types.bits_of(a.type) is not None else b.type
        if a.kind == "bool" and b.kind == "bool":
            return Leaf(expr_node("?", a.node, b.node, as_bool(c)), types.Bool(), "bool")
        return Leaf(expr_node("?", as_data(a), as_data(b), as_bool(c)), t,
                    "data")

    def _Cast(self, e: ast.Cast, env: Env) -> Value:
        target = self.c.resolve_type(e.type, self.ctx.type_scope(env))
        v = self.value(e.expr, env)
        if not isinstance(v, Leaf):
            return v  # struct/header casts of initializers keep their value
        return self.cast(v, target, e)

    def cast(self, v: Leaf, target: types.Type, e: ast.Node) -> Leaf:
        ts = types.strip_newtype(target)
        src = types.strip_newtype(v.type)
        if isinstance(ts, types.Bool):
            if v.is_const:
                return leaf_const(bool(v.const), types.Bool())
            return Leaf(as_bool(v), types.Bool(), "bool")
        tb = types.bits_of(target)
        if tb is None:
            if isinstance(ts, (types.Enum, types.Error)) or isinstance(ts, types.InfInt):
                return Leaf(v.node, target, v.kind, v.const, v.lvalue)
            return self.unsupported(e, f"cast to {target}")
        if v.is_const:
            c = v.const
            if isinstance(c, bool):
                c = int(c)
            return leaf_const(int(c), target)
        if isinstance(src, types.Bool) or v.kind == "bool":
            node = as_data(v)
            return Leaf(node, target, "data")
        sb = types.bits_of(src)
        if sb is None:
            return Leaf(as_data(v), target, "data")
        node = v.node
        if sb.width == tb.width and sb.signed == tb.signed:
            return Leaf(node, target, "data", None, False)
        if tb.signed:
            if not sb.signed or tb.width < sb.width:
                node = self.fit(node, tb)
            # widening a signed value keeps its (sign-extended) value
        else:
            if sb.signed or tb.width < sb.width:
                node = self.fit(node, tb)
        return Leaf(node, target, "data")

    # ------------------------------------------------------------ aggregates

    def _ListExpr(self, e: ast.ListExpr, env: Env) -> Value:
        t = types.strip_newtype(self.type_of(e))
        sv = StructV(t)
        if isinstance(t, types.StructLike):
            names = [n for n, _ in t.fields]
        else:
            names = [f"f{i}" for i in range(len(e.elems))]
        elems = list(e.elems)
        for i, (n, x) in enumerate(zip(names, elems)):
            sv.fields[n] = self.ordered(self.value(x, env), x, elems[i + 1:])
        return sv

    def ordered(self, v: Value, x: ast.Expr, later: list) -> Value:
        """`v`, snapshotted when expressions evaluated after it call functions."""
        if isinstance(v, Leaf) and not v.is_const and has_call(later):
            return self.sink.snapshot(v, x)
        return v

    def _StructExpr(self, e: ast.StructExpr, env: Env) -> Value:
        t = types.strip_newtype(self.type_of(e))
        sv = StructV(t)
        later = [x for _, x in e.fields]
        for i, (n, x) in enumerate(e.fields):
            sv.fields[n] = self.ordered(self.value(x, env), x, later[i + 1:])
        return sv

    def aggregate_equality(self, e: ast.Binary, env: Env) -> Leaf:
        a = self.value(e.left, env)
        b = self.value(e.right, env)
        conds = self.equal_parts(a, b, e)
        node: Optional[dict] = None
        for c in conds:
            node = c if node is None else expr_node("and", node, c)
        if node is None:
            node = bool_node(True)
        if e.op == "!=":
            node = expr_node("not", None, node)
        return Leaf(node, types.Bool(), "bool")

    def equal_parts(self, a: Value, b: Value, e: ast.Node) -> list[dict]:
        if isinstance(a, Leaf) and isinstance(b, Leaf):
            return [self.compare("==", a, b).node]
        if isinstance(a, HeaderV) and isinstance(b, HeaderV):
            va, vb = a.valid(), b.valid()
            same_validity = expr_node("==", as_data(va), as_data(vb))
            fields = [self.compare("==", x, y).node for x, y in zip(a.leaves(), b.leaves())]
            body: Optional[dict] = None
            for f in fields:
                body = f if body is None else expr_node("and", body, f)
            if body is None:
                return [same_validity]
            # equal when both invalid, or both valid with equal fields
            both_invalid = expr_node("and", expr_node("not", None, va.node), expr_node("not", None, vb.node))
            both_valid_eq = expr_node("and", expr_node("and", va.node, vb.node), body)
            return [expr_node("or", both_invalid, both_valid_eq)]
        if isinstance(a, StructV) and isinstance(b, StructV):
            out: list[dict] = []
            for n, av in a.fields.items():
                bv = b.fields.get(n)
                if bv is None:
                    self.ctx.unsupported(e.pos, "comparison of structs with different fields")
                    continue
                out.extend(self.equal_parts(av, bv, e))
            return out
        if isinstance(a, StackV) and isinstance(b, StackV):
            out = []
            for x, y in zip(a.elems, b.elems):
                out.extend(self.equal_parts(x, y, e))
            return out
        if isinstance(a, HeaderV) and isinstance(b, InvalidV) or isinstance(a, InvalidV) and isinstance(b, HeaderV):
            h = a if isinstance(a, HeaderV) else b
            return [expr_node("not", None, h.valid().node)]  # type: ignore[union-attr]
        self.ctx.unsupported(e.pos, "comparison of these values")
        return []

    # ------------------------------------------------------------------ calls

    def _Call(self, e: ast.Call, env: Env) -> Value:
        return self.sink.call_value(e, env)


class MethodV(Value):
    """`obj.name` where `name` is a method (before the call)."""

    def __init__(self, obj: Any, name: str) -> None:
        self.obj = obj
        self.name = name


class NextV(Value):
    """`stack.next` (only meaningful in a parser's extract)."""

    def __init__(self, stack: StackV) -> None:
        self.stack = stack


class ApplyResultV(Value):
    """The result of `table.apply()` used in an expression."""

    def __init__(self, table: TableBinding, call: ast.Call) -> None:
        self.table = table
        self.call = call


class TypeSizeV(Value):
    """`types.minSizeInBits` etc. before the call."""

    def __init__(self, t: types.Type, name: str) -> None:
        self.type = t
        self.name = name


class UnionMemberOfNext(Value):
    """`unionstack.next.member` (extract target in a parser)."""

    def __init__(self, stack: StackV, member: str) -> None:
        self.stack = stack
        self.member = member


PURE_METHODS = {"isValid", "minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"}


def has_call(e: Any) -> bool:
    """Whether evaluating `e` may run a call with effects (functions, externs)."""
    if isinstance(e, ast.Call):
        c = e.callee
        if not (isinstance(c, ast.Member) and c.name in PURE_METHODS):
            return True
    if isinstance(e, (list, tuple)):
        return any(has_call(x) for x in e)
    if isinstance(e, ast.Node):
        return any(has_call(getattr(e, f)) for f in e.__dataclass_fields__ if f != "pos")
    return False
