"""Per-table decoders of the common write: a well-formed key and action.

`TableCodec(table_map, schema)` is built once per table. `key(matches)`
gives the canonical key (match.check_key's) and the engine's key items
(match.engine_key's) of a match list that gives every field once, in P4Info
order, with values that pass every check; `action(msg)` the checked
ActionSpec (actions.check_action's) of an action of the table whose
parameters come in P4Info order (`table_action(msg)`: the same of a
TableAction, looked up by its serialization among those seen before).
Anything else returns None and the caller
runs the full checks, which find what is wrong and say so: a request is
refused with the same status and message whichever way it goes, and an
accepted one gives the same key, action and engine call.
"""

from __future__ import annotations

from typing import Callable, Optional

from .actions import DEFAULT_ONLY
from .codec import fixed
from .schema import P4Schema

_from_bytes = int.from_bytes

SHARED_SPECS = 4096
"""ActionSpecs kept for sharing per table (the cache starts over when full)."""

WIRE_MAX_WIDTH = 128
"""The widest match field or action parameter WriteCodec reads."""

KNOWN_ACTIONS = 4096
"""Serialized TableActions kept per table with their ActionSpecs (the cache
starts over when full)."""


# Each decoder: FieldMatch -> (canonical key item, engine key item) or None.
# A value of the field's byte size is the engine's bytes as it came.

def _exact(w: int, n: int) -> Callable:
    def dec(fm):
        b = fm.exact.value  # b"" unless the field is matched exact
        if not b:
            return None
        v = _from_bytes(b, "big")
        if v >> w:
            return None
        return v, ("exact", b if len(b) == n else v.to_bytes(n, "big"))
    return dec


def _lpm(w: int, n: int) -> Callable:
    def dec(fm):
        m = fm.lpm
        b = m.value
        if not b:
            return None
        plen = m.prefix_len
        v = _from_bytes(b, "big")
        if v >> w or not 0 < plen <= w or v & ((1 << (w - plen)) - 1):
            return None
        return (v, plen), ("lpm", b if len(b) == n else v.to_bytes(n, "big"), plen)
    return dec


def _ternary(w: int, n: int) -> Callable:
    def dec(fm):
        m = fm.ternary
        b, bm = m.value, m.mask
        if not b or not bm:
            return None
        v, mask = _from_bytes(b, "big"), _from_bytes(bm, "big")
        if v >> w or mask >> w or not mask or v & ~mask:
            return None
        return (v, mask), ("ternary", b if len(b) == n else v.to_bytes(n, "big"),
                           bm if len(bm) == n else mask.to_bytes(n, "big"))
    return dec


def _range(w: int, n: int) -> Callable:
    full = (1 << w) - 1

    def dec(fm):
        m = fm.range
        bl, bh = m.low, m.high
        if not bl or not bh:
            return None
        lo, hi = _from_bytes(bl, "big"), _from_bytes(bh, "big")
        if hi >> w or lo > hi or (lo == 0 and hi == full):
            return None
        return (lo, hi), ("range", bl if len(bl) == n else lo.to_bytes(n, "big"),
                          bh if len(bh) == n else hi.to_bytes(n, "big"))
    return dec


def _optional(w: int, n: int) -> Callable:
    full = (1 << w) - 1
    ones = fixed(full, w)

    def dec(fm):
        b = fm.optional.value
        if not b:
            return None
        v = _from_bytes(b, "big")
        if v >> w:
            return None
        return (v, full), ("ternary", b if len(b) == n else v.to_bytes(n, "big"), ones)
    return dec


_DECODERS = {"exact": _exact, "lpm": _lpm, "ternary": _ternary, "range": _range,
             "optional": _optional}


def _one_field_key(fid: int, dec: Callable) -> Callable:
    """TableCodec.key of a table with one match field (most tables): no loop."""
    def key(matches):
        if len(matches) != 1:
            return None
        fm = matches[0]
        if fm.field_id != fid:
            return None
        got = dec(fm)
        if got is None:
            return None
        return (got[0],), [got[1]]
    return key


def _undecoded(matches) -> None:
    """TableCodec.key of a table whose keys only the full checks take."""
    return None


