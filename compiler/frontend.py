"""The front end: check every declaration and body, then elaborate the
program from its `main` instantiation into a tree of block instances.

Elaboration is what p4c's inlining does to names: a control `D` passed to
the package is the top-level block named `D`; a control instance `c1` of type
`C` declared inside `D` becomes the child block `D.c1`, and the tables,
actions and extern instances inside it get control-plane names under that
prefix (`D.c1.t`).  Constructor arguments of instances are evaluated here so
that later passes see constants.

Needs: a parsed `ast.Program`.  Guarantees: every expression reachable from
`main` has a type in `checker.expr_types`; `ProgramIR.blocks` lists the
architecture's blocks in package-parameter order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from . import ast
from . import types
from .checker import Checker, ConstError
from .diagnostics import Diagnostics, ErrorKind
from .exprtext import expr_text
from .scope import Scope, Symbol
from .tablerules import check_table_rules


@dataclass(eq=False)
class BlockInstance:
    """One parser or control instance after elaboration."""

    decl: ast.Node               # ParserDecl | ControlDecl
    path: str                    # control-plane name prefix, e.g. "ingress" or "ingress.c1"
    scope: Scope                 # parameters and locals
    args: dict[str, Any] = field(default_factory=dict)   # constructor arguments
    children: dict[str, "BlockInstance"] = field(default_factory=dict)
    param_name: str = ""         # the package parameter it is bound to (top level)

    @property
    def kind(self) -> str:
        return "parser" if isinstance(self.decl, ast.ParserDecl) else "control"

    def qualify(self, name: str) -> str:
        """The fully qualified control-plane name of a local object."""
        return f"{self.path}.{name}" if self.path else name


@dataclass(eq=False)
class ProgramIR:
    program: ast.Program
    checker: Checker
    main: Optional[ast.Instantiation] = None
    package: Optional[ast.PackageDecl] = None
    blocks: list[BlockInstance] = field(default_factory=list)
    global_instances: list[ast.Instantiation] = field(default_factory=list)


def run_frontend(program: ast.Program, diags: Diagnostics, observer=None) -> ProgramIR:
    """Run the front end's passes (passlist.FRONTEND) over a parsed program.

    `observer(pass, compilation)` is called after each pass (--dump-after)."""
    from .passes import Compilation
    from .passlist import FRONTEND

    c = FRONTEND.run(Compilation(diags, program=program, observer=observer))
    return c.ir


class BodyChecker:
    """Checks declarations and statement bodies, building their scopes."""

    def __init__(self, checker: Checker):
        self.c = checker
        self.block_scopes: dict[int, Scope] = {}   # by the declaration's nid (typemap.py)

    def err(self, kind: ErrorKind, node: ast.Node, msg: str) -> None:
        self.c.err(kind, node, msg)

    # ------------------------------------------------------------- top level

    def check_toplevel(self, d: ast.Decl) -> None:
        c = self.c
        if isinstance(d, (ast.HeaderDecl, ast.StructDecl, ast.HeaderUnionDecl)):
            if not d.type_params:
                c.sym_type(c.glob.lookup(d.name))  # type: ignore[arg-type]
        elif isinstance(d, (ast.EnumDecl, ast.TypedefDecl)):
            c.sym_type(c.glob.lookup(d.name))  # type: ignore[arg-type]
        elif isinstance(d, ast.ConstDecl):
            sym = c.glob.lookup(d.name)
            try:
                c.const_of_sym(sym)  # type: ignore[arg-type]
            except ConstError:
                pass
            c.check_expr(d.value, c.glob, sym.type)  # type: ignore[union-attr]
            c.check_assignable(sym.type, c.type_of(d.value), d.value, d.name)  # type: ignore[union-attr, arg-type]
        elif isinstance(d, ast.ControlDecl):
            self.control_scope(d)
        elif isinstance(d, ast.ParserDecl):
            self.parser_scope(d)
        elif isinstance(d, ast.ActionDecl):
            self.check_action(d, c.glob)
        elif isinstance(d, ast.FunctionDecl):
            self.check_function(d, c.glob)
        elif isinstance(d, ast.Instantiation):
            self.check_instantiation(d, c.glob)

    def _typevars(self, scope: Scope, names: tuple[str, ...]) -> None:
        for n in names:
            scope.declare(Symbol("typevar", n, type=types.TypeVar(n)))

    def _params(self, scope: Scope, params: tuple[ast.Param, ...]) -> None:
        for p in params:
            self.c.declare(scope, p)
            self.c.check_param(p, scope, in_action=False)

    # --------------------------------------------------------------- controls

    def _open_block(self, d: ast.ParserDecl | ast.ControlDecl, args: dict[str, Any] | None) -> Scope:
        """The scope of a parser or control: type parameters, parameters,
        constructor parameters (bound to `args`) and locals."""
        scope = Scope(self.c.glob, owner=d)
        self._typevars(scope, d.type_params)
        self._params(scope, d.params)
        self._ctor_params(scope, d.ctor_params, args)
        for loc in d.locals:
            self.c.declare(scope, loc)
        return scope

    def control_scope(self, d: ast.ControlDecl, args: dict[str, Any] | None = None) -> Scope:
        key = d.nid
        if key in self.block_scopes and args is None:
            return self.block_scopes[key]
        scope = self._open_block(d, args)
        for loc in d.locals:
            self.check_local(loc, scope)
        self.check_stmt(d.body, scope)
        self.block_scopes[key] = scope
        return scope

    def _ctor_params(self, scope: Scope, params: tuple[ast.Param, ...], args: dict[str, Any] | None) -> None:
        for p in params:
            self.c.declare(scope, p)
            sym = scope.local(p.name)
            if sym is not None and args and p.name in args:
                sym.value = args[p.name]

    def check_local(self, loc: ast.Decl, scope: Scope) -> None:
        c = self.c
        if isinstance(loc, ast.ActionDecl):
            self.check_action(loc, scope)
        elif isinstance(loc, ast.TableDecl):
            self.check_table(loc, scope)
        elif isinstance(loc, ast.Instantiation):
            self.check_instantiation(loc, scope)
        elif isinstance(loc, ast.VarDecl):
            t = c.resolve_type(loc.type, scope)
            if loc.init is not None:
                c.check_expr(loc.init, scope, t)
                c.check_assignable(t, c.type_of(loc.init), loc.init, loc.name)
        elif isinstance(loc, ast.ConstDecl):
            sym = scope.local(loc.name)
            try:
                c.const_of_sym(sym)  # type: ignore[arg-type]
            except ConstError:
                pass
        elif isinstance(loc, ast.ValueSetDecl):
            c.resolve_type(loc.type, scope)
            c.const_int(loc.size, scope, "value_set size")
        elif isinstance(loc, ast.FunctionDecl):
            self.check_function(loc, scope)

    def check_action(self, d: ast.ActionDecl, outer: Scope) -> Scope:
        scope = Scope(outer, owner=d)
        seen_directionless = False
        for p in d.params:
            if p.direction == "":
                seen_directionless = True
            elif seen_directionless:
                self.err(ErrorKind.DIRECTION, p,
                         f"action {d.name}: parameter {p.name} with a direction follows a directionless one")
            self.c.declare(scope, p)
            self.c.check_param(p, scope, in_action=True)
        self.check_stmt(d.body, scope)
        return scope

    def check_function(self, d: ast.FunctionDecl, outer: Scope) -> None:
        scope = Scope(outer, owner=d)
        self._typevars(scope, d.proto.type_params)
        self._params(scope, d.proto.params)
        self.check_stmt(d.body, scope)

    def check_instantiation(self, d: ast.Instantiation, scope: Scope) -> None:
        c = self.c
        t = c.resolve_type(d.type, scope)
        params: tuple[ast.Param, ...] = ()
        bindings: dict[str, types.Type] = {}
        if isinstance(t, types.Extern):
            ctors = [m for m in t.decl.methods if m.return_type is None and m.name == t.decl.name]
            n = len(d.args)
            match = [m for m in ctors if sum(1 for p in m.params if p.default is None) <= n <= len(m.params)]
            if ctors and not match:
                self.err(ErrorKind.TYPE, d, f"{t.decl.name}: no constructor takes {n} argument(s)")
            if match:
                params = match[0].params
            bindings = dict(zip(t.decl.type_params, t.args))
        elif isinstance(t, types.Block):
            params = getattr(t.decl, "ctor_params", ()) or (
                t.decl.params if isinstance(t.decl, ast.PackageDecl) else ())
        pscope = Scope(c.glob)
        for n_, bt in bindings.items():
            pscope.declare(Symbol("typevar", n_, type=bt))
        if isinstance(t, types.Block):
            self._typevars(pscope, getattr(t.decl, "type_params", ()))
        for i, a in enumerate(d.args):
            p = None
            if a.name is not None:
                p = next((q for q in params if q.name == a.name), None)
            elif i < len(params):
                p = params[i]
            expected = c._param_type(p, pscope, dict(bindings)) if p is not None else None
            if a.value is not None:
                c.check_expr(a.value, scope, expected if not isinstance(expected, types.TypeVar) else None)
        if d.initializer is not None:
            iscope = Scope(scope, owner=d)
            for s in d.initializer.stmts:
                if isinstance(s, ast.DeclStmt):
                    c.declare(iscope, s.decl)
            for s in d.initializer.stmts:
                if isinstance(s, ast.DeclStmt) and isinstance(s.decl, ast.FunctionDecl):
                    self.check_function(s.decl, iscope)

    # ----------------------------------------------------------------- tables

    def check_table(self, d: ast.TableDecl, scope: Scope) -> None:
        c = self.c
        seen: set[str] = set()
        for prop in d.properties:
            if prop.name in seen:
                self.err(ErrorKind.DUPLICATE, prop, f"table {d.name}: duplicate property {prop.name}")
            seen.add(prop.name)
            if prop.kind == "key":
                for k in prop.value:  # type: ignore[union-attr]
                    kt = c.check_expr(k.expr, scope)
                    if k.match_kind not in c.match_kinds:
                        self.err(ErrorKind.UNDEFINED, k, f"{k.match_kind}: not a match kind")
                    if isinstance(types.strip_newtype(kt), (types.Varbit, types.String, types.StructLike)) :
                        self.err(ErrorKind.TYPE, k, f"table {d.name}: key of type {kt} cannot be matched")
            elif prop.kind == "actions":
                for ar in prop.value:  # type: ignore[union-attr]
                    self._check_action_ref(ar, scope, d, bound=True)
            elif prop.kind == "default_action":
                ar = prop.value
                self._check_action_ref(ar, scope, d, bound=False)  # type: ignore[arg-type]
            elif prop.kind == "entries":
                keys = self._table_key_types(d, scope)
                for ent in prop.value:  # type: ignore[union-attr]
                    if len(ent.keys) != len(keys) and not (len(ent.keys) == 1 and isinstance(ent.keys[0], (ast.DontCare, ast.Default))):
                        self.err(ErrorKind.TYPE, ent, f"table {d.name}: entry has {len(ent.keys)} key(s), table has {len(keys)}")
                    for kx, kt in zip(ent.keys, keys):
                        c.check_expr(kx, scope, kt)
                    self._check_action_ref(ent.action, scope, d, bound=False)
                    if ent.priority is not None:
                        c.check_expr(ent.priority, scope)
            else:
                v = prop.value
                if isinstance(v, ast.Expr):
                    c.check_expr(v, scope)
        check_table_rules(c, d, scope)

    def _table_key_types(self, d: ast.TableDecl, scope: Scope) -> list[types.Type]:
        for prop in d.properties:
            if prop.kind == "key":
                return [self.c.check_expr(k.expr, scope) for k in prop.value]  # type: ignore[union-attr]
        return []

    def _check_action_ref(self, ar: ast.ActionRef, scope: Scope, table: ast.TableDecl, bound: bool) -> None:
        name = ar.name
        if not isinstance(name, ast.Name):
            self.err(ErrorKind.TYPE, ar, f"table {table.name}: expected an action name")
            return
        sym = (self.c.glob if name.toplevel else scope).lookup(name.name)
        if sym is None:
            self.err(ErrorKind.UNDEFINED, name, f"{name.name}: not declared")
            return
        if sym.kind != "action":
            self.err(ErrorKind.TYPE, name, f"table {table.name}: {name.name} is not an action")
            return
        decl: ast.ActionDecl = sym.decl  # type: ignore[assignment]
        self.c.expr_types[name] = types.Action(decl)
        params = decl.params
        if bound:
            dir_params = [p for p in params if p.direction != ""]
            if ar.args and len(ar.args) > len(dir_params):
                self.err(ErrorKind.TYPE, ar, f"action {decl.name}: too many bound arguments")
        for i, a in enumerate(ar.args):
            p = params[i] if a.name is None and i < len(params) else next(
                (q for q in params if q.name == a.name), None)
            if p is None:
                self.err(ErrorKind.TYPE, a, f"action {decl.name}: too many arguments")
                continue
            if a.value is not None:
                pt = self.c.resolve_type(p.type, sym.scope or self.c.glob)
                self.c.check_expr(a.value, scope, pt)
                self.c.check_assignable(pt, self.c.type_of(a.value), a.value, f"argument {p.name} of {decl.name}")

    # ---------------------------------------------------------------- parsers

    def parser_scope(self, d: ast.ParserDecl, args: dict[str, Any] | None = None) -> Scope:
        key = d.nid
        if key in self.block_scopes and args is None:
            return self.block_scopes[key]
        c = self.c
        scope = self._open_block(d, args)
        names = {s.name for s in d.states}
        for st in d.states:
            c.declare(scope, st)
        for builtin in ("accept", "reject"):
            if builtin not in names:
                scope.declare(Symbol("state", builtin))
        for loc in d.locals:
            self.check_local(loc, scope)
        if "start" not in names:
            self.err(ErrorKind.UNDEFINED, d, f"parser {d.name}: no start state")
        for st in d.states:
            sscope = Scope(scope, owner=d)
            for s in st.stmts:
                self.check_stmt(s, sscope)
            self._check_transition(st, sscope, names)
        self.block_scopes[key] = scope
        return scope

    def _check_transition(self, st: ast.ParserState, scope: Scope, names: set[str]) -> None:
        tr = st.transition
        valid = names | {"accept", "reject"}
        if tr is None:
            return  # p4c: a state without a transition goes to reject
        if isinstance(tr, str):
            if tr not in valid:
                self.err(ErrorKind.UNDEFINED, st, f"state {st.name}: transition to undeclared state {tr}")
            return
        key_types = [self.c.check_expr(e, scope) for e in tr.exprs]
        for case in tr.cases:
            if case.state not in valid:
                self.err(ErrorKind.UNDEFINED, case, f"state {st.name}: transition to undeclared state {case.state}")
            ks = case.keyset
            if isinstance(ks, ast.ListExpr) and (len(key_types) > 1 or len(ks.elems) == 1):
                if len(ks.elems) != len(key_types):
                    self.err(ErrorKind.TYPE, ks, f"select has {len(key_types)} key(s), case has {len(ks.elems)}")
                for x, kt in zip(ks.elems, key_types):
                    self.c.check_expr(x, scope, kt)
                    self._check_case_value(tr, x, kt)
            else:
                kt = key_types[0] if len(key_types) == 1 else None
                self.c.check_expr(ks, scope, kt)
                if kt is not None:
                    self._check_case_value(tr, ks, kt)

    def _check_case_value(self, select: ast.Select, x: ast.Expr, key_type: types.Type) -> None:
        """A select case value of a sized type must have the key's type
        (p4c reports the mismatch at the select expression)."""
        if isinstance(x, ast.Mask):
            parts: tuple[ast.Expr, ...] = (x.value, x.mask)
        elif isinstance(x, ast.Range):
            parts = (x.lo, x.hi)
        else:
            parts = (x,)
        for p in parts:
            t = self.c.type_of(p)
            if isinstance(t, types.Bits) and isinstance(key_type, types.Bits) and t != key_type:
                self.err(ErrorKind.TYPE, select, f"select: case value {expr_text(p)} has type {t}, "
                                                 f"which does not match the key type {key_type}")
                return

    # ------------------------------------------------------------- statements

    def check_stmt(self, s: ast.Stmt | None, scope: Scope) -> None:
        c = self.c
        if s is None or isinstance(s, (ast.Empty, ast.Exit, ast.Break, ast.Continue)):
            return
        if isinstance(s, ast.Block):
            inner = Scope(scope, owner=scope.owner)
            for x in s.stmts:
                self.check_stmt(x, inner)
        elif isinstance(s, ast.Assign):
            tt = c.check_expr(s.target, scope)
            vt = c.check_expr(s.value, scope, tt)
            c.check_assignable(tt, vt, s.value, "assignment")
            c.check_lvalue(s.target, scope, "assignment")
        elif isinstance(s, ast.CompoundAssign):
            tt = c.check_expr(s.target, scope)
            c.check_expr(s.value, scope, tt if s.op not in ("<<", ">>") else None)
            c.check_lvalue(s.target, scope, "assignment")
        elif isinstance(s, ast.CallStmt):
            c.check_expr(s.call, scope)
        elif isinstance(s, ast.If):
            ct = c.check_expr(s.cond, scope, types.Bool())
            if not isinstance(ct, (types.Bool, types.Unknown)):
                self.err(ErrorKind.TYPE, s.cond, f"if condition must be bool, not {ct}")
            self.check_stmt(s.then, scope)
            self.check_stmt(s.else_, scope)
        elif isinstance(s, ast.Switch):
            self._check_default_last(s)
            st = c.check_expr(s.expr, scope)
            for case in s.cases:
                if not isinstance(case.label, (ast.Default, ast.DontCare)):
                    if isinstance(st, types.ActionEnum):
                        self._check_switch_action_label(case.label, scope)
                    else:
                        c.check_expr(case.label, scope, st)
                if case.body is not None:
                    self.check_stmt(case.body, scope)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                c.check_expr(s.value, scope)
        elif isinstance(s, ast.DeclStmt):
            d = s.decl
            c.declare(scope, d)
            if isinstance(d, ast.VarDecl):
                sym = scope.local(d.name)
                t = c.symbol_value_type(sym, d)  # type: ignore[arg-type]
                if d.init is not None:
                    vt = c.check_expr(d.init, scope, t)
                    c.check_assignable(t, vt, d.init, d.name)
            elif isinstance(d, ast.ConstDecl):
                try:
                    c.const_of_sym(scope.local(d.name))  # type: ignore[arg-type]
                except ConstError:
                    pass
            elif isinstance(d, ast.Instantiation):
                self.check_instantiation(d, scope)
        elif isinstance(s, ast.For):
            inner = Scope(scope, owner=scope.owner)
            for x in s.init:
                self.check_stmt(x, inner)
            if s.cond is not None:
                ct = c.check_expr(s.cond, inner, types.Bool())
                if not isinstance(ct, (types.Bool, types.Unknown)):
                    self.err(ErrorKind.TYPE, s.cond, f"loop condition must be bool, not {ct}")
            for x in s.update:
                self.check_stmt(x, inner)
            self.check_stmt(s.body, inner)
        elif isinstance(s, ast.ForIn):
            inner = Scope(scope, owner=scope.owner)
            it = c.check_expr(s.iterable, inner)
            if s.type is not None:
                vt = c.resolve_type(s.type, inner)
            elif isinstance(it, types.Stack):
                vt = it.elem
            else:
                vt = it
            if not isinstance(it, (types.Stack, types.Tuple, types.ListT, types.Unknown)) and not isinstance(s.iterable, ast.Range):
                self.err(ErrorKind.TYPE, s.iterable, f"cannot iterate over a value of type {it}")
            var = Symbol("var", s.var, ast.VarDecl(name=s.var, type=s.type, pos=s.pos), type=vt)
            var.scope = inner
            inner.declare(var)
            self.check_stmt(s.body, inner)
        else:
            self.err(ErrorKind.UNSUPPORTED, s, f"unsupported statement {type(s).__name__}")

    def _check_default_last(self, s: ast.Switch) -> None:
        """p4c: `default` is the last label of a switch."""
        seen_default = False
        for case in s.cases:
            if seen_default:
                if isinstance(case.label, ast.Default):
                    self.err(ErrorKind.INVALID, s, "switch has multiple 'default' labels")
                else:
                    self.err(ErrorKind.INVALID, s, f"switch label {expr_text(case.label)} follows "
                                                   "'default' label, which is not allowed")
                return
            seen_default = isinstance(case.label, ast.Default)

    def _check_switch_action_label(self, label: ast.Expr, scope: Scope) -> None:
        if isinstance(label, ast.Name):
            sym = scope.lookup(label.name)
            if sym is None or sym.kind != "action":
                self.err(ErrorKind.UNDEFINED, label, f"{label.name}: not an action")
            else:
                self.c.expr_types[label] = types.Action(sym.decl)  # type: ignore[arg-type]


class Elaborator:
    """Builds the block-instance tree from `main`."""

    def __init__(self, ir: ProgramIR, body: BodyChecker, diags: Diagnostics):
        self.ir = ir
        self.c = ir.checker
        self.body = body
        self.diags = diags

    def run(self) -> None:
        glob = self.c.glob
        mains = [d for d in self.ir.program.decls if isinstance(d, ast.Instantiation) and d.name == "main"]
        for d in self.ir.program.decls:
            if isinstance(d, ast.Instantiation) and d.name != "main":
                self.ir.global_instances.append(d)
        if not mains:
            self.diags.error(ErrorKind.ARCH, self.ir.program.pos,
                             "no 'main' package instantiation (e.g. V1Switch(...) main;)")
            return
        main = mains[0]
        self.ir.main = main
        pt = self.c.resolve_type(main.type, glob)
        if not isinstance(pt, types.Block) or not isinstance(pt.decl, ast.PackageDecl):
            self.diags.error(ErrorKind.ARCH, main.pos, "main must instantiate a package")
            return
        pkg: ast.PackageDecl = pt.decl
        self.ir.package = pkg
        for i, a in enumerate(main.args):
            param = pkg.params[i] if a.name is None and i < len(pkg.params) else next(
                (p for p in pkg.params if p.name == a.name), None)
            if param is None or a.value is None:
                self.diags.error(ErrorKind.ARCH, a.pos, f"{pkg.name}: unexpected argument")
                continue
            inst = self._block_from_arg(a.value, glob, None)
            if inst is not None:
                inst.param_name = param.name
                self.ir.blocks.append(inst)

    def _block_from_arg(self, e: ast.Expr, scope: Scope, parent: Optional[BlockInstance]) -> Optional[BlockInstance]:
        if isinstance(e, ast.ConstructorCall):
            return self._instantiate(e.type, e.args, scope, None, parent, e)
        if isinstance(e, ast.Call) and isinstance(e.callee, ast.Name):
            tref = ast.TypeName(e.callee.name, e.callee.toplevel, pos=e.callee.pos)
            if e.type_args:
                tref = ast.TypeSpecialized(tref, e.type_args, pos=e.pos)  # type: ignore[assignment]
            return self._instantiate(tref, e.args, scope, None, parent, e)
        if isinstance(e, ast.Name):
            sym = scope.lookup(e.name)
            if sym is not None and sym.kind == "instance":
                d: ast.Instantiation = sym.decl  # type: ignore[assignment]
                return self._instantiate(d.type, d.args, scope, d.name if parent else None, parent, d)
        self.diags.error(ErrorKind.ARCH, e.pos, "expected a parser or control instance")
        return None

    def _instantiate(self, tref: ast.TypeRef, args: tuple[ast.Argument, ...], scope: Scope,
                     inst_name: Optional[str], parent: Optional[BlockInstance],
                     where: ast.Node) -> Optional[BlockInstance]:
        t = self.c.resolve_type(tref, scope)
        if not isinstance(t, types.Block) or not isinstance(t.decl, (ast.ParserDecl, ast.ControlDecl)):
            if not isinstance(t, types.Unknown):
                self.diags.error(ErrorKind.ARCH, where.pos, f"{t} is not a parser or control")
            return None
        decl = t.decl
        ctor_args: dict[str, Any] = {}
        for i, a in enumerate(args):
            p = decl.ctor_params[i] if a.name is None and i < len(decl.ctor_params) else next(
                (q for q in decl.ctor_params if q.name == a.name), None)
            if p is None or a.value is None:
                continue
            try:
                ctor_args[p.name] = self.c.const_value(a.value, scope)
            except ConstError:
                ctor_args[p.name] = a.value  # an instance argument (extern / block)
        if parent is None:
            path = _control_plane_name(decl)
        else:
            path = parent.qualify(inst_name or decl.name)
        if isinstance(decl, ast.ControlDecl):
            bscope = self.body.control_scope(decl, ctor_args if ctor_args else None)
        else:
            bscope = self.body.parser_scope(decl, ctor_args if ctor_args else None)
        inst = BlockInstance(decl, path, bscope, ctor_args)
        for name, child_decl in self._direct_invocations(decl, bscope):
            if name not in inst.children:
                tref = ast.TypeName(child_decl.name, pos=child_decl.pos)
                child = self._instantiate(tref, (), bscope, name, inst, child_decl)
                if child is not None:
                    inst.children[name] = child
        for loc in decl.locals:
            if isinstance(loc, ast.Instantiation):
                lt = self.c.resolve_type(loc.type, bscope)
                if isinstance(lt, types.Block) and isinstance(lt.decl, (ast.ParserDecl, ast.ControlDecl)):
                    child = self._instantiate(loc.type, loc.args, bscope, _local_name(loc), inst, loc)
                    if child is not None:
                        inst.children[loc.name] = child
        return inst


    def _direct_invocations(self, decl: ast.Node, scope: Scope):
        """`Type.apply(...)` calls: each instantiates Type under its name."""
        from .p4info import _calls_in  # the generic tree walk

        for call in _calls_in(decl):
            cal = call.callee
            if isinstance(cal, ast.TypeMember) and cal.name == "apply":
                t = self.c.resolve_type(cal.type, scope)
                if isinstance(t, types.Block) and isinstance(t.decl, (ast.ParserDecl, ast.ControlDecl)):
                    yield t.decl.name, t.decl


def annotation_string(annotations: tuple[ast.Annotation, ...], name: str) -> Optional[str]:
    for a in annotations:
        if a.name == name and a.body and isinstance(a.body[0], ast.StringLit):
            return a.body[0].value
    return None


def _control_plane_name(decl: ast.Decl) -> str:
    # p4c names a top-level block's objects after the block's declaration
    # name; an @name on the block itself does not change that prefix.
    return decl.name


def _local_name(d: ast.Decl) -> str:
    """The name a local object is known by to the control plane: its @name
    (a leading dot makes it global), else its declared name."""
    n = annotation_string(d.annotations, "name")
    return n if n is not None else d.name
