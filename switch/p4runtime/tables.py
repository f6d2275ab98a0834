"""Table entries: P4Runtime TableEntry writes and reads over the engine.

The manager keeps a shadow of every entry it wrote (what PI calls the
table info store): canonical key (and priority) -> handle, action or action
profile reference, metadata, TTL and direct resources. Reads are answered
from the shadow plus the engine's counters, so the engine is only asked
for what it alone knows. Priorities follow PI on BMv2: P4Runtime priority
p (higher wins) is engine priority INT_MAX - p (lower wins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

from finsy.proto import p4r

from .actions import ActionSpec, action_to_proto, check_action
from .entry_wire import EntryWire
from .errors import denied, exhausted, exists, invalid, not_found, unimplemented
from .match import check_key, engine_key, json_entry_key, key_to_proto
from .schema import TableInfo
from .table_codec import TableCodec
from .translate import TableMap
from .wire import records_of

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline

INT_MAX = 2**31 - 1
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def shadow_key(info: TableInfo, key: tuple, priority: int) -> tuple:
    """An entry's key in TableState.entries: the canonical key, with the
    priority for tables that have priorities (the others' entries share
    their key tuple with the shadow: one tuple less per entry)."""
    return key + (priority,) if info.needs_priority else key


@dataclass(slots=True)
class Entry:
    """One table entry as written (the shadow of what the engine holds)."""
    key: tuple
    """The canonical key (match.py), without the priority."""
    priority: int
    handle: int
    action: Optional[ActionSpec] = None
    member_id: int = 0
    group_id: int = 0
    oneshot: Optional[tuple] = None
    """One-shot action set: ((ActionSpec, weight, watch_port bytes), ...)."""
    metadata: bytes = b""
    controller_metadata: int = 0
    idle_timeout_ns: int = 0
    is_const: bool = False
    meter_config: Optional[bytes] = None
    """Serialized MeterConfig written by the client; None is the default (all GREEN)."""
    last_hit_ns: int = 0
    last_packets: int = 0
    profile_private: object = None
    """Engine objects the action profile manager made for this entry (one-shot)."""
    wire_key: Optional[bytes] = None
    """Its table id, match, priority and is_const serialized, once read (entry_wire.py)."""


@dataclass(slots=True)
class DefaultEntry:
    action: Optional[ActionSpec]
    metadata: bytes = b""
    controller_metadata: int = 0


class TableState:
    """The entries of one table, and its request decoder and answer encoder."""

    __slots__ = ("map", "entries", "default", "initial_default", "codec", "wire")

    def __init__(self, tmap: TableMap, codec: TableCodec, wire: EntryWire):
        self.map = tmap
        self.codec = codec
        self.wire = wire
        self.entries: dict[tuple, Entry] = {}
        jt = tmap.json
        aid = tmap.json_actions.get(jt.default_action) if jt.default_action else None
        spec = (aid, tuple(jt.default_data)) if aid is not None else None
        self.initial_default = spec
        self.default = DefaultEntry(spec)


class TableManager:
    def __init__(self, pipe: "ForwardingPipeline"):
        self.pipe = pipe
        self.schema = pipe.schema
        self.engine = pipe.engine
        self.tables: dict[int, TableState] = {
            tid: TableState(m, TableCodec(m, self.schema),
                            EntryWire(m.info, self.schema, self._action_set_to_proto))
            for tid, m in pipe.tr.tables.items()}
        self._load_json_entries()

    # ----- set-up ---------------------------------------------------------

    def _load_json_entries(self) -> None:
        """Shadows the entries the engine installed from the JSON `entries`
        (handles 0, 1, ... in order, as the engine adds them)."""
        for st in self.tables.values():
            info = st.map.info
            for handle, e in enumerate(st.map.json.entries):
                key = json_entry_key(info.fields, e.match)
                prio = INT_MAX - e.priority if info.needs_priority else 0
                aid = st.map.json_actions.get(e.action)
                if aid is None:
                    continue
                st.entries[shadow_key(info, key, prio)] = Entry(
                    key, prio, handle, action=(aid, tuple(e.data)), is_const=info.is_const)

    def _action_set_to_proto(self, action_set: tuple, out) -> None:
        self.pipe.profiles.action_set_to_proto(action_set, out)

    # ----- helpers --------------------------------------------------------

    def state(self, table_id: int, where: str) -> TableState:
        st = self.tables.get(table_id)
        if st is None:
            if table_id in self.pipe.tr.absent:
                raise invalid(f"{where}.table_id: {self.pipe.tr.absent[table_id]}")
            raise invalid(f"{where}.table_id: {table_id} is not a table of the P4Info"
                          + (f" (it is a {self.schema.kind_of(table_id)})"
                             if self.schema.kind_of(table_id) != "unknown id" else ""))
        return st

    def _key(self, st: TableState, te, where: str) -> tuple:
        """The shadow's key of `te` (shadow_key)."""
        key, p, _ = self._key_parts(st, te, where)
        return shadow_key(st.map.info, key, p)

    def _key_parts(self, st: TableState, te, where: str) -> tuple[tuple, int, Optional[list]]:
        """The canonical key and the priority of `te`, and the engine's key
        items when the table's codec could make them (None: _apply_add makes them)."""
        info = st.map.info
        fast = st.codec.key(te.match)
        if fast is not None:
            key, ek = fast
        else:
            key, ek = check_key(info.fields, info.field_index, te.match, where,
                                f"table '{info.name}'"), None
        p = te.priority
        if info.needs_priority:
            if p <= 0:
                raise invalid(f"{where}.priority: {p}; table '{info.name}' has ternary, range or "
                              "optional fields, so entries need a priority > 0")
        elif p != 0:
            raise invalid(f"{where}.priority: {p}; table '{info.name}' has no ternary, range or "
                          "optional field, so the priority must be 0")
        return key, p, ek

    def _engine_args(self, st: TableState, te, where: str, default: bool = False):
        """(engine action name, args, the Entry's action fields) for a write's
        TableAction: a direct action's name and arguments, or None and the
        action profile reference; the fields are (action, member_id,
        group_id, oneshot)."""
        info = st.map.info
        ta = te.action
        kind = ta.WhichOneof("type")
        if info.implementation_id == 0:
            if kind != "action":
                raise invalid(f"{where}.action: table '{info.name}' is a direct table: give an "
                              f"action, not {kind}")
            spec = None if default else st.codec.action(ta.action)
            if spec is None:
                spec = check_action(self.schema, ta.action, f"{where}.action.action",
                                    info.action_scopes, f"table '{info.name}'", default=default)
            return st.map.actions[spec[0]], spec[1], (spec, 0, 0, None)
        if kind == "action":
            raise invalid(f"{where}.action: table '{info.name}' is implemented by an action "
                          "profile: give a member id, a group id or an action set")
        ref = self.pipe.profiles.check_ref(info, ta, f"{where}.action")
        kind, val = ref
        return None, ref, ((None, val, 0, None) if kind == "member" else
                           (None, 0, val, None) if kind == "group" else (None, 0, 0, val))

    def _apply_add(self, st: TableState, key: tuple, action: Optional[str], args,
                   prio: int, where: str, ek: Optional[list] = None) -> tuple[int, object]:
        """Adds to the engine; (handle, what the profile manager keeps for the entry)."""
        tm = st.map
        eprio = INT_MAX - prio if tm.info.needs_priority else 0
        if ek is None:
            ek = engine_key(tm.info.fields, key, tm.key_widths, where, f"table '{tm.info.name}'")
        if action is not None:
            return self.engine.table_add(tm.name, action, ek, args, eprio), None
        return self.pipe.profiles.add_entry(tm, ek, eprio, args)

    def _apply_modify(self, st: TableState, e: Entry, action: Optional[str], args) -> None:
        tm = st.map
        if action is not None:
            self.engine.table_modify(tm.name, e.handle, action, args)
        else:
            self.pipe.profiles.modify_entry(tm, e, args)

    # ----- writes -----------------------------------------------------------

    def write(self, utype: int, te, where: str = "table_entry") -> None:
        st = self.state(te.table_id, where)
        info = st.map.info
        if te.HasField("time_since_last_hit"):
            raise invalid(f"{where}.time_since_last_hit must not be set in a write")
        if te.is_const:
            raise invalid(f"{where}.is_const must be false in a write")
        if te.is_default_action:
            return self._write_default(st, utype, te, where)
        if te.idle_timeout_ns < 0:
            raise invalid(f"{where}.idle_timeout_ns: {te.idle_timeout_ns} is negative")
        if te.idle_timeout_ns and not info.idle_timeout:
            raise invalid(f"{where}.idle_timeout_ns: table '{info.name}' does not support idle "
                          "timeout (its P4Info idle_timeout_behavior is NO_TIMEOUT)")
        if utype == INSERT:
            self._insert(st, te, where)
        elif utype == MODIFY:
            self._modify(st, te, where)
        elif utype == DELETE:
            self._delete(st, te, where)
        else:
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")

    def _check_resources(self, info: TableInfo, te, where: str) -> tuple[bool, bool]:
        """Checks the direct resources `te` sets; (has counter_data, has meter_config)."""
        counter = te.HasField("counter_data")
        if counter and not info.direct_counter_id:
            raise invalid(f"{where}.counter_data: table '{info.name}' has no direct counter")
        meter = te.HasField("meter_config")
        if meter:
            if not info.direct_meter_id:
                raise invalid(f"{where}.meter_config: table '{info.name}' has no direct meter")
            self.pipe.externs.check_meter_config(te.meter_config, f"{where}.meter_config")
        if te.HasField("meter_counter_data"):
            raise unimplemented(f"{where}.meter_counter_data: per-colour meter counters are not "
                                "supported")
        return counter, meter

    def _insert(self, st: TableState, te, where: str) -> None:
        info = st.map.info
        if info.is_const:
            raise denied(f"{where}: table '{info.name}' is const: entries cannot be inserted")
        if not info.fields:
            raise invalid(f"{where}: table '{info.name}' has no match key: only its default "
                          "entry can be written (is_default_action)")
        key, prio, ek = self._key_parts(st, te, where)
        if not te.HasField("action"):
            raise invalid(f"{where}.action: an INSERT needs an action")
        action, args, fields = self._engine_args(st, te, where)
        counter, meter = self._check_resources(info, te, where)
        skey = shadow_key(info, key, prio)
        entries = st.entries
        if skey in entries:
            raise exists(f"{where}: table '{info.name}' already has an entry with this match key "
                         "and priority (use MODIFY to change it)")
        limit = st.map.json.max_size or info.size
        if limit and len(entries) >= limit:
            raise exhausted(f"{where}: table '{info.name}' is full ({limit} entries)")
        handle, private = self._apply_add(st, key, action, args, prio, where, ek)
        a, member, group, oneshot = fields
        # positional: a dataclass's keyword arguments cost twice as much, per entry
        e = Entry(key, prio, handle, a, member, group, oneshot, te.metadata,
                  te.controller_metadata, te.idle_timeout_ns)
        if private is not None:
            e.profile_private = private
        entries[skey] = e
        if info.implementation_id:
            self.pipe.profiles.ref(info, e, +1)
        if counter:
            self._set_counter(st, e, te.counter_data)
        if meter:
            self._set_meter(st, e, te.meter_config)
        if e.idle_timeout_ns:
            e.last_hit_ns = self.pipe.idle.clock()

    def _modify(self, st: TableState, te, where: str) -> None:
        info = st.map.info
        key = self._key(st, te, where)
        e = st.entries.get(key)
        if info.is_const and te.HasField("action"):
            raise denied(f"{where}: table '{info.name}' is const: the action of its entries "
                         "cannot be changed (only their direct resources)")
        if e is None:
            raise not_found(f"{where}: table '{info.name}' has no entry with this match key and "
                            "priority")
        if e.is_const and te.HasField("action"):
            raise denied(f"{where}: this entry of table '{info.name}' is const")
        counter, meter = self._check_resources(info, te, where)
        if te.HasField("action"):
            action, args, fields = self._engine_args(st, te, where)
            self._apply_modify(st, e, action, args)
            if info.implementation_id:
                self.pipe.profiles.ref(info, e, -1)
            e.action, e.member_id, e.group_id, e.oneshot = fields
            if info.implementation_id:
                self.pipe.profiles.ref(info, e, +1)
            e.metadata = te.metadata
            e.controller_metadata = te.controller_metadata
            e.idle_timeout_ns = te.idle_timeout_ns
        if counter:
            self._set_counter(st, e, te.counter_data)
        if info.direct_meter_id:
            # MODIFY without meter_config resets the meter to its default
            self._set_meter(st, e, te.meter_config if meter else None)

    def _delete(self, st: TableState, te, where: str) -> None:
        info = st.map.info
        if info.is_const:
            raise denied(f"{where}: table '{info.name}' is const: entries cannot be deleted")
        key, e = self._existing(st, te, where)
        if e.is_const:
            raise denied(f"{where}: this entry of table '{info.name}' is const")
        self.engine.table_delete(st.map.name, e.handle)
        del st.entries[key]
        if info.implementation_id:
            self.pipe.profiles.ref(info, e, -1)
            self.pipe.profiles.release_entry(st.map, e)

    def _write_default(self, st: TableState, utype: int, te, where: str) -> None:
        info = st.map.info
        if utype != MODIFY:
            raise invalid(f"{where}: the default entry always exists: use MODIFY, not "
                          f"{p4r.Update.Type.Name(utype) if utype in (1, 2, 3) else utype}")
        if len(te.match):
            raise invalid(f"{where}.match: the default entry has no match key")
        if te.priority:
            raise invalid(f"{where}.priority: the default entry has priority 0")
        if te.idle_timeout_ns:
            raise invalid(f"{where}.idle_timeout_ns: default entries do not support idle timeout")
        if info.implementation_id:
            raise denied(f"{where}: the default entry of table '{info.name}' (implemented by an "
                         "action profile) is a constant NoAction")
        if info.const_default_action_id or st.map.json.default_const:
            raise denied(f"{where}: the default action of table '{info.name}' is const")
        if te.HasField("counter_data") or te.HasField("meter_config"):
            raise unimplemented(f"{where}: default entries have no direct resources here (as PI)")
        tm = st.map
        if te.HasField("action"):
            _, args, fields = self._engine_args(st, te, where, default=True)
            spec = fields[0]
            self.engine.table_set_default(tm.name, tm.actions[spec[0]], args)
            st.default = DefaultEntry(spec, te.metadata, te.controller_metadata)
        else:  # reset to the program's default
            jt = tm.json
            if jt.default_action is not None:
                self.engine.table_set_default(tm.name, jt.default_action, jt.default_data)
            st.default = DefaultEntry(st.initial_default)

    # ----- direct resources -----------------------------------------------

    def _set_counter(self, st: TableState, e: Entry, data) -> None:
        self.engine.direct_counter_write(st.map.name, e.handle, data.byte_count,
                                         data.packet_count)

    def read_counter(self, st: TableState, e: Entry) -> tuple[int, int]:
        """(bytes, packets) of an entry's direct counter."""
        return self.engine.direct_counter_read(st.map.name, e.handle)

    def _set_meter(self, st: TableState, e: Entry, cfg) -> None:
        rates = self.pipe.externs.meter_rates(cfg)
        self.engine.direct_meter_set_rates(st.map.name, e.handle, rates)
        e.meter_config = cfg.SerializeToString() if cfg is not None else None

    # ----- lookups for other managers -------------------------------------

    def find(self, te, where: str) -> tuple[TableState, Entry]:
        """The entry a TableEntry key names (for direct counters and meters)."""
        st = self.state(te.table_id, where)
        if te.is_default_action:
            raise unimplemented(f"{where}: default entries have no direct resources here (as PI)")
        return st, self._existing(st, te, where)[1]

    def _existing(self, st: TableState, te, where: str) -> tuple[tuple, Entry]:
        """The key a TableEntry names and its entry; NOT_FOUND without one."""
        key = self._key(st, te, where)
        e = st.entries.get(key)
        if e is None:
            raise not_found(f"{where}: table '{st.map.info.name}' has no entry with this match "
                            "key and priority")
        return key, e

    # ----- reads ------------------------------------------------------------

    def read(self, te, out, where: str = "table_entry") -> None:
        """Appends the entries `te` selects to `out` (a repeated Entity)."""
        records: list[bytes] = []
        self.read_wire(te, records, where)
        out.extend(p4r.ReadResponse.FromString(b"".join(records)).entities)

    def read_wire(self, te, records: list[bytes], where: str = "table_entry") -> None:
        """As `read`, appending each entity serialized as a ReadResponse
        record (wire.entity_record): plain entries (no direct resource or
        idle time asked for) are encoded by the table's EntryWire."""
        if te.table_id == 0:
            states = list(self.tables.values())
        else:
            states = [self.state(te.table_id, where)]
        want_counter = te.HasField("counter_data")
        want_meter = te.HasField("meter_config")
        want_hit = te.HasField("time_since_last_hit")
        if te.HasField("meter_counter_data"):
            raise unimplemented(f"{where}.meter_counter_data: per-colour meter counters are not "
                                "supported")
        plain = not (want_counter or want_meter or want_hit)
        for st in states:
            info = st.map.info
            if want_hit and not info.idle_timeout:
                if te.table_id == 0:
                    continue
                raise invalid(f"{where}.time_since_last_hit: table '{info.name}' does not "
                              "support idle timeout")
            if te.is_default_action:
                if want_hit:
                    raise invalid(f"{where}.time_since_last_hit: default entries do not "
                                  "support idle timeout")
                out = p4r.ReadResponse().entities
                self._read_default(st, out)
                records += records_of(out)
                continue
            if plain:
                record = st.wire.record
                records += [record(e) for e in self._select(st, te, where)]
                continue
            out = p4r.ReadResponse().entities
            for e in self._select(st, te, where):
                msg = out.add().table_entry
                self._entry_to_proto(st, e, msg)
                if want_counter and info.direct_counter_id:
                    b, p = self.read_counter(st, e)
                    msg.counter_data.byte_count = b
                    msg.counter_data.packet_count = p
                if want_meter and e.meter_config is not None:
                    msg.meter_config.ParseFromString(e.meter_config)
                if want_hit:
                    msg.time_since_last_hit.elapsed_ns = self.pipe.idle.elapsed(st, e)
            records += records_of(out)

    def _select(self, st: TableState, te, where: str) -> Iterator[Entry]:
        if len(te.match):
            key = self._key(st, te, where)
            e = st.entries.get(key)
            if e is not None:
                yield e
            return
        aid = te.action.action.action_id if te.action.WhichOneof("type") == "action" else 0
        prio = te.priority
        cm = te.controller_metadata
        md = te.metadata
        for e in list(st.entries.values()):
            if prio and e.priority != prio:
                continue
            if aid and (e.action is None or e.action[0] != aid):
                continue
            if cm and e.controller_metadata != cm:
                continue
            if md and e.metadata != md:
                continue
            yield e

    def _entry_to_proto(self, st: TableState, e: Entry, msg) -> None:
        info = st.map.info
        msg.table_id = info.id
        key_to_proto(info.fields, e.key, msg.match)
        if e.priority:
            msg.priority = e.priority
        if e.action is not None:
            action_to_proto(self.schema, e.action, msg.action.action)
        elif e.member_id:
            msg.action.action_profile_member_id = e.member_id
        elif e.group_id:
            msg.action.action_profile_group_id = e.group_id
        elif e.oneshot is not None:
            self.pipe.profiles.action_set_to_proto(e.oneshot, msg.action.action_profile_action_set)
        if e.metadata:
            msg.metadata = e.metadata
        if e.controller_metadata:
            msg.controller_metadata = e.controller_metadata
        if e.idle_timeout_ns:
            msg.idle_timeout_ns = e.idle_timeout_ns
        if e.is_const:
            msg.is_const = True

    def entry_key_proto(self, st: TableState, e: Entry, msg) -> None:
        """The key fields and cookies of an entry (idle timeout notifications)."""
        self._entry_to_proto(st, e, msg)

    @staticmethod
    def entry_key_only(st: TableState, e: Entry, msg) -> None:
        """table_id, match and priority of an entry (direct resource reads)."""
        info = st.map.info
        msg.table_id = info.id
        key_to_proto(info.fields, e.key, msg.match)
        if e.priority:
            msg.priority = e.priority

    def _read_default(self, st: TableState, out) -> None:
        d = st.default
        info = st.map.info
        msg = out.add().table_entry
        msg.table_id = info.id
        msg.is_default_action = True
        if d.action is not None:
            action_to_proto(self.schema, d.action, msg.action.action)
        if d.metadata:
            msg.metadata = d.metadata
        if d.controller_metadata:
            msg.controller_metadata = d.controller_metadata
        if info.const_default_action_id or st.map.json.default_const:
            msg.is_const = True

    def all_writable(self) -> Iterator[tuple[TableState, Entry]]:
        """Every non-const entry (RECONCILE_AND_COMMIT replays them)."""
        for st in self.tables.values():
            for e in st.entries.values():
                if not e.is_const:
                    yield st, e
