"""Table entries as serialized read answers, built without message objects.

`EntryWire(table).record(entry)` is the ReadResponse.entities record of
an entry, the same message `TableManager._entry_to_proto` builds (tests
hold the two equal). What an entry never changes (table id, match,
priority, is_const) is encoded once and kept on the entry; the action part
is encoded per read, from a small per-table cache of encoded actions, since
many entries usually share one (same action, same arguments).
"""

from __future__ import annotations

from typing import Callable

from finsy.proto import p4r

from .codec import from_uint
from .schema import P4Schema, TableInfo
from .wire import delimited, entity_record, int_tag, len_tag, uint_field, varint

TE, FM, ACT = p4r.TableEntry, p4r.FieldMatch, p4r.Action
_ENTITY_TE = len_tag(p4r.Entity, "table_entry")
_TABLE_ID, _MATCH, _ACTION = int_tag(TE, "table_id"), len_tag(TE, "match"), len_tag(TE, "action")
_PRIORITY, _IS_CONST = int_tag(TE, "priority"), int_tag(TE, "is_const")
_CONTROLLER_MD, _IDLE = int_tag(TE, "controller_metadata"), int_tag(TE, "idle_timeout_ns")
_METADATA = len_tag(TE, "metadata")
_FIELD_ID = int_tag(FM, "field_id")
_EXACT, _LPM, _TERNARY = len_tag(FM, "exact"), len_tag(FM, "lpm"), len_tag(FM, "ternary")
_RANGE, _OPTIONAL = len_tag(FM, "range"), len_tag(FM, "optional")
_VALUE = len_tag(FM.LPM, "value")  # field 1 of Exact, LPM, Ternary and Optional
_PREFIX_LEN, _MASK = int_tag(FM.LPM, "prefix_len"), len_tag(FM.Ternary, "mask")
_LOW, _HIGH = len_tag(FM.Range, "low"), len_tag(FM.Range, "high")
_TA_ACTION = len_tag(p4r.TableAction, "action")
_TA_MEMBER = int_tag(p4r.TableAction, "action_profile_member_id")
_TA_GROUP = int_tag(p4r.TableAction, "action_profile_group_id")
_ACTION_ID, _PARAMS = int_tag(ACT, "action_id"), len_tag(ACT, "params")
_PARAM_ID, _PARAM_VALUE = int_tag(ACT.Param, "param_id"), len_tag(ACT.Param, "value")

ACTION_CACHE = 4096
"""Encoded actions kept per table (the cache starts over when full)."""


def _field_encoder(f) -> Callable[[object], bytes]:
    """The FieldMatch encoder of one match field; b"" for "don't care"
    (as match.key_to_proto leaves such fields out)."""
    head = _FIELD_ID + varint(f.id)
    mt = f.match_type
    if mt == "exact":
        return lambda k: delimited(_MATCH, head + delimited(_EXACT, _VALUE + _bytes(k)))
    if mt == "lpm":
        return lambda k: delimited(_MATCH, head + delimited(
            _LPM, _VALUE + _bytes(k[0]) + _PREFIX_LEN + varint(k[1]))) if k[1] else b""
    if mt == "ternary":
        return lambda k: delimited(_MATCH, head + delimited(
            _TERNARY, _VALUE + _bytes(k[0]) + _MASK + _bytes(k[1]))) if k[1] else b""
    if mt == "range":
        full = (1 << f.bitwidth) - 1
        return lambda k: b"" if k[0] == 0 and k[1] == full else delimited(
            _MATCH, head + delimited(_RANGE, _LOW + _bytes(k[0]) + _HIGH + _bytes(k[1])))
    if mt == "optional":
        return lambda k: delimited(_MATCH, head + delimited(
            _OPTIONAL, _VALUE + _bytes(k[0]))) if k[1] else b""
    return lambda k: b""  # key_to_proto writes nothing for other match types


def _bytes(v: int) -> bytes:
    """A canonical bytestring with its length (codec.from_uint, delimited)."""
    b = from_uint(v)
    return varint(len(b)) + b


class EntryWire:
    """The read-answer encoder of one table's entries."""

    def __init__(self, info: TableInfo, schema: P4Schema,
                 action_set_to_proto: Callable[[tuple, object], None]):
        self._head = _TABLE_ID + varint(info.id)
        self._fields = tuple(_field_encoder(f) for f in info.fields)
        self._schema = schema
        self._action_set_to_proto = action_set_to_proto
        self._actions: dict[tuple, bytes] = {}

    def record(self, e) -> bytes:
        """The ReadResponse.entities record of entry `e` (tables.Entry)."""
        fixed = e.wire_key
        if fixed is None:
            fixed = e.wire_key = self._fixed(e)
        if e.action is not None:
            act = self._actions.get(e.action)
            if act is None:
                act = self._action(e.action)
        else:
            act = self._indirect(e)
        te = fixed + act
        if e.metadata:
            te += delimited(_METADATA, e.metadata)
        if e.controller_metadata:
            te += uint_field(_CONTROLLER_MD, e.controller_metadata)
        if e.idle_timeout_ns:
            te += uint_field(_IDLE, e.idle_timeout_ns)
        return entity_record(_ENTITY_TE + varint(len(te)) + te)

    def _fixed(self, e) -> bytes:
        """What an entry keeps for life: table id, match, priority, is_const."""
        out = self._head + b"".join([enc(k) for enc, k in zip(self._fields, e.key)])
        if e.priority:
            out += uint_field(_PRIORITY, e.priority)
        if e.is_const:
            out += _IS_CONST + b"\x01"
        return out

    def _action(self, spec: tuple) -> bytes:
        aid, args = spec
        params = self._schema.actions.by_id[aid].params
        body = uint_field(_ACTION_ID, aid) + b"".join([
            delimited(_PARAMS, uint_field(_PARAM_ID, p.id) + _PARAM_VALUE + _bytes(v))
            for p, v in zip(params, args)])
        out = delimited(_ACTION, delimited(_TA_ACTION, body))
        if len(self._actions) >= ACTION_CACHE:
            self._actions.clear()
        self._actions[spec] = out
        return out

    def _indirect(self, e) -> bytes:
        if e.member_id:
            return delimited(_ACTION, uint_field(_TA_MEMBER, e.member_id))
        if e.group_id:
            return delimited(_ACTION, uint_field(_TA_GROUP, e.group_id))
        if e.oneshot is not None:
            msg = p4r.TableEntry()
            self._action_set_to_proto(e.oneshot, msg.action.action_profile_action_set)
            return msg.SerializeToString()
        return b""
