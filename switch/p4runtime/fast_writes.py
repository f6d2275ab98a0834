"""The common table-entry update of a Write, applied in one step.

Most updates of a large Write are well-formed INSERTs, MODIFYs and DELETEs
of plain entries of direct tables. `FastWrites.write` applies such an
update, or returns False having changed nothing, and the caller sends the
update down the full path (TableManager.write), which checks everything
and words the error. An update taken here ends as the full path would end
it: the same shadow entry, engine call and handle. What it leaves to the
full path: const tables and entries, tables without a key or implemented
by an action profile, keys or actions its table's TableCodec does not
decode, default entries, direct counter or meter data, idle timeouts,
MODIFYs of tables with a direct meter (a MODIFY resets it), and anything
the full path would refuse (a duplicate INSERT, a missing entry, a full
table, a bad priority).

Where the caller has the Write's bytes (the gRPC server), `decode` reads
its common updates with the engine's WriteCodec (dataplane/src/p4rt_wire.rs,
the same checks as TableCodec's) and `write_decoded` applies them; an update
it does not read goes by its message, as above.

INSERTs in a row into one table reach the engine in one call
(table_add_many) at `flush`, which the caller runs before any update it
sends down the full path and at the end of the Write; every other engine
call here flushes first. Their shadow entries are in place meanwhile (the
handle set at the flush), so the next INSERTs see them, as one Write per
update would. An entry the engine refuses (a full table) fails its own
update only: its shadow entry goes, its error takes the update's place.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional

from finsy.proto import p4r

from ..engine import write_codec
from .errors import P4RuntimeError, internal
from .tables import DELETE, INSERT, INT_MAX, MODIFY, Entry, TableState

if TYPE_CHECKING:
    from .tables import TableManager

log = logging.getLogger("p4scope.switch")

UNSET_HANDLE = -1
"""The handle of an entry whose INSERT waits for the flush."""

_FIELDS = p4r.TableEntry.DESCRIPTOR.fields_by_name
PLAIN_FIELDS = {_FIELDS[name]: slot for slot, name in enumerate(
    ("table_id", "match", "action", "priority", "controller_metadata", "metadata"))}
"""The TableEntry fields a common update sets -> their place in `parts`
(FastWrites.write: [table_id, match, action, priority, controller_metadata, metadata])."""


def _plain(st: TableState) -> bool:
    """Whether the table's entries can take the fast path at all."""
    info = st.map.info
    return bool(info.fields) and not info.is_const and not info.implementation_id


