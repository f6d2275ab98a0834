"""One forwarding pipeline: P4Info + BMv2 JSON + engine + P4Runtime state.

A `ForwardingPipeline` is built by SetForwardingPipelineConfig (or at start-up from
the command line's JSON, without P4Info) and holds one manager per
P4Runtime entity kind. `write_one`, `read_one` and `read_wire` dispatch an
Entity to its manager through one table, ENTITY_KINDS (adding an entity
kind: its manager, one line there, the engine calls it needs); they raise
P4RuntimeError and never leave a half-applied update behind in the shadow
state. `write_updates` runs a Write's updates: the common table-entry ones
through FastWrites (fast_writes.py), the others through `write_one`.
"""

from __future__ import annotations

import gc
import logging
from contextlib import contextmanager
from itertools import repeat
from dataclasses import dataclass
from types import MethodType
from typing import Callable, Iterator, Optional

from finsy.proto import p4i, p4r

from ..engine import EngineAdapter, EngineFactory, EngineOptions, default_engine_factory
from .action_profiles import ActionProfileManager
from .bmv2json import parse_program_once
from .digests import DigestManager
from .errors import P4RuntimeError, internal, invalid, unimplemented
from .externs import ExternManager
from .fast_writes import FastWrites
from .idle import IdleTimeout
from .pre import PreManager
from .schema import P4Schema
from .tables import TableManager
from .translate import Translation
from .valuesets import ValueSetManager
from .wire import records_of

