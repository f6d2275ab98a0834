"""`Switch`: a P4Runtime device driven by name.

    sw = Switch.connect("127.0.0.1:9559", pipeline=Pipeline.from_build("dut"))
    sw.table("dmac").insert({"dst_addr": "00:00:00:00:00:02"}, "forward", port=2)
    sw.table("dmac").set_default("flood")
    sw.table("acl").insert({"ipv4.dst_addr": ("10.0.0.0", "255.0.0.0")}, "deny", priority=10)
    sw.multicast_group(1, ports=[1, 2, 3])
    sw.counter("ingress_port_counter")[3]          # CounterValue(bytes=..., packets=...)
    for d in sw.digests(timeout=1): ...
    sw.packet_out(frame, egress_port=2)

Every name is resolved in the P4Info (suffixes and aliases accepted, with
suggestions on a miss); every id comes from it. Writes go out in batches;
a failed update raises WriteError naming the entity it was about.
"""

from __future__ import annotations

from collections import abc
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

from finsy.proto import p4r

from . import values
from .client import Client, P4RuntimeClientError, WriteError
from .entities import (CloneSession, DigestMessage, Group, Member, MulticastGroup, TableEntry,
                       decode_digest_list)
from .pipeline import Pipeline
from .schema import Schema

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
BATCH = 1000
Writable = Union[TableEntry, Member, Group, MulticastGroup, CloneSession, p4r.Entity]
Writables = Union[Writable, Sequence[Writable]]
"""What insert/modify/delete take: objects, or lists of them (flattened)."""


@dataclass(frozen=True)
class CounterValue:
    bytes: int
    packets: int


@dataclass
class PacketIn:
    payload: bytes
    metadata: dict[str, int]


@dataclass
class DigestList:
    digest: str
    digest_id: int
    list_id: int
    messages: list[DigestMessage]