class FastWrites:
    """The fast path of one pipeline's table writes (see the module's docstring).

    `errors` (given to write and flush): update index -> its error, where
    the updates the engine refuses at a flush are put."""

    __slots__ = ("_manager", "_states", "_limits", "_table", "_adds", "_added", "_wire_codec")

    def __init__(self, manager: "TableManager"):
        self._manager = manager
        """(its engine is looked up per call: tests wrap it after set-up)"""
        self._states: dict[int, TableState] = {
            tid: st for tid, st in manager.tables.items() if _plain(st)}
        self._limits: dict[int, int] = {
            tid: st.map.json.max_size or st.map.info.size for tid, st in self._states.items()}
        """table id -> the most entries it takes (0: no limit), as TableManager._insert."""
        self._table: Optional[TableState] = None
        """The table of the INSERTs waiting for the flush."""
        # (what waits holds no list or Entry: the garbage collector drops
        # such tuples from its lists at its first look, rather than moving
        # them to the older generations the whole table's entries are in)
        self._adds: list[tuple] = []
        """Their engine entries: (action, key items as a tuple, args, engine priority)."""
        self._added: list[tuple[int, tuple]] = []
        """Their (update index, shadow key)."""
        specs = {tid: st.codec.wire_spec for tid, st in self._states.items()
                 if st.codec.wire_spec is not None}
        self._wire_codec = write_codec(specs) if specs else None

    def write(self, index: int, utype: int, te, errors: dict[int, P4RuntimeError]) -> bool:
        """Applies `te` (a TableEntry, update `index` of the Write) if it is a
        common update; False: nothing changed."""
        # the fields set, at once (a field read at a time costs more); any
        # other field (default entry, is_const, idle timeout, direct
        # resources) is the full path's
        parts: list = [0, None, None, 0, 0, b""]
        for field, value in te.ListFields():
            slot = PLAIN_FIELDS.get(field)
            if slot is None:
                return False
            parts[slot] = value
        st = self._states.get(parts[0])
        if st is None:
            return False
        match, action = parts[1], parts[2]
        if match is None:
            return False
        codec = st.codec
        decoded = codec.key(match)
        if decoded is None:
            return False
        # (a DELETE names its entry by key alone: its action is not read)
        spec = None if utype == DELETE or action is None else codec.table_action(action)
        return self._apply(index, utype, st, decoded[0], decoded[1], spec, parts[3], parts[4],
                           parts[5], errors)

    def write_decoded(self, index: int, update: tuple, errors: dict[int, P4RuntimeError]) -> bool:
        """As `write`, of an update `WriteCodec.decode` read from the Write's
        bytes: (type, table id, key, engine key, spec or None, priority,
        controller_metadata, metadata)."""
        utype, tid, key, engine_key, spec, p, controller_metadata, metadata = update
        st = self._states.get(tid)
        if st is None:
            return False
        if spec is not None:
            spec = st.codec.share(spec)
        return self._apply(index, utype, st, key, engine_key, spec, p, controller_metadata,
                           metadata, errors)

    def _apply(self, index: int, utype: int, st: TableState, key: tuple, engine_key,
               spec: Optional[tuple], p: int, controller_metadata: int, metadata: bytes,
               errors: dict) -> bool:
        """An update with a well-formed key (`spec`: its ActionSpec, or None
        where its action is absent or not the fast path's)."""
        if utype == DELETE:
            return self._delete(st, key, p, errors)
        if spec is None:
            return False
        if utype == INSERT:
            return self._insert(index, st, key, engine_key, spec, p, controller_metadata,
                                metadata, errors)
        if utype == MODIFY:
            return self._modify(st, key, spec, p, controller_metadata, metadata, errors)
        return False

    def decode(self, wire: bytes) -> Optional[list]:
        """Per update of a serialized WriteRequest, the tuple `write_decoded`
        takes or None (WriteCodec.decode); None: none read (no table the
        codec reads, or bytes it does not)."""
        codec = self._wire_codec
        return None if codec is None else codec.decode(wire)

    def _insert(self, index: int, st: TableState, key: tuple, engine_key, spec: tuple, p: int,
                controller_metadata: int, metadata: bytes, errors: dict) -> bool:
        tm = st.map
        if tm.info.needs_priority:
            if p <= 0:
                return False
            skey = key + (p,)
            engine_priority = INT_MAX - p
        else:
            if p:
                return False
            skey = key
            engine_priority = 0
        entries = st.entries
        if skey in entries:
            return False
        limit = self._limits[tm.info.id]
        if limit and len(entries) >= limit:
            return False
        if st is not self._table:
            self.flush(errors)
            self._table = st
        # positional: a dataclass's keyword arguments cost twice as much, per entry
        e = Entry(key, p, UNSET_HANDLE, spec, 0, 0, None, metadata, controller_metadata, 0)
        self._adds.append((tm.actions[spec[0]], tuple(engine_key), spec[1], engine_priority))
        self._added.append((index, skey))
        entries[skey] = e
        return True

    def flush(self, errors: dict[int, P4RuntimeError]) -> None:
        """Adds the waiting INSERTs' entries to the engine."""
        st = self._table
        if st is None:
            return
        adds, added = self._adds, self._added
        self._table, self._adds, self._added = None, [], []
        try:
            got = self._manager.engine.table_add_many(st.map.name, adds)
        except P4RuntimeError as e:  # (the engine added none of them)
            got = [e] * len(adds)
        except Exception as e:  # a bug must not take the server down
            log.exception("internal error in updates %d..%d", added[0][0], added[-1][0])
            got = [internal(f"updates[{index}]: internal error: {e!r}") for index, _ in added]
        entries = st.entries
        for (index, skey), handle in zip(added, got):
            if type(handle) is int:
                entries[skey].handle = handle
            else:
                del entries[skey]
                errors[index] = handle

    def _existing(self, st: TableState, key: tuple, p: int) -> Optional[tuple[tuple, Entry]]:
        """The shadow key of a well-formed key and priority and its non-const
        entry, or None."""
        if st.map.info.needs_priority:
            if p <= 0:
                return None
            skey = key + (p,)
        else:
            if p:
                return None
            skey = key
        e = st.entries.get(skey)
        if e is None or e.is_const:
            return None
        return skey, e

    def _modify(self, st: TableState, key: tuple, spec: tuple, p: int, controller_metadata: int,
                metadata: bytes, errors: dict) -> bool:
        tm = st.map
        if tm.info.direct_meter_id:
            return False
        found = self._existing(st, key, p)
        if found is None:
            return False
        self.flush(errors)
        e = found[1]
        if e.handle == UNSET_HANDLE:  # refused at the flush: the full path says so
            return False
        self._manager.engine.table_modify(tm.name, e.handle, tm.actions[spec[0]], spec[1])
        e.action = spec
        e.controller_metadata = controller_metadata
        e.metadata = metadata
        e.idle_timeout_ns = 0
        return True

    def _delete(self, st: TableState, key: tuple, p: int, errors: dict) -> bool:
        found = self._existing(st, key, p)
        if found is None:
            return False
        self.flush(errors)
        skey, e = found
        if e.handle == UNSET_HANDLE:  # refused at the flush: the full path says so
            return False
        self._manager.engine.table_delete(st.map.name, e.handle)
        del st.entries[skey]
        return True
