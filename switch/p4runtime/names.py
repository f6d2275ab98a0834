"""Name lookup with the forgiveness a person typing at a prompt expects.

P4Info names are fully qualified (``DutIngress.telemetry.tel_port``,
``hdr.ethernet.dst_addr``); people write ``tel_port`` or
``ethernet.dst_addr``. `NameIndex.find` accepts, in this order:

1. the full name or an alias (P4Info ``alias``) exactly;
2. a unique dotted suffix (``tel_port``, ``telemetry.tel_port``);

and otherwise raises `UnknownName`, whose message says what was asked
for, what kind of thing, where it looked, and the closest names: the
candidates of an ambiguous suffix, else near misses by edit distance
("no table named 'ipv4' in the P4Info; did you mean 'MyIngress.ipv4_lpm'?",
as finsy's P4EntityMap does).

`EntityMap` adds P4Info ids: `get(key)` and `find(key)` take an id or a
name. The P4Runtime server (ids in requests) and the controller (names
typed by people) share these, through schema.py.
"""

from __future__ import annotations

import difflib
from typing import Generic, Iterable, Iterator, Optional, TypeVar, Union

T = TypeVar("T")


class UnknownName(LookupError):
    """A name (or id) that the P4Info does not define (or defines more than once)."""

    def __init__(self, message: str, *, name: str = "", kind: str = "",
                 suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.name = name
        self.kind = kind
        self.suggestions = suggestions

    def __str__(self) -> str:  # LookupError would quote the message
        return self.args[0]


def _suffixes(name: str) -> Iterator[str]:
    parts = name.split(".")
    for i in range(1, len(parts)):
        yield ".".join(parts[i:])


class NameIndex(Generic[T]):
    """Items of one kind (tables, actions, match fields...) by name."""

    def __init__(self, kind: str, where: str = "the P4Info"):
        self.kind = kind
        self.where = where
        self._full: dict[str, T] = {}
        self._names: dict[str, str] = {}   # name or alias -> full name
        self._suffix: dict[str, set[str]] = {}

    def add(self, name: str, item: T, aliases: Iterable[str] = ()) -> None:
        self._full[name] = item
        for n in (name, *aliases):
            if n:
                self._names.setdefault(n, name)
                for s in _suffixes(n):
                    self._suffix.setdefault(s, set()).add(name)

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def __iter__(self) -> Iterator[T]:
        return iter(self._full.values())

    def __len__(self) -> int:
        return len(self._full)

    def names(self) -> list[str]:
        return list(self._full)

    def get(self, name: str) -> Optional[T]:
        full = self._names.get(name)
        if full is not None:
            return self._full[full]
        cands = self._suffix.get(name, ())
        if len(cands) == 1:
            return self._full[next(iter(cands))]
        return None

    def find(self, name: str) -> T:
        item = self.get(name)
        if item is not None:
            return item
        raise self.error(name)

    def error(self, name: str) -> UnknownName:
        cands = sorted(self._suffix.get(name, ()))
        if len(cands) > 1:
            listed = ", ".join(f"'{c}'" for c in cands)
            return UnknownName(f"{self.kind} name '{name}' is ambiguous in {self.where}: it "
                               f"could be {listed}; write more of the name",
                               name=name, kind=self.kind, suggestions=tuple(cands))
        if not self._full:
            return UnknownName(f"no {self.kind} named '{name}': {self.where} has no "
                               f"{self.kind}s", name=name, kind=self.kind)
        sugg = self._near(name)
        msg = f"no {self.kind} named '{name}' in {self.where}"
        if sugg:
            msg += "; did you mean " + " or ".join(f"'{s}'" for s in sugg) + "?"
        else:
            shown = sorted(self._full)[:8]
            msg += " (it has " + ", ".join(f"'{s}'" for s in shown)
            msg += ", ...)" if len(self._full) > 8 else ")"
        return UnknownName(msg, name=name, kind=self.kind, suggestions=tuple(sugg))

    def _near(self, name: str) -> list[str]:
        # names ending with what was typed or whose last component starts
        # with it, then close spellings of the full name or its last part
        ends = sorted(n for n in self._full
                      if n.endswith(name) or n.split(".")[-1].startswith(name))
        if ends and len(ends) <= 3:
            return ends
        keys: dict[str, str] = {}
        for n in self._full:
            keys.setdefault(n, n)
            keys.setdefault(n.split(".")[-1], n)
        close = difflib.get_close_matches(name, list(keys), n=3, cutoff=0.6)
        out: list[str] = []
        for c in close:
            if keys[c] not in out:
                out.append(keys[c])
        return out


class EntityMap(NameIndex[T]):
    """P4 objects of one kind by P4Info id as well as by name and alias."""

    def __init__(self, kind: str, where: str = "the P4Info"):
        super().__init__(kind, where)
        self.by_id: dict[int, T] = {}

    def put(self, id_: int, name: str, alias: str, item: T) -> None:
        self.by_id[id_] = item
        self.add(name, item, (alias,))

    def get(self, key: Union[int, str]) -> Optional[T]:  # type: ignore[override]
        """The object with this id (an int) or name (full, alias or unique suffix)."""
        if isinstance(key, int):
            return self.by_id.get(key)
        return super().get(key)

    def find(self, key: Union[int, str]) -> T:  # type: ignore[override]
        """Like `get`, but an unknown key raises `UnknownName` with suggestions."""
        item = self.get(key)
        if item is not None:
            return item
        if isinstance(key, int):
            raise UnknownName(f"no {self.kind} with id {key:#x} in {self.where}",
                              name=str(key), kind=self.kind)
        raise self.error(key)

    def __contains__(self, key: Union[int, str]) -> bool:  # type: ignore[override]
        return self.get(key) is not None

    def __iter__(self) -> Iterator[T]:
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)