class Switch:
    def __init__(self, client: Client, schema: Optional[Schema] = None):
        self.client = client
        self._schema = schema

    # ----- connection -------------------------------------------------------------

    @classmethod
    def connect(cls, address: str, pipeline: Optional[Pipeline] = None, device_id: int = 0,
                election_id: int = 1, role: str = "", timeout: float = 10.0,
                primary: bool = True) -> "Switch":
        """Connects (as primary unless `primary` is False: a backup can only
        read); installs `pipeline` if given, else adopts the P4Info the
        switch already runs (if any)."""
        client = Client(address, device_id, election_id, role, timeout).connect(primary)
        sw = cls(client)
        if pipeline is not None:
            sw.set_pipeline(pipeline)
        else:
            cfg = client.get_pipeline(p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
            if cfg.p4info.tables or cfg.p4info.actions:
                sw._schema = Schema(cfg.p4info)
        return sw

    def set_pipeline(self, pipeline: Pipeline) -> None:
        self.client.set_pipeline(pipeline.p4info, pipeline.device_config)
        self._schema = Schema(pipeline.p4info)

    @property
    def schema(self) -> Schema:
        if self._schema is None:
            raise RuntimeError("the switch has no pipeline yet: call set_pipeline() first")
        return self._schema

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> "Switch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- writes ----------------------------------------------------------------

    def entity(self, obj: Writable) -> p4r.Entity:
        if isinstance(obj, p4r.Entity):
            return obj
        if isinstance(obj, TableEntry):
            return p4r.Entity(table_entry=obj.encode(self.schema))
        if isinstance(obj, Member):
            return p4r.Entity(action_profile_member=obj.encode(self.schema))
        if isinstance(obj, Group):
            return p4r.Entity(action_profile_group=obj.encode(self.schema))
        if isinstance(obj, (MulticastGroup, CloneSession)):
            return p4r.Entity(packet_replication_engine_entry=obj.encode())
        raise TypeError(f"cannot write a {type(obj).__name__}")

    def _key_entity(self, obj: Writable) -> p4r.Entity:
        if isinstance(obj, TableEntry):
            return p4r.Entity(table_entry=obj.key_only(self.schema))
        return self.entity(obj)

    def write(self, kind: p4r.Update.Type.ValueType, objs: Iterable[Writable]) -> None:
        """INSERT/MODIFY/DELETE each object, in batches of BATCH updates."""
        batch: list[p4r.Update] = []
        shown: list[Writable] = []
        for obj in objs:
            ent = self._key_entity(obj) if kind == DELETE else self.entity(obj)
            batch.append(p4r.Update(type=kind, entity=ent))
            shown.append(obj)
            if len(batch) >= BATCH:
                self._send(batch, shown, kind)
                batch, shown = [], []
        self._send(batch, shown, kind)

    def _send(self, batch: list[p4r.Update], shown: list[Writable],
              kind: p4r.Update.Type.ValueType) -> None:
        verb = p4r.Update.Type.Name(kind).lower()
        self.client.write(batch, describe=lambda i: f"{verb} {_describe(shown[i])}")

    def insert(self, *objs: Writables) -> None:
        self.write(INSERT, _flatten(objs))

    def modify(self, *objs: Writables) -> None:
        self.write(MODIFY, _flatten(objs))

    def delete(self, *objs: Writables) -> None:
        self.write(DELETE, _flatten(objs))

    def insert_or_modify(self, *objs: Writables) -> None:
        """Inserts; modifies instead when the switch refuses the insert (the
        entries are already there, e.g. from an earlier controller run)."""
        try:
            self.insert(*objs)
        except WriteError:
            self.modify(*objs)

    # ----- handles ---------------------------------------------------------------

    def table(self, name: str) -> "TableHandle":
        return TableHandle(self, self.schema.table(name).name)

    def counter(self, name: str) -> "CounterHandle":
        return CounterHandle(self, self.schema.counter(name).name)

    def register(self, name: str) -> "RegisterHandle":
        return RegisterHandle(self, self.schema.register(name).name)

    def action_profile(self, name: str) -> "ProfileHandle":
        """An action profile or selector, by its name or by a table using it."""
        s = self.schema
        ap = s.action_profiles.get(name)
        if ap is None:
            t = s.tables.get(name)
            ap = s.profile_of(t) if t is not None else s.action_profile(name)
        return ProfileHandle(self, ap.name)

    # ----- packet replication ----------------------------------------------------

    def multicast_group(self, group_id: int, ports: Sequence[int], instance: int = 1,
                        replace: bool = True) -> None:
        """Creates (or with `replace`, overwrites) a multicast group."""
        g = MulticastGroup.of_ports(group_id, ports, instance)
        if replace and self._exists(g):
            self.modify(g)
        else:
            self.insert(g)

    def delete_multicast_group(self, group_id: int) -> None:
        self.delete(MulticastGroup(group_id))

    def clone_session(self, session_id: int, port: int, truncate: int = 0,
                      replace: bool = True) -> None:
        s = CloneSession(session_id, [(port, 1)], truncate)
        if replace and self._exists(s):
            self.modify(s)
        else:
            self.insert(s)

    def _exists(self, obj: Union[MulticastGroup, CloneSession]) -> bool:
        probe = p4r.Entity()
        if isinstance(obj, MulticastGroup):
            probe.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = obj.group_id
        else:
            probe.packet_replication_engine_entry.clone_session_entry.session_id = obj.session_id
        try:
            return any(True for _ in self.client.read([probe]))
        except P4RuntimeClientError:
            return False

    def multicast_groups(self) -> list[MulticastGroup]:
        probe = p4r.Entity()
        probe.packet_replication_engine_entry.multicast_group_entry.SetInParent()
        return [MulticastGroup.decode(e.packet_replication_engine_entry.multicast_group_entry)
                for e in self.client.read([probe])]

    # ----- digests, idle timeouts, packets -------------------------------------

    def configure_digest(self, name: str, max_timeout_ns: int = 0, max_list_size: int = 1,
                         ack_timeout_ns: int = 0) -> None:
        """Enables a digest (PI sends none until it has a DigestEntry)."""
        d = self.schema.digest(name)
        ent = p4r.Entity()
        de = ent.digest_entry
        de.digest_id = d.id
        de.config.max_timeout_ns = max_timeout_ns
        de.config.max_list_size = max_list_size
        de.config.ack_timeout_ns = ack_timeout_ns
        try:
            self.insert(ent)
        except P4RuntimeClientError:
            self.modify(ent)

    def digests(self, timeout: float = 0.0, ack: bool = True) -> list[DigestList]:
        """Digest lists received so far (waiting up to `timeout` s for the
        first); each is acknowledged unless `ack` is False."""
        out = []
        msg = self.client.get("digest", timeout)
        while msg is not None:
            dl = msg.digest
            d = self.schema.by_id.get(dl.digest_id)
            out.append(DigestList(getattr(d, "name", str(dl.digest_id)), dl.digest_id, dl.list_id,
                                  decode_digest_list(dl, self.schema)))
            if ack:
                self.client.digest_ack(dl.digest_id, dl.list_id)
            msg = self.client.get("digest")
        return out

    def idle_timeouts(self, timeout: float = 0.0) -> list[TableEntry]:
        """Entries reported idle since the last call."""
        out = []
        msg = self.client.get("idle_timeout_notification", timeout)
        while msg is not None:
            for te in msg.idle_timeout_notification.table_entry:
                out.append(TableEntry.decode(te, self.schema))
            msg = self.client.get("idle_timeout_notification")
        return out

    def packet_out(self, payload: bytes, **metadata: Any) -> None:
        """Sends a packet-out; metadata fields of the packet_out controller
        header by name (egress_port=3)."""
        hdr = self.schema.controller_header("packet_out")
        md = []
        if hdr is not None:
            for f in hdr.fields:
                if f.name.startswith("_"):
                    val = metadata.pop(f.name, 0)
                else:
                    if f.name not in metadata:
                        raise ValueError(f"packet_out needs metadata '{f.name}' "
                                         f"({f.bitwidth} bits)")
                    val = metadata.pop(f.name)
                md.append((f.id, values.encode(val, f.bitwidth, f"packet_out.{f.name}")))
        if metadata:
            raise ValueError(f"packet_out has no metadata {sorted(metadata)}")
        self.client.packet_out(payload, md)

    def packet_ins(self, timeout: float = 0.0) -> list[PacketIn]:
        hdr = self.schema.controller_header("packet_in")
        names = {f.id: f.name for f in hdr.fields} if hdr is not None else {}
        out = []
        msg = self.client.get("packet", timeout)
        while msg is not None:
            p = msg.packet
            out.append(PacketIn(p.payload, {names.get(m.metadata_id, str(m.metadata_id)):
                                            values.decode(m.value) for m in p.metadata}))
            msg = self.client.get("packet")
        return out

    def stream_errors(self) -> list[p4r.StreamError]:
        return [m.error for m in self.client.drain("error")]


class TableHandle:
    def __init__(self, sw: Switch, name: str):
        self.sw = sw
        self.name = name

    @property
    def info(self):
        return self.sw.schema.table(self.name)

    def entry(self, match: Optional[dict] = None, action: Optional[str] = None, *,
              priority: int = 0, idle_timeout_ns: int = 0, member_id: Optional[int] = None,
              group_id: Optional[int] = None, **params: Any) -> TableEntry:
        return TableEntry(self.name, dict(match or {}), action, params, priority, member_id,
                          group_id, idle_timeout_ns)

    def insert(self, match: Optional[dict] = None, action: Optional[str] = None, **kw: Any) -> TableEntry:
        e = self.entry(match, action, **kw)
        self.sw.insert(e)
        return e

    def modify(self, match: Optional[dict] = None, action: Optional[str] = None, **kw: Any) -> TableEntry:
        e = self.entry(match, action, **kw)
        self.sw.modify(e)
        return e

    def delete(self, match: Optional[dict] = None, priority: int = 0) -> None:
        self.sw.delete(TableEntry(self.name, dict(match or {}), priority=priority))

    def set_default(self, action: str, **params: Any) -> None:
        self.sw.modify(TableEntry(self.name, action=action, params=params, is_default=True))

    def entries(self, with_counters: bool = False) -> list[TableEntry]:
        t = self.sw.schema.table(self.name)
        ent = p4r.Entity()
        ent.table_entry.table_id = t.id
        if with_counters and t.direct_counter_id:
            ent.table_entry.counter_data.SetInParent()
        return [TableEntry.decode(e.table_entry, self.sw.schema)
                for e in self.sw.client.read([ent]) if not e.table_entry.is_default_action]

    def clear(self) -> int:
        """Deletes every entry; returns how many."""
        es = self.entries()
        for e in es:
            e.action = None
            e.params = {}
            e.member_id = e.group_id = None
        self.sw.delete(es)
        return len(es)

    def __len__(self) -> int:
        return len(self.entries())


class CounterHandle:
    """An indirect counter: `h[i]` reads one cell, `h.read_all()` all."""

    def __init__(self, sw: Switch, name: str):
        self.sw = sw
        self.name = name

    def _probe(self, index: Optional[int]) -> p4r.Entity:
        c = self.sw.schema.counter(self.name)
        ent = p4r.Entity()
        ent.counter_entry.counter_id = c.id
        if index is not None:
            ent.counter_entry.index.index = index
        return ent

    def __getitem__(self, index: int) -> CounterValue:
        for e in self.sw.client.read([self._probe(index)]):
            d = e.counter_entry.data
            return CounterValue(d.byte_count, d.packet_count)
        return CounterValue(0, 0)

    def read_all(self) -> dict[int, CounterValue]:
        out = {}
        for e in self.sw.client.read([self._probe(None)]):
            d = e.counter_entry.data
            out[e.counter_entry.index.index] = CounterValue(d.byte_count, d.packet_count)
        return out

    def read_many(self, indexes: Iterable[int]) -> dict[int, CounterValue]:
        out = {}
        for e in self.sw.client.read([self._probe(i) for i in indexes]):
            d = e.counter_entry.data
            out[e.counter_entry.index.index] = CounterValue(d.byte_count, d.packet_count)
        return out

    def clear(self, index: Optional[int] = None) -> None:
        ents = []
        idx = [index] if index is not None else range(self.sw.schema.counter(self.name).size)
        for i in idx:
            ent = self._probe(i)
            ent.counter_entry.data.byte_count = 0
            ent.counter_entry.data.packet_count = 0
            ents.append(ent)
        self.sw.modify(*ents)


class RegisterHandle:
    """A register array. Readable over P4Runtime on p4scope's switch; PI
    (simple_switch_grpc) answers UNIMPLEMENTED."""

    def __init__(self, sw: Switch, name: str):
        self.sw = sw
        self.name = name

    def _probe(self, index: Optional[int]) -> p4r.Entity:
        r = self.sw.schema.register(self.name)
        ent = p4r.Entity()
        ent.register_entry.register_id = r.id
        if index is not None:
            ent.register_entry.index.index = index
        return ent

    def __getitem__(self, index: int) -> int:
        for e in self.sw.client.read([self._probe(index)]):
            return _p4data_int(e.register_entry.data)
        return 0

    def read_all(self) -> dict[int, int]:
        return {e.register_entry.index.index: _p4data_int(e.register_entry.data)
                for e in self.sw.client.read([self._probe(None)])}

    def __setitem__(self, index: int, value: int) -> None:
        r = self.sw.schema.register(self.name)
        ent = self._probe(index)
        ent.register_entry.data.bitstring = values.encode(value, r.bitwidth, f"{r.name}[{index}]")
        self.sw.modify(ent)


class ProfileHandle:
    """Members and groups of an action profile or selector."""

    def __init__(self, sw: Switch, name: str):
        self.sw = sw
        self.name = name

    def member(self, member_id: int, action: str, **params: Any) -> Member:
        m = Member(self.name, member_id, action, params)
        self.sw.insert(m)
        return m

    def group(self, group_id: int, member_ids: Sequence[int], max_size: int = 0,
              weights: Optional[Sequence[int]] = None) -> Group:
        ws = list(weights) if weights is not None else [1] * len(member_ids)
        g = Group(self.name, group_id, list(zip(member_ids, ws)), max_size)
        self.sw.insert(g)
        return g

    def set_group(self, group_id: int, member_ids: Sequence[int],
                  weights: Optional[Sequence[int]] = None) -> Group:
        ws = list(weights) if weights is not None else [1] * len(member_ids)
        g = Group(self.name, group_id, list(zip(member_ids, ws)))
        self.sw.modify(g)
        return g

    def members(self) -> list[Member]:
        ap = self.sw.schema.action_profile(self.name)
        ent = p4r.Entity()
        ent.action_profile_member.action_profile_id = ap.id
        return [Member.decode(e.action_profile_member, self.sw.schema)
                for e in self.sw.client.read([ent])]

    def groups(self) -> list[Group]:
        ap = self.sw.schema.action_profile(self.name)
        ent = p4r.Entity()
        ent.action_profile_group.action_profile_id = ap.id
        return [Group.decode(e.action_profile_group, self.sw.schema)
                for e in self.sw.client.read([ent])]


def _p4data_int(data) -> int:
    if data.WhichOneof("data") == "bitstring":
        return values.decode(data.bitstring)
    return 0


def _flatten(objs: Sequence[Writables]) -> Iterator[Writable]:
    for o in objs:
        if isinstance(o, abc.Sequence):
            yield from o
        else:
            yield o


def _describe(obj: Writable) -> str:
    if isinstance(obj, TableEntry):
        what = f"table {obj.table}"
        if obj.is_default:
            return f"{what} default action {obj.action}"
        return f"{what} match {obj.match or '{}'}" + (f" -> {obj.action}" if obj.action else "")
    if isinstance(obj, Member):
        return f"member {obj.member_id} of {obj.profile}"
    if isinstance(obj, Group):
        return f"group {obj.group_id} of {obj.profile}"
    if isinstance(obj, MulticastGroup):
        return f"multicast group {obj.group_id}"
    if isinstance(obj, CloneSession):
        return f"clone session {obj.session_id}"
    return type(obj).__name__
