"""Digests: DigestEntry configuration and DigestList streaming.

Follows the spec's pseudo-code ("DigestEntry"): digest messages from the
engine are buffered per digest until `max_list_size` distinct messages are
waiting or `max_timeout_ns` has passed since the first one; a message that
is already buffered, or was sent and is neither acknowledged nor older than
`ack_timeout_ns`, is dropped (with `ack_timeout_ns` = 0 nothing is cached).
Learning is off for a digest until the client INSERTs its DigestEntry.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from finsy.proto import p4r

from .codec import from_uint
from .errors import exists, invalid, not_found

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline

log = logging.getLogger("p4scope.switch")
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass(slots=True)
class DigestState:
    max_timeout_ns: int
    max_list_size: int
    ack_timeout_ns: int
    buffer: list[tuple[bytes, ...]] = field(default_factory=list)
    buffered: set = field(default_factory=set)
    first_ns: int = 0
    next_list_id: int = 1
    cache: dict[int, tuple[int, list]] = field(default_factory=dict)
    """list id -> (sent at, samples) while unacknowledged."""
    cached: set = field(default_factory=set)


class DigestManager:
    def __init__(self, pipe: "ForwardingPipeline", send: Optional[Callable] = None):
        self.pipe = pipe
        self.schema = pipe.schema
        self.tr = pipe.tr
        self.send: Callable[[p4r.StreamMessageResponse], None] = send or (lambda msg: None)
        self.states: dict[int, DigestState] = {}
        self.dropped = 0

    # ----- configuration --------------------------------------------------

    def write(self, utype: int, de, where: str = "digest_entry") -> None:
        info = self.schema.digests.get(de.digest_id)
        if info is None:
            raise invalid(f"{where}.digest_id: {de.digest_id} is not a digest of the P4Info")
        cur = self.states.get(info.id)
        if utype == DELETE:
            if cur is None:
                raise not_found(f"{where}: digest '{info.name}' is not configured")
            del self.states[info.id]
            return
        if utype not in (INSERT, MODIFY):
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")
        c = de.config
        for f in ("max_timeout_ns", "max_list_size", "ack_timeout_ns"):
            if getattr(c, f) < 0:
                raise invalid(f"{where}.config.{f}: {getattr(c, f)} is negative")
        if utype == INSERT:
            if cur is not None:
                raise exists(f"{where}: digest '{info.name}' is already configured (use MODIFY)")
            self.states[info.id] = DigestState(c.max_timeout_ns, c.max_list_size, c.ack_timeout_ns)
            return
        if cur is None:
            raise not_found(f"{where}: digest '{info.name}' is not configured (INSERT it first)")
        cur.max_timeout_ns = c.max_timeout_ns
        cur.max_list_size = c.max_list_size
        cur.ack_timeout_ns = c.ack_timeout_ns
        if not cur.ack_timeout_ns:
            cur.cache.clear()
            cur.cached.clear()

    def read(self, de, out, where: str = "digest_entry") -> None:
        if de.digest_id == 0:
            ids = sorted(self.states)
        else:
            if self.schema.digests.get(de.digest_id) is None:
                raise invalid(f"{where}.digest_id: {de.digest_id} is not a digest of the P4Info")
            if de.digest_id not in self.states:
                raise not_found(f"{where}: digest {de.digest_id} is not configured")
            ids = [de.digest_id]
        for did in ids:
            s = self.states[did]
            msg = out.add().digest_entry
            msg.digest_id = did
            msg.config.max_timeout_ns = s.max_timeout_ns
            msg.config.max_list_size = s.max_list_size
            msg.config.ack_timeout_ns = s.ack_timeout_ns

    # ----- data --------------------------------------------------------------

    def on_digest(self, learn_list: str, values: list[bytes], now_ns: int) -> None:
        """A digest message from the engine (field values as bytes)."""
        did = self.tr.digest_by_learn_list.get(learn_list)
        if did is None:
            return
        s = self.states.get(did)
        if s is None:
            return
        sample = tuple(bytes(v) for v in values)
        if sample in s.buffered or sample in s.cached:
            return
        if not s.buffer:
            s.first_ns = now_ns
        s.buffer.append(sample)
        s.buffered.add(sample)
        if s.max_timeout_ns == 0 or (s.max_list_size and len(s.buffer) >= s.max_list_size):
            self._flush(did, s, now_ns)

    def ack(self, digest_id: int, list_id: int) -> None:
        s = self.states.get(digest_id)
        if s is None:
            return
        ent = s.cache.pop(list_id, None)
        if ent is not None:
            s.cached.difference_update(ent[1])

    def tick(self, now_ns: int) -> None:
        """Sends buffers whose timeout passed and forgets expired cache lists."""
        for did, s in list(self.states.items()):
            if s.buffer and now_ns - s.first_ns >= s.max_timeout_ns:
                self._flush(did, s, now_ns)
            if s.cache and s.ack_timeout_ns:
                for lid, (sent, samples) in list(s.cache.items()):
                    if now_ns - sent >= s.ack_timeout_ns:
                        del s.cache[lid]
                        s.cached.difference_update(samples)

    def next_deadline(self, now_ns: int) -> Optional[int]:
        """Nanoseconds until `tick` has something to do, or None."""
        best = None
        for s in self.states.values():
            if s.buffer:
                d = s.first_ns + s.max_timeout_ns - now_ns
                best = d if best is None else min(best, d)
            if s.cache and s.ack_timeout_ns:
                d = min(t for t, _ in s.cache.values()) + s.ack_timeout_ns - now_ns
                best = d if best is None else min(best, d)
        return None if best is None else max(best, 0)

    def _flush(self, did: int, s: DigestState, now_ns: int) -> None:
        info = self.schema.digests.by_id[did]
        resp = p4r.StreamMessageResponse()
        dl = resp.digest
        dl.digest_id = did
        dl.list_id = s.next_list_id
        s.next_list_id += 1
        for sample in s.buffer:
            self._to_p4data(info, sample, dl.data.add())
        dl.timestamp = time.time_ns()
        if s.ack_timeout_ns:
            s.cache[dl.list_id] = (now_ns, list(s.buffer))
            s.cached.update(s.buffer)
        s.buffer = []
        s.buffered = set()
        self.send(resp)

    @staticmethod
    def _to_p4data(info, sample: tuple[bytes, ...], out) -> None:
        vals = [from_uint(int.from_bytes(v, "big") & ((1 << w) - 1))
                for v, w in zip(sample, info.widths)]
        if info.kind == "bitstring":
            out.bitstring = vals[0] if vals else b"\x00"
        elif info.kind == "tuple":
            for v in vals:
                out.tuple.members.add().bitstring = v
        else:
            for v in vals:
                out.struct.members.add().bitstring = v
