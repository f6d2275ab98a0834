"""Primary/backup arbitration between controllers (P4Runtime 1.3).

Each StreamChannel that sent a MasterArbitrationUpdate is a `Connection`
with an election id (None when the update had none: such a controller is
lower than any other and never becomes primary). The server remembers the
highest election id it has ever seen (the spec's `election_id_past`); a
controller becomes primary when it arbitrates with an id at least that
high. When the primary's stream closes, or the primary lowers its own id,
there is no primary until a controller arbitrates again with such an id:
the server does not promote the next highest (spec 1.1 onwards; PI still
does). Notifications follow the spec's "Client Arbitration
Notifications": a change of primary informs every connection, otherwise
only the one that sent the update (a backup repeating its own id gets no
answer); the primary's status is OK "Is primary", a backup's
ALREADY_EXISTS "Is backup", or NOT_FOUND when there is no primary; the
advisory's election id is the highest seen (unset if there never was a
primary). Roles are ignored, as PI ignores them. At most 16 connections
(RESOURCE_EXHAUSTED beyond).

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
        self._primary: Optional[Connection] = None
        self.highest: Optional[int] = None
        """The highest election id ever seen (None: there never was a primary)."""

    @property
    def primary(self) -> Optional[Connection]:
        return self._primary

    def update(self, conn: Connection, election_id: Optional[int], role: str = "") -> None:
        """Handles a MasterArbitrationUpdate from `conn`; raises to end its stream."""
        with self.lock:
            others = [c for c in self.connections if c is not conn]
            if election_id is not None and any(c.election_id == election_id for c in others):
                raise invalid(f"arbitration.election_id: {election_id} is already used by another "
                              "controller")
            if conn not in self.connections:
                if len(self.connections) >= MAX_CONNECTIONS:
                    raise P4RuntimeError(rpc_code.Code.RESOURCE_EXHAUSTED,
                                         f"too many controllers (at most {MAX_CONNECTIONS})")
                conn.role = role
                self.connections.append(conn)
            elif conn.election_id == election_id:
                if conn is self._primary:  # a role config update: everyone is told
                    self._notify_all()
                return  # a backup repeating itself: no-op, no answer
            conn.election_id = election_id
            was_primary = conn is self._primary
            if election_id is not None and (self.highest is None or election_id >= self.highest):
                self.highest = election_id
                self._primary = conn
                self._notify_all()
                if not was_primary:
                    self.on_change(conn)
            elif was_primary:  # the primary lowered its id: no primary now
                self._primary = None
                self._notify_all()
                self.on_change(None)
            else:
                self._notify(conn)

    def remove(self, conn: Connection) -> None:
        """A stream closed; without its primary the device has none until
        a controller arbitrates with an id at least the highest seen."""
        with self.lock:
            if conn not in self.connections:
                return
            self.connections.remove(conn)
            if conn is self._primary:
                self._primary = None
                self._notify_all()
                self.on_change(None)

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
        p = self._primary
        msg = p4r.StreamMessageResponse()
        arb = msg.arbitration
        arb.device_id = self.device_id
        if conn.role:
            arb.role.name = conn.role
        if self.highest is not None:
            to_u128(self.highest, arb.election_id)
        if conn is p:
            arb.status.code = rpc_code.Code.OK
            arb.status.message = "Is primary"
        elif p is not None:
            arb.status.code = rpc_code.Code.ALREADY_EXISTS
            arb.status.message = "Is backup"
        else:
            arb.status.code = rpc_code.Code.NOT_FOUND
            arb.status.message = "Is backup; there is no primary"
        return msg

    def _notify(self, conn: Connection) -> None:
        conn.send(self._advisory(conn))

    def _notify_all(self) -> None:
        """Backups first, then the primary (spec: the new primary last)."""
        for c in self.connections:
            if c is not self._primary:
                self._notify(c)
        if self._primary is not None:
            self._notify(self._primary)
