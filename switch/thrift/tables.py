"""Match tables through BMv2's run-time API, on the shared table shadow.

Every write becomes a P4Runtime TableEntry applied by p4runtime.tables.TableManager,
so entries added here are what a P4Runtime Read returns and entries a
controller wrote can be dumped, modified and deleted here. BMv2's rules are
checked first, so errors carry BMv2's codes:

* keys: one parameter per field of the JSON key, of the field's kind
  (optional fields take a ternary value), values of exactly the field's
  byte width, lpm prefixes within the width, range start <= end; else
  BAD_MATCH_KEY. Values are masked as BMv2 does (to the field width, to
  the mask, to the prefix); "don't care" parts become omitted fields.
* priorities: BMv2's (lower wins) become P4Runtime's INT_MAX - p.
* action data: one value per parameter, masked to its width.

Entry handles are BMv2's: (version << 24) | slot, the version growing each
time a slot is reused, so a stale handle is EXPIRED_HANDLE, not another
entry. Handles are the engine's slots; versions are tracked here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional, Sequence

from finsy.proto import p4r

from ..p4runtime.codec import fixed, from_uint
from ..p4runtime.errors import P4RuntimeError, Code
from ..p4runtime.tables import Entry, TableManager, TableState
from .errors import table_error
from .target import EngineState, RuntimeTarget

log = logging.getLogger("p4scope.switch.runtime")

INT_MAX = 2**31 - 1
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
# JSON key match type -> the BMv2 match parameter it takes
PARAM_KIND = {"exact": "exact", "valid": "valid", "lpm": "lpm", "ternary": "ternary",
              "optional": "ternary", "range": "range"}

MatchParam = tuple
"""("exact", bytes) ("lpm", bytes, plen) ("ternary", bytes, mask) ("valid", bool)
("range", start, end)"""


@dataclass
class MtEntry:
    """One entry as BMv2's run-time API describes it."""
    handle: int
    key: list
    priority: int  # -1 for tables without priorities
    action: tuple  # ("data", name, [bytes]) | ("member", h) | ("group", h) | ("none",)
    life: Optional[tuple[int, int]] = None  # (timeout_ms, time_since_hit_ms)


_P4RT_TO_BMV2 = {
    Code.ALREADY_EXISTS: "DUPLICATE_ENTRY",
    Code.RESOURCE_EXHAUSTED: "TABLE_FULL",
    Code.NOT_FOUND: "INVALID_HANDLE",
    Code.OUT_OF_RANGE: "BAD_MATCH_KEY",
    Code.INVALID_ARGUMENT: "BAD_MATCH_KEY",
}


