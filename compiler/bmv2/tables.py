"""Tables, their actions and their resources as BMv2 JSON.

    table t { key = { h.f: exact; h.g & 0xf0: ternary; h.x[7:0]: exact; }
              actions = { a; NoAction; } default_action = NoAction; size = 64; }
becomes
    {"name": "ingress.t", "match_type": "ternary", "type": "simple", "max_size": 64,
     "key": [{"match_type": "exact", "name": "h.f", "target": ["h", "f"], "mask": null},
             {"match_type": "ternary", "name": "h.g & 0xf0", "target": ["h", "g"], "mask": "0xf0"},
             {"match_type": "exact", "name": "h.x[7:0]", "target": ["scalars", "key_0"], "mask": null}],
     "actions": ["ingress.a", "NoAction"], "action_ids": [...],
     "default_entry": {"action_id": ..., "action_const": false, "action_data": [], ...}}
plus ``key_0 = h.x[7:0]`` run just before the table (keys that are neither
fields, masked fields nor validity bits are copied into `scalars` first, as
p4c does).  The control converter fills `next_tables`/`base_default_next`.

A table without a default action gets NoAction (added to its actions), as
p4c's front end does.  The match_type of the table: any range key -> range;
else any ternary/optional -> ternary; else any lpm -> lpm; else exact.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from ..diagnostics import ErrorKind
from ..exprtext import expr_text
from ..frontend import annotation_string
from .env import ActionBinding, Env, ExternBinding, TableBinding
from .instances import bind_direct_counter, bind_direct_meter, make_extern
from .primitives import BodyLowerer
from .primlist import Frame, Label
from .values import HeaderV, Leaf, expr_node, hex_text, mask, wrap

DEFAULT_SIZE = 1024


class TableActions:
    """The JSON actions used by tables (one per action and bound arguments)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def resolve(self, e: ast.Expr, env: Env) -> Optional[ActionBinding]:
        if isinstance(e, ast.Call):
            e = e.callee
        if isinstance(e, ast.Name):
            b = None if e.toplevel else env.lookup(e.name)
            if b is None:
                sym = self.ctx.checker.glob.lookup(e.name)
                if sym is not None and sym.kind == "action":
                    return ActionBinding(sym.decl, None, self.ctx.root_env, True)
            if isinstance(b, ActionBinding):
                return b
        return None

    def json_name(self, ab: ActionBinding) -> str:
        return self.ctx.names.action(ab.blk, ab.decl, ab.is_global)

    def action_id(self, ab: ActionBinding, bound: tuple[ast.Argument, ...], caller_env: Env,
                  where: ast.Node) -> tuple[int, str]:
        """The id and name of the JSON action running `ab` from a table, its
        first len(bound) parameters bound to `bound`, the rest action data."""
        name = self.json_name(ab)
        key = ("table-action", id(ab.decl), ab.blk.path if ab.blk is not None else "",
               tuple(expr_text(a.value) if a.value is not None else "_" for a in bound),
               caller_env.blk.path if caller_env.blk is not None and bound else "")
        if key in self.ctx._action_cache:
            return self.ctx._action_cache[key], name
        body = BodyLowerer(self.ctx)
        env = Env(ab.env, ab.env.blk)
        params = ab.decl.params
        outs = body.bind_arguments(params[:len(bound)], bound, env, caller_env, where, ab.env,
                                   body=ab.decl.body)
        runtime_data: list[dict] = []
        for p in params[len(bound):]:
            pt = self.ctx.checker.resolve_type(p.type, self.ctx.type_scope(ab.env))
            if p.direction != "":
                self.ctx.unsupported(p.pos, f"action {name}: parameter {p.name} with a direction that "
                                     "the table does not bind")
            w = types.width_of(pt)
            if w is None:
                self.ctx.unsupported(p.pos, f"action parameter {p.name} of type {pt}")
                w = 0
            idx = len(runtime_data)
            runtime_data.append({"name": annotation_string(p.annotations, "name") or p.name, "bitwidth": w})
            node: dict = {"type": "runtime_data", "value": idx}
            b = types.bits_of(pt)
            if b is not None and b.signed:
                # action data carries no sign: read it as a two's complement value
                node = expr_node("two_comp_mod", node, {"type": "hexstr", "value": hex(b.width)})
            env.declare(p.name, Leaf(node, pt, "data"))
        body.frames.append(Frame(Label(), outs=outs))
        body.stmts(ab.decl.body.stmts, env)
        body.out.place(body.frames.pop().end)
        body.copy_out(outs)
        prims = body.finish()
        aid = self.ctx.add_action(name, runtime_data, prims, key=key)
        return aid, name


