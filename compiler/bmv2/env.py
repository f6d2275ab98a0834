"""The backend's environment: what each name denotes while a body is lowered.

Lowering inlines everything (sub-controls, sub-parsers, actions called from
actions, functions), so the same declaration is lowered several times with
different meanings for its names.  An `Env` frame maps names to bindings:
`values.Value` for variables and parameters (their storage, or the argument
expression they are bound to), and the `*Binding` records below for everything
else.  Names not found in any frame are global declarations, resolved
through the checker's global scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import ast
from .. import types
from ..frontend import BlockInstance


@dataclass(eq=False)
class ActionBinding:
    """An action declaration and the environment it was declared in."""

    decl: ast.ActionDecl
    blk: Optional[BlockInstance]
    env: "Env"
    is_global: bool = False


@dataclass(eq=False)
class TableBinding:
    decl: ast.TableDecl
    blk: BlockInstance
    env: "Env"
    name: str = ""
    applied: bool = False


@dataclass(eq=False)
class ExternBinding:
    """An extern instance: `kind` is the extern type's name (counter,
    register, ...), `name` its BMv2/P4Info name."""

    decl: ast.Instantiation
    kind: str
    type: types.Type
    name: str
    blk: Optional[BlockInstance] = None
    info: dict = field(default_factory=dict)


@dataclass(eq=False)
class BlockBinding:
    """A sub-parser or sub-control instance, inlined where it is applied."""

    inst: BlockInstance
    applied: int = 0


@dataclass(eq=False)
class FunctionBinding:
    decl: ast.FunctionDecl
    env: "Env"


@dataclass(eq=False)
class PacketBinding:
    """The packet_in / packet_out parameter."""

    kind: str


@dataclass(eq=False)
class ConstBinding:
    value: Any
    type: types.Type


@dataclass(eq=False)
class ValueSetB:
    name: str
    type: types.Type
    width: int


@dataclass(eq=False)
class StateB:
    """A parser state: `name` is the BMv2 state name (renamed when inlined)."""

    name: Optional[str]


class Env:
    """One frame of names; lookups walk outwards."""

    __slots__ = ("names", "parent", "blk")

    def __init__(self, parent: Optional["Env"] = None, blk: Optional[BlockInstance] = None) -> None:
        self.names: dict[str, Any] = {}
        self.parent = parent
        self.blk = blk if blk is not None else (parent.blk if parent is not None else None)

    def child(self, blk: Optional[BlockInstance] = None) -> "Env":
        return Env(self, blk)

    def declare(self, name: str, binding: Any) -> None:
        self.names[name] = binding

    def lookup(self, name: str) -> Any:
        e: Optional[Env] = self
        while e is not None:
            if name in e.names:
                return e.names[name]
            e = e.parent
        return None
