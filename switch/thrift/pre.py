"""simple_switch's packet replication engine and mirroring sessions.

BMv2's PRE (SimplePreLAG) has multicast groups, L1 nodes (a rid) each with
an L2 port set and LAG set, and LAGs (port sets). The model is kept here,
per engine, with BMv2's handles (the lowest free L1 handle), checks and
error codes; the engine gets one node per L1 node whose ports are its own
plus, for each of its LAGs, the member BMv2 picks (the lag hash is a
constant 0xFF in BMv2: member (0xFF % size) of the LAG's ports).

Groups and sessions a P4Runtime controller wrote live in the same engine
(p4runtime.pre.PreManager); `mirroring_get` reports a P4Runtime clone session as PI
installs it on BMv2 (multicast group 32768 + session).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

from .errors import RtError
from .target import EngineState, RuntimeTarget

MAX_MIRROR_SESSION = 32767
MAX_LAGS = 256
CLONE_GROUP_BASE = 32768


@dataclass
class L1Node:
    rid: int
    ports: set[int]
    lags: set[int]
    engine_node: int
    mgid: Optional[int] = None


@dataclass
class PreState:
    groups: dict[int, list[int]] = field(default_factory=dict)
    """mgid -> L1 handles, in association order."""
    nodes: dict[int, L1Node] = field(default_factory=dict)
    lags: dict[int, set[int]] = field(default_factory=dict)
    sessions: dict[int, tuple[Optional[int], Optional[int]]] = field(default_factory=dict)
    """mirroring session -> (port, mgid)."""


def parse_map(text: str, what: str) -> set[int]:
    """BMv2's port/LAG map string: '1' at position len-1-i means member i."""
    if text is None:
        return set()
    if any(c not in "01" for c in text):
        raise RtError("mc", "ERROR", f"{what} map '{text}' is not a string of 0s and 1s")
    n = len(text)
    return {n - 1 - i for i, c in enumerate(text) if c == "1"}


