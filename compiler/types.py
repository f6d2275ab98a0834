"""Semantic types: what the type checker computes for declarations and
expressions (as opposed to `ast.Type*`, the types as written).

Types are immutable and compare by value, except named aggregates (headers,
structs, unions, enums, externs, parsers, controls) which compare by their
declaration: two structs with the same fields but different names differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import ast


class Type:
    """Base of all semantic types."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@dataclass(frozen=True)
class Bits(Type):
    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class Varbit(Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class Bool(Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class InfInt(Type):
    """The type of an unsized integer literal / `int`."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class String(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class Void(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class Error(Type):
    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class MatchKind(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCareT(Type):
    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Unknown(Type):
    """The type of an expression that failed to check (errors reported)."""

    def __str__(self) -> str:
        return "<unknown>"


@dataclass(frozen=True)
class TypeVar(Type):
    name: str
    owner: int = 0  # id() of the generic declaration

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class StructLike(Type):
    """header, header_union or struct.  `fields` in declaration order."""

    kind: str  # "header" | "header_union" | "struct"
    name: str
    fields: list[tuple[str, Type]] = field(default_factory=list)
    decl: Optional[ast.Decl] = None
    field_annotations: dict[str, tuple] = field(default_factory=dict)

    def field_type(self, name: str) -> Optional[Type]:
        for n, t in self.fields:
            if n == name:
                return t
        return None

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructLike) and self.name == other.name and self.kind == other.kind

    def __hash__(self) -> int:
        return hash((self.kind, self.name))


def is_header(t: Type) -> bool:
    return isinstance(t, StructLike) and t.kind == "header"


def is_union(t: Type) -> bool:
    return isinstance(t, StructLike) and t.kind == "header_union"


def is_struct(t: Type) -> bool:
    return isinstance(t, StructLike) and t.kind == "struct"


@dataclass(frozen=True)
class Stack(Type):
    elem: Type
    size: int

    def __str__(self) -> str:
        return f"{self.elem}[{self.size}]"


@dataclass(frozen=True)
class Tuple(Type):
    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.elems)) + ">"


@dataclass(frozen=True)
class ListT(Type):
    """The type of a `{a, b}` list expression before it meets its context."""

    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elems)) + "}"


@dataclass(frozen=True)
class StructInit(Type):
    """The type of `{a = x, b = y}` before it meets its context."""

    fields: tuple[tuple[str, Type], ...]

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n} = {t}" for n, t in self.fields) + "}"


@dataclass(eq=False)
class Enum(Type):
    """Plain enum (`base` None) or serializable enum over `base`."""

    name: str
    members: list[str]
    base: Optional[Bits] = None
    values: dict[str, int] = field(default_factory=dict)
    decl: Optional[ast.Decl] = None

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Enum) and self.name == other.name

    def __hash__(self) -> int:
        return hash(("enum", self.name))


@dataclass(eq=False)
class NewType(Type):
    """`type bit<9> PortId_t;` — a distinct type over `base`."""

    name: str
    base: Type
    decl: Optional[ast.Decl] = None

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NewType) and self.name == other.name

    def __hash__(self) -> int:
        return hash(("newtype", self.name))


@dataclass(eq=False)
class Extern(Type):
    """An extern type, possibly specialized (`register<bit<32>>`)."""

    decl: ast.ExternDecl
    args: tuple[Type, ...] = ()

    @property
    def name(self) -> str:
        return self.decl.name

    def __str__(self) -> str:
        if self.args:
            return f"{self.name}<{', '.join(map(str, self.args))}>"
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Extern) and self.decl is other.decl and self.args == other.args

    def __hash__(self) -> int:
        return hash(("extern", self.decl.name, self.args))


@dataclass(eq=False)
class Block(Type):
    """A parser, control or package type (declaration, or type-only
    declaration), possibly specialized."""

    decl: ast.Decl
    args: tuple[Type, ...] = ()

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def kind(self) -> str:
        d = self.decl
        if isinstance(d, (ast.ParserDecl, ast.ParserTypeDecl)):
            return "parser"
        if isinstance(d, (ast.ControlDecl, ast.ControlTypeDecl)):
            return "control"
        return "package"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Block) and self.decl is other.decl and self.args == other.args

    def __hash__(self) -> int:
        return hash(("block", self.decl.name))


@dataclass(eq=False)
class Table(Type):
    decl: ast.TableDecl

    def __str__(self) -> str:
        return f"table {self.decl.name}"


@dataclass(frozen=True)
class ApplyResult(Type):
    """What `t.apply()` returns: fields hit, miss, action_run."""

    table: str

    def __str__(self) -> str:
        return f"apply_result({self.table})"


@dataclass(frozen=True)
class ActionEnum(Type):
    """The type of `t.apply().action_run`."""

    table: str

    def __str__(self) -> str:
        return f"action_list({self.table})"


@dataclass(eq=False)
class Action(Type):
    decl: ast.ActionDecl

    def __str__(self) -> str:
        return f"action {self.decl.name}"


@dataclass(eq=False)
class Function(Type):
    """A function, extern function or method: the prototype and the type
    bindings of its generic parameters known so far."""

    proto: ast.FunctionProto
    owner: Optional[Type] = None
    bindings: dict[str, Type] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"function {self.proto.name}"


@dataclass(frozen=True)
class TypeOfType(Type):
    """The type of a name that denotes a type (e.g. the `E` in `E.a`)."""

    type: Type

    def __str__(self) -> str:
        return f"type {self.type}"


def width_of(t: Type) -> Optional[int]:
    """The width in bits of a type that has a fixed bit representation."""
    if isinstance(t, Bits):
        return t.width
    if isinstance(t, Bool):
        return 1
    if isinstance(t, Enum) and t.base is not None:
        return t.base.width
    if isinstance(t, NewType):
        return width_of(t.base)
    if isinstance(t, StructLike):
        total = 0
        for _, ft in t.fields:
            w = width_of(ft)
            if w is None:
                if isinstance(ft, Varbit):
                    continue
                return None
            total += w
        return total
    if isinstance(t, Stack):
        w = width_of(t.elem)
        return None if w is None else w * t.size
    return None


def strip_newtype(t: Type) -> Type:
    while isinstance(t, NewType):
        t = t.base
    return t


def bits_of(t: Type) -> Optional[Bits]:
    """The Bits type an integer-like type is represented as."""
    t = strip_newtype(t)
    if isinstance(t, Bits):
        return t
    if isinstance(t, Enum) and t.base is not None:
        return t.base
    if isinstance(t, Bool):
        return Bits(1)
    return None
