"""P4Info generation, as p4c's control-plane generator does it for v1model.

Walks the elaborated program (`frontend.ProgramIR`): every table, action
used by a table, extern instance (counters, meters, registers, action
profiles and selectors, direct resources), digest, controller header and
value set becomes a P4Info entity with p4c's fully qualified name, alias
(shortest unique suffix) and id (see p4info_ids).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import Any, Callable, Optional

from finsy.proto import p4i, p4t

from . import ast
from . import types
from .diagnostics import Diagnostics, ErrorKind
from .cpnames import ControlPlaneNames, anonymous_name, global_name, local_name
from .exprtext import expr_text
from .frontend import BlockInstance, ProgramIR, annotation_string
from .p4info_ids import IdAllocator, IdPrefix as Prefix, shortest_unique_suffixes

MATCH_TYPES = {
    "exact": p4i.MatchField.EXACT,
    "lpm": p4i.MatchField.LPM,
    "ternary": p4i.MatchField.TERNARY,
    "range": p4i.MatchField.RANGE,
    "optional": p4i.MatchField.OPTIONAL,
}

COUNTER_UNITS = {"packets": p4i.CounterSpec.PACKETS, "bytes": p4i.CounterSpec.BYTES,
                 "packets_and_bytes": p4i.CounterSpec.BOTH}
METER_UNITS = {"packets": p4i.MeterSpec.PACKETS, "bytes": p4i.MeterSpec.BYTES}

# extern type -> (id prefix, P4Info field, unit names)
INDEXED_RESOURCES = {"counter": (Prefix.COUNTER, "counters", COUNTER_UNITS),
                     "meter": (Prefix.METER, "meters", METER_UNITS)}
DIRECT_RESOURCES = {"direct_counter": (Prefix.DIRECT_COUNTER, "direct_counters", COUNTER_UNITS),
                    "direct_meter": (Prefix.DIRECT_METER, "direct_meters", METER_UNITS)}

# Annotations p4c consumes itself instead of copying them into P4Info.
HIDDEN_ANNOTATIONS = {"name", "id", "brief", "description"}


@dataclass(eq=False)
class _Entity:
    prefix: int
    name: str
    decl: Optional[ast.Node]
    annotations: tuple = ()
    fill: Optional[Callable[[Any, dict], None]] = None
    msg: Any = None
    shown_name: Optional[str] = None  # preamble name/alias when not `name`
    order: tuple = ()  # p4c's output order: (block rank, position in source)


class P4InfoBuilder:
    def __init__(self, ir: ProgramIR, diags: Diagnostics):
        self.ir = ir
        self.c = ir.checker
        self.diags = diags
        self.names = ControlPlaneNames(ir.checker.glob)
        self.info = p4i.P4Info()
        self.entities: list[_Entity] = []
        self.by_key: dict[tuple[int, str], _Entity] = {}
        self.ids: dict[tuple[int, str], int] = {}
        self.type_info_done: set[str] = set()
        self._rank = 0  # the block being walked, in pipeline order
        self._tuple_digests = 0

    # ---------------------------------------------------------------- driver

    def build(self) -> Any:
        self.info.pkg_info.arch = "v1model"
        for blk in self._all_blocks():
            self._walk_block(blk)
            self._rank += 1
        self._global_instances()
        self._controller_headers()
        alloc = IdAllocator(self.diags)
        for ent in self.entities:
            alloc.add(ent.prefix, ent.name, _explicit_id(ent.annotations),
                      ent.decl.pos if ent.decl is not None else None)
        self.ids = alloc.assign()
        aliases = shortest_unique_suffixes([e.name for e in self.entities])
        for ent in self.entities:
            pre = ent.msg.preamble
            pre.id = self.ids[(ent.prefix, ent.name)]
            pre.name = ent.shown_name or ent.name
            pre.alias = ent.shown_name or aliases[ent.name]
            for a in ent.annotations:
                if a.name not in HIDDEN_ANNOTATIONS and not a.structured:
                    pre.annotations.append(annotation_text(a))
            _docs(pre, ent.annotations)
        for ent in self.entities:
            if ent.fill is not None:
                ent.fill(ent.msg, self.ids)
        if self._touches_type_info():
            self.info.type_info.SetInParent()
        self._sort()
        return self.info

    def _sort(self) -> None:
        """Entities in p4c's order: global declarations first, then block by
        block in pipeline order, each in source order."""
        rank = {(e.msg.preamble.id): e.order for e in self.entities}
        for field in ("tables", "actions", "action_profiles", "counters", "direct_counters",
                      "meters", "direct_meters", "registers", "digests",
                      "controller_packet_metadata", "value_sets"):
            getattr(self.info, field).sort(key=lambda m: rank.get(m.preamble.id, ()))

    def _global_instances(self) -> None:
        """Extern instances declared at top level and used by some block."""
        used = {n.name for b in self._all_blocks() for n in _nodes_in(b.decl)
                if isinstance(n, ast.Name)}
        top = BlockInstance(decl=None, path="", scope=self.c.glob)
        for d in self.ir.global_instances:
            if d.name in used:
                self._extern(top, d, global_name(d), None)

    def _touches_type_info(self) -> bool:
        """Whether p4c would write a (possibly empty) type_info: it does when
        the program has any control-plane entity besides actions, or calls
        an extern function (mark_to_drop, hash, clone, ...) in a control:
        p4c's v1model analysis converts those calls' types."""
        if any(e.prefix != Prefix.ACTION for e in self.entities):
            return True
        for blk in self._all_blocks():
            if blk.kind != "control":
                continue
            for call in _calls_in(blk.decl):
                if isinstance(call.callee, ast.Name):
                    sym = blk.scope.lookup(call.callee.name)
                    if sym is not None and sym.kind == "function" and \
                            isinstance(sym.decl, ast.ExternFunctionDecl):
                        return True
        return False

    def _all_blocks(self):
        """Every block instance, in pipeline order, parents before children."""
        def walk(b):
            yield b
            for c in b.children.values():
                yield from walk(c)
        for b in self.ir.blocks:
            yield from walk(b)

    def _add(self, prefix: int, name: str, container, decl, annotations=(), fill=None,
             order: tuple | None = None) -> Optional[_Entity]:
        key = (prefix, name)
        if key in self.by_key:
            return self.by_key[key]
        ent = _Entity(prefix, name, decl, tuple(annotations), fill, container.add())
        if order is None:
            pos = decl.pos if decl is not None else None
            order = (self._rank, pos.line if pos else 0, pos.col if pos else 0)
        ent.order = order
        self.entities.append(ent)
        self.by_key[key] = ent
        return ent

    # ---------------------------------------------------------------- blocks

    def _walk_block(self, blk: BlockInstance) -> None:
        decl = blk.decl
        for loc in getattr(decl, "locals", ()):
            if isinstance(loc, ast.TableDecl):
                self._table(blk, loc)
            elif isinstance(loc, ast.Instantiation):
                self._instance(blk, loc)
            elif isinstance(loc, ast.ValueSetDecl):
                self._value_set(blk, loc)
        self._digests(blk)
        self._called_actions(blk)

    def _called_actions(self, blk: BlockInstance) -> None:
        """Actions invoked directly from an apply block are in P4Info too
        (calls inside other actions are inlined away by p4c; so is code in a
        branch that a constant condition never takes)."""
        body = getattr(blk.decl, "body", None)
        for call in _calls_in(self._live(body, blk.scope)):
            cal = call.callee
            if isinstance(cal, ast.Name) and isinstance(self.c.type_of(cal), types.Action):
                self._action(blk, ast.ActionRef(cal, pos=cal.pos))

    def _live(self, s, scope):
        """The statements of `s` that a constant condition does not rule out."""
        if isinstance(s, ast.If):
            try:
                cond = self.c.const_value(s.cond, scope)
            except Exception:
                cond = None
            if cond is True:
                return self._live(s.then, scope)
            if cond is False:
                return self._live(s.else_, scope)
            return [s.cond, self._live(s.then, scope), self._live(s.else_, scope)]
        if isinstance(s, ast.Block):
            return [self._live(x, scope) for x in s.stmts]
        if isinstance(s, ast.Switch):
            return [s.expr] + [self._live(c.body, scope) for c in s.cases]
        return s

    # ---------------------------------------------------------------- tables

    def _table(self, blk: BlockInstance, t: ast.TableDecl) -> None:
        if _has(t.annotations, "hidden"):
            return
        name = local_name(blk, t)
        props = {p.name: p for p in t.properties}
        scope = blk.scope
        ent = self._add(Prefix.TABLE, name, self.info.tables, t, t.annotations)
        assert ent is not None
        msg = ent.msg
        # match fields
        keys = props.get("key")
        if keys is not None:
            fid = 0
            for k in keys.value:
                if k.match_kind == "selector":
                    continue
                fid += 1
                mf = msg.match_fields.add()
                mf.id = fid
                mf.name = annotation_string(k.annotations, "name") or expr_text(k.expr)
                if k.match_kind in MATCH_TYPES:
                    mf.match_type = MATCH_TYPES[k.match_kind]
                else:
                    mf.other_match_type = k.match_kind
                self._typed_field(mf, self.c.type_of(k.expr), k.annotations)
        # actions
        action_refs: list[tuple[str, ast.ActionRef]] = []
        if "actions" in props:
            for ar in props["actions"].value:
                an = self._action(blk, ar)
                if an is not None:
                    action_refs.append((an, ar))
        default = props.get("default_action")
        if default is None:
            # p4c gives a table without default_action `default_action =
            # NoAction()`, adding NoAction as a default-only action if needed.
            noaction = ast.Name("NoAction", pos=t.pos)
            default = ast.TableProperty("default_action", "default_action",
                                        ast.ActionRef(noaction, pos=t.pos), pos=t.pos)
            if not any(an == "NoAction" for an, _ in action_refs):
                ar = ast.ActionRef(noaction, annotations=(ast.Annotation("defaultonly", pos=t.pos),),
                                   pos=t.pos)
                an = self._action(blk, ar)
                if an is not None:
                    action_refs.append((an, ar))
        size = props.get("size")
        impl = props.get("implementation")
        counters = props.get("counters")
        meters = props.get("meters")
        timeout = props.get("support_timeout")
        entries = props.get("entries")

        def fill(m, ids) -> None:
            for an, ar in action_refs:
                r = m.action_refs.add()
                r.id = ids[(Prefix.ACTION, an)]
                if _has(ar.annotations, "defaultonly"):
                    r.scope = p4i.ActionRef.DEFAULT_ONLY
                elif _has(ar.annotations, "tableonly"):
                    r.scope = p4i.ActionRef.TABLE_ONLY
                for a in ar.annotations:
                    if a.name not in HIDDEN_ANNOTATIONS:
                        r.annotations.append(annotation_text(a))
            if default is not None:
                dn = self._action_name_of(blk, default.value)
                if dn is not None and (Prefix.ACTION, dn) in ids:
                    if default.const:
                        m.const_default_action_id = ids[(Prefix.ACTION, dn)]
                    m.initial_default_action.action_id = ids[(Prefix.ACTION, dn)]
                    self._default_args(m.initial_default_action, default.value, blk)
            elif action_refs:
                pass
            if impl is not None:
                iname = self.names.table_resource(blk, impl, t)
                for pre in (Prefix.ACTION_PROFILE,):
                    if iname and (pre, iname) in ids:
                        m.implementation_id = ids[(pre, iname)]
            for prop, pres in ((counters, Prefix.DIRECT_COUNTER), (meters, Prefix.DIRECT_METER)):
                if prop is not None:
                    rn = self.names.table_resource(blk, prop, t)
                    if rn and (pres, rn) in ids:
                        m.direct_resource_ids.append(ids[(pres, rn)])
            m.size = 1024
            if size is not None:
                try:
                    m.size = int(self.c.const_value(size.value, scope))
                except Exception:
                    self.diags.error(ErrorKind.EXPECTED, size.pos, "table size must be a constant")
            if timeout is not None:
                try:
                    if self.c.const_value(timeout.value, scope) is True:
                        m.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
                except Exception:
                    pass
            if entries is not None:
                m.has_initial_entries = bool(entries.value)
                if entries.const:
                    m.is_const_table = True

        ent.fill = fill
        # resources declared inline in table properties
        for prop in (impl, counters, meters):
            if prop is not None and isinstance(prop.value, (ast.ConstructorCall, ast.Call)):
                self._anonymous_instance(blk, prop, t, name)

    def _default_args(self, ida, ref: ast.ActionRef, blk: BlockInstance) -> None:
        """Constant arguments of the default action, each as many bytes as
        its parameter's width needs (p4c writes them unshortened)."""
        e = ref.name if isinstance(ref, ast.ActionRef) else None
        if not isinstance(e, ast.Name) or not ref.args:
            return
        sym = (self.c.glob if e.toplevel else blk.scope).lookup(e.name)
        if sym is None or sym.kind != "action":
            return
        params = list(sym.decl.params)
        data_params = [p for p in params if p.direction == ""]
        for i, a in enumerate(ref.args):
            p = params[i] if a.name is None and i < len(params) else next(
                (q for q in params if q.name == a.name), None)
            if p is None or p.direction != "" or a.value is None:
                continue
            try:
                v = self.c.const_value(a.value, blk.scope)
            except Exception:
                return
            if isinstance(v, bool):
                v = int(v)
            if not isinstance(v, int):
                return
            w = types.width_of(self.c.resolve_type(p.type, sym.scope or self.c.glob)) or 0
            arg = ida.arguments.add()
            arg.param_id = data_params.index(p) + 1
            nbytes = max(1, (w + 7) // 8)
            arg.value = (v & ((1 << (8 * nbytes)) - 1)).to_bytes(nbytes, "big")

    def _action_name_of(self, blk: BlockInstance, e) -> Optional[str]:
        if isinstance(e, ast.ActionRef):
            e = e.name
        if isinstance(e, ast.Call):
            e = e.callee
        if isinstance(e, ast.Name):
            sym = (self.c.glob if e.toplevel else blk.scope).lookup(e.name)
            if sym is not None and sym.kind == "action":
                return self.names.action(blk, sym)
        return None

    def _action(self, blk: BlockInstance, ar: ast.ActionRef) -> Optional[str]:
        e = ar.name
        if not isinstance(e, ast.Name):
            return None
        sym = (self.c.glob if e.toplevel else blk.scope).lookup(e.name)
        if sym is None or sym.kind != "action":
            return None
        d: ast.ActionDecl = sym.decl
        name = self.names.action(blk, sym)
        if (Prefix.ACTION, name) in self.by_key:
            return name
        order = None
        if sym.scope is self.c.glob:
            order = (-1, self.ir.program.decls.index(d) if d in self.ir.program.decls else 0, 0)
        ent = self._add(Prefix.ACTION, name, self.info.actions, d, d.annotations, order=order)
        assert ent is not None
        pid = 0
        for p in d.params:
            if p.direction != "":
                continue
            pid += 1
            pm = ent.msg.params.add()
            pm.id = pid
            pm.name = annotation_string(p.annotations, "name") or p.name
            self._typed_field(pm, self.c.resolve_type(p.type, sym.scope or self.c.glob),
                              p.annotations)
        return name

    # ------------------------------------------------------------- externs

    def _anonymous_instance(self, blk, prop, table, table_name) -> None:
        v = prop.value
        tref = v.type if isinstance(v, ast.ConstructorCall) else ast.TypeName(v.callee.name)
        inst = ast.Instantiation(name=anonymous_name(blk, prop, table), type=tref,
                                 args=v.args, annotations=(), pos=prop.pos)
        self._extern(blk, inst, inst.name, table_name)

    def _instance(self, blk: BlockInstance, d: ast.Instantiation) -> None:
        self._extern(blk, d, local_name(blk, d), None)

    def _extern(self, blk: BlockInstance, d: ast.Instantiation, name: str, table_name: Optional[str]) -> None:
        t = self.c.resolve_type(d.type, blk.scope)
        if not isinstance(t, types.Extern):
            return
        kind = t.decl.name
        args = [a.value for a in d.args]
        scope = blk.scope

        def const(i: int) -> Any:
            try:
                return self.c.const_value(args[i], scope)
            except Exception:
                return None

        def enum_member(i: int) -> Optional[str]:
            e = args[i] if i < len(args) else None
            if isinstance(e, (ast.Member, ast.TypeMember)):
                return e.name
            return None

        users = self._tables_using(blk, d.name, name)
        if kind in DIRECT_RESOURCES and not table_name and not users:
            return  # p4c drops a direct counter or meter no table uses
        if kind in INDEXED_RESOURCES or kind in DIRECT_RESOURCES:
            direct = kind in DIRECT_RESOURCES
            prefix, field, units = (DIRECT_RESOURCES if direct else INDEXED_RESOURCES)[kind]
            ent = self._add(prefix, name, getattr(self.info, field), d, d.annotations)
            unit = enum_member(0 if direct else 1)
            ent.msg.spec.unit = units.get(unit or "", 0)
        if kind in INDEXED_RESOURCES:
            size = const(0)
            ent.msg.size = int(size) if isinstance(size, int) else 0
            if t.args:
                tn = _type_name(t.args[0])
                if tn:
                    ent.msg.index_type_name.name = tn
        elif kind in DIRECT_RESOURCES:
            tables = [table_name] if table_name else users

            def fill(m, ids, tables=tables):
                for tn in tables[:1]:
                    if (Prefix.TABLE, tn) in ids:
                        m.direct_table_id = ids[(Prefix.TABLE, tn)]
            ent.fill = fill
        elif kind == "register":
            ent = self._add(Prefix.REGISTER, name, self.info.registers, d, d.annotations)
            size = const(0)
            ent.msg.size = int(size) if isinstance(size, int) else 0
            if t.args:
                self._type_spec(ent.msg.type_spec, t.args[0])
                if len(t.args) > 1:
                    tn = _type_name(t.args[1])
                    if tn:
                        ent.msg.index_type_name.name = tn
        elif kind in ("action_profile", "action_selector"):
            ent = self._add(Prefix.ACTION_PROFILE, name, self.info.action_profiles, d, d.annotations)
            ent.msg.with_selector = kind == "action_selector"
            size = const(1 if kind == "action_selector" else 0)
            ent.msg.size = int(size) if isinstance(size, int) else 0
            mgs = _annotation_int(d.annotations, "max_group_size")
            if mgs is not None:
                ent.msg.max_group_size = mgs
            tables = [table_name] if table_name else users

            def fill(m, ids, tables=tables):
                for tn in tables:
                    if (Prefix.TABLE, tn) in ids:
                        m.table_ids.append(ids[(Prefix.TABLE, tn)])
            ent.fill = fill

    def _tables_using(self, blk: BlockInstance, local: str, fq: str) -> list[str]:
        """Tables whose implementation/counters/meters property names the
        instance: those of its own block, or of every block for a top-level
        instance."""
        blocks = list(self._all_blocks()) if blk.decl is None else [blk]
        out = []
        for b in blocks:
            for loc in getattr(b.decl, "locals", ()):
                if isinstance(loc, ast.TableDecl):
                    for p in loc.properties:
                        if p.name in ("implementation", "counters", "meters") and \
                                isinstance(p.value, ast.Name) and p.value.name == local:
                            out.append(local_name(b, loc))
        return out

    # ------------------------------------------------------------ value sets

    def _value_set(self, blk: BlockInstance, d: ast.ValueSetDecl) -> None:
        name = local_name(blk, d)
        ent = self._add(Prefix.VALUE_SET, name, self.info.value_sets, d, d.annotations)
        t = self.c.resolve_type(d.type, blk.scope)
        try:
            ent.msg.size = int(self.c.const_value(d.size, blk.scope))
        except Exception:
            pass
        fields = t.fields if isinstance(t, types.StructLike) else [("", t)]
        for i, (fname, ft) in enumerate(fields, 1):
            mf = ent.msg.match.add()
            mf.id = i
            if fname:
                mf.name = fname
            mf.bitwidth = types.width_of(ft) or 0
            mk = "exact"
            if isinstance(t, types.StructLike):
                for a in t.field_annotations.get(fname, ()):
                    if a.name == "match" and a.body and isinstance(a.body[0], ast.Name):
                        mk = a.body[0].name
            mf.match_type = MATCH_TYPES.get(mk, p4i.MatchField.EXACT)

    # --------------------------------------------------------------- digests

    def _digests(self, blk: BlockInstance) -> None:
        for call in _calls_in(blk.decl):
            cal = call.callee
            if not (isinstance(cal, ast.Name) and cal.name == "digest"):
                continue
            ft = self.c.type_of(cal)
            if not isinstance(ft, types.Function) or len(call.args) < 2:
                continue
            if call.type_args:
                dt = self.c.resolve_type(call.type_args[0], blk.scope)
            else:
                dt = self.c.type_of(call.args[1].value)
            if isinstance(dt, types.StructLike):
                name = dt.name
            elif isinstance(dt, (types.ListT, types.Tuple)):
                # p4c names a digest of a plain list after its position
                dt = types.Tuple(tuple(dt.elems))
                name = f"digest_{self._tuple_digests}"
                self._tuple_digests += 1
            else:
                continue
            if (Prefix.DIGEST, name) in self.by_key:
                continue
            ent = self._add(Prefix.DIGEST, name, self.info.digests, None, ())
            self._type_spec(ent.msg.type_spec, dt)

    # ------------------------------------------------------ controller headers

    def _controller_headers(self) -> None:
        for d in self.ir.program.decls:
            if not isinstance(d, ast.HeaderDecl):
                continue
            ch = annotation_string(d.annotations, "controller_header")
            if ch is None:
                continue
            ht = self.c.sym_type(self.c.glob.lookup(d.name))
            # p4c hashes the header type's name; the preamble shows the
            # @controller_header string.
            ent = self._add(Prefix.CONTROLLER_HEADER, d.name, self.info.controller_packet_metadata, d,
                            [a for a in d.annotations])
            ent.shown_name = ch
            mid = 0
            for fname, ft, anns in _flatten_fields(ht):
                mid += 1
                m = ent.msg.metadata.add()
                m.id = mid
                m.name = fname
                m.bitwidth = control_plane_width(ft)
                for a in anns:
                    if a.name not in HIDDEN_ANNOTATIONS:
                        m.annotations.append(annotation_text(a))
                tn = _type_name(ft)
                if tn:
                    m.type_name.name = tn
                    self._new_type(ft)

    # ------------------------------------------------------------ type info

    def _type_spec(self, spec, t: types.Type) -> None:
        """Fill a P4DataTypeSpec and register named types in type_info."""
        if isinstance(t, types.Bits):
            (spec.bitstring.int if t.signed else spec.bitstring.bit).bitwidth = t.width
        elif isinstance(t, types.Varbit):
            spec.bitstring.varbit.max_bitwidth = t.max_width
        elif isinstance(t, types.Bool):
            spec.bool.SetInParent()
        elif isinstance(t, types.Error):
            spec.error.SetInParent()
            self._error_info()
        elif isinstance(t, types.StructLike):
            getattr(spec, {"struct": "struct", "header": "header",
                           "header_union": "header_union"}[t.kind]).name = t.name
            self._struct_info(t)
        elif isinstance(t, types.Stack):
            hs = spec.header_stack
            hs.header.name = str(t.elem)
            hs.size = t.size
            if isinstance(t.elem, types.StructLike):
                self._struct_info(t.elem)
        elif isinstance(t, types.Tuple):
            for e in t.elems:
                self._type_spec(spec.tuple.members.add(), e)
        elif isinstance(t, types.Enum):
            if t.base is not None:
                spec.serializable_enum.name = t.name
                self._enum_info(t)
            else:
                spec.enum.name = t.name
                self._enum_info(t)
        elif isinstance(t, types.NewType):
            spec.new_type.name = t.name
            self._new_type(t)

    def _struct_info(self, t: types.StructLike) -> None:
        key = f"{t.kind}:{t.name}"
        if key in self.type_info_done:
            return
        self.type_info_done.add(key)
        ti = self.info.type_info
        if t.kind == "header":
            h = ti.headers[t.name]
            for n, ft in t.fields:
                m = h.members.add()
                m.name = n
                b = types.bits_of(ft)
                if b is not None and isinstance(types.strip_newtype(ft), types.Bits):
                    (m.type_spec.int if b.signed else m.type_spec.bit).bitwidth = b.width
                elif isinstance(ft, types.Varbit):
                    m.type_spec.varbit.max_bitwidth = ft.max_width
                elif b is not None:
                    m.type_spec.bit.bitwidth = b.width
        elif t.kind == "header_union":
            u = ti.header_unions[t.name]
            for n, ft in t.fields:
                m = u.members.add()
                m.name = n
                m.header.name = str(ft)
                if isinstance(ft, types.StructLike):
                    self._struct_info(ft)
        else:
            s = ti.structs[t.name]
            for n, ft in t.fields:
                m = s.members.add()
                m.name = n
                self._type_spec(m.type_spec, ft)

    def _typed_field(self, msg, t: types.Type, annotations) -> None:
        """A match field's or action parameter's bitwidth, annotations, doc
        and type_name, registering the serializable enum or named type it
        uses in type_info."""
        msg.bitwidth = control_plane_width(t)
        if isinstance(t, types.Enum) and t.base is not None:
            self._enum_info(t)
        for a in annotations:
            if a.name not in HIDDEN_ANNOTATIONS:
                msg.annotations.append(annotation_text(a))
        _docs(msg, annotations)
        tn = _type_name(t)
        if tn:
            msg.type_name.name = tn
            self._new_type(t)

    def _enum_info(self, t: types.Enum) -> None:
        key = f"enum:{t.name}"
        if key in self.type_info_done:
            return
        self.type_info_done.add(key)
        ti = self.info.type_info
        if t.base is not None:
            se = ti.serializable_enums[t.name]
            se.underlying_type.bitwidth = t.base.width
            for m in t.members:
                mm = se.members.add()
                mm.name = m
                v = t.values.get(m, 0) & ((1 << t.base.width) - 1)
                mm.value = v.to_bytes((t.base.width + 7) // 8, "big")
        else:
            e = ti.enums[t.name]
            for m in t.members:
                e.members.add().name = m

    def _error_info(self) -> None:
        if "error" in self.type_info_done:
            return
        self.type_info_done.add("error")
        self.info.type_info.error.members.extend(self.c.errors)

    def _new_type(self, t: types.Type) -> None:
        if not isinstance(t, types.NewType):
            return
        key = f"newtype:{t.name}"
        if key in self.type_info_done:
            return
        self.type_info_done.add(key)
        nt = self.info.type_info.new_types[t.name]
        tr = _translation(t.decl.annotations if t.decl else ())
        if tr is not None:
            uri, sdn = tr
            nt.translated_type.uri = uri
            if sdn is None:
                nt.translated_type.sdn_string.SetInParent()
            else:
                nt.translated_type.sdn_bitwidth = sdn
        else:
            self._type_spec(nt.original_type, types.strip_newtype(t))


# ------------------------------------------------------------------ helpers


def build_p4info(ir: ProgramIR, diags: Diagnostics) -> Any:
    return P4InfoBuilder(ir, diags).build()


def _has(annotations, name: str) -> bool:
    return any(a.name == name for a in annotations)


def _annotation_int(annotations, name: str) -> Optional[int]:
    for a in annotations:
        if a.name == name and a.body and isinstance(a.body[0], ast.IntLit):
            return a.body[0].value
    return None


def _explicit_id(annotations) -> Optional[int]:
    return _annotation_int(annotations, "id")


def annotation_text(a: ast.Annotation) -> str:
    """An annotation as p4c copies it into P4Info: `@name(body tokens)`."""
    if a.tokens is None:
        return f"@{a.name}"
    return f"@{a.name}({a.tokens})"


def _docs(msg, annotations) -> None:
    brief = annotation_string(annotations, "brief")
    desc = annotation_string(annotations, "description")
    if brief is not None:
        msg.doc.brief = brief
    if desc is not None:
        msg.doc.description = desc


def _type_name(t: types.Type) -> Optional[str]:
    """P4Info names user-defined `type`s (new types) of keys, parameters and
    metadata; typedefs are transparent."""
    return t.name if isinstance(t, types.NewType) else None


def control_plane_width(t: types.Type) -> int:
    """The width the control plane sees: a translated new type's SDN width
    (0 for a string translation), else the type's own width."""
    if isinstance(t, types.NewType) and t.decl is not None:
        tr = _translation(t.decl.annotations)
        if tr is not None:
            return tr[1] or 0
    return types.width_of(t) or 0


def _translation(annotations) -> Optional[tuple[str, Optional[int]]]:
    """(uri, sdn_bitwidth or None for string) of @p4runtime_translation."""
    for a in annotations:
        if a.name != "p4runtime_translation" or not a.body or not isinstance(a.body[0], ast.StringLit):
            continue
        rest = (a.tokens or "").split(",", 1)[1].strip() if a.tokens and "," in a.tokens else ""
        if rest == "string":
            return a.body[0].value, None
        m = re.fullmatch(r"(?:bit\s*<\s*)?(\d+)\s*>?", rest)
        return a.body[0].value, int(m.group(1)) if m else 32
    return None


def _flatten_fields(t: types.StructLike, prefix: str = ""):
    for n, ft in t.fields:
        anns = t.field_annotations.get(n, ())
        if isinstance(ft, types.StructLike) and ft.kind == "struct":
            yield from _flatten_fields(ft, f"{prefix}{n}.")
        else:
            yield f"{prefix}{n}", ft, anns


def _calls_in(node) -> list[ast.Call]:
    """Every call expression inside a declaration (bodies, actions, states)."""
    return [n for n in _nodes_in(node) if isinstance(n, ast.Call)]


def _nodes_in(node) -> list[ast.Node]:
    """Every node inside a declaration, in source order."""
    out: list[ast.Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Node):
            out.append(n)
        if isinstance(n, (list, tuple)):
            stack.extend(reversed(n))
        elif isinstance(n, ast.Node):
            for f in n.__dataclass_fields__:
                if f == "pos":
                    continue
                v = getattr(n, f)
                if isinstance(v, (ast.Node, list, tuple)):
                    stack.append(v)
    out.reverse()
    return out
