"""An index of a P4Info message: every P4 object by id and by name.

The one P4Info schema of p4scope, shared by the P4Runtime server (this
package) and the controller library (p4scope.control.schema re-exports it
as `Schema`):

    schema = P4Schema(p4info)
    t = schema.table("smac")                 # DutIngress.smac (full name, alias or suffix)
    t = schema.tables.get(0x02000001)        # by id, as requests carry it
    t.field("src_addr").bitwidth             # hdr.ethernet.src_addr: 48
    t.action("smac_hit")                     # DutIngress.smac_hit, an action of t
    schema.counter("drop_counter").size      # 8192

Unknown names raise `UnknownName` with suggestions (names.py).

Where it lives: the layers go scripts -> control -> switch ->
dataplane, so the switch must not import control/ while the controller may
import the switch. The schema (with names.py and the bytestring rules of
codec.py) therefore belongs to the lower of the two layers, here. It
imports no other part of the switch than errors.py (neither the server nor
the engine), so the controller gets the schema and nothing else of the
switch. A separate top-level package would do the same job at the cost of
one more part of the `p4scope` namespace (pyproject, editable installs)
that holds only what the switch already owns.

Checking. With `strict=True` (the server's default) the P4Info is checked
once: ids unique, non-zero and of the right kind, references resolvable
(INVALID_ARGUMENT), and every register and digest value a bit string
(UNIMPLEMENTED otherwise); lookups are then O(1). With `strict=False` (the
controller's) nothing is refused: a P4Info is the target's business, and the
controller only needs names and widths (an unsupported type gets width 0,
a varbit its maximum width).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Optional, TypeVar, Union, overload

from finsy.proto import p4i

from .errors import invalid, unimplemented
from .names import EntityMap, NameIndex, UnknownName

T = TypeVar("T")

# P4Info id prefixes (p4info.proto, P4Ids.Prefix)
ACTION = p4i.P4Ids.ACTION
TABLE = p4i.P4Ids.TABLE
VALUE_SET = p4i.P4Ids.VALUE_SET
CONTROLLER_HEADER = p4i.P4Ids.CONTROLLER_HEADER
ACTION_PROFILE = p4i.P4Ids.ACTION_PROFILE
COUNTER = p4i.P4Ids.COUNTER
DIRECT_COUNTER = p4i.P4Ids.DIRECT_COUNTER
METER = p4i.P4Ids.METER
DIRECT_METER = p4i.P4Ids.DIRECT_METER
REGISTER = p4i.P4Ids.REGISTER
DIGEST = p4i.P4Ids.DIGEST

MATCH_TYPES = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}


def id_prefix(id_: int) -> int:
    return id_ >> 24


def _index(kind: str, where: str, items) -> NameIndex:
    ix: NameIndex = NameIndex(kind, where)
    for it in items:
        ix.add(it.name, it)
    return ix


@dataclass(frozen=True, slots=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    """The P4Info width (for @p4runtime_translation, the SDN width; 0: an SDN string)."""
    match_type: str
    """exact, lpm, ternary, range, optional, or the P4Info other_match_type."""
    translated: bool = False
    """Its type_name is an @p4runtime_translation type (the width is the SDN one)."""


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """An action parameter, or a field of a controller header."""
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True, slots=True)
class ActionInfo:
    id: int
    name: str
    alias: str
    params: tuple[ParamInfo, ...]
    param_index: dict[int, int] = field(init=False, repr=False, compare=False)
    """param id -> position in `params` (the engine takes arguments by position)."""
    _params: NameIndex[ParamInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_index", {p.id: i for i, p in enumerate(self.params)})
        object.__setattr__(self, "_params",
                           _index("parameter", f"action '{self.name}'", self.params))

    def param(self, name: str) -> ParamInfo:
        return self._params.find(name)


@dataclass(frozen=True, slots=True)
class TableInfo:
    id: int
    name: str
    alias: str
    fields: tuple[MatchFieldInfo, ...]
    actions: tuple[ActionInfo, ...]
    """The table's actions (P4Info action_refs), in P4Info order."""
    action_scopes: dict[int, int] = field(compare=False)
    """action id -> p4i.ActionRef.Scope."""
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    size: int
    idle_timeout: bool
    """The table supports idle timeouts (idle_timeout_behavior NOTIFY_CONTROL)."""
    is_const: bool
    has_initial_entries: bool
    field_index: dict[int, int] = field(init=False, repr=False, compare=False)
    """match field id -> position in `fields`."""
    needs_priority: bool = field(init=False, repr=False, compare=False)
    """It has ternary, range or optional fields: its entries have priorities."""
    _fields: NameIndex[MatchFieldInfo] = field(init=False, repr=False, compare=False)
    _actions: NameIndex[ActionInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where = f"table '{self.name}'"
        object.__setattr__(self, "field_index", {f.id: i for i, f in enumerate(self.fields)})
        object.__setattr__(self, "needs_priority", any(
            f.match_type in ("ternary", "range", "optional") for f in self.fields))
        object.__setattr__(self, "_fields", _index("match field", where, self.fields))
        acts: NameIndex[ActionInfo] = NameIndex("action", where)
        for a in self.actions:
            acts.add(a.name, a, (a.alias,))
        object.__setattr__(self, "_actions", acts)

    def field(self, name: str) -> MatchFieldInfo:
        return self._fields.find(name)

    def action(self, name: str) -> ActionInfo:
        return self._actions.find(name)

    @property
    def default_only(self) -> frozenset[int]:
        """Action ids usable only as the default action."""
        return self._scoped(p4i.ActionRef.DEFAULT_ONLY)

    @property
    def table_only(self) -> frozenset[int]:
        return self._scoped(p4i.ActionRef.TABLE_ONLY)

    def _scoped(self, scope: int) -> frozenset[int]:
        return frozenset(a for a, s in self.action_scopes.items() if s == scope)


@dataclass(frozen=True, slots=True)
class ActionProfileInfo:
    id: int
    name: str
    alias: str
    table_ids: tuple[int, ...]
    with_selector: bool
    size: int
    max_group_size: int
    weights_disallowed: bool


@dataclass(frozen=True, slots=True)
class CounterInfo:
    id: int
    name: str
    alias: str
    unit: int  # p4i.CounterSpec.Unit
    size: int  # 0 for direct counters
    table_id: int = 0  # direct counters only


@dataclass(frozen=True, slots=True)
class MeterInfo:
    id: int
    name: str
    alias: str
    unit: int  # p4i.MeterSpec.Unit
    type: int  # p4i.MeterSpec.Type
    size: int  # 0 for direct meters
    table_id: int = 0  # direct meters only


@dataclass(frozen=True, slots=True)
class RegisterInfo:
    id: int
    name: str
    alias: str
    size: int
    bitwidth: int
    signed: bool


@dataclass(frozen=True, slots=True)
class DigestInfo:
    id: int
    name: str
    alias: str
    kind: str
    """"struct", "tuple" or "bitstring": the shape of each P4Data of a DigestList."""
    members: tuple[tuple[str, int], ...]
    """(member name, bitwidth) in order; tuple members are named f0, f1, ...,
    a bit string "value"."""

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(w for _, w in self.members)


@dataclass(frozen=True, slots=True)
class PacketMetadataInfo:
    """A controller header (packet_in / packet_out)."""
    id: int
    name: str
    fields: tuple[ParamInfo, ...]
    """(id, name, bitwidth) of each metadata field, in header order."""
    _fields: NameIndex[ParamInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_fields",
                           _index("field", f"controller header '{self.name}'", self.fields))

    def field(self, name: str) -> ParamInfo:
        return self._fields.find(name)

    @property
    def nbytes(self) -> int:
        return (sum(f.bitwidth for f in self.fields) + 7) // 8


@dataclass(frozen=True, slots=True)
class ValueSetInfo:
    id: int
    name: str
    alias: str
    size: int
    fields: tuple[MatchFieldInfo, ...]


class ByName(Generic[T]):
    """A lookup of one kind of object as a P4Schema method:
    `schema.table(key)` is `schema.tables.find(key)` (an id, or a full
    name, alias or unique suffix; UnknownName with suggestions otherwise).
    The first call binds it to that schema's map, so later calls cost no
    more than the map's own `find`."""

    def __init__(self, attr: str):
        self.attr = attr
        """The P4Schema attribute holding the kind's EntityMap."""
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, schema: None, owner: type) -> "ByName[T]": ...
    @overload
    def __get__(self, schema: "P4Schema", owner: type) -> Callable[[Union[int, str]], T]: ...

    def __get__(self, schema, owner=None):
        if schema is None:
            return self
        find = getattr(schema, self.attr).find
        schema.__dict__[self.name] = find  # (an instance attribute wins over this descriptor)
        return find


