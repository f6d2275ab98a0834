"""Primary/backup arbitration between controllers, as PI does it.

Each StreamChannel that sent a MasterArbitrationUpdate is a `Connection`
with an election id. The primary is the live connection with the highest
election id; when it leaves, the next highest takes over (PI behaviour:
the spec would wait for a higher id). Notifications follow PI's
pi_server.cpp: a change of primary informs every connection, otherwise
only the one that sent the update; the primary's status is OK "Is
primary", a backup's ALREADY_EXISTS "Is backup". Roles are ignored, as
PI ignores them. At most 16 connections (RESOURCE_EXHAUSTED beyond).

Write and SetForwardingPipelineConfig are allowed only when the request's
election id is the primary's (spec "Write RPC", check 2): a request
without an election id, or made while no controller is primary, is
PERMISSION_DENIED, before any other check on its content. PI accepts a
request without an election id while no stream is open (a convenience for
grpc_cli); the spec does not, and any local process could then replace
the pipeline, so p4scope follows the spec.
"""

from __future__ import annotations

import itertools
import threading
from typing import Callable, Optional

from finsy.proto import p4r, rpc_code

from .codec import to_u128
from .errors import P4RuntimeError, denied, invalid

MAX_CONNECTIONS = 16
_ids = itertools.count(1)


class Connection:
    """One controller stream. `send` queues a StreamMessageResponse on it."""

    def __init__(self, send: Callable[[p4r.StreamMessageResponse], None], peer: str = ""):
        self.id = next(_ids)
        self.send = send
        self.peer = peer
        self.election_id: Optional[int] = None
        self.role = ""

    def __repr__(self) -> str:
        return f"Connection({self.id}, election_id={self.election_id}, peer={self.peer!r})"


class Arbitration:
    def __init__(self, device_id: int, on_change: Callable[[Optional[Connection]], None] = lambda c: None):
        self.device_id = device_id
        self.lock = threading.RLock()
        self.connections: list[Connection] = []
        self.on_change = on_change

    @property
    def primary(self) -> Optional[Connection]:
        with self.lock:
            if not self.connections:
                return None
            return max(self.connections, key=lambda c: c.election_id or 0)

    def update(self, conn: Connection, election_id: int, role: str = "") -> None:
        """Handles a MasterArbitrationUpdate from `conn`; raises to end its stream."""
        with self.lock:
            others = [c for c in self.connections if c is not conn]
            if any(c.election_id == election_id for c in others):
                raise invalid(f"arbitration.election_id: {election_id} is already used by another "
                              "controller")
            old_primary = self.primary
            if conn not in self.connections:
                if len(self.connections) >= MAX_CONNECTIONS:
                    raise P4RuntimeError(rpc_code.Code.RESOURCE_EXHAUSTED,
                                         f"too many controllers (at most {MAX_CONNECTIONS})")
                conn.election_id = election_id
                conn.role = role
                self.connections.append(conn)
            elif conn.election_id == election_id:
                self._notify(conn)
                return
            else:
                conn.election_id = election_id
            new_primary = self.primary
            if new_primary is not old_primary:
                self._notify_all()
                self.on_change(new_primary)
            else:
                self._notify(conn)

    def remove(self, conn: Connection) -> None:
        with self.lock:
            if conn not in self.connections:
                return
            was_primary = self.primary is conn
            self.connections.remove(conn)
            if was_primary:
                self._notify_all()
                self.on_change(self.primary)

    def check_writer(self, request, what: str) -> None:
        """PERMISSION_DENIED unless the request comes from the primary."""
        with self.lock:
            p = self.primary
            if p is None:
                raise denied(f"{what}: not primary (no controller is primary: open a "
                             "StreamChannel and arbitrate first)")
            if not request.HasField("election_id"):
                raise denied(f"{what}: not primary (the request has no election_id)")
            eid = (request.election_id.high << 64) | request.election_id.low
            if p.election_id != eid:
                raise denied(f"{what}: not primary (election id {eid}; the primary's is "
                             f"{p.election_id})")

    def send_to_primary(self, msg: p4r.StreamMessageResponse) -> bool:
        p = self.primary
        if p is None:
            return False
        p.send(msg)
        return True

    # ----- notifications --------------------------------------------------

    def _advisory(self, conn: Connection) -> p4r.StreamMessageResponse:
        p = self.primary
        msg = p4r.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        if conn.role:
            arb.role.name = conn.role
        if p is not None and p.election_id is not None:
            to_u128(p.election_id, arb.election_id)
        if conn is p:
            arb.status.code = rpc_code.Code.OK
            arb.status.message = "Is primary"
        else:
            arb.status.code = rpc_code.Code.ALREADY_EXISTS
            arb.status.message = "Is backup"
        return msg

    def _notify(self, conn: Connection) -> None:
        conn.send(self._advisory(conn))

    def _notify_all(self) -> None:
        for c in self.connections:
            self._notify(c)
