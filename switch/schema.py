"""An index of a P4Info message: every P4 object by id and by name.

`P4Schema(p4info)` checks the P4Info once (ids unique and of the right
kind, references resolvable) and then answers lookups in O(1). Name lookups
accept the full name or the alias and suggest a fix when nothing matches
("no table named 'ipv4'; did you mean 'MyIngress.ipv4_lpm'?"), as finsy's
P4EntityMap does. The server and (later) the controller share it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Generic, Iterator, Optional, TypeVar

from finsy.proto import p4i

from .errors import invalid, unimplemented

# P4Info id prefixes (p4info.proto, P4Ids.Prefix)
ACTION = 0x01
TABLE = 0x02
VALUE_SET = 0x03
CONTROLLER_HEADER = 0x04
ACTION_PROFILE = 0x11
COUNTER = 0x12
DIRECT_COUNTER = 0x13
METER = 0x14
DIRECT_METER = 0x15
REGISTER = 0x16
DIGEST = 0x17

_MATCH_TYPES = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}


def id_prefix(id_: int) -> int:
    return id_ >> 24


@dataclass(frozen=True, slots=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    match_type: str
    """exact, lpm, ternary, range, optional, or the P4Info other_match_type."""


@dataclass(frozen=True, slots=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True, slots=True)
class ActionInfo:
    id: int
    name: str
    alias: str
    params: tuple[ParamInfo, ...]
    param_index: dict[int, int] = field(compare=False)
    """param id -> position in `params` (the engine takes arguments by position)."""


@dataclass(frozen=True, slots=True)
class TableInfo:
    id: int
    name: str
    alias: str
    fields: tuple[MatchFieldInfo, ...]
    field_index: dict[int, int] = field(compare=False)
    """match field id -> position in `fields`."""
    action_scopes: dict[int, int] = field(compare=False)
    """action id -> p4i.ActionRef.Scope."""
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    size: int
    supports_idle_timeout: bool
    is_const: bool
    has_initial_entries: bool

    @property
    def needs_priority(self) -> bool:
        return any(f.match_type in ("ternary", "range", "optional") for f in self.fields)


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
    size: int
    table_id: int = 0


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
    kind: str  # "struct", "tuple" or "bitstring"
    widths: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PacketMetadataInfo:
    id: int
    name: str
    fields: tuple[ParamInfo, ...]
    """(id, name, bitwidth) of each metadata field, in header order."""

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


T = TypeVar("T")


class EntityMap(Generic[T]):
    """Objects of one kind by id, name and alias, with suggestions."""

    def __init__(self, kind: str):
        self.kind = kind
        self.by_id: dict[int, T] = {}
        self.by_name: dict[str, T] = {}

    def add(self, id_: int, name: str, alias: str, obj: T) -> None:
        self.by_id[id_] = obj
        self.by_name[name] = obj
        if alias and alias not in self.by_name:
            self.by_name[alias] = obj

    def __iter__(self) -> Iterator[T]:
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)

    def get(self, id_: int) -> Optional[T]:
        return self.by_id.get(id_)

    def named(self, name: str) -> T:
        """The object called `name` (full name or alias); KeyError with a hint."""
        obj = self.by_name.get(name)
        if obj is not None:
            return obj
        raise KeyError(f"no {self.kind} named '{name}'{self.suggest(name)}")

    def suggest(self, name: str) -> str:
        names = sorted(set(self.by_name))
        tails = [n for n in names if n.endswith("." + name) or n.endswith(name)]
        if not tails:
            tails = difflib.get_close_matches(name, names, n=1)
        return f"; did you mean '{tails[0]}'?" if tails else ""


def _bitstring_width(spec, type_info, where: str) -> tuple[int, bool]:
    """(bitwidth, signed) of a P4DataTypeSpec that must be a bit<W>/int<W>."""
    kind = spec.WhichOneof("type_spec")
    if kind == "bitstring":
        b = spec.bitstring
        k = b.WhichOneof("type_spec")
        if k == "bit":
            return b.bit.bitwidth, False
        if k == "int":
            return b.int.bitwidth, True
        raise unimplemented(f"{where}: varbit values are not supported")
    if kind == "new_type":
        nt = type_info.new_types.get(spec.new_type.name)
        if nt is not None:
            if nt.WhichOneof("representation") == "original_type":
                return _bitstring_width(nt.original_type, type_info, where)
            return nt.translated_type.sdn_bitwidth, False
    if kind == "serializable_enum":
        se = type_info.serializable_enums.get(spec.serializable_enum.name)
        if se is not None:
            return se.underlying_type.bitwidth, False
    if kind == "bool":
        return 1, False
    raise unimplemented(f"{where}: values of P4 type '{kind}' are not supported")


class P4Schema:
    """Every object of a P4Info, checked and indexed."""

    def __init__(self, p4info: "p4i.P4Info"):
        self.p4info = p4info
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
        self.packet_in: Optional[PacketMetadataInfo] = None
        self.packet_out: Optional[PacketMetadataInfo] = None
        self._seen: dict[int, str] = {}
        self._build()

    # ----- construction ------------------------------------------------

    def _claim(self, id_: int, prefix: int, what: str) -> None:
        if id_ == 0:
            raise invalid(f"p4info: {what} has id 0")
        if id_prefix(id_) != prefix:
            raise invalid(f"p4info: {what} has id 0x{id_:08x}, whose prefix is not 0x{prefix:02x}")
        if id_ in self._seen:
            raise invalid(f"p4info: id 0x{id_:08x} is used by both {self._seen[id_]} and {what}")
        self._seen[id_] = what

    def _build(self) -> None:
        p = self.p4info
        ti = p.type_info
        for a in p.actions:
            pre = a.preamble
            self._claim(pre.id, ACTION, f"action '{pre.name}'")
            params = tuple(ParamInfo(x.id, x.name, x.bitwidth) for x in a.params)
            index = {x.id: i for i, x in enumerate(params)}
            if len(index) != len(params):
                raise invalid(f"p4info: action '{pre.name}' has two parameters with the same id")
            self.actions.add(pre.id, pre.name, pre.alias,
                             ActionInfo(pre.id, pre.name, pre.alias, params, index))
        for c in p.direct_counters:
            pre = c.preamble
            self._claim(pre.id, DIRECT_COUNTER, f"direct counter '{pre.name}'")
            self.direct_counters.add(pre.id, pre.name, pre.alias, CounterInfo(
                pre.id, pre.name, pre.alias, c.spec.unit, 0, c.direct_table_id))
        for m in p.direct_meters:
            pre = m.preamble
            self._claim(pre.id, DIRECT_METER, f"direct meter '{pre.name}'")
            self.direct_meters.add(pre.id, pre.name, pre.alias, MeterInfo(
                pre.id, pre.name, pre.alias, m.spec.unit, m.spec.type, 0, m.direct_table_id))
        for c in p.counters:
            pre = c.preamble
            self._claim(pre.id, COUNTER, f"counter '{pre.name}'")
            self.counters.add(pre.id, pre.name, pre.alias,
                              CounterInfo(pre.id, pre.name, pre.alias, c.spec.unit, c.size))
        for m in p.meters:
            pre = m.preamble
            self._claim(pre.id, METER, f"meter '{pre.name}'")
            self.meters.add(pre.id, pre.name, pre.alias, MeterInfo(
                pre.id, pre.name, pre.alias, m.spec.unit, m.spec.type, m.size))
        for r in p.registers:
            pre = r.preamble
            self._claim(pre.id, REGISTER, f"register '{pre.name}'")
            width, signed = _bitstring_width(r.type_spec, ti, f"register '{pre.name}'") \
                if r.type_spec.WhichOneof("type_spec") else (0, False)
            self.registers.add(pre.id, pre.name, pre.alias,
                               RegisterInfo(pre.id, pre.name, pre.alias, r.size, width, signed))
        for ap in p.action_profiles:
            pre = ap.preamble
            self._claim(pre.id, ACTION_PROFILE, f"action profile '{pre.name}'")
            self.action_profiles.add(pre.id, pre.name, pre.alias, ActionProfileInfo(
                pre.id, pre.name, pre.alias, tuple(ap.table_ids), ap.with_selector, ap.size,
                ap.max_group_size, ap.weights_disallowed))
        for t in p.tables:
            self._add_table(t)
        for d in p.digests:
            pre = d.preamble
            self._claim(pre.id, DIGEST, f"digest '{pre.name}'")
            self.digests.add(pre.id, pre.name, pre.alias, self._digest(d))
        for h in p.controller_packet_metadata:
            pre = h.preamble
            self._claim(pre.id, CONTROLLER_HEADER, f"controller header '{pre.name}'")
            info = PacketMetadataInfo(pre.id, pre.name,
                                      tuple(ParamInfo(m.id, m.name, m.bitwidth) for m in h.metadata))
            if pre.name == "packet_in":
                self.packet_in = info
            elif pre.name == "packet_out":
                self.packet_out = info
        for vs in p.value_sets:
            pre = vs.preamble
            self._claim(pre.id, VALUE_SET, f"value set '{pre.name}'")
            fields = tuple(self._match_field(m, f"value set '{pre.name}'") for m in vs.match)
            self.value_sets.add(pre.id, pre.name, pre.alias,
                                ValueSetInfo(pre.id, pre.name, pre.alias, vs.size, fields))

    def _match_field(self, m, where: str) -> MatchFieldInfo:
        kind = m.WhichOneof("match")
        if kind == "other_match_type":
            mt = m.other_match_type
        else:
            mt = _MATCH_TYPES.get(m.match_type)
            if mt is None:
                raise invalid(f"p4info: {where}: match field '{m.name}' has no match type")
        width = m.bitwidth
        if width <= 0 and m.HasField("type_name"):
            # @p4runtime_translation: the SDN width, if numeric (0: an SDN string)
            nt = self.p4info.type_info.new_types.get(m.type_name.name)
            if nt is not None and nt.WhichOneof("representation") == "translated_type":
                width = nt.translated_type.sdn_bitwidth
        elif width <= 0:
            raise invalid(f"p4info: {where}: match field '{m.name}' has bitwidth {width}")
        return MatchFieldInfo(m.id, m.name, width, mt)

    def _add_table(self, t) -> None:
        pre = t.preamble
        where = f"table '{pre.name}'"
        self._claim(pre.id, TABLE, where)
        fields = tuple(self._match_field(m, where) for m in t.match_fields)
        index = {f.id: i for i, f in enumerate(fields)}
        if len(index) != len(fields):
            raise invalid(f"p4info: {where} has two match fields with the same id")
        scopes = {}
        for ref in t.action_refs:
            if ref.id not in self.actions.by_id:
                raise invalid(f"p4info: {where} refers to unknown action id {ref.id}")
            scopes[ref.id] = ref.scope
        dc = dm = 0
        for rid in t.direct_resource_ids:
            if rid in self.direct_counters.by_id:
                dc = rid
            elif rid in self.direct_meters.by_id:
                dm = rid
            else:
                raise invalid(f"p4info: {where} refers to unknown direct resource id {rid}")
        if t.implementation_id and t.implementation_id not in self.action_profiles.by_id:
            raise invalid(f"p4info: {where} refers to unknown action profile id {t.implementation_id}")
        self.tables.add(pre.id, pre.name, pre.alias, TableInfo(
            pre.id, pre.name, pre.alias, fields, index, scopes, t.const_default_action_id,
            t.implementation_id, dc, dm, t.size,
            t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL, t.is_const_table,
            t.has_initial_entries))

    def _digest(self, d) -> DigestInfo:
        pre = d.preamble
        where = f"digest '{pre.name}'"
        spec = d.type_spec
        kind = spec.WhichOneof("type_spec")
        ti = self.p4info.type_info
        if kind == "struct":
            st = ti.structs.get(spec.struct.name)
            if st is None:
                raise invalid(f"p4info: {where}: struct '{spec.struct.name}' is not in type_info")
            widths = tuple(_bitstring_width(m.type_spec, ti, where)[0] for m in st.members)
            return DigestInfo(pre.id, pre.name, pre.alias, "struct", widths)
        if kind == "tuple":
            widths = tuple(_bitstring_width(m, ti, where)[0] for m in spec.tuple.members)
            return DigestInfo(pre.id, pre.name, pre.alias, "tuple", widths)
        w, _ = _bitstring_width(spec, ti, where)
        return DigestInfo(pre.id, pre.name, pre.alias, "bitstring", (w,))

    # ----- lookups -------------------------------------------------------

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
