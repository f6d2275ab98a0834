"""P4Runtime reads: an id of 0 in a read request is a wildcard."""

from __future__ import annotations

from typing import Iterator, Mapping, TypeVar

T = TypeVar("T")


def selected(items: Mapping[int, T], wanted: int) -> Iterator[tuple[int, T]]:
    """(id, item) pairs a read of id `wanted` selects: all of `items` in id
    order for 0, else the one item, or nothing when there is no such id."""
    for i in [wanted] if wanted else sorted(items):
        item = items.get(i)
        if item is not None:
            yield i, item
