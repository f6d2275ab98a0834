"""Symbols and lexical scopes for name resolution."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from . import ast
from .types import Type


@dataclass(eq=False)
class Symbol:
    """What a name denotes in a scope.

    kind: "type", "const", "var", "param", "instance", "action", "table",
    "function" (functions and extern functions, possibly overloaded: `decls`),
    "extern", "block" (parser/control/package declarations and types),
    "state", "value_set", "typevar".
    """

    kind: str
    name: str
    decl: Optional[ast.Node] = None
    type: Optional[Type] = None
    value: Any = None
    direction: str = ""
    decls: list[ast.Node] = field(default_factory=list)
    owner: Optional[ast.Node] = None  # the parser/control/action that declares it
    scope: Any = None  # the Scope its type expressions are resolved in

    @property
    def writable(self) -> bool:
        if self.kind == "var":
            return True
        return self.kind == "param" and self.direction in ("out", "inout")


class Scope:
    """One level of the lexical scope chain."""

    __slots__ = ("names", "parent", "owner")

    def __init__(self, parent: "Scope | None" = None, owner: ast.Node | None = None):
        self.names: dict[str, Symbol] = {}
        self.parent = parent
        self.owner = owner if owner is not None else (parent.owner if parent else None)

    def lookup(self, name: str) -> Optional[Symbol]:
        s: Scope | None = self
        while s is not None:
            sym = s.names.get(name)
            if sym is not None:
                return sym
            s = s.parent
        return None

    def local(self, name: str) -> Optional[Symbol]:
        return self.names.get(name)

    def root(self) -> "Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def declare(self, sym: Symbol) -> Optional[Symbol]:
        """Declare `sym`; functions with the same name overload.  Returns the
        clashing symbol when the name already exists here (and is not an
        overload)."""
        old = self.names.get(sym.name)
        if old is not None:
            if old.kind == "function" and sym.kind == "function":
                old.decls.extend(sym.decls)
                return None
            return old
        self.names[sym.name] = sym
        return None
