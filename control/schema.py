"""The controller's view of a P4Info: every object found by name.

    schema = Schema.load("build/dut.p4info.txtpb")
    t = schema.table("smac")                 # DutIngress.smac
    f = t.field("src_addr")                  # hdr.ethernet.src_addr
    a = t.action("smac_hit")                 # DutIngress.smac_hit
    schema.counter("drop_counter").size      # 8192

Ids always come from the P4Info (p4c's scheme or anything else); nothing
in the controller hard-codes one. Unknown names raise `UnknownName` with
suggestions (see names.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from finsy.proto import p4i, p4t
from google.protobuf import json_format, text_format

from .names import NameIndex, UnknownName

MATCH_KINDS = {
    p4i.MatchField.EXACT: "exact",
    p4i.MatchField.LPM: "lpm",
    p4i.MatchField.TERNARY: "ternary",
    p4i.MatchField.RANGE: "range",
    p4i.MatchField.OPTIONAL: "optional",
}


@dataclass(frozen=True)
class Param:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class MatchField:
    id: int
    name: str
    bitwidth: int
    kind: str


@dataclass(frozen=True)
class Action:
    id: int
    name: str
    alias: str
    params: tuple[Param, ...]
    _index: NameIndex = field(repr=False, compare=False, hash=False)

    def param(self, name: str) -> Param:
        return self._index.find(name)


@dataclass(frozen=True)
class Table:
    id: int
    name: str
    alias: str
    fields: tuple[MatchField, ...]
    actions: tuple[Action, ...]
    default_only: frozenset[int]
    """Action ids usable only as the default action."""
    table_only: frozenset[int]
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    size: int
    idle_timeout: bool
    is_const: bool
    _fields: NameIndex = field(repr=False, compare=False, hash=False)
    _actions: NameIndex = field(repr=False, compare=False, hash=False)

    def field(self, name: str) -> MatchField:
        return self._fields.find(name)

    def action(self, name: str) -> Action:
        return self._actions.find(name)

    @property
    def needs_priority(self) -> bool:
        return any(f.kind in ("ternary", "range", "optional") for f in self.fields)


@dataclass(frozen=True)
class ActionProfile:
    id: int
    name: str
    alias: str
    table_ids: tuple[int, ...]
    with_selector: bool
    size: int
    max_group_size: int


@dataclass(frozen=True)
class Counter:
    id: int
    name: str
    alias: str
    unit: str           # "bytes", "packets", "both"
    size: int           # 0 for direct counters
    table_id: int = 0   # direct counters


@dataclass(frozen=True)
class Meter:
    id: int
    name: str
    alias: str
    size: int
    table_id: int = 0


@dataclass(frozen=True)
class Register:
    id: int
    name: str
    alias: str
    size: int
    bitwidth: int


@dataclass(frozen=True)
class Digest:
    id: int
    name: str
    alias: str
    members: tuple[tuple[str, int], ...]
    """(member name, bitwidth) of the digested struct, in order."""


@dataclass(frozen=True)
class PacketMetadata:
    """A controller header (packet_in / packet_out)."""
    id: int
    name: str
    fields: tuple[Param, ...]
    _index: NameIndex = field(repr=False, compare=False, hash=False)

    def field(self, name: str) -> Param:
        return self._index.find(name)


_UNITS = {p4i.CounterSpec.BYTES: "bytes", p4i.CounterSpec.PACKETS: "packets",
          p4i.CounterSpec.BOTH: "both"}

P4InfoSource = Union[str, Path, bytes, "p4i.P4Info"]


def load_p4info(src: P4InfoSource) -> p4i.P4Info:
    """A P4Info message from a message, a file (.txt/.txtpb/.pb.txt text,
    .json JSON, anything else binary) or the bytes of a binary one."""
    if isinstance(src, p4i.P4Info):
        return src
    msg = p4i.P4Info()
    if isinstance(src, bytes):
        msg.ParseFromString(src)
        return msg
    path = Path(src)
    data = path.read_bytes()
    suffix = path.name.split(".", 1)[-1] if "." in path.name else ""
    if suffix.endswith(("txt", "txtpb", "textproto", "pbtxt")):
        text_format.Parse(data.decode(), msg)
    elif suffix.endswith("json"):
        json_format.Parse(data.decode(), msg)
    else:
        msg.ParseFromString(data)
    return msg


class Schema:
    """Index of one P4Info."""

    def __init__(self, p4info: P4InfoSource):
        self.p4info = load_p4info(p4info)
        info = self.p4info
        self.actions: NameIndex[Action] = NameIndex("action")
        self.tables: NameIndex[Table] = NameIndex("table")
        self.action_profiles: NameIndex[ActionProfile] = NameIndex("action profile")
        self.counters: NameIndex[Counter] = NameIndex("counter")
        self.direct_counters: NameIndex[Counter] = NameIndex("direct counter")
        self.meters: NameIndex[Meter] = NameIndex("meter")
        self.registers: NameIndex[Register] = NameIndex("register")
        self.digests: NameIndex[Digest] = NameIndex("digest")
        self.packet_metadata: NameIndex[PacketMetadata] = NameIndex("controller header")
        self.by_id: dict[int, object] = {}

        for a in info.actions:
            pre = a.preamble
            idx: NameIndex[Param] = NameIndex("parameter", f"action '{pre.name}'")
            params = tuple(Param(p.id, p.name, p.bitwidth) for p in a.params)
            for p in params:
                idx.add(p.name, p)
            act = Action(pre.id, pre.name, pre.alias, params, idx)
            self._add(self.actions, pre, act)

        for t in info.tables:
            pre = t.preamble
            fidx: NameIndex[MatchField] = NameIndex("match field", f"table '{pre.name}'")
            fields = tuple(
                MatchField(m.id, m.name, m.bitwidth,
                           MATCH_KINDS.get(m.match_type, m.other_match_type or "unspecified"))
                for m in t.match_fields)
            for f in fields:
                fidx.add(f.name, f)
            aidx: NameIndex[Action] = NameIndex("action", f"table '{pre.name}'")
            acts = []
            default_only, table_only = set(), set()
            for ref in t.action_refs:
                act = self.by_id.get(ref.id)
                if isinstance(act, Action):
                    acts.append(act)
                    aidx.add(act.name, act, (act.alias,))
                    if ref.scope == p4i.ActionRef.DEFAULT_ONLY:
                        default_only.add(act.id)
                    elif ref.scope == p4i.ActionRef.TABLE_ONLY:
                        table_only.add(act.id)
            dc = dm = 0
            for rid in t.direct_resource_ids:
                if rid >> 24 == 0x13:
                    dc = rid
                elif rid >> 24 == 0x15:
                    dm = rid
            tab = Table(pre.id, pre.name, pre.alias, fields, tuple(acts), frozenset(default_only),
                        frozenset(table_only), t.const_default_action_id, t.implementation_id,
                        dc, dm, t.size,
                        t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL, t.is_const_table,
                        fidx, aidx)
            self._add(self.tables, pre, tab)

        for ap in info.action_profiles:
            self._add(self.action_profiles, ap.preamble, ActionProfile(
                ap.preamble.id, ap.preamble.name, ap.preamble.alias, tuple(ap.table_ids),
                ap.with_selector, ap.size, ap.max_group_size))
        for c in info.counters:
            self._add(self.counters, c.preamble, Counter(
                c.preamble.id, c.preamble.name, c.preamble.alias,
                _UNITS.get(c.spec.unit, "both"), c.size))
        for c in info.direct_counters:
            self._add(self.direct_counters, c.preamble, Counter(
                c.preamble.id, c.preamble.name, c.preamble.alias,
                _UNITS.get(c.spec.unit, "both"), 0, c.direct_table_id))
        for m in info.meters:
            self._add(self.meters, m.preamble, Meter(
                m.preamble.id, m.preamble.name, m.preamble.alias, m.size))
        for r in info.registers:
            width = r.type_spec.bitstring.bit.bitwidth or r.type_spec.bitstring.int.bitwidth
            self._add(self.registers, r.preamble, Register(
                r.preamble.id, r.preamble.name, r.preamble.alias, r.size, width))
        for d in info.digests:
            self._add(self.digests, d.preamble, Digest(
                d.preamble.id, d.preamble.name, d.preamble.alias,
                self._members(d.type_spec)))
        for cpm in info.controller_packet_metadata:
            pidx: NameIndex[Param] = NameIndex("field", f"controller header '{cpm.preamble.name}'")
            fs = tuple(Param(m.id, m.name, m.bitwidth) for m in cpm.metadata)
            for f in fs:
                pidx.add(f.name, f)
            self._add(self.packet_metadata, cpm.preamble,
                      PacketMetadata(cpm.preamble.id, cpm.preamble.name, fs, pidx))

    def _add(self, index: NameIndex, pre, obj) -> None:
        index.add(pre.name, obj, (pre.alias,))
        self.by_id[pre.id] = obj

    def _members(self, spec: p4t.P4DataTypeSpec) -> tuple[tuple[str, int], ...]:
        kind = spec.WhichOneof("type_spec")
        if kind == "struct":
            st = self.p4info.type_info.structs.get(spec.struct.name)
            if st is None:
                return ()
            out = []
            for m in st.members:
                ts = m.type_spec
                w = 0
                if ts.WhichOneof("type_spec") == "bitstring":
                    bs = ts.bitstring
                    w = bs.bit.bitwidth or bs.int.bitwidth or bs.varbit.max_bitwidth
                out.append((m.name, w))
            return tuple(out)
        if kind == "tuple":
            return tuple((f"f{i}", m.bitstring.bit.bitwidth) for i, m in enumerate(spec.tuple.members))
        if kind == "bitstring":
            return (("value", spec.bitstring.bit.bitwidth),)
        return ()

    # ----- lookups ------------------------------------------------------------

    def table(self, name: str) -> Table:
        return self.tables.find(name)

    def action(self, name: str) -> Action:
        return self.actions.find(name)

    def action_profile(self, name: str) -> ActionProfile:
        return self.action_profiles.find(name)

    def profile_of(self, table: Table) -> ActionProfile:
        ap = self.by_id.get(table.implementation_id)
        if not isinstance(ap, ActionProfile):
            raise UnknownName(f"table '{table.name}' has no action profile or selector",
                              name=table.name, kind="action profile")
        return ap

    def tables_of(self, profile: ActionProfile) -> list[Table]:
        return [t for t in (self.by_id.get(i) for i in profile.table_ids) if isinstance(t, Table)]

    def counter(self, name: str) -> Counter:
        return self.counters.find(name)

    def direct_counter(self, name: str) -> Counter:
        """A direct counter by its own name or by its table's."""
        dc = self.direct_counters.get(name)
        if dc is not None:
            return dc
        t = self.tables.get(name)
        if t is not None and t.direct_counter_id:
            return self.by_id[t.direct_counter_id]  # type: ignore[return-value]
        raise self.direct_counters.error(name)

    def meter(self, name: str) -> Meter:
        return self.meters.find(name)

    def register(self, name: str) -> Register:
        return self.registers.find(name)

    def digest(self, name: str) -> Digest:
        return self.digests.find(name)

    def controller_header(self, name: str) -> Optional[PacketMetadata]:
        return self.packet_metadata.get(name)

    def name_of(self, id_: int) -> str:
        obj = self.by_id.get(id_)
        return getattr(obj, "name", f"<id {id_:#x}>")