class RtTables:
    def __init__(self, target: RuntimeTarget):
        self.target = target

    # ----- lookups -----------------------------------------------------------

    def _st(self, table: str) -> tuple[EngineState, TableState]:
        es = self.target.state()
        by_name = es.part("tables", lambda: {s.map.name: s for s in
                                             es.pipe.tables.tables.values()})
        st = by_name.get(table)
        if st is None:
            raise table_error("INVALID_TABLE_NAME", f"no table '{table}'")
        return es, st

    @staticmethod
    def _book(es: EngineState, st: TableState) -> dict:
        return es.part("handles", dict).setdefault(st.map.name, {})

    def handle_of(self, es: EngineState, st: TableState, e: Entry) -> int:
        book = self._book(es, st)
        rec = book.get(e.handle)
        if rec is None:
            book[e.handle] = (e, 0)
            return e.handle
        old, ver = rec
        if old is not e:
            ver = (ver + 1) & 0xFF
            book[e.handle] = (e, ver)
        return (ver << 24) | e.handle

    def _entry(self, es: EngineState, st: TableState, handle: int) -> Entry:
        handle &= 0xFFFFFFFF
        slot = handle & 0xFFFFFF
        e = next((x for x in st.entries.values() if x.handle == slot), None)
        if e is None:
            raise table_error("INVALID_HANDLE", f"table '{st.map.name}' has no entry {handle}")
        if self.handle_of(es, st, e) != handle:
            raise table_error("EXPIRED_HANDLE", f"handle {handle} of table '{st.map.name}' "
                              "names an entry since deleted")
        return e

    @staticmethod
    def _direct(st: TableState) -> None:
        if st.map.info.implementation_id:
            raise table_error("WRONG_TABLE_TYPE", f"table '{st.map.name}' is indirect")

    # ----- building P4Runtime entities -----------------------------------------

    def _key(self, st: TableState, params: Sequence[MatchParam], prio: Optional[int], te) -> None:
        info = st.map.info
        jkeys = st.map.json.keys
        if len(params) != len(info.fields):
            raise table_error("BAD_MATCH_KEY", f"table '{st.map.name}' has {len(info.fields)} "
                              f"key fields, {len(params)} given")
        for i, (f, jk, p) in enumerate(zip(info.fields, jkeys, params)):
            want = PARAM_KIND.get(jk.match_type, jk.match_type)
            if not p or p[0] != want:
                raise table_error("BAD_MATCH_KEY", f"key field {i} ('{f.name}') takes a {want} "
                                  f"value, not {p[0] if p else 'nothing'}")
            self._field(st, i, f, p, te)
        if info.needs_priority:
            p = 0 if prio is None else prio
            if not 0 <= p < INT_MAX:
                raise table_error("BAD_MATCH_KEY", f"priority {p} is out of range")
            te.priority = INT_MAX - p

    @staticmethod
    def _field(st: TableState, i: int, f, p: MatchParam, te) -> None:
        w = f.bitwidth
        nb = (w + 7) // 8
        full = (1 << w) - 1
        kind = p[0]

        def value(b, what="value") -> int:
            if not isinstance(b, (bytes, bytearray)) or len(b) != nb:
                raise table_error("BAD_MATCH_KEY", f"key field {i} ('{f.name}'): the {what} "
                                  f"must be {nb} byte(s)")
            return int.from_bytes(b, "big") & full

        if kind == "valid":
            te.match.add(field_id=f.id).exact.value = from_uint(1 if p[1] else 0)
        elif kind == "exact":
            te.match.add(field_id=f.id).exact.value = from_uint(value(p[1]))
        elif kind == "lpm":
            plen = int(p[2])
            if not 0 <= plen <= w:
                raise table_error("BAD_MATCH_KEY", f"key field {i} ('{f.name}'): prefix length "
                                  f"{plen} is not within 0..{w}")
            v = value(p[1]) & (full ^ ((1 << (w - plen)) - 1))
            if plen:
                fm = te.match.add(field_id=f.id)
                fm.lpm.value, fm.lpm.prefix_len = from_uint(v), plen
        elif kind == "ternary":
            m = value(p[2], "mask")
            v = value(p[1]) & m
            if m == 0:
                return
            if f.match_type == "optional":
                if m != full:
                    raise table_error("BAD_MATCH_KEY", f"key field {i} ('{f.name}') is optional: "
                                      "its mask is all ones or zero")
                te.match.add(field_id=f.id).optional.value = from_uint(v)
            else:
                fm = te.match.add(field_id=f.id)
                fm.ternary.value, fm.ternary.mask = from_uint(v), from_uint(m)
        else:  # range
            if isinstance(p[1], (bytes, bytearray)) and isinstance(p[2], (bytes, bytearray)) \
                    and len(p[1]) == len(p[2]) and p[1] > p[2]:
                raise table_error("BAD_MATCH_KEY", f"key field {i} ('{f.name}'): range start "
                                  "is greater than its end")
            lo, hi = value(p[1], "start"), value(p[2], "end")
            if lo == 0 and hi == full:
                return
            fm = te.match.add(field_id=f.id)
            fm.range.low, fm.range.high = from_uint(lo), from_uint(hi)

    def _action(self, es: EngineState, st: TableState, action: str, data: Sequence[bytes],
                out) -> None:
        aid = st.map.json_actions.get(action)
        if aid is None:
            raise table_error("INVALID_ACTION_NAME", f"table '{st.map.name}' has no action "
                              f"'{action}'")
        ainfo = es.pipe.schema.actions.by_id[aid]
        if len(data) != len(ainfo.params):
            raise table_error("BAD_ACTION_DATA", f"action '{action}' takes {len(ainfo.params)} "
                              f"parameter(s), {len(data)} given")
        out.action_id = aid
        for prm, d in zip(ainfo.params, data):
            v = int.from_bytes(bytes(d), "big") & ((1 << prm.bitwidth) - 1)
            out.params.add(param_id=prm.id, value=from_uint(v))

    @staticmethod
    def _write(es: EngineState, utype: int, te, what: str, default_code: str = "ERROR") -> None:
        try:
            es.pipe.tables.write(utype, te, what)
        except P4RuntimeError as e:
            if e.code == Code.PERMISSION_DENIED:
                code = "DEFAULT_ACTION_IS_CONST" if te.is_default_action else \
                    "IMMUTABLE_TABLE_ENTRIES"
            else:
                code = _P4RT_TO_BMV2.get(e.code, default_code)
            raise table_error(code, e.message) from None

    # ----- entries -------------------------------------------------------------

    def add_entry(self, table: str, key: Sequence[MatchParam], action: str,
                  data: Sequence[bytes], priority: Optional[int]) -> int:
        es, st = self._st(table)
        self._direct(st)
        if st.map.info.is_const:
            raise table_error("IMMUTABLE_TABLE_ENTRIES", f"table '{table}' has const entries")
        if not st.map.info.fields:
            raise table_error("NO_TABLE_KEY", f"table '{table}' has no key")
        te = p4r.TableEntry(table_id=st.map.info.id)
        self._action(es, st, action, data, te.action.action)
        self._key(st, key, priority, te)
        self._write(es, INSERT, te, "table_add")
        _, e = es.pipe.tables.find(te, "table_add")
        return self.handle_of(es, st, e)

    def _entry_proto(self, st: TableState, e: Entry):
        te = p4r.TableEntry()
        TableManager.entry_key_only(st, e, te)
        te.metadata = e.metadata
        te.controller_metadata = e.controller_metadata
        te.idle_timeout_ns = e.idle_timeout_ns
        return te

    def modify_entry(self, table: str, handle: int, action: str, data: Sequence[bytes]) -> None:
        es, st = self._st(table)
        self._direct(st)
        e = self._entry(es, st, handle)
        if e.is_const or st.map.info.is_const:
            raise table_error("IMMUTABLE_TABLE_ENTRIES", f"table '{table}' has const entries")
        te = self._entry_proto(st, e)
        self._action(es, st, action, data, te.action.action)
        if e.meter_config is not None:
            te.meter_config.ParseFromString(e.meter_config)
        self._write(es, MODIFY, te, "table_modify")

    def delete_entry(self, table: str, handle: int) -> None:
        es, st = self._st(table)
        self._direct(st)
        e = self._entry(es, st, handle)
        if e.is_const or st.map.info.is_const:
            raise table_error("IMMUTABLE_TABLE_ENTRIES", f"table '{table}' has const entries")
        self._write(es, DELETE, self._entry_proto(st, e), "table_delete")

    def set_entry_ttl(self, table: str, handle: int, timeout_ms: int) -> None:
        es, st = self._st(table)
        if not st.map.info.idle_timeout:
            raise table_error("AGEING_DISABLED", f"table '{table}' does not support timeouts")
        e = self._entry(es, st, handle)
        if timeout_ms < 0:
            raise table_error("ERROR", "negative timeout")
        e.idle_timeout_ns = timeout_ms * 1_000_000
        if e.idle_timeout_ns:
            e.last_hit_ns = es.pipe.idle.clock()

    def num_entries(self, table: str) -> int:
        _, st = self._st(table)
        return len(st.entries)

    def clear_entries(self, table: str, reset_default: bool) -> None:
        es, st = self._st(table)
        if st.map.info.is_const:
            raise table_error("IMMUTABLE_TABLE_ENTRIES", f"table '{table}' has const entries")
        for e in list(st.entries.values()):
            self._write(es, DELETE, self._entry_proto(st, e), "table_clear")
        if reset_default and not st.map.info.implementation_id:
            self.reset_default(table)

    # ----- default entry ---------------------------------------------------------

    def set_default(self, table: str, action: str, data: Sequence[bytes]) -> None:
        es, st = self._st(table)
        self._direct(st)
        jt = st.map.json
        if jt.default_entry_const:
            raise table_error("DEFAULT_ENTRY_IS_CONST", f"the default entry of '{table}' is const")
        te = p4r.TableEntry(table_id=st.map.info.id, is_default_action=True)
        self._action(es, st, action, data, te.action.action)
        if jt.default_const and st.map.actions.get(te.action.action.action_id) != jt.default_action:
            raise table_error("DEFAULT_ACTION_IS_CONST", f"the default action of '{table}' is "
                              "const")
        self._write(es, MODIFY, te, "table_set_default")

    def reset_default(self, table: str) -> None:
        es, st = self._st(table)
        if st.map.json.default_entry_const or st.map.json.default_const:
            raise table_error("DEFAULT_ENTRY_IS_CONST", f"the default entry of '{table}' is const")
        te = p4r.TableEntry(table_id=st.map.info.id, is_default_action=True)
        self._write(es, MODIFY, te, "table_reset_default")

    def get_default(self, table: str) -> tuple:
        es, st = self._st(table)
        d = st.default.action
        if d is None:
            return ("none",)
        return self._action_data(es, st, d)

    # ----- reads ------------------------------------------------------------------

    def _action_data(self, es: EngineState, st: TableState, spec) -> tuple:
        aid, args = spec
        params = es.pipe.schema.actions.by_id[aid].params
        return ("data", st.map.actions.get(aid, es.pipe.schema.actions.by_id[aid].name),
                [fixed(v, p.bitwidth) for v, p in zip(args, params)])

    def _describe(self, es: EngineState, st: TableState, e: Entry) -> MtEntry:
        info = st.map.info
        key = []
        for f, jk, k in zip(info.fields, st.map.json.keys, e.key):
            w = f.bitwidth
            kind = PARAM_KIND.get(jk.match_type, jk.match_type)
            if kind == "valid":
                key.append(("valid", bool(k)))
            elif kind == "exact":
                key.append(("exact", fixed(k, w)))
            elif kind == "lpm":
                key.append(("lpm", fixed(k[0], w), k[1]))
            elif kind == "range":
                key.append(("range", fixed(k[0], w), fixed(k[1], w)))
            else:
                key.append(("ternary", fixed(k[0], w), fixed(k[1], w)))
        prio = INT_MAX - e.priority if info.needs_priority else -1
        if e.action is not None:
            action = self._action_data(es, st, e.action)
        elif e.member_id:
            action = ("member", es.part("member_handles", dict).get(e.member_id, e.member_id))
        elif e.group_id:
            action = ("group", es.part("group_handles", dict).get(e.group_id, e.group_id))
        else:
            action = ("none",)
        life = None
        if e.idle_timeout_ns:
            life = (e.idle_timeout_ns // 1_000_000, es.pipe.idle.elapsed(st, e) // 1_000_000)
        return MtEntry(self.handle_of(es, st, e), key, prio, action, life)

    def entries(self, table: str) -> list[MtEntry]:
        es, st = self._st(table)
        out = [self._describe(es, st, e) for e in st.entries.values()]
        out.sort(key=lambda m: m.handle & 0xFFFFFF)
        return out

    def entry(self, table: str, handle: int) -> MtEntry:
        es, st = self._st(table)
        return self._describe(es, st, self._entry(es, st, handle))

    def entry_from_key(self, table: str, key: Sequence[MatchParam],
                       priority: Optional[int]) -> MtEntry:
        es, st = self._st(table)
        te = p4r.TableEntry(table_id=st.map.info.id)
        self._key(st, key, priority, te)
        try:
            _, e = es.pipe.tables.find(te, "table_dump_entry_from_key")
        except P4RuntimeError as err:
            code = "BAD_MATCH_KEY" if err.code != Code.NOT_FOUND else "INVALID_HANDLE"
            raise table_error(code, err.message) from None
        return self._describe(es, st, e)

    # ----- direct counters and meters ---------------------------------------------

    def read_counter(self, table: str, handle: int) -> tuple[int, int]:
        es, st = self._st(table)
        if not st.map.info.direct_counter_id:
            raise table_error("COUNTERS_DISABLED", f"table '{table}' has no direct counter")
        return es.pipe.tables.read_counter(st, self._entry(es, st, handle))

    def write_counter(self, table: str, handle: int, nbytes: int, packets: int) -> None:
        es, st = self._st(table)
        if not st.map.info.direct_counter_id:
            raise table_error("COUNTERS_DISABLED", f"table '{table}' has no direct counter")
        e = self._entry(es, st, handle)
        es.pipe.tables._set_counter(st, e, p4r.CounterData(byte_count=max(nbytes, 0),
                                                            packet_count=max(packets, 0)))

    def reset_counters(self, table: str) -> None:
        es, st = self._st(table)
        if not st.map.info.direct_counter_id:
            raise table_error("COUNTERS_DISABLED", f"table '{table}' has no direct counter")
        for e in st.entries.values():
            es.pipe.tables._set_counter(st, e, p4r.CounterData())

    def set_meter_rates(self, table: str, handle: int, rates: Sequence[tuple[float, int]]) -> None:
        es, st = self._st(table)
        if not st.map.info.direct_meter_id:
            raise table_error("METERS_DISABLED", f"table '{table}' has no direct meter")
        e = self._entry(es, st, handle)
        if len(rates) != 2 or rates[1][0] < rates[0][0]:
            raise table_error("INVALID_METER_OPERATION", "two rates are needed, the second "
                              "not below the first")
        cfg = p4r.MeterConfig(cir=round(rates[0][0] * 1e6), cburst=rates[0][1],
                              pir=round(rates[1][0] * 1e6), pburst=rates[1][1])
        es.pipe.tables._set_meter(st, e, cfg)

    def get_meter_rates(self, table: str, handle: int) -> list[tuple[float, int]]:
        es, st = self._st(table)
        if not st.map.info.direct_meter_id:
            raise table_error("METERS_DISABLED", f"table '{table}' has no direct meter")
        e = self._entry(es, st, handle)
        if e.meter_config is None:
            return []
        cfg = p4r.MeterConfig()
        cfg.ParseFromString(e.meter_config)
        return [(cfg.cir / 1e6, cfg.cburst), (cfg.pir / 1e6, cfg.pburst)]
