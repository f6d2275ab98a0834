"""Compile-time constant evaluation, the part of the checker that folds
constants: declared constants, widths, slice bounds, enum values, table
sizes and constructor arguments, with P4's wrap-around at the declared
width.

`ConstEvaluator` is mixed into `checker.Checker`: evaluation needs name
resolution and expression types (a constant's type decides where it
wraps), and resolving a type needs constants (`bit<W>`), so the two call
each other through one object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from . import ast
from . import types
from .diagnostics import ErrorKind
from .exprtext import expr_text
from .scope import Scope, Symbol
from .widths import MAX_WIDTH, shortened


class ConstError(Exception):
    """An expression is not a compile-time constant."""


class ConstEvaluator:
    """Constant folding over the checker's scopes and types."""

    if TYPE_CHECKING:  # provided by checker.Checker
        glob: Scope

        def err(self, kind: ErrorKind, node: ast.Node | None, msg: str) -> None: ...
        def check_expr(self, e: ast.Expr, scope: Scope, expected: types.Type | None = None) -> types.Type: ...
        def resolve_type(self, t: ast.TypeRef | None, scope: Scope) -> types.Type: ...
        def sym_type(self, sym: Symbol) -> types.Type: ...


    def const_int(self, e: ast.Expr, scope: Scope, what: str) -> Optional[int]:
        try:
            v = self.const_value(e, scope)
        except ConstError as exc:
            self.err(ErrorKind.EXPECTED, e, f"{what} must be a compile-time constant ({exc})")
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            self.err(ErrorKind.EXPECTED, e, f"{what} must be an integer")
            return None
        return v

    def const_value(self, e: ast.Expr, scope: Scope) -> Any:
        """Evaluate a compile-time constant: int, bool, str, ("error", name),
        ("enum", Enum, member), or tuples/dicts for list/struct expressions."""
        if isinstance(e, ast.IntLit):
            return e.value if e.width is None else _wrap(e.value, e.width, e.signed)
        if isinstance(e, ast.BoolLit):
            return e.value
        if isinstance(e, ast.StringLit):
            return e.value
        if isinstance(e, ast.Name):
            sym = (self.glob if e.toplevel else scope).lookup(e.name)
            if sym is None:
                raise ConstError(f"{e.name} is not declared")
            if sym.kind == "const":
                return self.const_of_sym(sym)
            if sym.kind == "param" and sym.value is not None:
                return sym.value
            raise ConstError(f"{e.name} is not a constant")
        if isinstance(e, ast.ErrorMember):
            return ("error", e.name)
        if isinstance(e, (ast.Member, ast.TypeMember)):
            t = self._type_of_type_expr(e.expr if isinstance(e, ast.Member) else None,
                                        e.type if isinstance(e, ast.TypeMember) else None, scope)
            if isinstance(t, types.Enum):
                if e.name not in t.members:
                    raise ConstError(f"{t.name} has no member {e.name}")
                if t.base is not None:
                    return _wrap(t.values.get(e.name, 0), t.base.width, t.base.signed)
                return ("enum", t.name, e.name)
            if isinstance(e, ast.Member):
                base = self.const_value(e.expr, scope)
                if isinstance(base, dict) and e.name in base:
                    return base[e.name]
            raise ConstError("member is not a constant")
        if isinstance(e, ast.Unary):
            v = self.const_value(e.expr, scope)
            t = self.check_expr(e, scope)
            if e.op == "!":
                return not v
            if e.op == "-":
                return self._fit(-v, t)
            if e.op == "~":
                return self._fit(~v, t)
            return v
        if isinstance(e, ast.Binary):
            return self._const_binary(e, scope)
        if isinstance(e, ast.Cast):
            v = self.const_value(e.expr, scope)
            t = self.resolve_type(e.type, scope)
            bt = types.bits_of(t)
            if isinstance(t, types.Bool):
                return bool(v)
            if bt is not None and isinstance(v, (int, bool)):
                return _wrap(int(v), bt.width, bt.signed)
            return v
        if isinstance(e, ast.Mux):
            return self.const_value(e.then if self.const_value(e.cond, scope) else e.else_, scope)
        if isinstance(e, ast.Slice):
            v = self.const_value(e.expr, scope)
            bounds = self._slice_bounds(e, scope)
            if bounds is None or not isinstance(v, int) or isinstance(v, bool):
                raise ConstError("invalid slice")
            hi, lo = bounds
            return (v >> lo) & ((1 << (hi - lo + 1)) - 1)
        if isinstance(e, ast.ListExpr):
            return tuple(self.const_value(x, scope) for x in e.elems)
        if isinstance(e, ast.StructExpr):
            return {n: self.const_value(x, scope) for n, x in e.fields}
        if isinstance(e, ast.Call) and isinstance(e.callee, ast.Member) and \
                e.callee.name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
            t = self.check_expr(e.callee.expr, scope)
            if isinstance(t, types.TypeOfType):
                t = t.type
            w = types.width_of(t)
            if w is None:
                raise ConstError("size of a type without fixed width")
            return w if e.callee.name.endswith("Bits") else (w + 7) // 8
        raise ConstError(f"{type(e).__name__} is not constant")

    def _slice_bounds(self, e: ast.Slice, scope: Scope) -> Optional[tuple[int, int]]:
        """(msb, lsb) of a slice, checked in p4c's order (constant folding):
        both integers, msb >= lsb, lsb >= 0, a result width p4c supports.
        None after an error."""
        ends = []
        for x in (e.hi, e.lo):
            try:
                v = self.const_value(x, scope)
            except ConstError as exc:
                self.err(ErrorKind.EXPECTED, x, f"slice bound must be a compile-time constant ({exc})")
                return None
            if isinstance(v, bool) or not isinstance(v, int):
                self.err(ErrorKind.EXPECTED, x, f"{shortened(expr_text(x))}: expected an integer value")
                return None
            ends.append(v)
        hi, lo = ends
        if hi < lo:
            self.err(ErrorKind.EXPECTED, e, f"{shortened(expr_text(e))}: bit slicing should be specified as [msb:lsb]")
            return None
        if lo < 0:
            self.err(ErrorKind.EXPECTED, e.lo, f"{shortened(expr_text(e.lo))}: expected slice indexes to be non-negative")
            return None
        if hi - lo + 1 > MAX_WIDTH:
            self.err(ErrorKind.WIDTH, e, f"{shortened(expr_text(e))}: Compiler only supports widths up to {MAX_WIDTH}")
            return None
        return hi, lo

    def _fit(self, v: int, t: types.Type) -> int:
        bt = types.bits_of(t)
        return _wrap(v, bt.width, bt.signed) if bt is not None else v

    def _const_binary(self, e: ast.Binary, scope: Scope) -> Any:
        op = e.op
        if op == "&&":
            return bool(self.const_value(e.left, scope)) and bool(self.const_value(e.right, scope))
        if op == "||":
            return bool(self.const_value(e.left, scope)) or bool(self.const_value(e.right, scope))
        a = self.const_value(e.left, scope)
        b = self.const_value(e.right, scope)
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if not isinstance(a, int) or not isinstance(b, int):
            raise ConstError(f"operator {op} on non-integers")
        t = self.check_expr(e, scope)
        if op == "++":
            rt = types.bits_of(self.check_expr(e.right, scope))
            if rt is None:
                raise ConstError("concatenation of an unsized value")
            return self._fit((a << rt.width) | (b & ((1 << rt.width) - 1)), t)
        ops = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: _div(a, b), "%": lambda: _mod(a, b),
            "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
            "|": lambda: a | b, "^": lambda: a ^ b,
            "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
        }
        if op == "<<":
            return self._const_shl(e, a, b, t)
        if op in ops:
            v = ops[op]()
            return v if isinstance(v, bool) else self._fit(v, t)
        if op in ("|+|", "|-|"):
            bt = types.bits_of(t)
            v = a + b if op == "|+|" else a - b
            if bt is None:
                return v
            lo, hi = ((-(1 << (bt.width - 1)), (1 << (bt.width - 1)) - 1) if bt.signed
                      else (0, (1 << bt.width) - 1))
            return max(lo, min(hi, v))
        raise ConstError(f"operator {op} is not constant")

    def _const_shl(self, e: ast.Binary, a: int, b: int, t: types.Type) -> int:
        """a << b without building a number wider than the result can be: a
        sized result keeps its width (0 once every bit is shifted out); an
        unsized one is refused past MAX_WIDTH bits, as p4c does."""
        bt = types.bits_of(t)
        if bt is not None:
            return 0 if b >= bt.width else self._fit(a << b, t)
        if a and b + a.bit_length() > MAX_WIDTH:
            self.err(ErrorKind.UNSUPPORTED, e, f"{shortened(expr_text(e))}: Compiler only supports "
                                               f"widths up to {MAX_WIDTH}")
            return 0
        return a << b

    def const_of_sym(self, sym: Symbol) -> Any:
        if sym.value is None:
            d = sym.decl
            assert isinstance(d, ast.ConstDecl)
            t = self.resolve_type(d.type, self._scope_hint(sym))
            sym.type = t
            sym.value = "<evaluating>"
            try:
                v = self.const_value(d.value, self._scope_hint(sym))
            except ConstError as exc:
                self.err(ErrorKind.EXPECTED, d.value, f"{d.name}: initializer is not a compile-time constant ({exc})")
                v = 0
            bt = types.bits_of(t)
            if bt is not None and isinstance(v, int) and not isinstance(v, bool):
                v = _wrap(v, bt.width, bt.signed)
            sym.value = v
        if sym.value == "<evaluating>":
            raise ConstError(f"{sym.name} depends on itself")
        return sym.value

    def _scope_hint(self, sym: Symbol) -> Scope:
        return sym.scope or self.glob

    def _type_of_type_expr(self, expr: ast.Expr | None, tref: ast.TypeRef | None,
                           scope: Scope) -> Optional[types.Type]:
        if tref is not None:
            return self.resolve_type(tref, scope)
        if isinstance(expr, ast.Name):
            sym = (self.glob if expr.toplevel else scope).lookup(expr.name)
            if sym is not None and sym.kind in ("type", "typevar"):
                return self.sym_type(sym)
        return None


def _wrap(v: int, width: int, signed: bool) -> int:
    if width <= 0:
        return 0
    v &= (1 << width) - 1
    if signed and v >> (width - 1):
        v -= 1 << width
    return v


def _div(a: int, b: int) -> int:
    if b == 0:
        raise ConstError("division by zero")
    return a // b


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ConstError("division by zero")
    return a % b
