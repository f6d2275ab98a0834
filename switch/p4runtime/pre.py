"""The packet replication engine: multicast groups and clone sessions.

A multicast group's replicas (port, instance) become engine L1 nodes, one
per instance (BMv2's rid) holding its ports. Clone sessions follow PI on
BMv2: session s (1..32767) is a multicast group 32768 + s holding the
session's replicas, and the engine's mirroring session s points at it.
The engine cannot destroy a node yet, so freed nodes are kept per rid and
reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from finsy.proto import p4r

from .codec import to_port
from .errors import exists, invalid, not_found, out_of_range, unimplemented
from .wildcard import selected

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
CLONE_GROUP_BASE = 32768  # PI: first reserved group id
MAX_INSTANCE = 0xFFFF  # v1model egress_rid is 16 bits


@dataclass(slots=True)
class McGroup:
    replicas: list[tuple[int, int, bytes]]  # (port, instance, port bytes as given)
    metadata: bytes
    nodes: list[tuple[int, int]]  # (rid, engine node handle)


@dataclass(slots=True)
class CloneSession:
    replicas: list[tuple[int, int, bytes]]
    class_of_service: int
    packet_length_bytes: int


class PreManager:
    def __init__(self, pipe: "ForwardingPipeline"):
        self.engine = pipe.engine
        self.groups: dict[int, McGroup] = {}
        self.clones: dict[int, CloneSession] = {}
        self._clone_groups: dict[int, McGroup] = {}

    def write(self, utype: int, pre, where: str = "packet_replication_engine_entry") -> None:
        kind = pre.WhichOneof("type")
        if kind == "multicast_group_entry":
            self._write_group(utype, pre.multicast_group_entry, f"{where}.multicast_group_entry")
        elif kind == "clone_session_entry":
            self._write_clone(utype, pre.clone_session_entry, f"{where}.clone_session_entry")
        else:
            raise invalid(f"{where}: neither a multicast group nor a clone session")

    @staticmethod
    def _replicas(msgs, where: str) -> list[tuple[int, int, bytes]]:
        out = []
        seen = set()
        for i, r in enumerate(msgs):
            at = f"{where}.replicas[{i}]"
            kind = r.WhichOneof("port_kind")
            if kind == "port":
                port = to_port(r.port, f"{at}.port")
                raw = bytes(r.port)
            elif kind == "egress_port":
                port = r.egress_port
                raw = b""
            else:
                raise invalid(f"{at}: the replica has no port")
            if len(r.backup_replicas):
                raise unimplemented(f"{at}.backup_replicas: backup replicas are not supported")
            if r.instance > MAX_INSTANCE:
                raise invalid(f"{at}.instance: {r.instance} does not fit the 16-bit egress_rid")
            if (port, r.instance) in seen:
                raise invalid(f"{at}: (port {port}, instance {r.instance}) is listed twice")
            seen.add((port, r.instance))
            out.append((port, r.instance, raw))
        return out

    # ----- engine nodes ----------------------------------------------------

    def _install(self, mgid: int, replicas, create: bool) -> list[tuple[int, int]]:
        if create:
            self.engine.mc_group_create(mgid)
        by_rid: dict[int, list[int]] = {}
        for port, rid, _ in replicas:
            by_rid.setdefault(rid, []).append(port)
        nodes = []
        for rid, ports in by_rid.items():
            node = self.engine.mc_node_create(rid, ports)
            self.engine.mc_node_associate(mgid, node)
            nodes.append((rid, node))
        return nodes

    def _release(self, mgid: int, nodes, destroy: bool) -> None:
        for rid, node in nodes:
            self.engine.mc_node_dissociate(mgid, node)
            self.engine.mc_node_destroy(node)
        if destroy:
            self.engine.mc_group_destroy(mgid)

    # ----- multicast groups -------------------------------------------------

    def _write_group(self, utype: int, g, where: str) -> None:
        gid = g.multicast_group_id
        if gid == 0:
            raise invalid(f"{where}.multicast_group_id: 0 is not a valid group id")
        if gid >= CLONE_GROUP_BASE:
            raise out_of_range(f"{where}.multicast_group_id: {gid} is too high (groups "
                               f"{CLONE_GROUP_BASE} and above are reserved for clone sessions)")
        cur = self.groups.get(gid)
        if utype == DELETE:
            if cur is None:
                raise not_found(f"{where}: there is no multicast group {gid}")
            self._release(gid, cur.nodes, destroy=True)
            del self.groups[gid]
            return
        if utype not in (INSERT, MODIFY):
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")
        replicas = self._replicas(g.replicas, where)
        if utype == INSERT:
            if cur is not None:
                raise exists(f"{where}: multicast group {gid} already exists")
            self.groups[gid] = McGroup(replicas, bytes(g.metadata),
                                       self._install(gid, replicas, create=True))
            return
        if cur is None:
            raise not_found(f"{where}: there is no multicast group {gid}")
        self._release(gid, cur.nodes, destroy=False)
        cur.nodes = self._install(gid, replicas, create=False)
        cur.replicas = replicas
        cur.metadata = bytes(g.metadata)

    @staticmethod
    def _replicas_to_proto(replicas, out) -> None:
        for port, inst, raw in replicas:
            r = out.add(instance=inst)
            if raw:
                r.port = raw
            else:
                r.egress_port = port

    def read(self, pre, out, where: str = "packet_replication_engine_entry") -> None:
        kind = pre.WhichOneof("type")
        if kind == "multicast_group_entry":
            gid = pre.multicast_group_entry.multicast_group_id
            if gid >= CLONE_GROUP_BASE:
                raise out_of_range(f"{where}.multicast_group_entry.multicast_group_id: {gid} is "
                                   "too high")
            for g, grp in selected(self.groups, gid):
                msg = out.add().packet_replication_engine_entry.multicast_group_entry
                msg.multicast_group_id = g
                self._replicas_to_proto(grp.replicas, msg.replicas)
                if grp.metadata:
                    msg.metadata = grp.metadata
        elif kind == "clone_session_entry":
            sid = pre.clone_session_entry.session_id
            for s, cs in selected(self.clones, sid):
                msg = out.add().packet_replication_engine_entry.clone_session_entry
                msg.session_id = s
                self._replicas_to_proto(cs.replicas, msg.replicas)
                msg.class_of_service = cs.class_of_service
                msg.packet_length_bytes = cs.packet_length_bytes
        else:
            # an empty PRE entry reads everything
            for g in sorted(self.groups):
                self.read(p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=g)), out)
            for s in sorted(self.clones):
                self.read(p4r.PacketReplicationEngineEntry(
                    clone_session_entry=p4r.CloneSessionEntry(session_id=s)), out)

    # ----- clone sessions -----------------------------------------------------

    def _write_clone(self, utype: int, c, where: str) -> None:
        sid = c.session_id
        if sid == 0:
            raise invalid(f"{where}.session_id: 0 is not a valid session id")
        if sid >= CLONE_GROUP_BASE:
            raise invalid(f"{where}.session_id: {sid} is out of range (1..{CLONE_GROUP_BASE - 1})")
        cur = self.clones.get(sid)
        mgid = CLONE_GROUP_BASE + sid
        if utype == DELETE:
            if cur is None:
                raise not_found(f"{where}: there is no clone session {sid}")
            self.engine.mirroring_delete(sid)
            self._release(mgid, self._clone_groups.pop(sid).nodes, destroy=True)
            del self.clones[sid]
            return
        if utype not in (INSERT, MODIFY):
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")
        if c.class_of_service:
            raise unimplemented(f"{where}.class_of_service: classes of service for clone "
                                "sessions are not supported")
        if c.packet_length_bytes < 0:
            raise invalid(f"{where}.packet_length_bytes: {c.packet_length_bytes} is negative")
        if c.packet_length_bytes:
            raise unimplemented(f"{where}.packet_length_bytes: truncating clones is not "
                                "supported")
        replicas = self._replicas(c.replicas, where)
        if utype == INSERT:
            if cur is not None:
                raise exists(f"{where}: clone session {sid} already exists")
            self._clone_groups[sid] = McGroup(replicas, b"", self._install(mgid, replicas, True))
            self.engine.mirroring_add(sid, None, mgid)
            self.clones[sid] = CloneSession(replicas, c.class_of_service, c.packet_length_bytes)
            return
        if cur is None:
            raise not_found(f"{where}: there is no clone session {sid}")
        grp = self._clone_groups[sid]
        self._release(mgid, grp.nodes, destroy=False)
        grp.nodes = self._install(mgid, replicas, create=False)
        cur.replicas = replicas
