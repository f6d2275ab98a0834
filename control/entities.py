"""P4Runtime entities as plain Python values, encoded against a Schema.

Each class holds what a person writes (names, ints, address strings) and
has `encode(schema)` -> protobuf and `decode(msg, schema)` -> instance, so
a read gives back the same kind of object a write took.

Match values by match kind (a missing field is a wildcard):

    exact     3, "10.0.0.1", "00:00:00:00:00:01"
    lpm       "10.0.0.0/8", (0x0a000000, 8)      prefix 0 = wildcard
    ternary   (value, mask), "0x0a000000&&&0xff000000"   mask 0 = wildcard
    range     (lo, hi)                           the full range = wildcard
    optional  value, None = wildcard

Decoded entries use ints (and tuples for lpm/ternary/range).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from finsy.proto import p4d, p4r

from . import values as control_values
from .schema import ActionInfo, Schema, TableInfo

MatchValue = Any


class EntityError(ValueError):
    """An entity that does not fit the P4Info (wrong kind, width, arity)."""


# ----- actions -----------------------------------------------------------------

@dataclass
class ActionCall:
    """An action and its arguments by parameter name."""
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def encode(self, schema: Schema, table: Optional[TableInfo] = None) -> p4r.Action:
        act = table.action(self.name) if table is not None else schema.action(self.name)
        return encode_action(act, self.params)

    @classmethod
    def decode(cls, msg: p4r.Action, schema: Schema) -> "ActionCall":
        act = schema.by_id.get(msg.action_id)
        if not isinstance(act, ActionInfo):
            return cls(f"<action {msg.action_id:#x}>", {})
        by_id = {p.id: p.name for p in act.params}
        return cls(act.name, {by_id.get(p.param_id, str(p.param_id)): control_values.decode(p.value)
                              for p in msg.params})


def encode_action(act: ActionInfo, params: dict[str, Any]) -> p4r.Action:
    msg = p4r.Action(action_id=act.id)
    given = dict(params)
    for p in act.params:
        key = p.name if p.name in given else None
        if key is None:
            raise EntityError(f"action '{act.name}' needs parameter '{p.name}' "
                              f"({p.bitwidth} bits); given: {sorted(params) or 'none'}")
        msg.params.add(param_id=p.id,
                       value=control_values.encode(given.pop(key), p.bitwidth, f"{act.name}({p.name})"))
    if given:
        for k in given:
            act.param(k)  # raises UnknownName with suggestions
    return msg


# ----- match fields ------------------------------------------------------------

def encode_match(table: TableInfo, match: dict[str, MatchValue]) -> list[p4r.FieldMatch]:
    out = []
    for name, value in match.items():
        mf = table.field(name)
        what = f"{table.name}: {mf.name}"
        fm = p4r.FieldMatch(field_id=mf.id)
        w = mf.bitwidth
        if mf.match_type == "exact":
            fm.exact.value = control_values.encode(value, w, what)
        elif mf.match_type == "lpm":
            v, plen = _lpm(value, w, what)
            if plen == 0:
                continue
            fm.lpm.value = control_values.encode(v & control_values.mask_of(plen, w), w, what)
            fm.lpm.prefix_len = plen
        elif mf.match_type == "ternary":
            v, m = _ternary(value, w, what)
            if m == 0:
                continue
            fm.ternary.value = control_values.encode(v & m, w, what)
            fm.ternary.mask = control_values.encode(m, w, what)
        elif mf.match_type == "range":
            lo, hi = _range(value, w, what)
            if lo == 0 and hi == (1 << w) - 1:
                continue
            if lo > hi:
                raise EntityError(f"{what}: range low {lo} is above high {hi}")
            fm.range.low = control_values.encode(lo, w, what)
            fm.range.high = control_values.encode(hi, w, what)
        elif mf.match_type == "optional":
            if value is None:
                continue
            fm.optional.value = control_values.encode(value, w, what)
        else:
            raise EntityError(f"{what}: match kind '{mf.match_type}' is not supported")
        out.append(fm)
    return out


def _lpm(value: MatchValue, w: int, what: str) -> tuple[int, int]:
    if isinstance(value, str) and "/" in value:
        addr, plen = value.rsplit("/", 1)
        return control_values.to_int(addr, w, what), int(plen)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return control_values.to_int(value[0], w, what), int(value[1])
    return control_values.to_int(value, w, what), w


def _ternary(value: MatchValue, w: int, what: str) -> tuple[int, int]:
    if isinstance(value, str) and "&&&" in value:
        v, m = value.split("&&&", 1)
        return control_values.to_int(v, w, what), control_values.to_int(m, w, what)
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return control_values.to_int(value[0], w, what), control_values.to_int(value[1], w, what)
    return control_values.to_int(value, w, what), (1 << w) - 1


def _range(value: MatchValue, w: int, what: str) -> tuple[int, int]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return control_values.to_int(value[0], w, what), control_values.to_int(value[1], w, what)
    v = control_values.to_int(value, w, what)
    return v, v


def decode_match(table: TableInfo, fms: Sequence[p4r.FieldMatch]) -> dict[str, MatchValue]:
    by_id = {f.id: f for f in table.fields}
    out: dict[str, MatchValue] = {}
    for fm in fms:
        mf = by_id.get(fm.field_id)
        name = mf.name if mf else str(fm.field_id)
        kind = fm.WhichOneof("field_match_type")
        if kind == "exact":
            out[name] = control_values.decode(fm.exact.value)
        elif kind == "lpm":
            out[name] = (control_values.decode(fm.lpm.value), fm.lpm.prefix_len)
        elif kind == "ternary":
            out[name] = (control_values.decode(fm.ternary.value), control_values.decode(fm.ternary.mask))
        elif kind == "range":
            out[name] = (control_values.decode(fm.range.low), control_values.decode(fm.range.high))
        elif kind == "optional":
            out[name] = control_values.decode(fm.optional.value)
    return out


# ----- table entries -----------------------------------------------------------

@dataclass
class TableEntry:
    """One entry (or the default entry) of a table.

    `action`+`params` for a direct table; `member_id` or `group_id` for a
    table with an action profile or selector (or `action` for a one-shot
    group of a single action)."""
    table: str
    match: dict[str, MatchValue] = field(default_factory=dict)
    action: Optional[str] = None
    params: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    member_id: Optional[int] = None
    group_id: Optional[int] = None
    idle_timeout_ns: int = 0
    is_default: bool = False
    controller_metadata: int = 0
    # filled by reads
    time_since_last_hit_ns: Optional[int] = None
    counter: Optional[tuple[int, int]] = None
    """(bytes, packets) of the direct counter, when read with counters."""

    def encode(self, schema: Schema) -> p4r.TableEntry:
        t = schema.table(self.table)
        msg = p4r.TableEntry(table_id=t.id)
        if self.is_default:
            msg.is_default_action = True
        else:
            msg.match.extend(encode_match(t, self.match))
        if self.priority:
            msg.priority = self.priority
        elif t.needs_priority and not self.is_default:
            raise EntityError(f"table '{t.name}' has ternary/range/optional keys: its entries "
                              "need a priority > 0 (higher wins)")
        if self.action is not None:
            act = t.action(self.action)
            if act.id in t.default_only and not self.is_default:
                raise EntityError(f"action '{act.name}' of table '{t.name}' is default-only")
            if t.implementation_id and not self.is_default:
                msg.action.action_profile_action_set.action_profile_actions.add(
                    action=encode_action(act, self.params), weight=1)
            else:
                msg.action.action.CopyFrom(encode_action(act, self.params))
        elif self.member_id is not None:
            msg.action.action_profile_member_id = self.member_id
        elif self.group_id is not None:
            msg.action.action_profile_group_id = self.group_id
        if self.idle_timeout_ns:
            if not t.idle_timeout:
                raise EntityError(f"table '{t.name}' does not support idle timeouts "
                                  "(support_timeout = true in the P4 program)")
            msg.idle_timeout_ns = self.idle_timeout_ns
        if self.controller_metadata:
            msg.controller_metadata = self.controller_metadata
        return msg

    def key_only(self, schema: Schema) -> p4r.TableEntry:
        """The entry as DELETE or a single-entry read needs it (match + priority)."""
        t = schema.table(self.table)
        msg = p4r.TableEntry(table_id=t.id, priority=self.priority)
        if self.is_default:
            msg.is_default_action = True
        else:
            msg.match.extend(encode_match(t, self.match))
        return msg

    @classmethod
    def decode(cls, msg: p4r.TableEntry, schema: Schema) -> "TableEntry":
        t = schema.by_id.get(msg.table_id)
        if not isinstance(t, TableInfo):
            raise EntityError(f"table id {msg.table_id:#x} is not in the P4Info")
        e = cls(t.name, decode_match(t, msg.match), priority=msg.priority,
                idle_timeout_ns=msg.idle_timeout_ns, is_default=msg.is_default_action,
                controller_metadata=msg.controller_metadata)
        kind = msg.action.WhichOneof("type")
        if kind == "action":
            call = ActionCall.decode(msg.action.action, schema)
            e.action, e.params = call.name, call.params
        elif kind == "action_profile_member_id":
            e.member_id = msg.action.action_profile_member_id
        elif kind == "action_profile_group_id":
            e.group_id = msg.action.action_profile_group_id
        elif kind == "action_profile_action_set":
            acts = msg.action.action_profile_action_set.action_profile_actions
            if acts:
                call = ActionCall.decode(acts[0].action, schema)
                e.action, e.params = call.name, call.params
        if msg.HasField("time_since_last_hit"):
            e.time_since_last_hit_ns = msg.time_since_last_hit.elapsed_ns
        if msg.HasField("counter_data"):
            e.counter = (msg.counter_data.byte_count, msg.counter_data.packet_count)
        return e


# ----- action profiles -----------------------------------------------------------

@dataclass
class Member:
    profile: str
    member_id: int
    action: str
    params: dict[str, Any] = field(default_factory=dict)

    def encode(self, schema: Schema) -> p4r.ActionProfileMember:
        ap = schema.action_profile(self.profile)
        tables = schema.tables_of(ap)
        act = tables[0].action(self.action) if tables else schema.action(self.action)
        return p4r.ActionProfileMember(action_profile_id=ap.id, member_id=self.member_id,
                                       action=encode_action(act, self.params))

    @classmethod
    def decode(cls, msg: p4r.ActionProfileMember, schema: Schema) -> "Member":
        call = ActionCall.decode(msg.action, schema)
        return cls(schema.name_of(msg.action_profile_id), msg.member_id, call.name, call.params)


@dataclass
class Group:
    profile: str
    group_id: int
    members: list[tuple[int, int]] = field(default_factory=list)
    """(member id, weight)."""
    max_size: int = 0
    watch_ports: dict[int, int] = field(default_factory=dict)
    """member id -> the port it watches (P4Runtime's watch_port): the switch
    leaves the member out of selection while that port is down."""

    def encode(self, schema: Schema) -> p4r.ActionProfileGroup:
        ap = schema.action_profile(self.profile)
        msg = p4r.ActionProfileGroup(action_profile_id=ap.id, group_id=self.group_id,
                                     max_size=self.max_size)
        for mid, weight in self.members:
            gm = msg.members.add(member_id=mid, weight=weight)
            if mid in self.watch_ports:
                gm.watch_port = control_values.encode(self.watch_ports[mid], 32, "watch_port")
        return msg

    @classmethod
    def decode(cls, msg: p4r.ActionProfileGroup, schema: Schema) -> "Group":
        watch = {m.member_id: control_values.decode(m.watch_port) for m in msg.members
                 if m.WhichOneof("watch_kind") == "watch_port" and m.watch_port}
        return cls(schema.name_of(msg.action_profile_id), msg.group_id,
                   [(m.member_id, m.weight) for m in msg.members], msg.max_size, watch)


# ----- packet replication ---------------------------------------------------------

@dataclass
class MulticastGroup:
    group_id: int
    replicas: list[tuple[int, int]] = field(default_factory=list)
    """(egress port, instance)."""

    @classmethod
    def of_ports(cls, group_id: int, ports: Sequence[int], instance: int = 1) -> "MulticastGroup":
        return cls(group_id, [(p, instance) for p in ports])

    def encode(self) -> p4r.PacketReplicationEngineEntry:
        msg = p4r.PacketReplicationEngineEntry()
        g = msg.multicast_group_entry
        g.multicast_group_id = self.group_id
        for port, inst in self.replicas:
            g.replicas.add(egress_port=port, instance=inst)
        return msg

    @classmethod
    def decode(cls, msg: p4r.MulticastGroupEntry) -> "MulticastGroup":
        return cls(msg.multicast_group_id, [(r.egress_port, r.instance) for r in msg.replicas])


@dataclass
class CloneSession:
    session_id: int
    replicas: list[tuple[int, int]] = field(default_factory=list)
    truncate: int = 0

    def encode(self) -> p4r.PacketReplicationEngineEntry:
        msg = p4r.PacketReplicationEngineEntry()
        c = msg.clone_session_entry
        c.session_id = self.session_id
        for port, inst in self.replicas:
            c.replicas.add(egress_port=port, instance=inst)
        if self.truncate:
            c.packet_length_bytes = self.truncate
        return msg

    @classmethod
    def decode(cls, msg: p4r.CloneSessionEntry) -> "CloneSession":
        return cls(msg.session_id, [(r.egress_port, r.instance) for r in msg.replicas],
                   msg.packet_length_bytes)


# ----- digests ------------------------------------------------------------------

@dataclass
class DigestMessage:
    """One digest of a DigestList, members by name."""
    digest: str
    values: dict[str, int]
    list_id: int
    timestamp_ns: int


def decode_digest_list(msg: p4r.DigestList, schema: Schema) -> list[DigestMessage]:
    d = schema.by_id.get(msg.digest_id)
    name = getattr(d, "name", str(msg.digest_id))
    members = getattr(d, "members", ())
    out = []
    for data in msg.data:
        out.append(DigestMessage(name, _p4data_values(data, members), msg.list_id,
                                 msg.timestamp))
    return out


def _p4data_values(data: p4d.P4Data, members) -> dict[str, int]:
    kind = data.WhichOneof("data")
    if kind in ("struct", "tuple"):
        items = data.struct.members if kind == "struct" else data.tuple.members
        names = [m[0] for m in members] or [f"f{i}" for i in range(len(items))]
        out = {}
        for i, item in enumerate(items):
            key = names[i] if i < len(names) else f"f{i}"
            out[key] = control_values.decode(item.bitstring) if item.WhichOneof("data") == "bitstring" else 0
        return out
    if kind == "bitstring":
        return {"value": control_values.decode(data.bitstring)}
    return {}