class TableConverter:
    """Builds the JSON of one table when the control converter meets its
    `apply()`.  `key_setup` holds the assignments of computed keys."""

    def __init__(self, ctx, pipeline) -> None:
        self.ctx = ctx
        self.pipeline = pipeline
        self.actions = TableActions(ctx)

    def props(self, t: ast.TableDecl) -> dict[str, ast.TableProperty]:
        return {p.name: p for p in t.properties}

    def build(self, tb: TableBinding, body: BodyLowerer) -> tuple[dict, dict[int, str]]:
        """The table's JSON (without next pointers) and a map from action
        declaration (id) to JSON action name.  Key computations are emitted
        into `body`."""
        ctx = self.ctx
        d = tb.decl
        env = tb.env
        props = self.props(d)
        j: dict[str, Any] = {"name": tb.name, "id": 0}
        si = ctx.source_info(d.pos, d.name)
        if si is not None:
            j["source_info"] = si
        j.update({"key": [], "match_type": "exact",
                             "type": "simple", "max_size": DEFAULT_SIZE, "with_counters": False,
                             "support_timeout": False, "direct_meters": None,
                             "action_ids": [], "actions": []})
        kinds: list[str] = []
        selector_inputs: list[dict] = []
        key_widths: list[int] = []
        key_kinds: list[str] = []
        kp = props.get("key")
        if kp is not None:
            for k in kp.value:  # type: ignore[union-attr]
                if k.match_kind == "selector":
                    v = body.ex.leaf(k.expr, env)
                    selector_inputs.append(self.field_operand(v, body, k.expr))
                    continue
                entry, width = self.key_entry(k, body, env)
                j["key"].append(entry)
                kinds.append(k.match_kind)
                key_widths.append(width)
                key_kinds.append(k.match_kind)
        j["match_type"] = table_match_type(kinds)
        # actions
        action_names: dict[int, str] = {}
        decls_seen: set[int] = set()
        ap = props.get("actions")
        refs: list[ast.ActionRef] = list(ap.value) if ap is not None else []  # type: ignore[arg-type]
        dp = props.get("default_action")
        if dp is None:
            noaction = ast.ActionRef(ast.Name("NoAction", pos=d.pos), pos=d.pos)
            if not any(isinstance(r.name, ast.Name) and r.name.name == "NoAction" for r in refs):
                if self.actions.resolve(noaction.name, env) is not None:
                    refs.append(noaction)
        for ar in refs:
            ab = self.actions.resolve(ar.name, env)
            if ab is None:
                ctx.unsupported(ar.pos, "this table action")
                continue
            aid, name = self.actions.action_id(ab, ar.args, env, ar)
            if id(ab.decl) in decls_seen:
                continue
            decls_seen.add(id(ab.decl))
            action_names[id(ab.decl)] = name
            j["action_ids"].append(aid)
            j["actions"].append(name)
        # size
        size = DEFAULT_SIZE
        if "size" in props:
            try:
                size = int(body.ex.const(props["size"].value, env))  # type: ignore[arg-type]
            except Exception:
                ctx.unsupported(props["size"].pos, "a table size that is not a constant")
        entries = props.get("entries")
        if entries is not None:
            size = len(entries.value)  # type: ignore[arg-type]
        if size <= 0 or (not j["key"] and "default_action" in props):
            size = DEFAULT_SIZE  # as p4c (a keyless table never holds entries anyway)
        j["max_size"] = size
        # implementation (action profile / selector)
        impl = props.get("implementation")
        indirect = False
        if impl is not None:
            eb = self.resource(tb, impl)
            if eb is not None and eb.kind in ("action_profile", "action_selector"):
                indirect = True
                j["type"] = "indirect_ws" if eb.kind == "action_selector" else "indirect"
                j["action_profile"] = eb.name
                self.pipeline.action_profile(eb, selector_inputs, impl)
            elif eb is not None:
                ctx.unsupported(impl.pos, f"table implementation {eb.kind}")
        # selector keys without an action selector are ignored, as p4c does
        # direct resources
        cp = props.get("counters")
        if cp is not None:
            eb = self.resource(tb, cp)
            if eb is not None and eb.kind == "direct_counter":
                j["with_counters"] = True
                bind_direct_counter(ctx, eb, tb.name)
            elif eb is not None:
                ctx.unsupported(cp.pos, f"table counters of kind {eb.kind}")
        mp = props.get("meters")
        if mp is not None:
            eb = self.resource(tb, mp)
            if eb is not None and eb.kind == "direct_meter":
                mj = bind_direct_meter(ctx, eb, tb.name, size)
                j["direct_meters"] = eb.name
                self.pipeline.direct_meters.append((eb, mj))
            elif eb is not None:
                ctx.unsupported(mp.pos, f"table meters of kind {eb.kind}")
        st = props.get("support_timeout")
        if st is not None:
            try:
                j["support_timeout"] = bool(body.ex.const(st.value, env))  # type: ignore[arg-type]
            except Exception:
                ctx.unsupported(st.pos, "support_timeout that is not a constant")
        for pname in props:
            if pname not in ("key", "actions", "default_action", "size", "entries", "implementation",
                             "counters", "meters", "support_timeout"):
                if pname.startswith("psa_") or pname in ("add_on_miss", "idle_timeout_with_auto_delete"):
                    ctx.unsupported(props[pname].pos, f"table property {pname}")
        # default entry
        if not indirect:
            j["default_entry"] = self.default_entry(tb, dp, env, refs)
        elif dp is not None:
            callee, _ = self._call_parts(dp.value)
            ab = self.actions.resolve(callee, env)
            if ab is None or ab.decl.body.stmts:
                # as p4c-bm2-ss: the JSON of a table with an action profile or
                # selector carries no default entry (the control plane sets one)
                ctx.diags.warning(ErrorKind.UNSUPPORTED, dp.pos,
                                  f"{tb.name}: the BMv2 target does not support default_action "
                                  "for tables with an action profile or selector; ignored (as p4c)")
        # const entries
        if entries is not None:
            j["entries"] = [self.entry(e, i, key_kinds, key_widths, body, env, tb)
                            for i, e in enumerate(entries.value)]  # type: ignore[arg-type]
        return j, action_names

    # ------------------------------------------------------------------ keys

    def key_entry(self, k: ast.KeyElement, body: BodyLowerer, env: Env) -> tuple[dict, int]:
        name = annotation_string(k.annotations, "name") or expr_text(k.expr)
        kt = body.type_of(k.expr)
        width = types.width_of(kt) or 0
        match = k.match_kind
        if match not in ("exact", "lpm", "ternary", "range", "optional"):
            self.ctx.unsupported(k.pos, f"match kind {match}")
        e = k.expr
        target: Optional[list] = None
        mask_text: Optional[str] = None
        if isinstance(e, ast.Binary) and e.op == "&":
            v = body.ex.value(e.left, env)
            try:
                m = body.ex.const(e.right, env)
            except Exception:
                m = None
            if isinstance(v, Leaf) and v.is_field and isinstance(m, int):
                target = v.node["value"]
                mask_text = hex_text(int(m) & mask(width), width)
        if target is None and isinstance(e, ast.Call) and isinstance(e.callee, ast.Member) \
                and e.callee.name == "isValid" and not e.args:
            hv = body.ex.value(e.callee.expr, env)
            if isinstance(hv, HeaderV) and hv.node is None:
                target = [hv.name, "$valid$"]
        if target is None:
            v = body.ex.value(e, env)
            if isinstance(v, Leaf) and v.is_field and not isinstance(types.strip_newtype(v.type), types.Bool):
                target = v.node["value"]
            elif isinstance(v, Leaf):
                tt = kt if types.bits_of(kt) is not None else types.Bits(width or 1)
                if isinstance(types.strip_newtype(kt), types.Bool):
                    tt = types.Bits(1)
                    width = 1
                tmp = body.temp(tt, "key", k.pos)
                body.assign(tmp, v, k.expr)
                target = tmp.node["value"]  # type: ignore[union-attr]
            else:
                self.ctx.unsupported(k.pos, "this table key")
                target = ["scalars", "?"]
        bmv2_match = "ternary" if match == "optional" else match  # BMv2 has no optional
        return {"match_type": bmv2_match, "name": name, "target": target, "mask": mask_text}, width

    def field_operand(self, v: Leaf, body: BodyLowerer, where: ast.Expr) -> dict:
        if v.is_field:
            return v.node
        tmp = body.temp(v.type if types.bits_of(v.type) is not None else types.Bits(32), "key", where.pos)
        body.assign(tmp, v, where)
        return tmp.node  # type: ignore[union-attr]

    # ------------------------------------------------------------- resources

    def resource(self, tb: TableBinding, prop: ast.TableProperty) -> Optional[ExternBinding]:
        v = prop.value
        env = tb.env
        if isinstance(v, ast.Name):
            b = env.lookup(v.name) if not v.toplevel else None
            if b is None:
                sym = self.ctx.checker.glob.lookup(v.name)
                if sym is not None and sym.kind == "instance":
                    b = self.ctx.global_instance(sym.decl)
            if isinstance(b, ExternBinding):
                return b
            self.ctx.unsupported(prop.pos, f"table property {prop.name} naming {v.name}")
            return None
        if isinstance(v, (ast.ConstructorCall, ast.Call)):
            key = ("anon", tb.blk.path, id(prop))
            if key in self.ctx._instances:
                return self.ctx._instances[key]
            tref = v.type if isinstance(v, ast.ConstructorCall) else ast.TypeName(v.callee.name, pos=v.pos)  # type: ignore[union-attr]
            t = self.ctx.checker.resolve_type(tref, tb.blk.scope)
            if not isinstance(t, types.Extern):
                self.ctx.unsupported(prop.pos, f"table property {prop.name}")
                return None
            name = self.ctx.names.table_resource(tb.blk, prop, tb.decl) or f"{tb.name}_{prop.name}"
            inst = ast.Instantiation(name=name, type=tref, args=v.args, pos=prop.pos)
            eb = make_extern(self.ctx, tb.blk, inst, t, env, name=name)
            self.ctx._instances[key] = eb
            return eb
        self.ctx.unsupported(prop.pos, f"table property {prop.name}")
        return None

    # --------------------------------------------------------------- entries

    def action_data(self, ab: ActionBinding, args: tuple[ast.Argument, ...], nbound: int, body: BodyLowerer,
                    env: Env, where: ast.Node) -> list[str]:
        params = ab.decl.params[nbound:]
        out: list[str] = []
        for p, a in zip(params, args):
            pt = self.ctx.checker.resolve_type(p.type, self.ctx.type_scope(ab.env))
            try:
                v = body.ex.const(a.value, env)  # type: ignore[arg-type]
            except Exception:
                self.ctx.unsupported(where.pos, "action arguments that are not constants")
                v = 0
            b = types.bits_of(pt)
            w = b.width if b is not None else 0
            out.append(hex_text(wrap(int(v), w, False) if w else int(v)))
        return out

    def _call_parts(self, e: Any) -> tuple[ast.Expr, tuple[ast.Argument, ...]]:
        if isinstance(e, ast.ActionRef):
            return e.name, e.args
        if isinstance(e, ast.Call):
            return e.callee, e.args
        return e, ()

    def bound_args(self, ab: ActionBinding, refs: list[ast.ActionRef], env: Env) -> tuple[ast.Argument, ...]:
        """The arguments the table's `actions` list binds for action `ab`."""
        for r in refs:
            rb = self.actions.resolve(r.name, env)
            if rb is not None and rb.decl is ab.decl:
                return r.args
        return ()

    def table_refs(self, tb: TableBinding) -> list[ast.ActionRef]:
        p = self.props(tb.decl).get("actions")
        return list(p.value) if p is not None else []  # type: ignore[arg-type]

    def default_entry(self, tb: TableBinding, dp: Optional[ast.TableProperty], env: Env,
                      refs: list[ast.ActionRef]) -> dict:
        body = BodyLowerer(self.ctx)
        if dp is None:
            callee, args = ast.Name("NoAction", pos=tb.decl.pos), ()
            const = False
        else:
            callee, args = self._call_parts(dp.value)
            const = dp.const
        ab = self.actions.resolve(callee, env)
        if ab is None:
            self.ctx.unsupported(tb.decl.pos, "this default action")
            return {"action_id": 0, "action_const": const, "action_data": [], "action_entry_const": const}
        bound = self.bound_args(ab, refs, env)
        aid, _ = self.actions.action_id(ab, bound, env, dp or tb.decl)
        # the default action call repeats the bound arguments, then gives the data
        data_args = args[len(bound):] if len(args) >= len(bound) else args
        data = self.action_data(ab, data_args, len(bound), body, env, dp or tb.decl)
        return {"action_id": aid, "action_const": const, "action_data": data, "action_entry_const": const}

    def entry(self, ent: ast.TableEntry, index: int, kinds: list[str], widths: list[int],
              body: BodyLowerer, env: Env, tb: TableBinding) -> dict:
        keys = list(ent.keys)
        if len(keys) == 1 and len(kinds) != 1 and isinstance(keys[0], (ast.DontCare, ast.Default)):
            keys = [ast.DontCare(pos=keys[0].pos) for _ in kinds]
        match_key = [self.entry_key(k, kind, w, body, env) for k, kind, w in zip(keys, kinds, widths)]
        ab = self.actions.resolve(ent.action.name, env)
        action_entry: dict = {"action_id": 0, "action_data": []}
        if ab is None:
            self.ctx.unsupported(ent.pos, "this entry action")
        else:
            bound = self.bound_args(ab, self.table_refs(tb), env)
            aid, _ = self.actions.action_id(ab, bound, env, ent)
            args = ent.action.args
            data_args = args[len(bound):] if len(args) >= len(bound) else args
            action_entry = {"action_id": aid,
                            "action_data": self.action_data(ab, data_args, len(bound), body, env, ent)}
        prio = index + 1
        for a in ent.annotations:
            if a.name == "priority" and a.body:
                try:
                    prio = int(body.ex.const(a.body[0], env))
                except Exception:
                    self.ctx.unsupported(ent.pos, "an entry @priority that is not a constant")
        if ent.priority is not None:
            try:
                prio = int(body.ex.const(ent.priority, env))
            except Exception:
                self.ctx.unsupported(ent.pos, "an entry priority that is not a constant")
        return {"match_key": match_key, "action_entry": action_entry, "priority": prio}

    def entry_key(self, k: ast.Expr, kind: str, width: int, body: BodyLowerer, env: Env) -> dict:
        full = mask(width)
        dont_care = isinstance(k, (ast.DontCare, ast.Default))

        def c(x: ast.Expr) -> int:
            try:
                v = body.ex.const(x, env)
            except Exception:
                self.ctx.unsupported(x.pos, "an entry key that is not a constant")
                return 0
            return int(v) & full

        def h(v: int) -> str:
            return hex_text(v, width)

        if kind == "exact":
            if dont_care or isinstance(k, (ast.Mask, ast.Range)):
                self.ctx.unsupported(k.pos, "this key set for an exact key")
                return {"match_type": "exact", "key": h(0)}
            return {"match_type": "exact", "key": h(c(k))}
        if kind == "lpm":
            if dont_care:
                return {"match_type": "lpm", "key": h(0), "prefix_length": 0}
            if isinstance(k, ast.Mask):
                v, m = c(k.value), c(k.mask)
                plen = bin(m).count("1")
                if m != (full >> (width - plen) << (width - plen)) & full:
                    self.ctx.unsupported(k.pos, "an lpm mask that is not a prefix")
                return {"match_type": "lpm", "key": h(v & m), "prefix_length": plen}
            return {"match_type": "lpm", "key": h(c(k)), "prefix_length": width}
        if kind in ("ternary", "optional"):
            if dont_care:
                return {"match_type": "ternary", "key": h(0), "mask": h(0)}
            if isinstance(k, ast.Mask):
                v, m = c(k.value), c(k.mask)
                return {"match_type": "ternary", "key": h(v & m), "mask": h(m)}
            return {"match_type": "ternary", "key": h(c(k)), "mask": h(full)}
        if kind == "range":
            if dont_care:
                return {"match_type": "range", "start": h(0), "end": h(full)}
            if isinstance(k, ast.Range):
                return {"match_type": "range", "start": h(c(k.lo)), "end": h(c(k.hi))}
            v = c(k)
            return {"match_type": "range", "start": h(v), "end": h(v)}
        self.ctx.unsupported(k.pos, f"entries for match kind {kind}")
        return {"match_type": kind, "key": h(0)}


def table_match_type(kinds: list[str]) -> str:
    if "range" in kinds:
        return "range"
    if "ternary" in kinds or "optional" in kinds:
        return "ternary"
    if "lpm" in kinds:
        return "lpm"
    return "exact"
