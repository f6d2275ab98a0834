"""One forwarding pipeline: P4Info + BMv2 JSON + engine + P4Runtime state.

A `Pipeline` is built by SetForwardingPipelineConfig (or at start-up from
the command line's JSON, without P4Info) and holds one manager per
P4Runtime entity kind. `write_one` and `read_one` dispatch an Entity to
its manager; they raise P4RuntimeError and never leave a half-applied
update behind in the shadow state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from finsy.proto import p4i, p4r

from .action_profiles import ActionProfileManager
from .bmv2json import parse_program
from .digests import DigestManager
from .engine import DataplaneEngine, EngineAdapter
from .errors import invalid, unimplemented
from .externs import ExternManager
from .idle import IdleTimeout
from .pre import PreManager
from .schema import P4Schema
from .tables import TableManager
from .translate import Translation
from .valuesets import ValueSetManager


@dataclass(frozen=True, slots=True)
class EngineOptions:
    drop_port: int = 511
    priority_queues: int = 1
    seed: int = 0


EngineFactory = Callable[[str, EngineOptions], EngineAdapter]


def default_engine_factory(json_text: str, opts: EngineOptions) -> EngineAdapter:
    return DataplaneEngine(json_text, opts.drop_port, opts.priority_queues, opts.seed)


class Pipeline:
    def __init__(self, p4info: "p4i.P4Info", json_text: str, *, device_config: bytes = b"",
                 cookie: Optional[int] = None, options: EngineOptions = EngineOptions(),
                 engine_factory: EngineFactory = default_engine_factory,
                 engine: Optional[EngineAdapter] = None):
        self.p4info = p4info
        self.json_text = json_text
        self.device_config = device_config
        self.cookie = cookie
        self.schema = P4Schema(p4info)
        self.prog = parse_program(json_text)
        self.tr = Translation(self.schema, self.prog)
        self.engine: EngineAdapter = engine if engine is not None else engine_factory(json_text, options)
        self.tables = TableManager(self)
        self.profiles = ActionProfileManager(self)
        self.externs = ExternManager(self)
        self.pre = PreManager(self)
        self.digests = DigestManager(self)
        self.idle = IdleTimeout(self)
        self.value_sets = ValueSetManager(self)

    def set_stream_sink(self, send: Callable[[p4r.StreamMessageResponse], None]) -> None:
        """Where digest lists and idle timeout notifications go (the primary)."""
        self.digests.send = send
        self.idle.send = send

    # ----- dispatch ---------------------------------------------------------

    def write_one(self, utype: int, entity, where: str) -> None:
        kind = entity.WhichOneof("entity")
        at = f"{where}.{kind}" if kind else where
        if kind == "table_entry":
            self.tables.write(utype, entity.table_entry, at)
        elif kind == "action_profile_member":
            self.profiles.write_member(utype, entity.action_profile_member, at)
        elif kind == "action_profile_group":
            self.profiles.write_group(utype, entity.action_profile_group, at)
        elif kind == "counter_entry":
            self.externs.write_counter(utype, entity.counter_entry, at)
        elif kind == "direct_counter_entry":
            self.externs.write_direct_counter(utype, entity.direct_counter_entry, at)
        elif kind == "meter_entry":
            self.externs.write_meter(utype, entity.meter_entry, at)
        elif kind == "direct_meter_entry":
            self.externs.write_direct_meter(utype, entity.direct_meter_entry, at)
        elif kind == "register_entry":
            self.externs.write_register(utype, entity.register_entry, at)
        elif kind == "packet_replication_engine_entry":
            self.pre.write(utype, entity.packet_replication_engine_entry, at)
        elif kind == "digest_entry":
            self.digests.write(utype, entity.digest_entry, at)
        elif kind == "value_set_entry":
            self.value_sets.write(utype, entity.value_set_entry, at)
        elif kind == "extern_entry":
            raise unimplemented(f"{at}: extern entries are not supported (v1model has none)")
        else:
            raise invalid(f"{where}.entity: not set")

    def read_one(self, entity, out, where: str) -> None:
        kind = entity.WhichOneof("entity")
        at = f"{where}.{kind}" if kind else where
        if kind == "table_entry":
            self.tables.read(entity.table_entry, out, at)
        elif kind == "action_profile_member":
            self.profiles.read_member(entity.action_profile_member, out, at)
        elif kind == "action_profile_group":
            self.profiles.read_group(entity.action_profile_group, out, at)
        elif kind == "counter_entry":
            self.externs.read_counter(entity.counter_entry, out, at)
        elif kind == "direct_counter_entry":
            self.externs.read_direct_counter(entity.direct_counter_entry, out, at)
        elif kind == "meter_entry":
            self.externs.read_meter(entity.meter_entry, out, at)
        elif kind == "direct_meter_entry":
            self.externs.read_direct_meter(entity.direct_meter_entry, out, at)
        elif kind == "register_entry":
            self.externs.read_register(entity.register_entry, out, at)
        elif kind == "packet_replication_engine_entry":
            self.pre.read(entity.packet_replication_engine_entry, out, at)
        elif kind == "digest_entry":
            self.digests.read(entity.digest_entry, out, at)
        elif kind == "value_set_entry":
            self.value_sets.read(entity.value_set_entry, out, at)
        elif kind == "extern_entry":
            raise unimplemented(f"{at}: extern entries are not supported (v1model has none)")
        else:
            raise invalid(f"{where}: entity not set")

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
