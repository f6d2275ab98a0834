"""Controls (ingress, egress) as BMv2 pipelines: a graph of tables and
conditionals (p4c's ControlConverter).

Lowering runs in two steps.  First the apply block is walked in order (so
declarations are in scope) into a list of items:

    Prims   straight-line statements, lowered to primitives; becomes a
            synthesized action run by a keyless table (``tbl_<name>``)
    Apply   a table application, with the code chosen by `switch
            (t.apply().action_run)` or `if (t.apply().hit)` attached
    Cond    an `if` on anything else: a BMv2 conditional (``node_N``)
    Exit    `exit`: nothing after it runs
    Return  `return`: go to the end of the control being inlined
    Scope   the inlined body of a sub-control (its `return` ends there)

Then the items are linked from last to first, each getting the name of the
node that follows it ("continuation passing"):

    apply { a = 1; if (h.isValid()) { t.apply(); } b = 2; }
becomes
    tbl_xl3 (a = 1) -> node_0 (d2b(h.$valid$)) --true--> ingress.t -> tbl_xl4 (b = 2)
                                               --false-> tbl_xl4 -> null

Sub-controls are inlined with their tables and actions named under the
instance's path; `switch` on a value becomes a chain of conditionals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import ast
from .. import types
from ..exprtext import expr_text
from .env import ActionBinding, BlockBinding, Env, ExternBinding, TableBinding
from .expressions import ApplyResultV
from .names import source_name
from .primitives import BodyLowerer
from .tables import TableConverter
from .values import Leaf, as_bool, expr_node, hexstr


# ------------------------------------------------------------------- items


class Item:
    pass


@dataclass(eq=False)
class Prims(Item):
    body: BodyLowerer
    pos: Any = None
    direct_action: Optional[tuple] = None   # (ActionBinding, args, env) for `a(...)` alone

    @property
    def empty(self) -> bool:
        return not self.body.out.prims and self.direct_action is None


@dataclass(eq=False)
class Apply(Item):
    table: dict
    action_names: dict[int, str]
    cases: Optional[list[tuple[list[str], list[Item]]]] = None   # switch (action_run)
    default: Optional[list[Item]] = None
    hit: Optional[list[Item]] = None
    miss: Optional[list[Item]] = None
    reapplied: bool = False
    where: Any = None


@dataclass(eq=False)
class Cond(Item):
    expr: dict
    then: list[Item] = field(default_factory=list)
    else_: list[Item] = field(default_factory=list)
    source: Optional[ast.Expr] = None


class Exit(Item):
    pass


class Return(Item):
    pass


@dataclass(eq=False)
class ScopeItem(Item):
    items: list[Item]


# ----------------------------------------------------------------- lowering


class ApplyBodyLowerer(BodyLowerer):
    """Straight-line code of an apply block: table and block applications
    are handled by the control converter, not here."""

    def __init__(self, ctx, control: "ControlLowering") -> None:
        super().__init__(ctx)
        self.control = control

    def apply_result_member(self, r: ApplyResultV, name: str, e, env) -> Any:
        self.unsupported(e, f"table application in this position (.{name})")
        return Leaf(hexstr(0), types.Unknown())

    def table_apply(self, t: TableBinding, e: ast.Call, env: Env) -> Any:
        # applications the control converter did not lift out (inside loops)
        self.unsupported(e, f"applying table {t.name} here (inside a loop or an action)")
        return None


class Pipeline:
    """One BMv2 pipeline being built (tables, conditionals, profiles)."""

    def __init__(self, ctx, name: str) -> None:
        self.ctx = ctx
        self.name = name
        self.tables: list[dict] = []
        self.conditionals: list[dict] = []
        self.action_profiles: list[dict] = []
        self.direct_meters: list[tuple[ExternBinding, dict]] = []
        self.init_table: Optional[str] = None

    def action_profile(self, eb: ExternBinding, selector_inputs: list[dict], where: ast.Node) -> None:
        for ap in self.action_profiles:
            if ap["name"] == eb.name:
                if eb.kind == "action_selector" and ap.get("selector", {}).get("input") != selector_inputs:
                    self.ctx.unsupported(where.pos, f"action selector {eb.name} shared by tables with different selector keys")
                return
        args = eb.info.get("args", [])
        if eb.kind == "action_selector":
            algo = args[0] if args else "crc16"
            size = args[1] if len(args) > 1 and isinstance(args[1], int) else 0
            from .externs import HASH_ALGOS
            ap = {"name": eb.name, "id": len(self.action_profiles), "max_size": size,
                  "selector": {"algo": HASH_ALGOS.get(algo, algo), "input": selector_inputs}}
        else:
            size = args[0] if args and isinstance(args[0], int) else 0
            ap = {"name": eb.name, "id": len(self.action_profiles), "max_size": size}
        self.action_profiles.append(ap)

    def render(self, pid: int, first_ids: dict[str, int]) -> dict:
        """The pipeline's JSON; table, conditional and action profile ids
        continue from `first_ids` (they are unique across pipelines, as p4c
        numbers them), which is advanced."""
        for key, objs in (("tables", self.tables), ("conditionals", self.conditionals),
                          ("action_profiles", self.action_profiles)):
            for i, o in enumerate(objs):
                o["id"] = first_ids.get(key, 0) + i
            first_ids[key] = first_ids.get(key, 0) + len(objs)
        return {"name": self.name, "id": pid, "init_table": self.init_table,
                "tables": self.tables, "action_profiles": self.action_profiles,
                "conditionals": self.conditionals}


class ControlLowering:
    """Lowers one top-level control (and the sub-controls it applies)."""

    def __init__(self, ctx, pipeline: Pipeline) -> None:
        self.ctx = ctx
        self.pipeline = pipeline
        self.tables = TableConverter(ctx, pipeline)
        self.applied_tables: dict[str, str] = {}
        self.table_items: dict[str, Apply] = {}

    # ------------------------------------------------------------- items

    def new_prims(self, items: list[Item], pos) -> Prims:
        p = Prims(ApplyBodyLowerer(self.ctx, self), pos)
        items.append(p)
        return p

    def open_prims(self, items: list[Item], pos) -> Prims:
        if items and isinstance(items[-1], Prims) and items[-1].direct_action is None:
            last = items[-1]
            if last.pos is None:
                last.pos = pos
            return last
        return self.new_prims(items, pos)

    def lower_control(self, blk, params: dict[str, Any], parent_env: Optional[Env] = None) -> list[Item]:
        """The items of a control's body, its locals declared and initialized."""
        env, inits = self.ctx.block_env(blk, params, parent_env)
        items: list[Item] = []
        for d in inits:
            p = self.open_prims(items, d.pos)
            v = p.body.ex.value(d.init, env)
            p.body.assign(env.lookup(d.name), v, d.init)
        body = blk.decl.body
        self.stmts(body.stmts, env, items)
        self.declare_unused(env)
        return items

    def declare_unused(self, env: Env) -> None:
        """Tables never applied and action profiles no table uses still exist
        for the control plane (P4Info lists them)."""
        for b in list(env.names.values()):
            if isinstance(b, ExternBinding) and b.kind in ("action_profile", "action_selector"):
                if not any(ap["name"] == b.name for ap in self.pipeline.action_profiles):
                    self.pipeline.action_profile(b, [], b.decl)
            if isinstance(b, TableBinding) and b.name not in self.applied_tables:
                body = ApplyBodyLowerer(self.ctx, self)
                j, _ = self.tables.build(b, body)
                if body.out.prims:
                    pass  # key computations of a table never applied are dead
                j["base_default_next"] = None
                j["next_tables"] = {a: None for a in j["actions"]}
                self.pipeline.tables.append(j)
                self.applied_tables[b.name] = j["name"]

    def stmts(self, stmts, env: Env, items: list[Item]) -> None:
        for s in stmts:
            if items and isinstance(items[-1], (Exit, Return)):
                return  # dead code
            self.stmt(s, env, items)

    def stmt(self, s: ast.Stmt, env: Env, items: list[Item]) -> None:
        if isinstance(s, ast.Block):
            self.stmts(s.stmts, env.child(), items)
        elif isinstance(s, ast.If):
            self.if_stmt(s, env, items)
        elif isinstance(s, ast.Switch):
            self.switch_stmt(s, env, items)
        elif isinstance(s, ast.Exit):
            items.append(Exit())
        elif isinstance(s, ast.Return):
            items.append(Return())
        elif isinstance(s, ast.CallStmt) and self.call_stmt(s.call, env, items):
            pass
        else:
            self.pre_apply_exprs(s, env, items)
            p = self.open_prims(items, s.pos)
            p.body.stmt(s, env)

    # --------------------------------------------------------- applications

    def resolve_apply(self, e: ast.Expr, env: Env) -> Optional[Any]:
        """If `e` is `X.apply(...)` for a table or sub-block X, that X."""
        if not (isinstance(e, ast.Call) and isinstance(e.callee, (ast.Member, ast.TypeMember))
                and e.callee.name == "apply"):
            return None
        callee = e.callee
        if isinstance(callee, ast.TypeMember):
            blk = env.blk
            t = self.ctx.checker.resolve_type(callee.type, self.ctx.type_scope(env))
            if isinstance(t, types.Block) and blk is not None and t.decl.name in blk.children:
                key = ("direct", blk.path, t.decl.name)
                b = self.ctx._instances.get(key)
                if b is None:
                    b = BlockBinding(blk.children[t.decl.name])
                    self.ctx._instances[key] = b
                return b
            return None
        if isinstance(callee.expr, ast.Name):
            b = env.lookup(callee.expr.name)
            if b is None:
                sym = self.ctx.checker.glob.lookup(callee.expr.name)
                if sym is not None and sym.kind == "instance":
                    b = self.ctx.global_instance(sym.decl)
            if isinstance(b, (TableBinding, BlockBinding)):
                return b
        return None

    def call_stmt(self, call: ast.Call, env: Env, items: list[Item]) -> bool:
        target = self.resolve_apply(call, env)
        if isinstance(target, TableBinding):
            self.apply_table(target, call, env, items)
            return True
        if isinstance(target, BlockBinding):
            self.apply_block(target, call, env, items)
            return True
        if isinstance(call.callee, ast.Name):
            b = env.lookup(call.callee.name)
            if b is None:
                sym = self.ctx.checker.glob.lookup(call.callee.name)
                if sym is not None and sym.kind == "action":
                    b = ActionBinding(sym.decl, None, self.ctx.root_env, True)
            if isinstance(b, ActionBinding):
                self.pre_apply_exprs(call, env, items)
                p = self.new_prims(items, call.pos)
                p.direct_action = (b, call.args, env)
                return True
        return False

    def apply_table(self, tb: TableBinding, call: ast.Call, env: Env, items: list[Item]) -> Apply:
        if tb.name in self.applied_tables:
            # allowed only where every application continues the same way
            prev = self.table_items[tb.name]
            a = Apply(prev.table, prev.action_names, reapplied=True, where=call)
            items.append(a)
            return a
        for prop in tb.decl.properties:
            if prop.kind == "key":
                for k in prop.value:  # type: ignore[union-attr]
                    self.pre_apply_exprs(k.expr, tb.env, items)
        p = self.open_prims(items, call.pos)
        j, names = self.tables.build(tb, p.body)
        self.applied_tables[tb.name] = j["name"]
        self.pipeline.tables.append(j)
        a = Apply(j, names)
        self.table_items[tb.name] = a
        items.append(a)
        return a

    def apply_block(self, bb: BlockBinding, call: ast.Call, env: Env, items: list[Item]) -> None:
        inst = bb.inst
        if inst.kind != "control":
            self.ctx.unsupported(call.pos, "applying a parser from a control")
            return
        bb.applied += 1  # each application is inlined again (its tables may not be)
        p = self.open_prims(items, call.pos)
        callee_env = Env(self.ctx.root_env, inst)
        p.body.bind_arguments(inst.decl.params, call.args, callee_env, env, call, callee_env,
                              alias_in=True)
        params = dict(callee_env.names)
        sub = self.lower_control(inst, params, parent_env=env)
        items.append(ScopeItem(sub))

    # ----------------------------------------------------------- expressions

    def pre_apply_exprs(self, node: Any, env: Env, items: list[Item]) -> None:
        """Table applications inside an expression (`x = t.apply().hit`):
        apply the table first, recording hit/miss in a temporary."""
        for m, guards in _apply_result_members(node):
            tb = self.resolve_apply(m.expr, env)
            if not isinstance(tb, TableBinding):
                continue
            target: Optional[list[Item]] = items
            for g, polarity in guards:
                # applied only where the expression evaluates it
                assert target is not None
                p = self.open_prims(target, m.pos)
                c = p.body.ex.leaf(g, env)
                if c.is_const:
                    if bool(c.const) != polarity:
                        target = None  # never evaluated: not applied at all
                        break
                    continue
                cond = Cond(as_bool(c))
                target.append(cond)
                target = cond.then if polarity else cond.else_
            if target is None:
                continue
            a = self.apply_table(tb, m.expr, env, target)  # type: ignore[arg-type]
            tmp = self.ctx.storage.scalar("tmp", types.Bool())
            hit_p = Prims(ApplyBodyLowerer(self.ctx, self), m.pos)
            hit_p.body.emit("assign", [tmp.node, hexstr(1, 1)])
            miss_p = Prims(ApplyBodyLowerer(self.ctx, self), m.pos)
            miss_p.body.emit("assign", [tmp.node, hexstr(0, 1)])
            if m.name == "hit":
                a.hit, a.miss = [hit_p], [miss_p]
            elif m.name == "miss":
                a.hit, a.miss = [miss_p], [hit_p]
            else:
                self.ctx.unsupported(m.pos, f"{m.name} of a table application here")
            self.ctx.apply_overrides[id(m)] = Leaf(tmp.node, types.Bool(), "data", None, True)

    def if_stmt(self, s: ast.If, env: Env, items: list[Item]) -> None:
        cond = s.cond
        negate = False
        while isinstance(cond, ast.Unary) and cond.op == "!":
            negate = not negate
            cond = cond.expr
        if isinstance(cond, ast.Member) and cond.name in ("hit", "miss"):
            tb = self.resolve_apply(cond.expr, env)
            if isinstance(tb, TableBinding):
                a = self.apply_table(tb, cond.expr, env, items)  # type: ignore[arg-type]
                then_items: list[Item] = []
                else_items: list[Item] = []
                self.stmt(s.then, env.child(), then_items)
                if s.else_ is not None:
                    self.stmt(s.else_, env.child(), else_items)
                is_hit = (cond.name == "hit") != negate
                a.hit, a.miss = (then_items, else_items) if is_hit else (else_items, then_items)
                return
        self.pre_apply_exprs(s.cond, env, items)
        p = self.open_prims(items, s.pos)
        c = p.body.ex.leaf(s.cond, env)
        if c.is_const:
            branch = s.then if c.const else s.else_
            if branch is not None:
                self.stmt(branch, env.child(), items)
            return
        node = Cond(as_bool(c), source=s.cond)
        self.stmt(s.then, env.child(), node.then)
        if s.else_ is not None:
            self.stmt(s.else_, env.child(), node.else_)
        items.append(node)

    def switch_stmt(self, s: ast.Switch, env: Env, items: list[Item]) -> None:
        e = s.expr
        if isinstance(e, ast.Member) and e.name == "action_run":
            tb = self.resolve_apply(e.expr, env)
            if isinstance(tb, TableBinding):
                a = self.apply_table(tb, e.expr, env, items)  # type: ignore[arg-type]
                a.cases = []
                pending: list[str] = []
                for case in s.cases:
                    if isinstance(case.label, (ast.Default, ast.DontCare)):
                        if case.body is not None:
                            body_items: list[Item] = []
                            self.stmt(case.body, env.child(), body_items)
                            if pending:
                                a.cases.append((pending, body_items))
                                pending = []
                            a.default = body_items
                        continue
                    ab = self.tables.actions.resolve(case.label, env)
                    name = a.action_names.get(id(ab.decl)) if ab is not None else None
                    if name is None:
                        self.ctx.unsupported(case.label.pos, "this switch label")
                        continue
                    pending.append(name)
                    if case.body is None:
                        continue
                    body_items = []
                    self.stmt(case.body, env.child(), body_items)
                    a.cases.append((pending, body_items))
                    pending = []
                return
            self.ctx.unsupported(s.pos, "switch on action_run of this expression")
            return
        # switch on a value: a chain of conditionals
        self.pre_apply_exprs(s.expr, env, items)
        p = self.open_prims(items, s.pos)
        sel = p.body.ex.leaf(s.expr, env)
        if not sel.is_const and not sel.is_field:
            tmp = p.body.temp(sel.type if types.bits_of(sel.type) is not None else types.Bits(32), "switch", s.pos)
            p.body.assign(tmp, sel, s)
            sel = tmp  # type: ignore[assignment]
        groups: list[tuple[list[ast.Expr], ast.Block]] = []
        pending_labels: list[ast.Expr] = []
        for case in s.cases:
            pending_labels.append(case.label)
            if case.body is not None:
                groups.append((pending_labels, case.body))
                pending_labels = []
        self.switch_chain(groups, sel, p.body, env, items)

    def switch_chain(self, groups, sel: Leaf, body: BodyLowerer, env: Env, items: list[Item]) -> None:
        if not groups:
            return
        labels, blk = groups[0]
        if any(isinstance(x, (ast.Default, ast.DontCare)) for x in labels):
            self.stmt(blk, env.child(), items)
            return
        cond: Optional[dict] = None
        const_true = False
        for lab in labels:
            lv = body.ex.leaf(lab, env)
            eq = body.ex.compare("==", sel, lv)
            if eq.is_const:
                if eq.const:
                    const_true = True
                continue
            cond = eq.node if cond is None else expr_node("or", cond, eq.node)
        if const_true:
            self.stmt(blk, env.child(), items)
            return
        if cond is None:
            self.switch_chain(groups[1:], sel, body, env, items)
            return
        node = Cond(cond)
        self.stmt(blk, env.child(), node.then)
        self.switch_chain(groups[1:], sel, body, env, node.else_)
        items.append(node)

    # --------------------------------------------------------------- linking

    def link(self, items: list[Item], cont: Optional[str], ret: Optional[str]) -> Optional[str]:
        nxt = cont
        for item in reversed(items):
            nxt = self.link_item(item, nxt, ret)
        return nxt

    def link_item(self, item: Item, nxt: Optional[str], ret: Optional[str]) -> Optional[str]:
        if isinstance(item, Prims):
            return self.link_prims(item, nxt)
        if isinstance(item, Apply):
            return self.link_apply(item, nxt, ret)
        if isinstance(item, Cond):
            t = self.link(item.then, nxt, ret)
            f = self.link(item.else_, nxt, ret)
            if t == f:
                return t
            name = self.ctx.fresh_node_name()
            cj: dict[str, Any] = {"name": name, "id": 0}
            if item.source is not None:
                text = expr_text(item.source).replace(".$valid$", ".isValid()")
                si = self.ctx.source_info(item.source.pos, text)
                if si is not None:
                    cj["source_info"] = si
            cj.update({"expression": item.expr, "true_next": t, "false_next": f})
            self.pipeline.conditionals.append(cj)
            return name
        if isinstance(item, Exit):
            return None
        if isinstance(item, Return):
            return ret
        if isinstance(item, ScopeItem):
            return self.link(item.items, nxt, nxt)
        raise TypeError(item)

    def link_prims(self, p: Prims, nxt: Optional[str]) -> Optional[str]:
        ctx = self.ctx
        data: list[str] = []
        if p.direct_action is not None:
            ab, args, env = p.direct_action
            aid, aname, data = self.direct_action(p, ab, args, env)
            tname = ctx.table_namer.fresh("tbl_" + _short(aname))
        else:
            prims = p.body.finish()
            if not prims:
                return nxt
            aname = ctx.action_namer.fresh(source_name(p.pos))
            aid = ctx.add_action(aname, [], prims)
            tname = ctx.table_namer.fresh("tbl_" + aname)
        self.pipeline.tables.append({
            "name": tname, "id": 0, "key": [], "match_type": "exact", "type": "simple",
            "max_size": 1024, "with_counters": False, "support_timeout": False,
            "direct_meters": None, "action_ids": [aid], "actions": [aname],
            "base_default_next": nxt, "next_tables": {aname: nxt},
            "default_entry": {"action_id": aid, "action_const": True, "action_data": data,
                              "action_entry_const": True}})
        return tname

    def direct_action(self, p: Prims, ab: ActionBinding, args, env: Env) -> tuple[int, str, list[str]]:
        """A direct call `a(args)`: the table action itself when every
        argument is a constant (passed as action data), else an inlined copy."""
        params = ab.decl.params
        consts: Optional[list] = []
        body = p.body
        if all(q.direction == "" for q in params) and len(args) == len(params) \
                and all(a.name is None and a.value is not None for a in args):
            for a in args:
                try:
                    consts.append(body.ex.const(a.value, env))  # type: ignore[union-attr]
                except Exception:
                    consts = None
                    break
        else:
            consts = None
        if consts is not None and all(isinstance(c, (int, bool)) for c in consts):
            aid, name = self.tables.actions.action_id(ab, (), env, ab.decl)
            data = []
            for q, c in zip(params, consts):
                pt = self.ctx.checker.resolve_type(q.type, self.ctx.type_scope(ab.env))
                w = types.width_of(pt) or 0
                from .values import hex_text, wrap
                data.append(hex_text(wrap(int(c), w, False) if w else int(c)))
            return aid, name, data
        body.inline_action(ab, args, env, ab.decl)
        prims = body.finish()
        name = self.ctx.action_namer.fresh(source_name(p.pos))
        return self.ctx.add_action(name, [], prims), name, []

    def link_apply(self, a: Apply, nxt: Optional[str], ret: Optional[str]) -> str:
        j = a.table
        base, nt = self.table_next(a, nxt, ret)
        if "next_tables" in j:
            if j["next_tables"] != nt or j["base_default_next"] != base:
                self.ctx.unsupported(a.where.pos if a.where is not None else None,
                                     f"applying table {j['name']} more than once")
            return j["name"]
        j["base_default_next"] = base
        j["next_tables"] = nt
        return j["name"]

    def table_next(self, a: Apply, nxt: Optional[str], ret: Optional[str]):
        """base_default_next and next_tables of an applied table."""
        j = a.table
        if a.hit is not None or a.miss is not None:
            return nxt, {"__HIT__": self.link(a.hit or [], nxt, ret),
                         "__MISS__": self.link(a.miss or [], nxt, ret)}
        nt: dict[str, Optional[str]] = {}
        if a.cases is not None:
            for names, body in a.cases:
                target = self.link(body, nxt, ret)
                for n in names:
                    nt[n] = target
            default_target = self.link(a.default, nxt, ret) if a.default is not None else nxt
            for n in j["actions"]:
                nt.setdefault(n, default_target)
        else:
            for n in j["actions"]:
                nt[n] = nxt
        return nxt, nt


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _apply_result_members(node: Any) -> list[tuple[ast.Member, list[tuple[ast.Expr, bool]]]]:
    """`X.apply().hit/miss` members inside a statement or expression, innermost
    first, not descending into nested statements; each with the conditions
    (expression, polarity) under which it is evaluated (`?:` branches, right
    operands of `&&`/`||`)."""
    out: list[tuple[ast.Member, list[tuple[ast.Expr, bool]]]] = []

    def walk(n: Any, guards: list[tuple[ast.Expr, bool]]) -> None:
        if isinstance(n, ast.Member) and n.name in ("hit", "miss") and isinstance(n.expr, ast.Call) \
                and isinstance(n.expr.callee, ast.Member) and n.expr.callee.name == "apply":
            out.append((n, guards))
            return
        if isinstance(n, (ast.Block, ast.If, ast.Switch)) and n is not node:
            return
        if isinstance(n, ast.Mux):
            walk(n.cond, guards)
            walk(n.then, guards + [(n.cond, True)])
            walk(n.else_, guards + [(n.cond, False)])
            return
        if isinstance(n, ast.Binary) and n.op in ("&&", "||"):
            walk(n.left, guards)
            walk(n.right, guards + [(n.left, n.op == "&&")])
            return
        if isinstance(n, (list, tuple)):
            for x in n:
                walk(x, guards)
        elif isinstance(n, ast.Node):
            for f in n.__dataclass_fields__:
                if f != "pos":
                    walk(getattr(n, f), guards)

    walk(node, [])
    return out
