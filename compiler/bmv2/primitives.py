"""Lowering statements to a list of BMv2 primitives (an action body).

Used for action bodies, for the straight-line statements of apply blocks
(which become synthesized actions), and for parser state statements.
Everything called from such code is inlined here:

- an action called from an action or an apply block: its parameters are
  bound to the arguments (out/inout alias the argument, in/directionless
  arguments that are not constants are copied into a fresh temporary first);
- a function: likewise, plus a temporary for the returned value;
- `if`/`switch` inside actions become ``_jump_if_zero``/``_jump``, and
  `return` a jump to the end of the inlined body, as p4c emits them:

      if (val > 10) { val = 2; return; } else { val = 3; }
  becomes
      0 _jump_if_zero(b2d(val > 10), 3)   1 assign(val, 2)   2 _jump(4)
      3 assign(val, 3)                     4 ...

Extern calls are delegated to `externs.ExternLowering`.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from ..checker import ConstError
from ..diagnostics import ErrorKind
from ..scope import Symbol
from .copyelim import elided_copies
from .primlist import Frame, Label, PrimitiveList
from .env import ActionBinding, BlockBinding, ConstBinding, Env, ExternBinding, FunctionBinding, PacketBinding, TableBinding, ValueSetB
from .expressions import ApplyResultV, ExpressionConverter, MethodV, TypeSizeV, has_call
from .storage import is_scalar
from .values import (HeaderV, InvalidV, Leaf, StackV, StructV, UnionV, Value, as_bool, as_data,
                     expr_node, hexstr, leaf_const, mask, param, wrap, describe)


class SliceTarget(Value):
    def __init__(self, base: Leaf, hi: int, lo: int) -> None:
        self.base = base
        self.hi = hi
        self.lo = lo


class BodyLowerer:
    """Lowers statements into `self.out` (a PrimitiveList).

    `mode` is "action" (jumps allowed), "parser" (a parser state: no jumps)
    or "deparser".
    """

    def __init__(self, ctx, out: Optional[PrimitiveList] = None, mode: str = "action") -> None:
        self.ctx = ctx
        self.c = ctx.checker
        self.out = out if out is not None else PrimitiveList()
        self.mode = mode
        self.ex = ExpressionConverter(ctx, self)
        self.frames: list[Frame] = []
        self.loops: list[tuple[Label, Label]] = []   # (break, continue) targets
        self.outer_end = Label()
        from .externs import ExternLowering
        self.externs = ExternLowering(ctx, self)

    # ------------------------------------------------------------ utilities

    def unsupported(self, node: Optional[ast.Node], what: str) -> None:
        self.ctx.unsupported(node.pos if node is not None else None, what)

    def emit(self, op: str, params: list[dict]) -> None:
        self.out.emit(op, params)

    def type_of(self, e: ast.Expr) -> types.Type:
        return self.c.expr_types.of(e)

    def resolve_type(self, t: ast.TypeRef, env: Env) -> types.Type:
        return self.c.resolve_type(t, self.ctx.type_scope(env))

    def finish(self) -> list[dict]:
        self.out.place(self.outer_end)
        return self.out.finish()

    def temp(self, t: types.Type, hint: str = "tmp", pos=None) -> Value:
        return self.ctx.storage.alloc(hint, t, pos)

    # ------------------------------------------------------------ statements

    def stmts(self, stmts, env: Env) -> None:
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s: ast.Stmt, env: Env) -> None:
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            self.unsupported(s, f"statement {type(s).__name__}")
            return
        m(s, env)

    def _s_Empty(self, s, env) -> None:
        pass

    def _s_Block(self, s: ast.Block, env: Env) -> None:
        inner = env.child()
        self.stmts(s.stmts, inner)

    def _s_DeclStmt(self, s: ast.DeclStmt, env: Env) -> None:
        self.declare(s.decl, env)

    def declare(self, d: ast.Decl, env: Env) -> None:
        if isinstance(d, ast.VarDecl):
            t = self.resolve_type(d.type, env)
            storage = self.ctx.storage.alloc(d.name, t, d.pos)
            if d.init is not None:
                v = self.ex.value(d.init, env)
                self.assign(storage, v, d.init)
            env.declare(d.name, storage)
        elif isinstance(d, ast.ConstDecl):
            t = self.resolve_type(d.type, env)
            try:
                v = self.ex.const(d.value, env)
            except ConstError:
                v = None
            if v is None:
                val = self.ex.value(d.value, env)
                env.declare(d.name, val)
            else:
                env.declare(d.name, ConstBinding(v, t))
        elif isinstance(d, ast.Instantiation):
            env.declare(d.name, self.ctx.instance_binding(env.blk, d, env))
        else:
            self.unsupported(d, f"local declaration {type(d).__name__}")

    def _s_Assign(self, s: ast.Assign, env: Env) -> None:
        target = self.lvalue(s.target, env)
        value = self.ex.value(s.value, env)
        self.assign(target, value, s)

    def _s_CompoundAssign(self, s: ast.CompoundAssign, env: Env) -> None:
        # the target is evaluated once (its index may call functions)
        target = self.lvalue(s.target, env)
        if isinstance(target, SliceTarget):
            cur = self.ex.value(ast.Slice(s.target.expr, s.target.hi, s.target.lo, pos=s.pos), env)  # type: ignore[attr-defined]
        else:
            cur = target
        if not isinstance(cur, Leaf):
            self.unsupported(s, "compound assignment to a non-scalar")
            return
        if has_call(s.value):
            cur = self.snapshot(cur, s.target)
        rhs = self.ex.leaf(s.value, env)
        t = self.type_of(s.target)
        self.assign(target, self.ex.binop(s.op, cur, rhs, t, s), s)

    def _s_CallStmt(self, s: ast.CallStmt, env: Env) -> None:
        self.call(s.call, env, want_value=False)

    def _s_If(self, s: ast.If, env: Env) -> None:
        c = self.ex.leaf(s.cond, env)
        if c.is_const:
            branch = s.then if c.const else s.else_
            if branch is not None:
                self.stmt(branch, env.child())
            return
        if self.mode != "action":
            self.unsupported(s, f"if statement in a {self.mode}")
            return
        else_l, end_l = Label(), Label()
        self.out.jump_if_zero(as_bool(c), else_l)
        self.stmt(s.then, env.child())
        if s.else_ is not None and not self.out.ends_with_jump():
            self.out.jump(end_l)
        self.out.place(else_l)
        if s.else_ is not None:
            self.stmt(s.else_, env.child())
        self.out.place(end_l)

    def _s_Switch(self, s: ast.Switch, env: Env) -> None:
        st = self.type_of(s.expr)
        if isinstance(st, types.ActionEnum):
            self.unsupported(s, "switch on action_run inside an action")
            return
        if self.mode != "action":
            self.unsupported(s, f"switch statement in a {self.mode}")
            return
        if any(not f.is_function for f in self.frames):
            # p4c's BMv2 mid end (EliminateSwitch) refuses them in actions
            self.ctx.diags.error(ErrorKind.UNSUPPORTED, s.pos,
                                 "switch statements not supported in actions on this target")
            return
        sel = self.ex.leaf(s.expr, env)
        if not sel.is_const and not sel.is_field:
            tmp = self.temp(sel.type if is_scalar(sel.type) else types.Bits(32), "switch_tmp", s.pos)
            self.assign(tmp, sel, s)
            sel = tmp  # type: ignore[assignment]
        end = Label()
        pending: list[ast.Expr] = []
        for case in s.cases:
            pending.append(case.label)
            if case.body is None:
                continue
            labels, pending = pending, []
            nxt = Label()
            if not any(isinstance(x, (ast.Default, ast.DontCare)) for x in labels):
                cond: Optional[dict] = None
                for lab in labels:
                    lv = self.ex.leaf(lab, env)
                    eq = self.ex.compare("==", sel, lv).node  # type: ignore[arg-type]
                    cond = eq if cond is None else expr_node("or", cond, eq)
                assert cond is not None
                self.out.jump_if_zero(cond, nxt)
            self.stmt(case.body, env.child())
            self.out.jump(end)
            self.out.place(nxt)
        self.out.place(end)

    def _s_For(self, s: ast.For, env: Env) -> None:
        """``for (init; cond; update) body`` with jumps (as p4c emits it):

            init; top: _jump_if_zero(cond, brk); body; cont: update; _jump(top); brk:
        """
        if self.mode != "action":
            self.unsupported(s, f"for loop in a {self.mode}")
            return
        lenv = env.child()
        for x in s.init:
            self.stmt(x, lenv)
        top, brk, cont = Label(), Label(), Label()
        self.out.place(top)
        if s.cond is not None:
            c = self.ex.leaf(s.cond, lenv)
            if c.is_const and not c.const:
                return
            if not c.is_const:
                self.out.jump_if_zero(as_bool(c), brk)
        self.loops.append((brk, cont))
        try:
            self.stmt(s.body, lenv.child())
        finally:
            self.loops.pop()
        self.out.place(cont)
        for x in s.update:
            self.stmt(x, lenv)
        self.out.jump(top)
        self.out.place(brk)

    def _s_ForIn(self, s: ast.ForIn, env: Env) -> None:
        """``for (T x in items) body``, unrolled over a constant range, a list
        or a header stack; `break`/`continue` jump out of / to the end of the
        current copy of the body."""
        items = self.for_in_items(s, env)
        if items is None:
            return
        brk = Label()
        for v in items:
            cont = Label()
            benv = env.child()
            benv.declare(s.var, v)
            self.loops.append((brk, cont))
            try:
                self.stmt(s.body, benv)
            finally:
                self.loops.pop()
            self.out.place(cont)
        self.out.place(brk)

    def for_in_items(self, s: ast.ForIn, env: Env) -> Optional[list]:
        it = s.iterable
        if isinstance(it, ast.Range) or (isinstance(it, ast.Binary) and it.op == ".."):
            lo_e, hi_e = (it.lo, it.hi) if isinstance(it, ast.Range) else (it.left, it.right)
            try:
                lo, hi = int(self.ex.const(lo_e, env)), int(self.ex.const(hi_e, env))
            except ConstError:
                self.unsupported(s, "for-in over a range that is not constant")
                return None
            t = self.resolve_type(s.type, env) if s.type is not None else self.type_of(lo_e)
            if hi - lo > 4096:
                self.unsupported(s, "for-in over more than 4096 values")
                return None
            return [ConstBinding(i, t) for i in range(lo, hi + 1)]
        v = self.ex.value(it, env)
        if isinstance(v, StackV) and not v.union_stack:
            return list(v.elems)
        if isinstance(v, StructV):
            return list(v.fields.values())
        self.unsupported(s, "for-in over this expression")
        return None

    def _s_Break(self, s: ast.Break, env: Env) -> None:
        if not self.loops:
            self.unsupported(s, "break outside a loop")
            return
        self.out.jump(self.loops[-1][0])

    def _s_Continue(self, s: ast.Continue, env: Env) -> None:
        if not self.loops:
            self.unsupported(s, "continue outside a loop")
            return
        self.out.jump(self.loops[-1][1])

    def _s_Return(self, s: ast.Return, env: Env) -> None:
        if not self.frames:
            self.unsupported(s, "return outside an action or function")
            return
        fr = self.frames[-1]
        if s.value is not None and fr.result is not None:
            self.assign(fr.result, self.ex.value(s.value, env), s)
        if id(s) == fr.tail_return:
            return  # the body ends here anyway
        if self.mode != "action":
            self.unsupported(s, f"return in a {self.mode}")
            return
        self.out.jump(fr.end)

    def _s_Exit(self, s: ast.Exit, env: Env) -> None:
        if self.mode != "action":
            self.unsupported(s, f"exit in a {self.mode}")
            return
        # out/inout parameters are still copied out, innermost call first
        for fr in reversed(self.frames):
            self.copy_out(fr.outs)
        self.emit("exit", [])
        self.out.jump(self.outer_end)

    # -------------------------------------------------------------- l-values

    def lvalue(self, e: ast.Expr, env: Env) -> Value:
        if isinstance(e, ast.Slice):
            base = self.lvalue(e.expr, env)
            hi = int(self.ex.const(e.hi, env))
            lo = int(self.ex.const(e.lo, env))
            if isinstance(base, SliceTarget):  # x[7:4][1:0] is x[5:4]
                return SliceTarget(base.base, base.lo + hi, base.lo + lo)
            if not isinstance(base, Leaf):
                self.unsupported(e, "slice of a non-scalar")
                return Leaf(hexstr(0), types.Unknown())
            return SliceTarget(base, hi, lo)
        v = self.ex.value(e, env)
        if isinstance(v, Leaf) and not v.lvalue:
            self.unsupported(e, "assignment to this expression")
        return v

    # ------------------------------------------------------------ assignment

    def assign(self, target: Value, value: Value, where: Optional[ast.Node]) -> None:
        if isinstance(target, SliceTarget):
            self.assign_slice(target, value, where)
            return
        if isinstance(target, Leaf):
            if not isinstance(value, Leaf):
                self.unsupported(where, f"assigning {describe(value)} to a scalar")
                return
            if isinstance(types.strip_newtype(target.type), types.Varbit):
                self.emit("assign_VL", [target.node, value.node])
                return
            node = as_data(value)
            b = types.bits_of(target.type)
            if value.is_const and not isinstance(value.const, bool) and b is not None:
                node = hexstr(wrap(int(value.const), b.width, b.signed), b.width)
            self.emit("assign", [param(target.node), param(node)])
            return
        if isinstance(target, HeaderV):
            if isinstance(value, InvalidV):
                self.emit("remove_header", [target.header_node()])
            elif isinstance(value, HeaderV):
                self.emit("assign_header", [param(target.header_node()), param(value.header_node())])
            elif isinstance(value, StructV):
                self.emit("add_header", [param(target.header_node())])
                names = [n for n, _ in target.type.fields]
                by_name = all(n in names for n in value.fields)
                for i, (n, fv) in enumerate(value.fields.items()):
                    fname = n if by_name else (names[i] if i < len(names) else None)
                    if fname is None:
                        self.unsupported(where, f"too many values for header {target.type}")
                        break
                    self.assign(target.field(fname), fv, where)
            else:
                self.unsupported(where, f"assigning {describe(value)} to a header")
            return
        if isinstance(target, UnionV):
            if isinstance(value, InvalidV):
                for h in target.members.values():
                    self.emit("remove_header", [h.header_node()])
            elif isinstance(value, UnionV):
                self.emit("assign_union", [target.union_node(), value.union_node()])
            else:
                self.unsupported(where, f"assigning {describe(value)} to a header union")
            return
        if isinstance(target, StackV):
            if isinstance(value, StackV):
                op = "assign_union_stack" if target.union_stack else "assign_header_stack"
                self.emit(op, [target.node(), value.node()])
            elif isinstance(value, StructV):
                elems = target.elems if not target.union_stack else target.unions  # type: ignore[attr-defined]
                for te, ve in zip(elems, value.fields.values()):
                    self.assign(te, ve, where)
            else:
                self.unsupported(where, f"assigning {describe(value)} to a header stack")
            return
        if isinstance(target, StructV):
            if isinstance(value, StructV):
                names = list(target.fields)
                vals = list(value.fields.items())
                by_name = all(n in target.fields for n, _ in vals)
                if by_name:
                    for n, fv in vals:
                        self.assign(target.fields[n], fv, where)
                else:
                    for n, (_, fv) in zip(names, vals):
                        self.assign(target.fields[n], fv, where)
            else:
                self.unsupported(where, f"assigning {describe(value)} to a struct")
            return
        if isinstance(target, Leaf) or target is None:
            self.unsupported(where, "assignment target")
            return
        self.unsupported(where, f"assignment to {describe(target)}")

    def assign_slice(self, t: SliceTarget, value: Value, where) -> None:
        if not isinstance(value, Leaf):
            self.unsupported(where, "assigning an aggregate to a slice")
            return
        b = types.bits_of(t.base.type)
        if b is None:
            self.unsupported(where, "slice of a non-bit value")
            return
        w = t.hi - t.lo + 1
        field_mask = mask(b.width)
        slice_mask = mask(w) << t.lo
        keep = hexstr(field_mask & ~slice_mask, b.width)
        if value.is_const:
            ins: dict = hexstr((int(value.const) << t.lo) & slice_mask, b.width)
        else:
            v = as_data(value)
            if t.lo:
                v = expr_node("<<", v, {"type": "hexstr", "value": hex(t.lo)})
            ins = expr_node("&", v, hexstr(slice_mask, b.width))
        node = expr_node("|", expr_node("&", t.base.node, keep), ins)
        self.emit("assign", [param(t.base.node), param(node)])

    # ----------------------------------------------------------------- calls

    def call_value(self, e: ast.Call, env: Env) -> Value:
        """A call used as an expression (ExpressionConverter's hook)."""
        v = self.call(e, env, want_value=True)
        if v is None:
            self.unsupported(e, "call without a value used in an expression")
            return Leaf(hexstr(0), types.Unknown())
        return v

    def call(self, e: ast.Call, env: Env, want_value: bool) -> Optional[Value]:
        callee = e.callee
        if isinstance(callee, ast.Name):
            b = None if callee.toplevel else env.lookup(callee.name)
            if b is None:
                b = self.ex.global_binding(callee.name, callee)
            if isinstance(b, ActionBinding):
                self.inline_action(b, e.args, env, e)
                return None
            if isinstance(b, FunctionBinding):
                return self.inline_function(b, e, env)
            if isinstance(b, Symbol) and b.kind == "function":
                return self.externs.function(callee.name, e, env)
            self.unsupported(e, f"call of {callee.name}")
            return None
        if isinstance(callee, ast.Member):
            obj = self.ex.value(callee.expr, env)
            return self.method(obj, callee.name, e, env)
        self.unsupported(e, "this kind of call")
        return None

    def method(self, obj: Any, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        if isinstance(obj, TypeSizeV) or (name in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits",
                                                   "maxSizeInBytes")):
            t = obj.type if isinstance(obj, TypeSizeV) else self.type_of(e.callee.expr)  # type: ignore[attr-defined]
            w = types.width_of(t if not isinstance(t, types.TypeOfType) else t.type)
            if w is None:
                self.unsupported(e, f"{name} of a type without a fixed size")
                return None
            return Leaf(hexstr(w if name.endswith("Bits") else (w + 7) // 8), types.InfInt(), "data",
                        w if name.endswith("Bits") else (w + 7) // 8)
        if isinstance(obj, MethodV):
            return self._method_on(obj.obj, obj.name, e, env)
        return self._method_on(obj, name, e, env)

    def _method_on(self, obj: Any, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        if isinstance(obj, HeaderV):
            if name == "isValid":
                return obj.valid()
            if name == "setValid":
                self.emit("add_header", [param(obj.header_node())])
                return None
            if name == "setInvalid":
                self.emit("remove_header", [param(obj.header_node())])
                return None
        if isinstance(obj, UnionV) and name == "isValid":
            return Leaf(expr_node("valid_union", None, obj.union_node()), types.Bool(), "bool")
        if isinstance(obj, StackV) and name in ("push_front", "pop_front"):
            n = self.ex.const(e.args[0].value, env) if e.args else 1  # type: ignore[arg-type]
            self.emit("push" if name == "push_front" else "pop", [obj.node(), hexstr(int(n))])
            return None
        if isinstance(obj, ExternBinding):
            return self.externs.method(obj, name, e, env)
        if isinstance(obj, PacketBinding):
            return self.packet_method(obj, name, e, env)
        if isinstance(obj, TableBinding):
            return self.table_apply(obj, e, env)
        if isinstance(obj, BlockBinding):
            return self.block_apply(obj, e, env)
        if isinstance(obj, ValueSetB):
            self.unsupported(e, f"method {name} of a value set")
            return None
        self.unsupported(e, f"method {name} of {describe(obj)}")
        return None

    # hooks that the parser/control converters override
    def packet_method(self, pkt: PacketBinding, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        self.unsupported(e, f"packet {name} here")
        return None

    def table_apply(self, t: TableBinding, e: ast.Call, env: Env) -> Optional[Value]:
        self.unsupported(e, "applying a table inside an action")
        return None

    def block_apply(self, b: BlockBinding, e: ast.Call, env: Env) -> Optional[Value]:
        self.unsupported(e, "applying a control or parser here")
        return None

    def verify(self, cond: dict, err: dict, e: ast.Node) -> None:
        self.unsupported(e, "verify outside a parser")

    def checksum_call(self, e: ast.Call, env: Env, verify: bool, payload: bool) -> None:
        self.unsupported(e, "checksum functions outside the checksum controls")

    def apply_result_member(self, r: ApplyResultV, name: str, e, env) -> Value:
        self.unsupported(e, f"{name} of a table's apply result here")
        return Leaf(hexstr(0), types.Unknown())

    def mux_aggregate(self, e: ast.Mux, c: Leaf, a: Value, b: Value, env: Env) -> Value:
        """`c ? a : b` on headers or structs: a temporary assigned in branches."""
        if self.mode != "action":
            self.unsupported(e, "?: on headers or structs here")
            return a
        t = self.type_of(e)
        tmp = self.temp(t, "tmp", e.pos)
        else_l, end_l = Label(), Label()
        self.out.jump_if_zero(as_bool(c), else_l)
        self.assign(tmp, a, e)
        self.out.jump(end_l)
        self.out.place(else_l)
        self.assign(tmp, b, e)
        self.out.place(end_l)
        return tmp

    def snapshot(self, v: Leaf, where: ast.Expr) -> Leaf:
        """The value of `v` now, in a temporary (for operands evaluated
        before calls that could change them)."""
        t = v.type
        if types.bits_of(t) is None and not isinstance(types.strip_newtype(t), types.Bool):
            return v
        tmp = self.temp(t, "tmp", where.pos)
        assert isinstance(tmp, Leaf)
        self.assign(tmp, v, where)
        return Leaf(tmp.node, t, "data")

    def logic_with_effects(self, e: ast.Binary, lv: Leaf, env: Env) -> Value:
        """`a && f()` / `a || f()`: f runs only when it decides the result."""
        if self.mode != "action":
            self.unsupported(e, f"{e.op} with calls on its right here")
            return Leaf(hexstr(0), types.Unknown())
        tmp = self.temp(types.Bool(), "tmp", e.pos)
        assert isinstance(tmp, Leaf)
        self.assign(tmp, lv, e.left)
        end = Label()
        if e.op == "&&":
            self.out.jump_if_zero(as_bool(tmp), end)
        else:
            self.out.jump_if_zero(expr_node("not", None, as_bool(tmp)), end)
        self.assign(tmp, self.ex.leaf(e.right, env), e.right)
        self.out.place(end)
        return tmp

    def mux_with_effects(self, e: ast.Mux, c: Leaf, env: Env) -> Value:
        """`c ? f() : g()`: only the chosen branch's calls run."""
        if self.mode != "action":
            self.unsupported(e, "?: with calls in its branches here")
            return Leaf(hexstr(0), types.Unknown())
        t = self.type_of(e)
        if isinstance(t, (types.Unknown, types.InfInt)):
            t = self.type_of(e.then)
        tmp = self.temp(t, "tmp", e.pos)
        else_l, end_l = Label(), Label()
        self.out.jump_if_zero(as_bool(c), else_l)
        self.assign(tmp, self.ex.value(e.then, env), e.then)
        self.out.jump(end_l)
        self.out.place(else_l)
        self.assign(tmp, self.ex.value(e.else_, env), e.else_)
        self.out.place(end_l)
        return tmp

    # -------------------------------------------------------------- inlining

    def bind_arguments(self, params: tuple[ast.Param, ...], args: tuple[ast.Argument, ...],
                       callee_env: Env, caller_env: Env, where: ast.Node,
                       param_scope_env: Env, alias_in: bool = False,
                       skip: int = 0, body: Optional[ast.Block] = None
                       ) -> list[tuple[Value, Value, ast.Expr]]:
        """Bind `params` (from index `skip`) to `args` in `callee_env`.

        in/directionless arguments that are not constants are copied into
        temporaries; out/inout arguments too, and the returned (target,
        temporary, argument) triples are to be copied back after the body
        (`copy_out`).  With `alias_in` (inlined controls and parsers, which
        cannot reach the caller's storage otherwise) out/inout arguments
        and headers/structs passed `in` are bound directly; scalars passed
        `in` are still copied (cheap, and right even when another argument
        aliases them).

        Given the callee's `body`, parameters it never mentions get no
        copies where p4c's LocalCopyPropagation removes them (see
        copyelim): BMv2 does not bounds-check a run-time stack index, so a
        needless copy of ``h.s[i].f`` can abort the switch.  Their
        arguments are still evaluated (side effects stay)."""
        copy_out: list[tuple[Value, Value, ast.Expr]] = []
        pairs: list[tuple[ast.Param, Optional[ast.Argument]]] = []
        by_name = {p.name: p for p in params}
        given: dict[str, ast.Argument] = {}
        positional = [a for a in args if a.name is None]
        named = [a for a in args if a.name is not None]
        for p, a in zip(params[skip:], positional):
            given[p.name] = a
        for a in named:
            if a.name in by_name:
                given[a.name] = a  # type: ignore[index]
        for p in params[skip:]:
            pairs.append((p, given.get(p.name)))
        elided = elided_copies(pairs, body) if body is not None and not alias_in else frozenset()
        for p, a in pairs:
            pt = self.resolve_type(p.type, param_scope_env)
            if a is None or a.value is None:
                if a is None and p.default is not None:
                    callee_env.declare(p.name, self.ex.value(p.default, param_scope_env))
                    continue
                # `_` or missing optional argument: a scratch location
                if isinstance(types.strip_newtype(pt), types.TypeVar) or isinstance(pt, types.Unknown):
                    callee_env.declare(p.name, None)
                    continue
                callee_env.declare(p.name, self.temp(pt, p.name, where.pos))
                continue
            if isinstance(pt, (types.TypeVar, types.Unknown)):
                pt = self.type_of(a.value)
            if p.name in elided:
                if p.direction == "inout":
                    callee_env.declare(p.name, self.lvalue(a.value, caller_env))
                else:
                    callee_env.declare(p.name, self.ex.value(a.value, caller_env))
                continue
            if p.direction in ("out", "inout"):
                target = self.lvalue(a.value, caller_env)
                if alias_in or isinstance(target, (ExternBinding, TableBinding, BlockBinding, PacketBinding)):
                    callee_env.declare(p.name, target)
                    continue
                # copy-in/copy-out: the callee may also reach the argument's
                # storage directly (an action writing a control local)
                tmp = self.temp(pt, p.name, where.pos)
                if p.direction == "inout":
                    self.assign(tmp, self.ex.value(a.value, caller_env), a.value)
                copy_out.append((target, tmp, a.value))
                callee_env.declare(p.name, tmp)
                continue
            v = self.ex.value(a.value, caller_env)
            if isinstance(v, Leaf) and v.is_const:
                b = types.bits_of(pt)
                if b is not None and not isinstance(types.strip_newtype(pt), types.Bool) and isinstance(v.const, int):
                    v = leaf_const(v.const, pt)
                callee_env.declare(p.name, v)
            elif isinstance(v, Leaf) and v.node.get("type") == "runtime_data":
                callee_env.declare(p.name, v)
            elif alias_in and isinstance(v, (HeaderV, StructV, StackV, UnionV)):
                callee_env.declare(p.name, v)
            elif isinstance(v, (ExternBinding, TableBinding, BlockBinding, PacketBinding)):
                callee_env.declare(p.name, v)
            else:
                tmp = self.temp(pt, p.name, where.pos)
                self.assign(tmp, v, a.value)
                callee_env.declare(p.name, tmp)
        return copy_out

    def copy_out(self, pairs) -> None:
        for target, tmp, arg in pairs:
            self.assign(target, tmp, arg)

    def inline_action(self, ab: ActionBinding, args, caller_env: Env, where: ast.Node) -> None:
        d = ab.decl
        if self.ctx.inline_depth > 32:
            self.unsupported(where, "recursive action calls")
            return
        env = Env(ab.env, ab.env.blk)
        outs = self.bind_arguments(d.params, args, env, caller_env, where, ab.env,
                                   body=d.body)
        fr = Frame(Label(), outs=outs, tail_return=_tail_return(d.body))
        self.run_inlined(fr, d.body, env)

    def inline_function(self, fb: FunctionBinding, e: ast.Call, caller_env: Env) -> Optional[Value]:
        d = fb.decl
        if self.ctx.inline_depth > 32:
            self.unsupported(e, "recursive function calls")
            return None
        env = Env(fb.env, fb.env.blk)
        proto = d.proto
        # bind type parameters from the call's argument types
        outs = self.bind_arguments(proto.params, e.args, env, caller_env, e, fb.env,
                                   body=d.body)
        rt = self.type_of(e)
        result: Optional[Value] = None
        if proto.return_type is not None and not isinstance(proto.return_type, ast.TypeVoid):
            if isinstance(rt, (types.Unknown, types.TypeVar, types.Void)):
                rt = self.resolve_type(proto.return_type, fb.env)
            if not isinstance(rt, (types.Unknown, types.TypeVar, types.Void)):
                result = self.temp(rt, "retval", e.pos)
        fr = Frame(Label(), result, True, outs, tail_return=_tail_return(d.body))
        self.run_inlined(fr, d.body, env)
        return result

    def run_inlined(self, fr: Frame, body: ast.Block, env: Env) -> None:
        """Emits an inlined action's or function's body inside its frame
        (the label `return` jumps to), then copies out its out/inout
        arguments."""
        self.frames.append(fr)
        self.ctx.inline_depth += 1
        try:
            self.stmts(body.stmts, env)
        finally:
            self.ctx.inline_depth -= 1
            self.frames.pop()
        self.out.place(fr.end)
        self.copy_out(fr.outs)


def _tail_return(body: ast.Block) -> int:
    """id() of the body's last statement when it is its only `return`."""
    if not body.stmts or not isinstance(body.stmts[-1], ast.Return):
        return 0
    last = body.stmts[-1]
    count = 0
    stack: list = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            count += 1
        if isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, ast.Stmt):
            for f in n.__dataclass_fields__:
                v = getattr(n, f)
                if isinstance(v, (ast.Stmt, list, tuple)):
                    stack.append(v)
    return id(last) if count == 1 else 0
