"""P4Info ids and aliases, assigned the way p4c assigns them.

p4c (control-plane/p4RuntimeSymbolTable.cpp) gives every P4Runtime object an
id of the form ``prefix << 24 | hash24`` where the prefix says what kind of
object it is (P4Ids.Prefix in p4info.proto) and hash24 is the low 24 bits of
the Jenkins one-at-a-time hash of the object's control-plane name.  To get
byte-identical P4Info we follow its rules exactly:

* The hashed name is the control-plane name: the fully qualified name
  (``ingress.ipv4_lpm``) or the @name annotation, without one leading dot.
* Symbols are collected first, then ids are computed.  An @id annotation is
  honoured as given when it is collected; its prefix is added when the top
  byte is 0, and a different non-zero top byte is an error.  Two objects with
  the same explicit id are an error (the second loses its @id).
* For the remaining objects of each kind, in byte order of their names, the
  hash is tried, then hash+1, hash+2, ... until an id nobody holds is found.
  The sort makes the outcome independent of declaration order.
* Adding the same (kind, name) twice is not an error; the first wins.

Aliases (``preamble.alias``) are the shortest dot-separated suffix of the
name that no other symbol, of any kind, shares.

    ids = IdAllocator()
    ids.add(IdPrefix.TABLE, "ingress.t")
    ids.add(IdPrefix.ACTION, "NoAction")
    table = ids.assign()[(IdPrefix.TABLE, "ingress.t")]
"""

from __future__ import annotations

from collections import Counter
from enum import IntEnum
from typing import Any

from .diagnostics import Diagnostics, ErrorKind, Pos


class IdPrefix(IntEnum):
    """Top byte of a P4Info id (p4.config.v1.P4Ids.Prefix)."""

    ACTION = 0x01
    TABLE = 0x02
    VALUE_SET = 0x03
    CONTROLLER_HEADER = 0x04
    ACTION_PROFILE = 0x11
    COUNTER = 0x12
    DIRECT_COUNTER = 0x13
    METER = 0x14
    DIRECT_METER = 0x15
    REGISTER = 0x16
    DIGEST = 0x17


_ID_SPACE = 1 << 24


def jenkins_one_at_a_time(data: bytes | str) -> int:
    """Bob Jenkins' one-at-a-time hash, 32 bits (over UTF-8 bytes)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    h = 0
    for byte in data:
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def control_plane_name(name: str) -> str:
    """The name P4Info shows and hashes: one leading dot removed."""
    return name[1:] if name.startswith(".") else name


def hashed_id(kind: int, name: str) -> int:
    """The id `name` gets when nothing collides with it."""
    return (int(kind) << 24) | (jenkins_one_at_a_time(control_plane_name(name)) & 0xFFFFFF)


class IdAllocator:
    """Collects P4Runtime symbols, then assigns all ids at once.

    Errors about @id annotations (wrong prefix, not an unsigned 32-bit value,
    the same id twice) are reported to `diags` when given, at the `pos` passed
    to `add`, and are always listed in `errors`.
    """

    def __init__(self, diags: Diagnostics | None = None) -> None:
        self.diags = diags
        self.errors: list[tuple[Pos | None, str]] = []
        self._symbols: dict[IdPrefix, dict[str, int | None]] = {}
        self._taken: set[int] = set()
        self._assigned: dict[tuple[IdPrefix, str], int] | None = None

    def add(self, kind: int, name: str, explicit_id: int | None = None,
            pos: Pos | None = None) -> None:
        """Register a symbol; `explicit_id` is the value of its @id, if any."""
        if self._assigned is not None:
            raise RuntimeError("IdAllocator: add() after assign()")
        kind = IdPrefix(kind)
        name = control_plane_name(name)
        table = self._symbols.setdefault(kind, {})
        if name in table:
            return
        table[name] = self._claim(kind, name, explicit_id, pos)

    def _claim(self, kind: IdPrefix, name: str, explicit_id: Any,
               pos: Pos | None) -> int | None:
        if explicit_id is None:
            return None
        if not isinstance(explicit_id, int) or not 0 <= explicit_id <= 0xFFFFFFFF:
            self._error(pos, f"{name}: @id should be an unsigned integer")
            return None
        top = explicit_id >> 24
        if top not in (0, kind):
            self._error(pos, f"{name}: @id has the wrong 8-bit prefix "
                             f"(0x{top:02x}; expected 0x{int(kind):02x})")
            return None
        full = explicit_id | (int(kind) << 24)
        if full in self._taken:
            self._error(pos, f"@id {full} is assigned to multiple declarations")
            return None
        self._taken.add(full)
        return full

    def _error(self, pos: Pos | None, message: str) -> None:
        self.errors.append((pos, message))
        if self.diags is not None:
            self.diags.error(ErrorKind.INVALID, pos, message)

    def assign(self) -> dict[tuple[IdPrefix, str], int]:
        """Ids for every symbol added, keyed by (kind, control-plane name)."""
        if self._assigned is not None:
            return dict(self._assigned)
        result: dict[tuple[IdPrefix, str], int] = {}
        for kind in sorted(self._symbols):
            table = self._symbols[kind]
            for name, fixed in table.items():
                if fixed is not None:
                    result[(kind, name)] = fixed
            pending = sorted((n for n, i in table.items() if i is None),
                             key=lambda n: n.encode("utf-8"))
            for name in pending:
                result[(kind, name)] = self._probe(kind, name)
        self._assigned = result
        return dict(result)

    def _probe(self, kind: IdPrefix, name: str) -> int:
        start = jenkins_one_at_a_time(name)
        prefix = int(kind) << 24
        for step in range(_ID_SPACE):
            candidate = prefix | ((start + step) & 0xFFFFFF)
            if candidate not in self._taken:
                self._taken.add(candidate)
                return candidate
        raise OverflowError(f"no P4Runtime id left for {name}")

    def get(self, kind: int, name: str) -> int:
        """The id of one symbol (after `assign`)."""
        if self._assigned is None:
            self.assign()
        assert self._assigned is not None
        return self._assigned[(IdPrefix(kind), control_plane_name(name))]

    def names(self) -> list[str]:
        """Every distinct name added, of any kind."""
        seen: dict[str, None] = {}
        for table in self._symbols.values():
            seen.update(dict.fromkeys(table))
        return list(seen)

    def alias(self, name: str) -> str:
        """The shortest unique suffix of `name` among all names added."""
        return shortest_unique_suffixes(self.names())[control_plane_name(name)]


def shortest_unique_suffixes(names) -> dict[str, str]:
    """Map each name to its shortest suffix of whole dot-separated parts that
    no other name ends with; a name that is itself a suffix of another keeps
    all its parts ("t" next to "c.t" stays "t", "c.t" becomes "c.t")."""
    distinct = list(dict.fromkeys(names))
    parts = {n: n.split(".") for n in distinct}
    counts: Counter[tuple[str, ...]] = Counter()
    for p in parts.values():
        for k in range(1, len(p) + 1):
            counts[tuple(p[-k:])] += 1
    result = {}
    for n, p in parts.items():
        k = 1
        while k < len(p) and counts[tuple(p[-k:])] >= 2:
            k += 1
        result[n] = ".".join(p[-k:])
    return result
