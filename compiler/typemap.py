"""The types the checker computed, keyed by a node identity that survives
rewrites.

A pass that rewrites the tree builds new nodes with `dataclasses.replace`
(the nodes are frozen).  Keying types by `id(node)` loses them at the first
rewrite, and a freed node's id can be reused by an unrelated one.  Every
`ast.Node` carries a `nid` number given when the parser built it, and
`dataclasses.replace` copies it, so the rewritten node keeps its type here.
A pass that changes what an expression means (not just its shape) records
the new type with `set`.  This is the role of p4c's TypeMap, which keys by
node and re-runs type inference after rewriting passes instead.
"""

from __future__ import annotations

from typing import Iterator, Optional

from . import ast
from . import types


class TypeMap:
    """Node -> semantic type, by the node's stable `nid`."""

    __slots__ = ("_types",)

    def __init__(self) -> None:
        self._types: dict[int, types.Type] = {}

    def get(self, node: ast.Node, default: Optional[types.Type] = None) -> Optional[types.Type]:
        return self._types.get(node.nid, default)

    def of(self, node: ast.Node) -> types.Type:
        """The node's type, or `Unknown` when it was never typed."""
        t = self._types.get(node.nid)
        return t if t is not None else types.Unknown()

    def __getitem__(self, node: ast.Node) -> types.Type:
        return self._types[node.nid]

    def __setitem__(self, node: ast.Node, t: types.Type) -> None:
        self._types[node.nid] = t

    def __contains__(self, node: ast.Node) -> bool:
        return node.nid in self._types

    def __len__(self) -> int:
        return len(self._types)

    def values(self) -> Iterator[types.Type]:
        return iter(self._types.values())

    def forget(self, node: ast.Node) -> None:
        """Drop a node's type (a rewrite changed its meaning)."""
        self._types.pop(node.nid, None)
