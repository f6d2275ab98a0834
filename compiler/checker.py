"""Name resolution, type inference and checking.

One `Checker` per program.  It builds the global scope from the top-level
declarations, resolves written types (`ast.Type*`) to semantic types
(`types.*`), evaluates compile-time constants (consteval.py, mixed in),
and types every expression it is asked about, remembering the result in `expr_types`, a `TypeMap` that
keeps it across rewrites of the node.

It is deliberately lenient where P4 allows implicit conversions (untyped
integer literals, serializable enums and their underlying type) and strict
where a program is clearly wrong: undefined names, bit widths that differ in
an assignment or a binary operation, writes to `in` parameters or constants,
non-l-values passed to `out`/`inout` parameters.
"""

from __future__ import annotations

from typing import Optional

from . import ast
from . import types
from .diagnostics import Diagnostics, ErrorKind
from .consteval import ConstError, ConstEvaluator
from .scope import Scope, Symbol
from .typemap import TypeMap
from .exprtext import expr_text
from .widths import shortened, type_width_error


HEADER_METHODS = {"isValid": types.Bool(), "setValid": types.Void(), "setInvalid": types.Void()}
STACK_METHODS = {"push_front": types.Void(), "pop_front": types.Void()}


class Checker(ConstEvaluator):
    def __init__(self, program: ast.Program, diags: Diagnostics):
        self.program = program
        self.diags = diags
        self.glob = Scope()
        self.expr_types = TypeMap()    # expression -> type
        self.errors: list[str] = []          # error members in declaration order
        self.match_kinds: list[str] = []
        self._type_cache = TypeMap()   # type declaration -> type
        self._resolving: set[int] = set()   # nids of declarations being resolved
        self._declare_globals()

    # ------------------------------------------------------------------ utils

    def err(self, kind: ErrorKind, node: ast.Node | None, msg: str) -> None:
        self.diags.error(kind, node.pos if node is not None else None, msg)

    def type_of(self, expr: ast.Expr) -> types.Type:
        return self.expr_types.of(expr)

    # ---------------------------------------------------------------- globals

    def _declare_globals(self) -> None:
        for d in self.program.decls:
            self.declare(self.glob, d)

    def declare(self, scope: Scope, d: ast.Node) -> None:
        """Enter a declaration into `scope`."""
        if isinstance(d, ast.ErrorDecl):
            for m in d.members:
                if m not in self.errors:
                    self.errors.append(m)
            return
        if isinstance(d, ast.MatchKindDecl):
            for m in d.members:
                if m not in self.match_kinds:
                    self.match_kinds.append(m)
            return
        sym: Symbol
        if isinstance(d, (ast.HeaderDecl, ast.HeaderUnionDecl, ast.StructDecl, ast.EnumDecl,
                          ast.TypedefDecl)):
            sym = Symbol("type", d.name, d)
        elif isinstance(d, ast.ExternDecl):
            sym = Symbol("extern", d.name, d)
        elif isinstance(d, ast.ExternFunctionDecl):
            sym = Symbol("function", d.name, d, decls=[d])
        elif isinstance(d, ast.FunctionDecl):
            sym = Symbol("function", d.name, d, decls=[d])
        elif isinstance(d, ast.ActionDecl):
            sym = Symbol("action", d.name, d, owner=scope.owner)
        elif isinstance(d, (ast.ParserDecl, ast.ControlDecl, ast.ParserTypeDecl,
                            ast.ControlTypeDecl, ast.PackageDecl)):
            sym = Symbol("block", d.name, d)
        elif isinstance(d, ast.ConstDecl):
            sym = Symbol("const", d.name, d)
        elif isinstance(d, ast.VarDecl):
            sym = Symbol("var", d.name, d)
        elif isinstance(d, ast.Instantiation):
            sym = Symbol("instance", d.name, d, owner=scope.owner)
        elif isinstance(d, ast.TableDecl):
            sym = Symbol("table", d.name, d, owner=scope.owner)
        elif isinstance(d, ast.ValueSetDecl):
            sym = Symbol("value_set", d.name, d, owner=scope.owner)
        elif isinstance(d, ast.Param):
            sym = Symbol("param", d.name, d, direction=d.direction)
        elif isinstance(d, ast.ParserState):
            sym = Symbol("state", d.name, d)
        else:
            self.err(ErrorKind.UNSUPPORTED, d, f"unsupported declaration {type(d).__name__}")
            return
        sym.scope = scope
        clash = scope.declare(sym)
        if clash is not None and not self._compatible_redeclaration(clash, sym):
            self.err(ErrorKind.DUPLICATE, d, f"{sym.name}: duplicate declaration")

    @staticmethod
    def _compatible_redeclaration(old: Symbol, new: Symbol) -> bool:
        # A type declaration (parser/control type) followed by the same name is
        # an error in P4; but identical typedefs from two includes are harmless.
        return (old.decl is new.decl) or (
            old.kind == new.kind == "type" and old.decl == new.decl)

    # ------------------------------------------------------------------ types

    def resolve_type(self, t: ast.TypeRef | None, scope: Scope) -> types.Type:
        if t is None:
            return types.Unknown()
        if isinstance(t, ast.TypeBits):
            w = self.const_int(t.width, scope, "bit width")
            if w is None:
                return types.Unknown()
            if (too_wide := type_width_error(t, w)) is not None:
                self.err(ErrorKind.WIDTH, *too_wide)
                return types.Unknown()
            if w <= 0 and not (w == 0 and not t.signed):
                self.err(ErrorKind.WIDTH, t, f"invalid width {w} for {'int' if t.signed else 'bit'}")
                return types.Unknown()
            return types.Bits(w, t.signed)
        if isinstance(t, ast.TypeVarbit):
            w = self.const_int(t.width, scope, "varbit width")
            if w is not None and (too_wide := type_width_error(t, w)) is not None:
                self.err(ErrorKind.WIDTH, *too_wide)
                return types.Unknown()
            return types.Varbit(w) if w is not None else types.Unknown()
        if isinstance(t, ast.TypeBool):
            return types.Bool()
        if isinstance(t, ast.TypeError_):
            return types.Error()
        if isinstance(t, ast.TypeString):
            return types.String()
        if isinstance(t, ast.TypeInt):
            return types.InfInt()
        if isinstance(t, ast.TypeVoid):
            return types.Void()
        if isinstance(t, ast.TypeDontCare):
            return types.DontCareT()
        if isinstance(t, ast.TypeMatchKind):
            return types.MatchKind()
        if isinstance(t, ast.TypeStack):
            elem = self.resolve_type(t.elem, scope)
            n = self.const_int(t.size, scope, "stack size")
            return types.Stack(elem, n if n is not None else 0)
        if isinstance(t, ast.TypeTuple):
            return types.Tuple(tuple(self.resolve_type(e, scope) for e in t.elems))
        if isinstance(t, ast.TypeList):
            return types.Tuple((self.resolve_type(t.elem, scope),))
        if isinstance(t, ast.TypeSpecialized):
            args = tuple(self.resolve_type(a, scope) for a in t.args)
            base = self._lookup_type_sym(t.base, scope)
            if base is None:
                return types.Unknown()
            return self._specialize(base, args, t)
        if isinstance(t, ast.TypeName):
            sym = self._lookup_type_sym(t, scope)
            if sym is None:
                return types.Unknown()
            return self.sym_type(sym)
        self.err(ErrorKind.UNSUPPORTED, t, f"unsupported type {type(t).__name__}")
        return types.Unknown()

    def _lookup_type_sym(self, t: ast.TypeName, scope: Scope) -> Optional[Symbol]:
        sym = (self.glob if t.toplevel else scope).lookup(t.name)
        if sym is None:
            self.err(ErrorKind.UNDEFINED, t, f"{t.name}: type not declared")
            return None
        if sym.kind not in ("type", "extern", "block", "typevar"):
            self.err(ErrorKind.TYPE, t, f"{t.name} is not a type")
            return None
        return sym

    def _specialize(self, sym: Symbol, args: tuple[types.Type, ...], where: ast.Node) -> types.Type:
        d = sym.decl
        if isinstance(d, ast.ExternDecl):
            return types.Extern(d, args)
        if isinstance(d, (ast.ParserDecl, ast.ControlDecl, ast.ParserTypeDecl,
                          ast.ControlTypeDecl, ast.PackageDecl)):
            return types.Block(d, args)
        if isinstance(d, (ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl)) and d.type_params:
            return self._struct_type(d, dict(zip(d.type_params, args)))
        self.err(ErrorKind.TYPE, where, f"{sym.name} is not a generic type")
        return types.Unknown()

    def sym_type(self, sym: Symbol) -> types.Type:
        """The semantic type a type symbol denotes (computed once)."""
        if sym.kind == "typevar":
            return sym.type or types.TypeVar(sym.name)
        d = sym.decl
        key = d.nid
        cached = self._type_cache.get(d)
        if cached is not None:
            return cached
        if key in self._resolving:
            self.err(ErrorKind.TYPE, d, f"{sym.name}: recursive type")
            return types.Unknown()
        self._resolving.add(key)
        try:
            t = self._compute_decl_type(d)
        finally:
            self._resolving.discard(key)
        self._type_cache[d] = t
        return t

    def _compute_decl_type(self, d: ast.Node) -> types.Type:
        if isinstance(d, (ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl)):
            return self._struct_type(d, {})
        if isinstance(d, ast.EnumDecl):
            if d.type is None:
                return types.Enum(d.name, [m.name for m in d.members], decl=d)
            base = self.resolve_type(d.type, self.glob)
            if not isinstance(base, types.Bits):
                self.err(ErrorKind.TYPE, d, f"{d.name}: serializable enum needs a bit<> or int<> type")
                base = types.Bits(32)
            values: dict[str, int] = {}
            for m in d.members:
                if m.value is None:
                    self.err(ErrorKind.TYPE, m, f"{d.name}.{m.name}: serializable enum member needs a value")
                    continue
                v = self.const_int(m.value, self.glob, "enum value")
                values[m.name] = v if v is not None else 0
            return types.Enum(d.name, [m.name for m in d.members], base, values, decl=d)
        if isinstance(d, ast.TypedefDecl):
            base = self.resolve_type(d.type, self.glob)
            return types.NewType(d.name, base, decl=d) if d.newtype else base
        if isinstance(d, ast.ExternDecl):
            return types.Extern(d)
        if isinstance(d, (ast.ParserDecl, ast.ControlDecl, ast.ParserTypeDecl,
                          ast.ControlTypeDecl, ast.PackageDecl)):
            return types.Block(d)
        return types.Unknown()

    def _struct_type(self, d, bindings: dict[str, types.Type]) -> types.StructLike:
        kind = {ast.HeaderDecl: "header", ast.StructDecl: "struct",
                ast.HeaderUnionDecl: "header_union"}[type(d)]
        scope = self.glob
        name = d.name
        if d.type_params:
            scope = Scope(self.glob)
            for tp in d.type_params:
                scope.declare(Symbol("typevar", tp, type=bindings.get(tp, types.TypeVar(tp))))
            if bindings:
                name = f"{d.name}<{', '.join(str(bindings.get(tp)) for tp in d.type_params)}>"
        st = types.StructLike(kind, name, decl=d)
        if not bindings:
            self._type_cache[d] = st  # allow self-reference errors to surface, not loop
        seen: set[str] = set()
        for f in d.fields:
            if f.name in seen:
                self.err(ErrorKind.DUPLICATE, f, f"{d.name}.{f.name}: duplicate field")
                continue
            seen.add(f.name)
            ft = self.resolve_type(f.type, scope)
            if kind == "header" and not self._valid_header_field(ft):
                self.err(ErrorKind.TYPE, f, f"{d.name}.{f.name}: a header field cannot have type {ft}")
            st.fields.append((f.name, ft))
            st.field_annotations[f.name] = f.annotations
        return st

    @staticmethod
    def _valid_header_field(t: types.Type) -> bool:
        t = types.strip_newtype(t)
        if isinstance(t, (types.Bits, types.Varbit, types.Bool, types.Unknown, types.TypeVar)):
            return True
        if isinstance(t, types.Enum) and t.base is not None:
            return True
        return isinstance(t, types.StructLike) and t.kind == "struct" and all(
            Checker._valid_header_field(ft) for _, ft in t.fields)

    # ------------------------------------------------------------ expressions

    def check_expr(self, e: ast.Expr, scope: Scope, expected: types.Type | None = None) -> types.Type:
        cached = self.expr_types.get(e)
        if cached is not None and expected is None:
            return cached
        t = self._check_expr(e, scope, expected)
        self.expr_types[e] = t
        return t

    def _check_expr(self, e: ast.Expr, scope: Scope, expected: types.Type | None) -> types.Type:
        if isinstance(e, ast.IntLit):
            if e.width is not None:
                return types.Bits(e.width, e.signed)
            if expected is not None and types.bits_of(expected) is not None and not isinstance(
                    types.strip_newtype(expected), types.Bool):
                return expected if not isinstance(expected, types.Enum) else types.bits_of(expected)
            return types.InfInt()
        if isinstance(e, ast.BoolLit):
            return types.Bool()
        if isinstance(e, ast.StringLit):
            return types.String()
        if isinstance(e, ast.Name):
            return self._check_name(e, scope)
        if isinstance(e, ast.ErrorMember):
            if e.name not in self.errors:
                self.err(ErrorKind.UNDEFINED, e, f"error.{e.name}: no such error")
            return types.Error()
        if isinstance(e, ast.TypeMember):
            t = self.resolve_type(e.type, scope)
            if isinstance(t, types.Block) and e.name == "apply":
                # direct type invocation: `Inner.apply(...)` instantiates Inner
                return types.Function(ast.FunctionProto(name="apply"), owner=t)
            return self._member_of_type(t, e.name, e)
        if isinstance(e, ast.Member):
            return self._check_member(e, scope)
        if isinstance(e, ast.Index):
            bt = self.check_expr(e.expr, scope)
            self.check_expr(e.index, scope)
            if isinstance(bt, types.Stack):
                return bt.elem
            if isinstance(bt, types.Tuple):
                try:
                    i = self.const_value(e.index, scope)
                    return bt.elems[i]
                except (ConstError, IndexError, TypeError):
                    pass
            if not isinstance(bt, types.Unknown):
                self.err(ErrorKind.TYPE, e, f"cannot index a value of type {bt}")
            return types.Unknown()
        if isinstance(e, ast.Slice):
            bt = self.check_expr(e.expr, scope)
            bounds = self._slice_bounds(e, scope)
            b = types.bits_of(bt)
            if isinstance(bt, types.InfInt):
                return types.Bits(bounds[0] - bounds[1] + 1) if bounds else types.Unknown()
            if b is None or isinstance(types.strip_newtype(bt), types.Bool):
                if not isinstance(bt, types.Unknown):
                    self.err(ErrorKind.TYPE, e, f"cannot slice a value of type {bt}")
                return types.Unknown()
            if bounds is None:
                return types.Unknown()
            hi, lo = bounds
            if hi >= b.width:
                self.err(ErrorKind.WIDTH, e, f"slice [{hi}:{lo}] out of range for {bt}")
                return types.Unknown()
            return types.Bits(hi - lo + 1)
        if isinstance(e, ast.Unary):
            t = self.check_expr(e.expr, scope, expected)
            if e.op == "!":
                if not isinstance(t, (types.Bool, types.Unknown)):
                    self.err(ErrorKind.TYPE, e, f"operator ! needs a bool, not {t}")
                return types.Bool()
            if isinstance(types.strip_newtype(t), types.Bool):
                self.err(ErrorKind.TYPE, e, f"operator {e.op} cannot be applied to bool")
                return types.Unknown()
            return t
        if isinstance(e, ast.Binary):
            return self._check_binary(e, scope, expected)
        if isinstance(e, ast.Mux):
            c = self.check_expr(e.cond, scope, types.Bool())
            if not isinstance(c, (types.Bool, types.Unknown)):
                self.err(ErrorKind.TYPE, e.cond, f"condition must be bool, not {c}")
            a = self.check_expr(e.then, scope, expected)
            b = self.check_expr(e.else_, scope, expected if isinstance(a, types.InfInt) else a)
            if isinstance(a, types.InfInt) and not isinstance(b, types.InfInt):
                a = self.check_expr(e.then, scope, b)
            return self._unify(a, b, e, "?:")
        if isinstance(e, ast.Cast):
            target = self.resolve_type(e.type, scope)
            self.check_expr(e.expr, scope, target if isinstance(target, (types.StructLike, types.Tuple)) else None)
            return target
        if isinstance(e, ast.Call):
            return self._check_call(e, scope, expected)
        if isinstance(e, ast.ConstructorCall):
            t = self.resolve_type(e.type, scope)
            for a in e.args:
                if a.value is not None:
                    self.check_expr(a.value, scope)
            return t
        if isinstance(e, ast.ListExpr):
            if isinstance(expected, types.StructLike):
                fts = [ft for _, ft in expected.fields]
                if len(fts) != len(e.elems):
                    self.err(ErrorKind.TYPE, e, f"{len(e.elems)} values for {expected} with {len(fts)} fields")
                for x, ft in zip(e.elems, fts):
                    self.check_expr(x, scope, ft)
                return expected
            if isinstance(expected, types.Tuple) and len(expected.elems) == len(e.elems):
                for x, ft in zip(e.elems, expected.elems):
                    self.check_expr(x, scope, ft)
                return expected
            return types.ListT(tuple(self.check_expr(x, scope) for x in e.elems))
        if isinstance(e, ast.StructExpr):
            target = self.resolve_type(e.type, scope) if e.type is not None else expected
            if isinstance(target, types.StructLike):
                for n, x in e.fields:
                    ft = target.field_type(n)
                    if ft is None:
                        self.err(ErrorKind.UNDEFINED, x, f"{target} has no field {n}")
                        self.check_expr(x, scope)
                    else:
                        self.check_expr(x, scope, ft)
                return target
            return types.StructInit(tuple((n, self.check_expr(x, scope)) for n, x in e.fields))
        if isinstance(e, ast.InvalidExpr):
            return expected or types.Unknown()
        if isinstance(e, (ast.DontCare, ast.Default)):
            return types.DontCareT()
        if isinstance(e, ast.Mask):
            a = self.check_expr(e.value, scope, expected)
            self.check_expr(e.mask, scope, a if not isinstance(a, types.InfInt) else expected)
            return a
        if isinstance(e, ast.Range):
            a = self.check_expr(e.lo, scope, expected)
            self.check_expr(e.hi, scope, a if not isinstance(a, types.InfInt) else expected)
            return a
        self.err(ErrorKind.UNSUPPORTED, e, f"unsupported expression {type(e).__name__}")
        return types.Unknown()

    def _check_name(self, e: ast.Name, scope: Scope) -> types.Type:
        sym = (self.glob if e.toplevel else scope).lookup(e.name)
        if sym is None:
            self.err(ErrorKind.UNDEFINED, e, f"{e.name}: not declared")
            return types.Unknown()
        return self.symbol_value_type(sym, e)

    def symbol_value_type(self, sym: Symbol, where: ast.Node) -> types.Type:
        k = sym.kind
        if k in ("var", "param"):
            if sym.type is None:
                sym.type = self.resolve_type(sym.decl.type, self._decl_scope(sym))  # type: ignore[union-attr]
            return sym.type
        if k == "const":
            if sym.type is None:
                try:
                    self.const_of_sym(sym)
                except ConstError:
                    pass
            return sym.type or types.Unknown()
        if k == "instance":
            if sym.type is None:
                d = sym.decl
                sym.type = self.resolve_type(d.type, self._decl_scope(sym))  # type: ignore[union-attr]
            return sym.type
        if k == "table":
            return types.Table(sym.decl)  # type: ignore[arg-type]
        if k == "action":
            return types.Action(sym.decl)  # type: ignore[arg-type]
        if k == "value_set":
            if sym.type is None:
                sym.type = self.resolve_type(sym.decl.type, self._decl_scope(sym))  # type: ignore[union-attr]
            return sym.type
        if k in ("type", "typevar", "extern", "block"):
            return types.TypeOfType(self.sym_type(sym) if k != "block" else types.Block(sym.decl))
        if k == "function":
            return types.Function(_proto_of(sym.decls[0]))
        if k == "state":
            return types.Void()
        return types.Unknown()

    def check_param(self, p: ast.Param, scope: Scope, in_action: bool) -> None:
        """p4c: a parameter of type int must be directionless, and an
        action cannot have one at all."""
        sym = scope.local(p.name)
        if sym is None or sym.decl is not p:
            return
        if not isinstance(self.symbol_value_type(sym, p), types.InfInt):
            return
        if p.direction:
            self.diags.error(ErrorKind.TYPE, p.where_named, f"{p.name}: parameters with type int must be directionless")
        elif in_action:
            self.diags.error(ErrorKind.TYPE, p.where_named, f"{p.name}: actions cannot have parameters with type int")

    def _decl_scope(self, sym: Symbol) -> Scope:
        return sym.scope or self.glob

    def _member_of_type(self, t: types.Type, name: str, e: ast.Node) -> types.Type:
        if isinstance(t, types.Enum):
            if name not in t.members:
                self.err(ErrorKind.UNDEFINED, e, f"{t.name} has no member {name}")
            return t
        if isinstance(t, types.Error):
            if name not in self.errors:
                self.err(ErrorKind.UNDEFINED, e, f"error.{name}: no such error")
            return types.Error()
        if isinstance(t, types.Unknown):
            return t
        if name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
            return types.Function(ast.FunctionProto(name=name, return_type=ast.TypeInt()), owner=t)
        self.err(ErrorKind.TYPE, e, f"{t} has no member {name}")
        return types.Unknown()

    def _check_member(self, e: ast.Member, scope: Scope) -> types.Type:
        bt = self.check_expr(e.expr, scope)
        if isinstance(bt, types.TypeOfType):
            if isinstance(bt.type, types.Block) and e.name == "apply":
                return types.Function(ast.FunctionProto(name="apply"), owner=bt.type)
            return self._member_of_type(bt.type, e.name, e)
        if isinstance(bt, types.StructLike):
            ft = bt.field_type(e.name)
            if ft is not None:
                return ft
            if bt.kind != "struct" and e.name in HEADER_METHODS:
                return types.Function(ast.FunctionProto(name=e.name), owner=bt)
            if e.name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
                return types.Function(ast.FunctionProto(name=e.name, return_type=ast.TypeInt()), owner=bt)
            self.err(ErrorKind.UNDEFINED, e, f"{bt} has no field {e.name}")
            return types.Unknown()
        if isinstance(bt, types.Stack):
            if e.name in ("next", "last"):
                return bt.elem
            if e.name in ("size", "lastIndex", "nextIndex"):
                return types.Bits(32)
            if e.name in STACK_METHODS:
                return types.Function(ast.FunctionProto(name=e.name), owner=bt)
            self.err(ErrorKind.UNDEFINED, e, f"header stack has no member {e.name}")
            return types.Unknown()
        if isinstance(bt, types.Extern):
            methods = [m for m in bt.decl.methods if m.name == e.name and m.return_type is not None]
            if not methods:
                self.err(ErrorKind.UNDEFINED, e, f"extern {bt.name} has no method {e.name}")
                return types.Unknown()
            return types.Function(methods[0], owner=bt)
        if isinstance(bt, (types.Table, types.Block)) and e.name == "apply":
            return types.Function(ast.FunctionProto(name="apply"), owner=bt)
        if isinstance(bt, types.ApplyResult):
            if e.name in ("hit", "miss"):
                return types.Bool()
            if e.name == "action_run":
                return types.ActionEnum(bt.table)
        if isinstance(bt, types.Unknown):
            return bt
        self.err(ErrorKind.UNDEFINED, e, f"{bt} has no member {e.name}")
        return types.Unknown()

    def _check_binary(self, e: ast.Binary, scope: Scope, expected: types.Type | None) -> types.Type:
        op = e.op
        if op in ("&&", "||"):
            for side in (e.left, e.right):
                t = self.check_expr(side, scope, types.Bool())
                if not isinstance(t, (types.Bool, types.Unknown)):
                    self.err(ErrorKind.TYPE, side, f"operator {op} needs bool operands, not {t}")
            return types.Bool()
        if op in ("<<", ">>"):
            self._check_shift(e, scope)
            return self.check_expr(e.left, scope, expected)
        if op == "++":
            lt = self.check_expr(e.left, scope)
            rt = self.check_expr(e.right, scope)
            lb, rb = types.bits_of(lt), types.bits_of(rt)
            if isinstance(lt, types.Unknown) or isinstance(rt, types.Unknown):
                return types.Unknown()
            if lb is None or rb is None or isinstance(lt, types.InfInt) or isinstance(rt, types.InfInt):
                self.err(ErrorKind.TYPE, e, f"operator ++ needs sized bit-strings, not {lt} and {rt}")
                return types.Unknown()
            return types.Bits(lb.width + rb.width, lb.signed)
        cmp = op in ("==", "!=", "<", "<=", ">", ">=")
        lt = self.check_expr(e.left, scope, None if cmp else expected)
        rt = self.check_expr(e.right, scope, lt if not isinstance(lt, (types.InfInt, types.Unknown)) else (None if cmp else expected))
        if isinstance(lt, types.InfInt) and not isinstance(rt, (types.InfInt, types.Unknown)):
            lt = self.check_expr(e.left, scope, rt)
        t = self._unify(lt, rt, e, op)
        if cmp:
            return types.Bool()
        if isinstance(types.strip_newtype(t), types.Bool) and op not in ("&", "|", "^"):
            self.err(ErrorKind.TYPE, e, f"operator {op} cannot be applied to bool")
        if isinstance(t, types.Enum):
            return t.base or t
        return t

    def _check_shift(self, e: ast.Binary, scope: Scope) -> None:
        """p4c's rules for `<<` and `>>`: the amount is a bit<S> (or a
        serializable enum of one) or a constant; an unsized left operand
        needs a constant amount (the result would be an int of unknown
        width)."""
        lt = self.check_expr(e.left, scope)
        rt = self.check_expr(e.right, scope)
        if isinstance(types.strip_newtype(lt), types.Bool):
            self.err(ErrorKind.TYPE, e, "cannot shift a bool")
        amount = rt.base if isinstance(rt, types.Enum) and rt.base is not None else rt
        if isinstance(amount, (types.Unknown, types.TypeVar)):
            return
        if isinstance(amount, types.Bool):
            self.err(ErrorKind.TYPE, e.right, f"cannot shift by a value of type {rt}")
        elif isinstance(amount, types.Bits):
            if amount.signed:
                self.err(ErrorKind.TYPE, e.right, "shift amount must be unsigned")
        elif not (isinstance(amount, types.InfInt) and self._is_constant(e.right, scope)):
            self.err(ErrorKind.TYPE, e.right,
                     f"{shortened(expr_text(e.right))}: The right operand of shift must be either an "
                     "expression of type bit<S> or a compile-time known value that is a non-negative "
                     f"integer, but is {rt}")
            return
        if isinstance(lt, types.InfInt) and not isinstance(rt, types.InfInt) and not self._is_constant(e.right, scope):
            self.err(ErrorKind.TYPE, e,
                     f"{shortened(expr_text(e))}: shift result type is arbitrary-precision int, but right "
                     "operand is not constant; width of left operand of shift needs to be specified or "
                     "both operands need to be constant")

    def _is_constant(self, e: ast.Expr, scope: Scope) -> bool:
        try:
            self.const_value(e, scope)
        except ConstError:
            return False
        return True

    def _unify(self, a: types.Type, b: types.Type, e: ast.Node, op: str) -> types.Type:
        if isinstance(a, types.Unknown) or isinstance(b, types.Unknown):
            return a if isinstance(b, types.Unknown) else b
        if a == b:
            return a
        if isinstance(a, types.InfInt):
            return b
        if isinstance(b, types.InfInt):
            return a
        ab, bb = types.bits_of(a), types.bits_of(b)
        if isinstance(a, (types.Bool,)) or isinstance(b, (types.Bool,)):
            self.err(ErrorKind.TYPE, e, f"operator {op}: cannot combine {a} and {b}")
            return types.Unknown()
        if ab is not None and bb is not None:
            if ab != bb:
                self.err(ErrorKind.WIDTH, e, f"operator {op}: operands have different types {a} and {b} (use a cast)")
                return types.Unknown()
            return ab if isinstance(a, types.Enum) else a
        if isinstance(a, (types.ListT, types.StructInit)):
            return b
        if isinstance(b, (types.ListT, types.StructInit)):
            return a
        if isinstance(a, types.DontCareT):
            return b
        if isinstance(b, types.DontCareT):
            return a
        if isinstance(a, types.TypeVar) or isinstance(b, types.TypeVar):
            return b if isinstance(a, types.TypeVar) else a
        self.err(ErrorKind.TYPE, e, f"operator {op}: cannot combine {a} and {b}")
        return types.Unknown()

    # ------------------------------------------------------------------ calls

    def _check_call(self, e: ast.Call, scope: Scope, expected: types.Type | None) -> types.Type:
        callee = e.callee
        ct = self.check_expr(callee, scope) if not isinstance(callee, ast.Name) else None
        if isinstance(callee, ast.Name):
            sym = (self.glob if callee.toplevel else scope).lookup(callee.name)
            if sym is None:
                self.err(ErrorKind.UNDEFINED, callee, f"{callee.name}: not declared")
                self._check_args_loose(e, scope)
                return types.Unknown()
            if sym.kind == "action":
                self.expr_types[callee] = types.Action(sym.decl)  # type: ignore[arg-type]
                self._check_action_call(e, sym.decl, scope)  # type: ignore[arg-type]
                return types.Void()
            if sym.kind == "function":
                proto = self._pick_overload(sym.decls, e, callee.name)
                self.expr_types[callee] = types.Function(proto)
                return self._call_proto(proto, e, scope, {}, expected)
            if sym.kind in ("type", "extern", "block"):
                # a constructor call written as a call: Type(args)
                self._check_args_loose(e, scope)
                return self.sym_type(sym) if sym.kind != "block" else types.Block(sym.decl)
            self.err(ErrorKind.TYPE, callee, f"{callee.name} is not callable")
            self._check_args_loose(e, scope)
            return types.Unknown()
        if isinstance(ct, types.Function):
            owner = ct.owner
            if isinstance(owner, types.Extern) and isinstance(callee, ast.Member):
                methods = [m for m in owner.decl.methods if m.name == callee.name and m.return_type is not None]
                proto = self._pick_overload(methods, e, f"{owner.name}.{callee.name}")
                bindings = dict(zip(owner.decl.type_params, owner.args))
                self.expr_types[callee] = types.Function(proto, owner)
                return self._call_proto(proto, e, scope, bindings, expected)
            if isinstance(owner, types.Table):
                self._expect_args(e, 0, "apply")
                return types.ApplyResult(owner.decl.name)
            if isinstance(owner, types.Block):
                params = owner.decl.params  # type: ignore[attr-defined]
                self._check_args(e, params, scope, {}, f"{owner.name}.apply")
                return types.Void()
            if isinstance(owner, types.StructLike):
                if callee.name in HEADER_METHODS:  # type: ignore[union-attr]
                    self._expect_args(e, 0, callee.name)  # type: ignore[union-attr]
                    return HEADER_METHODS[callee.name]  # type: ignore[union-attr]
                return types.InfInt()
            if isinstance(owner, types.Stack):
                self._expect_args(e, 1, callee.name)  # type: ignore[union-attr]
                for a in e.args:
                    if a.value is not None:
                        self.check_expr(a.value, scope)
                return types.Void()
            if owner is not None and callee.name.startswith(("min", "max")):  # type: ignore[union-attr]
                return types.InfInt()
        if not isinstance(ct, types.Unknown):
            self.err(ErrorKind.TYPE, e, "expression is not callable")
        self._check_args_loose(e, scope)
        return types.Unknown()

    def _check_action_call(self, e: ast.Call, decl: ast.ActionDecl, scope: Scope) -> None:
        """A direct action call: not in a parser, and every parameter gets
        an argument (only a table's action list may leave some to the
        control plane)."""
        if _inside_parser(scope):
            self.err(ErrorKind.TYPE, e, f"{shortened(expr_text(e))}: Action calls are not allowed within parsers")
        self._check_args(e, decl.params, scope, {}, decl.name, allow_fewer=True)
        named = {a.name for a in e.args if a.name is not None}
        positional = sum(1 for a in e.args if a.name is None)
        for i, p in enumerate(decl.params):
            if i >= positional and p.name not in named and p.default is None and not _is_optional(p):
                self.err(ErrorKind.TYPE, e, f"{shortened(expr_text(e))}: No argument supplied for {p.name}")
                break

    def _expect_args(self, e: ast.Call, n: int, what: str) -> None:
        if len(e.args) != n:
            self.err(ErrorKind.TYPE, e, f"{what}: expected {n} argument(s), got {len(e.args)}")

    def _check_args_loose(self, e: ast.Call, scope: Scope) -> None:
        for a in e.args:
            if a.value is not None:
                self.check_expr(a.value, scope)

    def _pick_overload(self, protos: list, e: ast.Call, what: str) -> ast.FunctionProto:
        cands = [_proto_of(p) for p in protos]
        if len(cands) == 1:
            return cands[0]  # argument checking explains any mismatch precisely
        n = len(e.args)
        names = {a.name for a in e.args if a.name}
        for p in cands:
            required = [q for q in p.params if q.default is None and not _is_optional(q)]
            if len(required) <= n <= len(p.params) and names <= {q.name for q in p.params}:
                return p
        self.err(ErrorKind.TYPE, e, f"{what}: no overload takes {n} argument(s)")
        return cands[0]

    def _call_proto(self, proto: ast.FunctionProto, e: ast.Call, scope: Scope,
                    bindings: dict[str, types.Type], expected: types.Type | None) -> types.Type:
        local = Scope(self.glob)
        for name, t in bindings.items():
            local.declare(Symbol("typevar", name, type=t))
        explicit = [self.resolve_type(ta, scope) for ta in e.type_args]
        for tp, ta in zip(proto.type_params, explicit):
            bindings[tp] = ta
        for tp in proto.type_params:
            if tp not in bindings:
                local.declare(Symbol("typevar", tp, type=types.TypeVar(tp)))
            else:
                local.declare(Symbol("typevar", tp, type=bindings[tp]))
        self._check_args(e, proto.params, scope, bindings, proto.name, param_scope=local)
        if proto.return_type is None:
            return types.Void()
        rt_scope = Scope(self.glob)
        for name, t in bindings.items():
            rt_scope.declare(Symbol("typevar", name, type=t))
        for tp in proto.type_params:
            if tp not in bindings:
                rt_scope.declare(Symbol("typevar", tp, type=expected or types.TypeVar(tp)))
        return self.resolve_type(proto.return_type, rt_scope)

    def _check_args(self, e: ast.Call, params: tuple[ast.Param, ...], scope: Scope,
                    bindings: dict[str, types.Type], what: str, allow_fewer: bool = False,
                    param_scope: Scope | None = None) -> None:
        pscope = param_scope or self.glob
        by_name = {p.name: p for p in params}
        pairs: list[tuple[ast.Param, ast.Argument]] = []
        for i, a in enumerate(e.args):
            if a.name is not None:
                p = by_name.get(a.name)
                if p is None:
                    self.err(ErrorKind.UNDEFINED, a, f"{what}: no parameter named {a.name}")
                    continue
            elif i < len(params):
                p = params[i]
            else:
                self.err(ErrorKind.TYPE, a, f"{what}: too many arguments")
                break
            pairs.append((p, a))
        given = {p.name for p, _ in pairs}
        if not allow_fewer:
            for p in params:
                if p.name not in given and p.default is None and not _is_optional(p):
                    self.err(ErrorKind.TYPE, e, f"{what}: missing argument for parameter {p.name}")
        for p, a in pairs:
            pt = self._param_type(p, pscope, bindings)
            if a.value is None:
                if p.direction not in ("out",) and not _is_optional(p):
                    self.err(ErrorKind.DIRECTION, a, f"{what}: _ can only be passed to an out parameter")
                continue
            at = self.check_expr(a.value, scope, pt if not isinstance(pt, types.TypeVar) else None)
            if isinstance(pt, types.TypeVar) and pt.name not in bindings and not isinstance(at, (types.InfInt, types.Unknown)):
                bindings[pt.name] = at
            elif not isinstance(pt, (types.TypeVar, types.Unknown)):
                self.check_assignable(pt, at, a.value, f"argument {p.name} of {what}")
            if p.direction in ("out", "inout"):
                self.check_lvalue(a.value, scope, f"argument {p.name} of {what} ({p.direction})")

    def _param_type(self, p: ast.Param, pscope: Scope, bindings: dict[str, types.Type]) -> types.Type:
        t = p.type
        if isinstance(t, ast.TypeName) and t.name in bindings:
            return bindings[t.name]
        if isinstance(t, ast.TypeName):
            sym = pscope.lookup(t.name)
            if sym is not None and sym.kind == "typevar":
                return sym.type or types.TypeVar(t.name)
            if sym is None:
                return types.TypeVar(t.name)
        try:
            return self.resolve_type(t, pscope)
        except RecursionError:  # pragma: no cover
            return types.Unknown()

    # ------------------------------------------------------------ assignments

    def check_assignable(self, target: types.Type, value: types.Type, where: ast.Node, what: str) -> None:
        """Report a type error when `value` cannot be assigned to `target`."""
        if isinstance(target, (types.Unknown, types.TypeVar, types.DontCareT)) or isinstance(value, (types.Unknown, types.TypeVar)):
            return
        if target == value:
            return
        tb, vb = types.bits_of(target), types.bits_of(value)
        ts, vs = types.strip_newtype(target), types.strip_newtype(value)
        if isinstance(value, types.InfInt):
            if tb is not None and not isinstance(ts, types.Bool):
                return
            if isinstance(ts, types.InfInt):
                return
        if isinstance(ts, types.Bool) or isinstance(vs, types.Bool):
            if isinstance(ts, types.Bool) and isinstance(vs, types.Bool):
                return
            self.err(ErrorKind.TYPE, where, f"{what}: cannot use {value} where {target} is expected")
            return
        if tb is not None and vb is not None:
            if tb.width != vb.width or tb.signed != vb.signed:
                self.err(ErrorKind.WIDTH, where,
                         f"{what}: width mismatch, {value} where {target} is expected (use a cast)")
            return
        if isinstance(value, (types.ListT, types.StructInit, types.DontCareT)):
            return
        if isinstance(ts, types.StructLike) and isinstance(vs, types.StructLike):
            if ts.name != vs.name:
                self.err(ErrorKind.TYPE, where, f"{what}: cannot use {value} where {target} is expected")
            return
        if isinstance(ts, types.Varbit) and isinstance(vs, types.Varbit):
            return
        if type(ts) is type(vs):
            return
        self.err(ErrorKind.TYPE, where, f"{what}: cannot use {value} where {target} is expected")

    def check_lvalue(self, e: ast.Expr, scope: Scope, what: str) -> None:
        """Report an error unless `e` denotes something writable."""
        root = e
        while True:
            if isinstance(root, (ast.Member, ast.Index, ast.Slice)):
                if isinstance(root, ast.Member):
                    bt = self.type_of(root.expr)
                    if isinstance(bt, types.Stack) and root.name in ("last", "size", "lastIndex"):
                        if root.name != "last":
                            self.err(ErrorKind.DIRECTION, e, f"{what}: {root.name} is read-only")
                            return
                root = root.expr
                continue
            break
        if isinstance(root, ast.Name):
            sym = (self.glob if root.toplevel else scope).lookup(root.name)
            if sym is None:
                return
            if sym.kind == "param" and sym.direction == "in":
                self.err(ErrorKind.DIRECTION, e, f"{what}: {root.name} is an 'in' parameter and cannot be written")
            elif sym.kind == "param" and sym.direction == "" :
                self.err(ErrorKind.DIRECTION, e, f"{what}: {root.name} is a directionless parameter and cannot be written")
            elif sym.kind == "const":
                self.err(ErrorKind.DIRECTION, e, f"{what}: {root.name} is a constant and cannot be written")
            elif sym.kind not in ("var", "param"):
                self.err(ErrorKind.DIRECTION, e, f"{what}: {root.name} is not a variable")
            return
        if isinstance(root, (ast.Call,)):
            return  # e.g. a method result: nothing to write through, leave to later passes
        self.err(ErrorKind.DIRECTION, e, f"{what}: expression is not an l-value")


def _proto_of(d: ast.Node) -> ast.FunctionProto:
    if isinstance(d, ast.FunctionProto):
        return d
    if isinstance(d, (ast.ExternFunctionDecl, ast.FunctionDecl)):
        return d.proto
    raise TypeError(d)


def _inside_parser(scope: Scope) -> bool:
    s: Optional[Scope] = scope
    while s is not None:
        if isinstance(s.owner, ast.ParserDecl):
            return True
        s = s.parent
    return False


def _is_optional(p: ast.Param) -> bool:
    return any(a.name == "optional" for a in p.annotations)
