"""Autocleanup: every P4Runtime write a test makes is undone after it.

`RecordingSwitch` is p4scope.control's `Switch` with `write()` wrapped:
before an update goes out it works out the update that reverses it

    INSERT x   ->  DELETE key(x)
    MODIFY x   ->  MODIFY back to what a read of key(x) returned before
    DELETE x   ->  INSERT what a read of key(x) returned before

and, once the switch has accepted the update, appends that to an undo log.
`undo_all()` replays the log backwards (so table entries go before the
groups and members they point at), one update per request, so that one
failure does not stop the rest. Everything written through the Switch is
covered, also what the controller apps (learning, routing, LAGs...) write
on the test's behalf.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable, Optional

from finsy.proto import p4r

from p4scope.control import Switch
from p4scope.control.client import P4RuntimeClientError, WriteError
from p4scope.control.device import BATCH

log = logging.getLogger("p4scope.ptf")

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
_VERB = {INSERT: "insert", MODIFY: "modify", DELETE: "delete"}


@dataclass
class Undo:
    kind: int
    entity: p4r.Entity
    what: str


def key_of(ent: p4r.Entity) -> p4r.Entity:
    """The part of an entity that names it (what DELETE and a read need)."""
    k = p4r.Entity()
    which = ent.WhichOneof("entity")
    if which == "table_entry":
        te, kt = ent.table_entry, k.table_entry
        kt.table_id = te.table_id
        kt.match.extend(te.match)
        kt.priority = te.priority
        kt.is_default_action = te.is_default_action
    elif which == "action_profile_member":
        m = ent.action_profile_member
        k.action_profile_member.action_profile_id = m.action_profile_id
        k.action_profile_member.member_id = m.member_id
    elif which == "action_profile_group":
        g = ent.action_profile_group
        k.action_profile_group.action_profile_id = g.action_profile_id
        k.action_profile_group.group_id = g.group_id
    elif which == "packet_replication_engine_entry":
        pre = ent.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            k.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = \
                pre.multicast_group_entry.multicast_group_id
        else:
            k.packet_replication_engine_entry.clone_session_entry.session_id = \
                pre.clone_session_entry.session_id
    elif which == "digest_entry":
        k.digest_entry.digest_id = ent.digest_entry.digest_id
    elif which in ("counter_entry", "register_entry", "meter_entry"):
        src, dst = getattr(ent, which), getattr(k, which)
        id_field = {"counter_entry": "counter_id", "register_entry": "register_id",
                    "meter_entry": "meter_id"}[which]
        setattr(dst, id_field, getattr(src, id_field))
        dst.index.CopyFrom(src.index)
    else:
        k.CopyFrom(ent)
    return k


def _writable(ent: p4r.Entity) -> p4r.Entity:
    """A read result as a write takes it (read-only parts dropped)."""
    out = p4r.Entity()
    out.CopyFrom(ent)
    if out.WhichOneof("entity") == "table_entry":
        te = out.table_entry
        te.ClearField("time_since_last_hit")
        te.ClearField("counter_data")
        te.ClearField("meter_config")
    return out


def describe(ent: p4r.Entity, sw: Switch) -> str:
    which = ent.WhichOneof("entity") or "entity"
    sub = getattr(ent, which, None)
    for id_field in ("table_id", "action_profile_id", "counter_id", "register_id", "digest_id"):
        if sub is not None and hasattr(sub, id_field) and getattr(sub, id_field):
            obj = sw.schema.by_id.get(getattr(sub, id_field))
            name = getattr(obj, "name", hex(getattr(sub, id_field)))
            if which == "table_entry" and ent.table_entry.is_default_action:
                return f"default action of {name}"
            return f"{which} of {name}"
    return which


class RecordingSwitch(Switch):
    """A Switch whose writes are recorded for undo_all()."""

    def __init__(self, client, schema=None) -> None:
        super().__init__(client, schema)
        self.undo_log: list[Undo] = []
        self.recording = True

    # ----- recording ------------------------------------------------------------------

    def write(self, kind: int, objs: Iterable) -> None:
        objs = list(objs)
        if not self.recording:
            super().write(kind, objs)
            return
        for start in range(0, len(objs), BATCH):
            self._write_batch(kind, objs[start:start + BATCH])

    def _write_batch(self, kind: int, objs: list) -> None:
        ents = [self.entity(o) for o in objs]
        undos = [self._undo_for(kind, e) for e in ents]
        try:
            super().write(kind, objs)
        except WriteError as e:
            failed = {err.index for err in e.errors}
            self._record(u for i, u in enumerate(undos) if i not in failed)
            raise
        self._record(undos)

    def _record(self, undos: Iterable[Optional[Undo]]) -> None:
        self.undo_log.extend(u for u in undos if u is not None)

    def _read_one(self, key: p4r.Entity) -> Optional[p4r.Entity]:
        try:
            for e in self.client.read([key]):
                return e
        except P4RuntimeClientError:
            return None
        return None

    def _undo_for(self, kind: int, ent: p4r.Entity) -> Optional[Undo]:
        key = key_of(ent)
        what = describe(ent, self)
        if kind == INSERT:
            return Undo(DELETE, key, f"delete {what} (inserted by the test)")
        before = self._read_one(key)
        if before is None:
            log.warning("autocleanup: cannot read %s before %s: it will not be restored",
                        what, _VERB[kind])
            return None
        if kind == MODIFY:
            return Undo(MODIFY, _writable(before), f"restore {what} (modified by the test)")
        return Undo(INSERT, _writable(before), f"re-insert {what} (deleted by the test)")

    # ----- undoing --------------------------------------------------------------------

    def undo_all(self) -> list[str]:
        """Replays the undo log backwards; returns what could not be undone."""
        problems = []
        log_, self.undo_log = self.undo_log, []
        for u in reversed(log_):
            try:
                self.client.write([p4r.Update(type=u.kind, entity=u.entity)])
            except P4RuntimeClientError as e:
                problems.append(f"{u.what}: {e}")
        return problems

    def default_actions(self) -> dict[int, bytes]:
        """{table id: its default action, serialized} for every table whose
        default entry can be read (tables with a selector have none)."""
        probes = []
        for t in self.schema.tables:
            if t.implementation_id:
                continue
            probe = p4r.Entity()
            probe.table_entry.table_id = t.id
            probe.table_entry.is_default_action = True
            probes.append(probe)
        try:
            return {e.table_entry.table_id: e.table_entry.action.SerializeToString(deterministic=True)
                    for e in self.client.read(probes)}
        except P4RuntimeClientError as e:
            log.info("autocleanup check: cannot read default entries: %s", e)
            return {}

    def leftovers(self, defaults: Optional[dict[int, bytes]] = None) -> list[str]:
        """Table entries, selector members and groups, multicast groups, and
        (given the `defaults` read before the test) changed default actions
        still on the switch: after undo_all, what the cleanup missed."""
        out = []
        if defaults:
            now = self.default_actions()
            out += [f"default action of {self.schema.name_of(t)} changed"
                    for t, a in defaults.items() if t in now and now[t] != a]
        probe = p4r.Entity()
        probe.table_entry.SetInParent()
        for e in self._read_all(probe):
            if not e.table_entry.is_default_action:
                out.append(describe(e, self))
        for ap in self.schema.action_profiles:
            for field in ("action_profile_member", "action_profile_group"):
                probe = p4r.Entity()
                getattr(probe, field).action_profile_id = ap.id
                out += [f"{field} of {ap.name}" for _ in self._read_all(probe)]
        probe = p4r.Entity()
        probe.packet_replication_engine_entry.multicast_group_entry.SetInParent()
        out += [f"multicast group {e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id}"
                for e in self._read_all(probe)]
        return out

    def _read_all(self, probe: p4r.Entity) -> list[p4r.Entity]:
        try:
            return list(self.client.read([probe]))
        except P4RuntimeClientError as e:
            log.info("autocleanup check: cannot read %s: %s", probe.WhichOneof("entity"), e)
            return []