class RtPre:
    def __init__(self, target: RuntimeTarget, max_l1: int = 4096, max_groups: int = 65536):
        self.target = target
        self.max_l1 = max_l1
        self.max_groups = max_groups

    def _st(self) -> tuple[EngineState, PreState]:
        es = self.target.state()
        return es, es.part("pre", PreState)

    # ----- engine side --------------------------------------------------------

    @staticmethod
    def _effective_ports(ps: PreState, node: L1Node) -> list[int]:
        ports = set(node.ports)
        for lag in node.lags:
            members = sorted(ps.lags.get(lag, ()))
            if members:
                ports.add(members[0xFF % len(members)])
        return sorted(ports)

    def _sync(self, es: EngineState, ps: PreState, node: L1Node) -> None:
        es.engine.mc_node_update(node.engine_node, self._effective_ports(ps, node))

    # ----- groups ---------------------------------------------------------------

    def mgrp_create(self, mgid: int) -> int:
        es, ps = self._st()
        if not 0 <= mgid < self.max_groups:
            raise RtError("mc", "INVALID_MGID", f"group {mgid} is out of range")
        if mgid not in ps.groups:
            if len(ps.groups) >= self.max_groups:
                raise RtError("mc", "TABLE_FULL", "the multicast group table is full")
            es.engine.mc_group_create(mgid)
            ps.groups[mgid] = []
        return mgid

    def mgrp_destroy(self, mgid: int) -> None:
        es, ps = self._st()
        handles = ps.groups.pop(mgid, None)
        if handles is None:
            return  # BMv2 accepts destroying an unknown group
        for h in handles:
            ps.nodes[h].mgid = None
        if mgid not in es.pipe.pre.groups:
            es.engine.mc_group_destroy(mgid)
        else:  # a P4Runtime group of the same id keeps its own nodes
            for h in handles:
                es.engine.mc_node_dissociate(mgid, ps.nodes[h].engine_node)

    # ----- nodes ------------------------------------------------------------------

    def node_create(self, rid: int, port_map: str, lag_map: Optional[str]) -> int:
        es, ps = self._st()
        if len(ps.nodes) >= self.max_l1:
            raise RtError("mc", "TABLE_FULL", "the L1 node table is full")
        ports, lags = parse_map(port_map, "port"), parse_map(lag_map, "lag")
        handle = next(h for h in range(len(ps.nodes) + 1) if h not in ps.nodes)
        node = L1Node(rid & 0xFFFF, ports, lags, -1)
        eff = self._effective_ports(ps, node)
        node.engine_node = es.engine.mc_node_create(node.rid, eff)
        ps.nodes[handle] = node
        return handle

    def _node(self, ps: PreState, handle: int) -> L1Node:
        node = ps.nodes.get(handle)
        if node is None:
            raise RtError("mc", "INVALID_L1_HANDLE", f"no L1 node {handle}")
        return node

    def node_update(self, handle: int, port_map: str, lag_map: Optional[str]) -> None:
        es, ps = self._st()
        node = self._node(ps, handle)
        node.ports = parse_map(port_map, "port")
        node.lags = parse_map(lag_map, "lag") if lag_map is not None else node.lags
        self._sync(es, ps, node)

    def node_associate(self, mgid: int, handle: int) -> None:
        es, ps = self._st()
        node = self._node(ps, handle)
        if mgid not in ps.groups:
            raise RtError("mc", "INVALID_MGRP_HANDLE", f"no multicast group {mgid}")
        if node.mgid is not None:
            raise RtError("mc", "ERROR", f"L1 node {handle} is already associated")
        es.engine.mc_node_associate(mgid, node.engine_node)
        ps.groups[mgid].append(handle)
        node.mgid = mgid

    def node_dissociate(self, mgid: int, handle: int) -> None:
        es, ps = self._st()
        node = self._node(ps, handle)
        if mgid not in ps.groups:
            raise RtError("mc", "INVALID_MGRP_HANDLE", f"no multicast group {mgid}")
        if node.mgid != mgid:
            raise RtError("mc", "ERROR", f"L1 node {handle} is not associated to group {mgid}")
        es.engine.mc_node_dissociate(mgid, node.engine_node)
        ps.groups[mgid].remove(handle)
        node.mgid = None

    def node_destroy(self, handle: int) -> None:
        es, ps = self._st()
        node = self._node(ps, handle)
        if node.mgid is not None:
            self.node_dissociate(node.mgid, handle)
        es.engine.mc_node_destroy(node.engine_node)
        del ps.nodes[handle]

    def set_lag_membership(self, lag: int, port_map: str) -> None:
        es, ps = self._st()
        if not 0 <= lag < MAX_LAGS:
            raise RtError("mc", "ERROR", f"lag index {lag} is out of range")
        ps.lags[lag] = parse_map(port_map, "port")
        for node in ps.nodes.values():
            if lag in node.lags:
                self._sync(es, ps, node)

    def entries_json(self) -> str:
        """BMv2's mc_get_entries document: mgrps, l1_handles, l2_handles, lags."""
        _, ps = self._st()
        doc = {
            "mgrps": [{"id": g, "l1_handles": list(hs)} for g, hs in sorted(ps.groups.items())],
            "l1_handles": [{"handle": h, "rid": n.rid, "l2_handle": h}
                           for h, n in sorted(ps.nodes.items())],
            "l2_handles": [{"handle": h, "ports": sorted(n.ports), "lags": sorted(n.lags)}
                           for h, n in sorted(ps.nodes.items())],
            "lags": [{"id": i, "ports": sorted(p)} for i, p in sorted(ps.lags.items())],
        }
        return json.dumps(doc)

    # ----- mirroring ----------------------------------------------------------------

    def mirroring_add(self, session: int, port: Optional[int], mgid: Optional[int]) -> bool:
        es, ps = self._st()
        if not 0 <= session <= MAX_MIRROR_SESSION:
            return False  # BMv2 logs "mirror_id out of range" and adds nothing
        es.engine.mirroring_add(session, port, mgid)
        ps.sessions[session] = (port, mgid)
        return True

    def mirroring_delete(self, session: int) -> bool:
        es, ps = self._st()
        if ps.sessions.pop(session, None) is not None:
            es.engine.mirroring_delete(session)
            return True
        if session in es.pipe.pre.clones:
            es.engine.mirroring_delete(session)
            return True
        return False

    def mirroring_get(self, session: int) -> Optional[tuple[Optional[int], Optional[int]]]:
        es, ps = self._st()
        if session in ps.sessions:
            return ps.sessions[session]
        if session in es.pipe.pre.clones:
            return (None, CLONE_GROUP_BASE + session)
        return None