class TableCodec:
    """The fast decoders of one table (see the module's docstring)."""

    __slots__ = ("key", "wire_spec", "_fields", "_n", "_actions", "_specs", "_known")

    def __init__(self, tmap, schema: P4Schema):
        info = tmap.info
        # only fields as wide in the device as in the P4Info (no
        # @p4runtime_translation) can skip engine_key's width checks
        usable = all(f.bitwidth > 0 and f.match_type in _DECODERS and dw == f.bitwidth
                     for f, dw in zip(info.fields, tmap.key_widths))
        self._fields = tuple((i, f.id, _DECODERS[f.match_type](f.bitwidth, (f.bitwidth + 7) // 8))
                             for i, f in enumerate(info.fields)) if usable else None
        self._n = len(info.fields)
        self.key: Callable[..., Optional[tuple[tuple, list]]] = (
            _undecoded if self._fields is None
            else _one_field_key(*self._fields[0][1:]) if self._n == 1
            else self._key_fields)
        """(canonical key, engine key items) of a repeated FieldMatch, or None:
        run the full checks."""
        self._actions: dict[int, tuple[tuple[int, int, int], ...]] = {}
        """action id -> (position, param id, bitwidth) in P4Info order, for
        the table's entry actions."""
        for aid, scope in info.action_scopes.items():
            a = schema.actions.get(aid)
            if a is not None and scope != DEFAULT_ONLY:
                self._actions[aid] = tuple((i, p.id, p.bitwidth) for i, p in enumerate(a.params))
        self._specs: dict[tuple, tuple] = {}
        """ActionSpecs given so far, so that entries with the same action share
        one (a large table's entries mostly do: 100 bytes each saved)."""
        self._known: dict[bytes, tuple] = {}
        """Serialized TableAction -> its ActionSpec (table_action)."""
        widths = [f.bitwidth for f in info.fields] + [
            w for params in self._actions.values() for _, _, w in params]
        self.wire_spec: Optional[tuple[list, list]] = (
            ([(f.id, f.match_type, f.bitwidth) for f in info.fields],
             [(aid, [(pid, w) for _, pid, w in params])
              for aid, params in self._actions.items()])
            if usable and max(widths, default=0) <= WIRE_MAX_WIDTH else None)
        """The same checks for p4scope_dataplane.WriteCodec, which reads the
        common updates from a Write's bytes: (match fields [(id, kind,
        width)], entry actions [(id, [(param id, width)])]); None where it
        leaves the table to `key` and `action` (a field or parameter wider
        than it takes, or keys only the full checks take)."""

    def _key_fields(self, matches) -> Optional[tuple[tuple, list]]:
        """`key` of a table with several match fields."""
        fields = self._fields
        if len(matches) != self._n:
            return None
        key = []
        ek = []
        for i, fid, dec in fields:
            fm = matches[i]  # (indexing a small repeated field beats iterating it)
            if fm.field_id != fid:
                return None
            got = dec(fm)
            if got is None:
                return None
            key.append(got[0])
            ek.append(got[1])
        return tuple(key), ek

    def action(self, action) -> Optional[tuple]:
        """The ActionSpec of an entry's action (not a default action's), or None."""
        aid = action.action_id
        params = self._actions.get(aid)
        if params is None:
            return None
        given = action.params
        if len(given) != len(params):
            return None
        args = []
        for i, pid, w in params:
            p = given[i]
            if p.param_id != pid:
                return None
            b = p.value
            if not b:
                return None
            v = _from_bytes(b, "big")
            if v >> w:
                return None
            args.append(v)
        return self.share((aid, tuple(args)))

    def share(self, spec: tuple) -> tuple:
        """The ActionSpec equal to `spec` given before, else `spec` (kept)."""
        specs = self._specs
        kept = specs.get(spec)
        if kept is None:
            if len(specs) >= SHARED_SPECS:
                specs.clear()
            kept = specs[spec] = spec
        return kept

    def table_action(self, table_action) -> Optional[tuple]:
        """The ActionSpec of a TableAction that holds an entry's action, or None.

        A table's entries mostly repeat a few actions: a serialization (one
        call) found among those seen before spares reading each field."""
        wire = table_action.SerializeToString()
        known = self._known
        spec = known.get(wire)
        if spec is None:
            if table_action.WhichOneof("type") != "action":
                return None
            spec = self.action(table_action.action)
            if spec is None:
                return None
            if len(known) >= KNOWN_ACTIONS:
                known.clear()
            known[wire] = spec
        return spec