log = logging.getLogger("p4scope.switch")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile (if it was on).

    A Write of many entries makes as many long-lived objects (shadow
    entries, no reference cycles); a collection in its midst only moves
    them to the older generations and, as they grow, walks the whole
    table's entries again. Run once after the Write instead, it looks at
    what survived: a 1,000,000-entry LPM load took 5.3 s of Device.write
    CPU instead of 6.0 s. (Reference counting frees everything else
    meanwhile.)"""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@dataclass(frozen=True, slots=True)
class EntityKind:
    """Where one kind of p4.v1.Entity goes: the ForwardingPipeline attribute holding
    its manager, and the manager's write(utype, msg, at) and
    read(msg, out, at) (unbound: a renamed method fails at import);
    read_wire(msg, records, at) where the manager answers serialized."""
    manager: str
    write: Callable[..., None]
    read: Callable[..., None]
    read_wire: Optional[Callable[..., None]] = None


# The entity kinds (the `entity` oneof of p4.v1.Entity) and their managers:
# Write and Read dispatch through this table only.
ENTITY_KINDS: dict[str, EntityKind] = {
    "table_entry": EntityKind("tables", TableManager.write, TableManager.read,
                              TableManager.read_wire),
    "action_profile_member": EntityKind("profiles", ActionProfileManager.write_member,
                                        ActionProfileManager.read_member),
    "action_profile_group": EntityKind("profiles", ActionProfileManager.write_group,
                                       ActionProfileManager.read_group),
    "counter_entry": EntityKind("externs", ExternManager.write_counter,
                                ExternManager.read_counter),
    "direct_counter_entry": EntityKind("externs", ExternManager.write_direct_counter,
                                       ExternManager.read_direct_counter),
    "meter_entry": EntityKind("externs", ExternManager.write_meter, ExternManager.read_meter),
    "direct_meter_entry": EntityKind("externs", ExternManager.write_direct_meter,
                                     ExternManager.read_direct_meter),
    "register_entry": EntityKind("externs", ExternManager.write_register,
                                 ExternManager.read_register),
    "packet_replication_engine_entry": EntityKind("pre", PreManager.write, PreManager.read),
    "digest_entry": EntityKind("digests", DigestManager.write, DigestManager.read),
    "value_set_entry": EntityKind("value_sets", ValueSetManager.write, ValueSetManager.read),
}

# Kinds of the P4Runtime spec p4scope refuses with UNIMPLEMENTED, and why.
UNSUPPORTED_KINDS = {"extern_entry": "extern entries are not supported (v1model has none)"}



class ForwardingPipeline:
    def __init__(self, p4info: "p4i.P4Info", json_text: str, *, device_config: bytes = b"",
                 cookie: Optional[int] = None, options: EngineOptions = EngineOptions(),
                 engine_factory: EngineFactory = default_engine_factory,
                 engine: Optional[EngineAdapter] = None):
        self.p4info = p4info
        self.json_text = json_text
        self.device_config = device_config
        self.cookie = cookie
        self.schema = P4Schema(p4info)
        self.prog = parse_program_once(json_text)
        self.tr = Translation(self.schema, self.prog)
        self.engine: EngineAdapter = engine if engine is not None else engine_factory(json_text, options)
        self.tables = TableManager(self)
        self.profiles = ActionProfileManager(self)
        self.externs = ExternManager(self)
        self.pre = PreManager(self)
        self.digests = DigestManager(self)
        self.idle = IdleTimeout(self)
        self.value_sets = ValueSetManager(self)
        self._writers = {kind: MethodType(route.write, getattr(self, route.manager))
                         for kind, route in ENTITY_KINDS.items()}
        """entity kind -> its manager's write, bound (write_one's per-update dispatch)."""
        self.fast_writes = FastWrites(self.tables)

    def set_stream_sink(self, send: Callable[[p4r.StreamMessageResponse], None]) -> None:
        """Where digest lists and idle timeout notifications go (the primary)."""
        self.digests.send = send
        self.idle.send = send

    # ----- dispatch ---------------------------------------------------------

    def _route(self, entity, where: str) -> tuple[EntityKind, object, object, str]:
        kind = entity.WhichOneof("entity")
        if kind is None:
            raise invalid(f"{where}.entity: not set")
        at = f"{where}.{kind}"
        route = ENTITY_KINDS.get(kind)
        if route is None:
            why = UNSUPPORTED_KINDS.get(kind, "not supported by p4scope")
            raise unimplemented(f"{at}: {why}")
        return route, getattr(self, route.manager), getattr(entity, kind), at

    def write_updates(self, updates, wire: Optional[bytes] = None
                      ) -> Optional[list[Optional[P4RuntimeError]]]:
        """Applies a Write's updates in order, each on its own (CONTINUE_ON_ERROR,
        as PI): None if all succeeded, else one error (or None) per update.
        Common table-entry updates take FastWrites (read from `wire`, the
        Write's bytes, where given; else from the messages); the rest, and
        whatever it declines, `write_one` (where errors are found and worded)."""
        errors: dict[int, P4RuntimeError] = {}
        fast = self.fast_writes
        fast_write = fast.write
        write_decoded = fast.write_decoded
        write_one = self.write_one
        with collector_paused():
            decoded = fast.decode(wire) if wire is not None else None
            for i, d in enumerate(decoded if decoded is not None else repeat(None, len(updates))):
                try:
                    if d is not None:
                        if write_decoded(i, d, errors):
                            continue
                        u = updates[i]
                    else:
                        u = updates[i]
                        # (another kind's table_entry reads as an empty one: no table 0)
                        if fast_write(i, u.type, u.entity.table_entry, errors):
                            continue
                    fast.flush(errors)
                    write_one(u.type, u.entity, f"updates[{i}].entity")
                except P4RuntimeError as e:
                    errors[i] = e
                except Exception as e:  # a bug must not take the server down
                    log.exception("internal error in update %d", i)
                    errors[i] = internal(f"updates[{i}]: internal error: {e!r}")
            fast.flush(errors)
        if not errors:
            return None
        return [errors.get(i) for i in range(len(updates))]

    def write_one(self, utype: int, entity, where: str) -> None:
        kind = entity.WhichOneof("entity")
        write = self._writers.get(kind)
        if write is None:
            self._route(entity, where)  # raises: not set, or not supported
        write(utype, getattr(entity, kind), f"{where}.{kind}")

    def read_one(self, entity, out, where: str) -> None:
        route, manager, msg, at = self._route(entity, where)
        route.read(manager, msg, out, at)

    def read_wire(self, entity, records: list[bytes], where: str) -> None:
        """As `read_one`, appending serialized ReadResponse records (wire.py)."""
        route, manager, msg, at = self._route(entity, where)
        if route.read_wire is not None:
            route.read_wire(manager, msg, records, at)
            return
        out = p4r.ReadResponse().entities
        route.read(manager, msg, out, at)
        records += records_of(out)

    # ----- forwarding state (RECONCILE_AND_COMMIT) -------------------------

    def forwarding_state(self) -> list:
        """Entities that recreate what the client wrote, in a replayable order."""
        out = p4r.ReadResponse().entities
        members, groups = self.profiles.all_entities()
        ents = members + groups
        for st, e in self.tables.all_writable():
            ent = out.add()
            self.tables._entry_to_proto(st, e, ent.table_entry)
        ents += list(out)
        for st in self.tables.tables.values():
            d = st.default
            if d.action is not None and d.action != st.initial_default:
                tmp = p4r.ReadResponse().entities
                self.tables._read_default(st, tmp)
                ents += list(tmp)
        tmp = p4r.ReadResponse().entities
        self.pre.read(p4r.PacketReplicationEngineEntry(), tmp)
        self.digests.read(p4r.DigestEntry(), tmp)
        ents += list(tmp)
        return ents