def _type_width(spec, type_info) -> tuple[int, bool, str]:
    """(bitwidth, signed, problem) of a P4DataTypeSpec that should be a
    bit<W>/int<W>; `problem` is "" when it is one (or translates to one)."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        b = spec.bitstring
        k = b.WhichOneof("type_spec")
        if k == "bit":
            return b.bit.bitwidth, False, ""
        if k == "int":
            return b.int.bitwidth, True, ""
        return b.varbit.max_bitwidth, False, "varbit values are not supported"
    if kind == "new_type":
        nt = type_info.new_types.get(spec.new_type.name)
        if nt is not None:
            if nt.WhichOneof("representation") == "original_type":
                return _type_width(nt.original_type, type_info)
            return nt.translated_type.sdn_bitwidth, False, ""
    if kind == "serializable_enum":
        se = type_info.serializable_enums.get(spec.serializable_enum.name)
        if se is not None:
            return se.underlying_type.bitwidth, False, ""
    if kind == "bool":
        return 1, False, ""
    return 0, False, f"values of P4 type '{kind}' are not supported"


class P4Schema:
    """Every object of a P4Info, indexed (and checked, if `strict`)."""

    def __init__(self, p4info: "p4i.P4Info", *, strict: bool = True):
        self.p4info = p4info
        self.strict = strict
        self.tables: EntityMap[TableInfo] = EntityMap("table")
        self.actions: EntityMap[ActionInfo] = EntityMap("action")
        self.action_profiles: EntityMap[ActionProfileInfo] = EntityMap("action profile")
        self.counters: EntityMap[CounterInfo] = EntityMap("counter")
        self.direct_counters: EntityMap[CounterInfo] = EntityMap("direct counter")
        self.meters: EntityMap[MeterInfo] = EntityMap("meter")
        self.direct_meters: EntityMap[MeterInfo] = EntityMap("direct meter")
        self.registers: EntityMap[RegisterInfo] = EntityMap("register")
        self.digests: EntityMap[DigestInfo] = EntityMap("digest")
        self.value_sets: EntityMap[ValueSetInfo] = EntityMap("value set")
        self.packet_metadata: EntityMap[PacketMetadataInfo] = EntityMap("controller header")
        self.packet_in: Optional[PacketMetadataInfo] = None
        self.packet_out: Optional[PacketMetadataInfo] = None
        self.by_id: dict[int, object] = {}
        """Every object by id, whatever its kind."""
        self._seen: dict[int, str] = {}
        self._build()

    # ----- construction ------------------------------------------------

    def _add(self, emap: EntityMap, prefix: int, pre, obj) -> None:
        what = f"{emap.kind} '{pre.name}'"
        if self.strict:
            id_ = pre.id
            if id_ == 0:
                raise invalid(f"p4info: {what} has id 0")
            if id_prefix(id_) != prefix:
                raise invalid(f"p4info: {what} has id 0x{id_:08x}, whose prefix is not "
                              f"0x{prefix:02x}")
            if id_ in self._seen:
                raise invalid(f"p4info: id 0x{id_:08x} is used by both {self._seen[id_]} "
                              f"and {what}")
            self._seen[id_] = what
        emap.put(pre.id, pre.name, pre.alias, obj)
        self.by_id[pre.id] = obj

    def _width(self, spec, where: str) -> tuple[int, bool]:
        width, signed, problem = _type_width(spec, self.p4info.type_info)
        if problem and self.strict:
            raise unimplemented(f"{where}: {problem}")
        return width, signed

    def _build(self) -> None:
        p = self.p4info
        for a in p.actions:
            pre = a.preamble
            params = tuple(ParamInfo(x.id, x.name, x.bitwidth) for x in a.params)
            info = ActionInfo(pre.id, pre.name, pre.alias, params)
            if self.strict and len(info.param_index) != len(params):
                raise invalid(f"p4info: action '{pre.name}' has two parameters with the same id")
            self._add(self.actions, ACTION, pre, info)
        for c in p.direct_counters:
            pre = c.preamble
            self._add(self.direct_counters, DIRECT_COUNTER, pre, CounterInfo(
                pre.id, pre.name, pre.alias, c.spec.unit, 0, c.direct_table_id))
        for m in p.direct_meters:
            pre = m.preamble
            self._add(self.direct_meters, DIRECT_METER, pre, MeterInfo(
                pre.id, pre.name, pre.alias, m.spec.unit, m.spec.type, 0, m.direct_table_id))
        for c in p.counters:
            pre = c.preamble
            self._add(self.counters, COUNTER, pre,
                      CounterInfo(pre.id, pre.name, pre.alias, c.spec.unit, c.size))
        for m in p.meters:
            pre = m.preamble
            self._add(self.meters, METER, pre, MeterInfo(
                pre.id, pre.name, pre.alias, m.spec.unit, m.spec.type, m.size))
        for r in p.registers:
            pre = r.preamble
            width, signed = self._width(r.type_spec, f"register '{pre.name}'") \
                if r.type_spec.WhichOneof("type_spec") else (0, False)
            self._add(self.registers, REGISTER, pre,
                      RegisterInfo(pre.id, pre.name, pre.alias, r.size, width, signed))
        for ap in p.action_profiles:
            pre = ap.preamble
            self._add(self.action_profiles, ACTION_PROFILE, pre, ActionProfileInfo(
                pre.id, pre.name, pre.alias, tuple(ap.table_ids), ap.with_selector, ap.size,
                ap.max_group_size, ap.weights_disallowed))
        for t in p.tables:
            self._add_table(t)
        for d in p.digests:
            self._add(self.digests, DIGEST, d.preamble, self._digest(d))
        for h in p.controller_packet_metadata:
            pre = h.preamble
            md = tuple(ParamInfo(m.id, m.name, m.bitwidth) for m in h.metadata)
            info = PacketMetadataInfo(pre.id, pre.name, md)
            self._add(self.packet_metadata, CONTROLLER_HEADER, pre, info)
            if pre.name == "packet_in":
                self.packet_in = info
            elif pre.name == "packet_out":
                self.packet_out = info
        for vs in p.value_sets:
            pre = vs.preamble
            fields = tuple(self._match_field(m, f"value set '{pre.name}'") for m in vs.match)
            self._add(self.value_sets, VALUE_SET, pre,
                      ValueSetInfo(pre.id, pre.name, pre.alias, vs.size, fields))

    def _match_field(self, m, where: str) -> MatchFieldInfo:
        if m.WhichOneof("match") == "other_match_type":
            mt = m.other_match_type
        else:
            mt = MATCH_TYPES.get(m.match_type)
            if mt is None:
                if self.strict:
                    raise invalid(f"p4info: {where}: match field '{m.name}' has no match type")
                mt = "unspecified"
        width = m.bitwidth
        nt = self.p4info.type_info.new_types.get(m.type_name.name) \
            if m.HasField("type_name") else None
        translated = nt is not None and nt.WhichOneof("representation") == "translated_type"
        if width <= 0 and translated:
            # @p4runtime_translation: the SDN width, if numeric (0: an SDN string)
            width = nt.translated_type.sdn_bitwidth
        elif width <= 0 and self.strict and not m.HasField("type_name"):
            raise invalid(f"p4info: {where}: match field '{m.name}' has bitwidth {width}")
        return MatchFieldInfo(m.id, m.name, width, mt, translated)

    def _add_table(self, t) -> None:
        pre = t.preamble
        where = f"table '{pre.name}'"
        fields = tuple(self._match_field(m, where) for m in t.match_fields)
        if self.strict and len({f.id for f in fields}) != len(fields):
            raise invalid(f"p4info: {where} has two match fields with the same id")
        actions, scopes = [], {}
        for ref in t.action_refs:
            act = self.actions.by_id.get(ref.id)
            if act is None:
                if self.strict:
                    raise invalid(f"p4info: {where} refers to unknown action id {ref.id}")
                continue
            actions.append(act)
            scopes[ref.id] = ref.scope
        dc = dm = 0
        for rid in t.direct_resource_ids:
            if rid in self.direct_counters.by_id or (not self.strict and
                                                     id_prefix(rid) == DIRECT_COUNTER):
                dc = rid
            elif rid in self.direct_meters.by_id or (not self.strict and
                                                     id_prefix(rid) == DIRECT_METER):
                dm = rid
            elif self.strict:
                raise invalid(f"p4info: {where} refers to unknown direct resource id {rid}")
        if (self.strict and t.implementation_id
                and t.implementation_id not in self.action_profiles.by_id):
            raise invalid(f"p4info: {where} refers to unknown action profile id "
                          f"{t.implementation_id}")
        self._add(self.tables, TABLE, pre, TableInfo(
            pre.id, pre.name, pre.alias, fields, tuple(actions), scopes,
            t.const_default_action_id, t.implementation_id, dc, dm, t.size,
            t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL, t.is_const_table,
            t.has_initial_entries))

    def _digest(self, d) -> DigestInfo:
        pre = d.preamble
        where = f"digest '{pre.name}'"
        spec = d.type_spec
        kind = spec.WhichOneof("type_spec")
        if kind == "struct":
            st = self.p4info.type_info.structs.get(spec.struct.name)
            if st is None:
                if self.strict:
                    raise invalid(f"p4info: {where}: struct '{spec.struct.name}' is not in "
                                  "type_info")
                return DigestInfo(pre.id, pre.name, pre.alias, "struct", ())
            members = tuple((m.name, self._width(m.type_spec, where)[0]) for m in st.members)
            return DigestInfo(pre.id, pre.name, pre.alias, "struct", members)
        if kind == "tuple":
            members = tuple((f"f{i}", self._width(m, where)[0])
                            for i, m in enumerate(spec.tuple.members))
            return DigestInfo(pre.id, pre.name, pre.alias, "tuple", members)
        return DigestInfo(pre.id, pre.name, pre.alias, "bitstring",
                          (("value", self._width(spec, where)[0]),))

    # ----- lookups by name (UnknownName with suggestions) ------------------

    table = ByName[TableInfo]("tables")
    action = ByName[ActionInfo]("actions")
    action_profile = ByName[ActionProfileInfo]("action_profiles")
    counter = ByName[CounterInfo]("counters")
    meter = ByName[MeterInfo]("meters")
    register = ByName[RegisterInfo]("registers")
    digest = ByName[DigestInfo]("digests")

    def direct_counter(self, name: str) -> CounterInfo:
        """A direct counter by its own name or by its table's."""
        dc = self.direct_counters.get(name)
        if dc is not None:
            return dc
        t = self.tables.get(name)
        if t is not None and t.direct_counter_id:
            return self.by_id[t.direct_counter_id]  # type: ignore[return-value]
        raise self.direct_counters.error(name)

    def controller_header(self, name: str) -> Optional[PacketMetadataInfo]:
        return self.packet_metadata.get(name)

    def profile_of(self, table: TableInfo) -> ActionProfileInfo:
        ap = self.action_profiles.get(table.implementation_id)
        if ap is None:
            raise UnknownName(f"table '{table.name}' has no action profile or selector",
                              name=table.name, kind="action profile")
        return ap

    def tables_of(self, profile: ActionProfileInfo) -> list[TableInfo]:
        return [t for t in map(self.tables.get, profile.table_ids) if t is not None]

    # ----- lookups by id -----------------------------------------------------

    def all_maps(self) -> tuple[EntityMap, ...]:
        return (self.tables, self.actions, self.action_profiles, self.counters,
                self.direct_counters, self.meters, self.direct_meters, self.registers,
                self.digests, self.value_sets)

    def kind_of(self, id_: int) -> str:
        """What an id names, for messages ("table", "counter", ...), or "unknown id"."""
        for m in self.all_maps():
            if id_ in m.by_id:
                return m.kind
        return "unknown id"

    def name_of(self, id_: int) -> str:
        obj = self.by_id.get(id_)
        return getattr(obj, "name", f"<id {id_:#x}>")
