"""The P4-16 syntax tree produced by the parser.

Nodes are frozen dataclasses: passes that rewrite the tree build new nodes
with `dataclasses.replace` and never point back up.  Every node carries the
source position of its first token in `pos` (keyword-only, last field) and
a stable identity `nid` that rewrites keep (see typemap.py).

The tree follows the P4-16 specification's grammar closely; names are kept as
written (resolution happens in a later pass).  Types written in the source are
`Type*` nodes; the semantic passes compute their own resolved types.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional, Union

from .diagnostics import NOWHERE, Pos


_node_ids = itertools.count(1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    pos: Pos = NOWHERE
    # A number unique to the node when the parser built it; `dataclasses.replace`
    # copies it, so what passes know about a node (its type in `TypeMap`)
    # survives a rewrite.  Not part of equality: two same-looking nodes are equal.
    nid: int = field(default_factory=_node_ids.__next__, compare=False, repr=False)


# ---------------------------------------------------------------- annotations


@dataclass(frozen=True, slots=True)
class Annotation(Node):
    """``@name``, ``@name(body)`` or ``@name[k=v, ...]``.

    `body` is the list of expressions when the body parses as an expression
    list (as @name("x") or @id(3) do), `tokens` the raw text of the body
    between the parentheses as written (p4c copies it into P4Info), and
    `kv` the key/value pairs of the structured form.
    """

    name: str
    body: tuple["Expr", ...] = ()
    tokens: Optional[str] = None
    kv: tuple[tuple[str, "Expr"], ...] = ()
    structured: bool = False


Annotations = tuple[Annotation, ...]


# ---------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class TypeRef(Node):
    pass


@dataclass(frozen=True, slots=True)
class TypeBool(TypeRef):
    pass


@dataclass(frozen=True, slots=True)
class TypeError_(TypeRef):
    """The `error` type."""


@dataclass(frozen=True, slots=True)
class TypeString(TypeRef):
    pass


@dataclass(frozen=True, slots=True)
class TypeInt(TypeRef):
    """The arbitrary-precision `int` type."""


@dataclass(frozen=True, slots=True)
class TypeVoid(TypeRef):
    pass


@dataclass(frozen=True, slots=True)
class TypeDontCare(TypeRef):
    """`_` used as a type argument."""


@dataclass(frozen=True, slots=True)
class TypeMatchKind(TypeRef):
    pass


@dataclass(frozen=True, slots=True)
class TypeBits(TypeRef):
    """``bit<W>`` / ``int<W>``; `width` is an expression (usually a literal).

    Plain ``bit`` is ``bit<1>``.
    """

    width: "Expr"
    signed: bool = False


@dataclass(frozen=True, slots=True)
class TypeVarbit(TypeRef):
    width: "Expr"


@dataclass(frozen=True, slots=True)
class TypeName(TypeRef):
    """A named type, possibly qualified with a leading dot (``.T``)."""

    name: str
    toplevel: bool = False


@dataclass(frozen=True, slots=True)
class TypeSpecialized(TypeRef):
    """``Name<T1, T2>``."""

    base: TypeName
    args: tuple[TypeRef, ...]


@dataclass(frozen=True, slots=True)
class TypeStack(TypeRef):
    """``T[size]`` header stack."""

    elem: TypeRef
    size: "Expr"


@dataclass(frozen=True, slots=True)
class TypeTuple(TypeRef):
    elems: tuple[TypeRef, ...]


@dataclass(frozen=True, slots=True)
class TypeList(TypeRef):
    """``list<T>``."""

    elem: TypeRef


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Expr(Node):
    pass


@dataclass(frozen=True, slots=True)
class IntLit(Expr):
    """An integer literal.  `width`/`signed` are set for ``8w5`` / ``8s5``."""

    value: int
    width: Optional[int] = None
    signed: bool = False
    text: str = ""


@dataclass(frozen=True, slots=True)
class BoolLit(Expr):
    value: bool


@dataclass(frozen=True, slots=True)
class StringLit(Expr):
    value: str


@dataclass(frozen=True, slots=True)
class Name(Expr):
    """A path expression: identifier, or ``.identifier`` (top level)."""

    name: str
    toplevel: bool = False


@dataclass(frozen=True, slots=True)
class Member(Expr):
    """``expr.name``; also ``Type.member`` (enum, error) before resolution."""

    expr: Expr
    name: str


@dataclass(frozen=True, slots=True)
class TypeMember(Expr):
    """``TypeName.member`` where the left side is a type (enum, error)."""

    type: TypeRef
    name: str


@dataclass(frozen=True, slots=True)
class ErrorMember(Expr):
    """``error.Name``."""

    name: str


@dataclass(frozen=True, slots=True)
class Index(Expr):
    """``expr[index]`` (stack element)."""

    expr: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """``expr[hi:lo]``."""

    expr: Expr
    hi: Expr
    lo: Expr


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    """`op` is one of ``!``, ``~``, ``-``, ``+``."""

    op: str
    expr: Expr


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    """`op` is the operator as written: ``+ - * / % << >> & | ^ && || == !=
    < <= > >= ++ |+| |-| &&&`` and ``..`` (range in select cases)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Mux(Expr):
    """``cond ? then : else``."""

    cond: Expr
    then: Expr
    else_: Expr


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    type: TypeRef
    expr: Expr


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """``callee<type_args>(args)``; arguments may be named."""

    callee: Expr
    type_args: tuple[TypeRef, ...]
    args: tuple["Argument", ...]


@dataclass(frozen=True, slots=True)
class Argument(Node):
    """A call argument; `name` is set for ``name = value``; value is None for
    the don't-care argument ``_``."""

    value: Optional[Expr]
    name: Optional[str] = None


@dataclass(frozen=True, slots=True)
class ConstructorCall(Expr):
    """``Type(args)`` creating an instance (in an expression position)."""

    type: TypeRef
    args: tuple[Argument, ...]


@dataclass(frozen=True, slots=True)
class ListExpr(Expr):
    """``{ e1, e2 }`` (tuple / list / struct initializer without names)."""

    elems: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class StructExpr(Expr):
    """``{ f1 = e1, f2 = e2 }``; `type` set for ``(T){...}``-less typed form."""

    fields: tuple[tuple[str, Expr], ...]
    type: Optional[TypeRef] = None


@dataclass(frozen=True, slots=True)
class InvalidExpr(Expr):
    """``{#}`` the invalid header / union value."""


@dataclass(frozen=True, slots=True)
class DontCare(Expr):
    """``_`` (in select cases, keysets and out arguments)."""


@dataclass(frozen=True, slots=True)
class Default(Expr):
    """``default`` in a select case or switch label."""


@dataclass(frozen=True, slots=True)
class Mask(Expr):
    """``value &&& mask`` keyset."""

    value: Expr
    mask: Expr


@dataclass(frozen=True, slots=True)
class Range(Expr):
    """``lo .. hi`` keyset."""

    lo: Expr
    hi: Expr


# ----------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Stmt(Node):
    pass


@dataclass(frozen=True, slots=True)
class Assign(Stmt):
    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class CompoundAssign(Stmt):
    """``target op= value`` (op without ``=``)."""

    op: str
    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True)
class CallStmt(Stmt):
    call: Call


@dataclass(frozen=True, slots=True)
class Block(Stmt):
    stmts: tuple[Stmt, ...]
    annotations: Annotations = ()


@dataclass(frozen=True, slots=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    else_: Optional[Stmt] = None


@dataclass(frozen=True, slots=True)
class SwitchCase(Node):
    """One label (or ``default``) and its body; `body` None means fall
    through to the next case."""

    label: Expr
    body: Optional[Block]


@dataclass(frozen=True, slots=True)
class Switch(Stmt):
    expr: Expr
    cases: tuple[SwitchCase, ...]


@dataclass(frozen=True, slots=True)
class Exit(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    value: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Empty(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class DeclStmt(Stmt):
    """A declaration inside a block (variable, constant, instantiation)."""

    decl: "Decl"


@dataclass(frozen=True, slots=True)
class ForIn(Stmt):
    """``for (T x in expr) body``."""

    type: Optional[TypeRef]
    var: str
    iterable: Expr
    body: Stmt


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for (init; cond; update) body``."""

    init: tuple[Stmt, ...]
    cond: Optional[Expr]
    update: tuple[Stmt, ...]
    body: Stmt


@dataclass(frozen=True, slots=True)
class Break(Stmt):
    pass


@dataclass(frozen=True, slots=True)
class Continue(Stmt):
    pass


# --------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Decl(Node):
    """`name_pos` is where the declared name is written (p4c reports most
    errors about a declaration there); NOWHERE when not recorded."""

    name: str
    annotations: Annotations = ()
    name_pos: Pos = field(default=NOWHERE, kw_only=True)

    @property
    def where_named(self) -> Pos:
        return self.name_pos if self.name_pos.line > 0 else self.pos


@dataclass(frozen=True, slots=True)
class Field(Decl):
    """A field of a header, header_union or struct."""

    type: TypeRef = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class HeaderDecl(Decl):
    fields: tuple[Field, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HeaderUnionDecl(Decl):
    fields: tuple[Field, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StructDecl(Decl):
    fields: tuple[Field, ...] = ()
    type_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EnumMember(Node):
    name: str
    value: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class EnumDecl(Decl):
    """Plain enum (`type` None) or serializable enum (``enum bit<8> E``)."""

    members: tuple[EnumMember, ...] = ()
    type: Optional[TypeRef] = None


@dataclass(frozen=True, slots=True)
class ErrorDecl(Decl):
    """``error { A, B }`` (name is "error"; may appear several times)."""

    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchKindDecl(Decl):
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TypedefDecl(Decl):
    """``typedef T Name`` (alias) or ``type T Name`` (new type: `newtype`)."""

    type: TypeRef = field(default=None)  # type: ignore[assignment]
    newtype: bool = False


@dataclass(frozen=True, slots=True)
class ConstDecl(Decl):
    type: TypeRef = field(default=None)  # type: ignore[assignment]
    value: Expr = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class VarDecl(Decl):
    type: TypeRef = field(default=None)  # type: ignore[assignment]
    init: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Param(Decl):
    """A parameter; `direction` is "in", "out", "inout" or "" (none)."""

    direction: str = ""
    type: TypeRef = field(default=None)  # type: ignore[assignment]
    default: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Instantiation(Decl):
    """``@ann Type(args) name [= { initializer }];``."""

    type: TypeRef = field(default=None)  # type: ignore[assignment]
    args: tuple[Argument, ...] = ()
    initializer: Optional[Block] = None


@dataclass(frozen=True, slots=True)
class ValueSetDecl(Decl):
    """``value_set<T>(size) name;``."""

    type: TypeRef = field(default=None)  # type: ignore[assignment]
    size: Expr = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class FunctionProto(Decl):
    """A method or function prototype (extern methods, extern functions).

    For a constructor `return_type` is None and `name` equals the extern's.
    `abstract` marks ``abstract`` methods."""

    return_type: Optional[TypeRef] = None
    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    abstract: bool = False


@dataclass(frozen=True, slots=True)
class ExternDecl(Decl):
    """``extern Name<T> { methods }``."""

    type_params: tuple[str, ...] = ()
    methods: tuple[FunctionProto, ...] = ()


@dataclass(frozen=True, slots=True)
class ExternFunctionDecl(Decl):
    """``extern R f<T>(params);``."""

    proto: FunctionProto = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class FunctionDecl(Decl):
    proto: FunctionProto = field(default=None)  # type: ignore[assignment]
    body: Block = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class ActionDecl(Decl):
    params: tuple[Param, ...] = ()
    body: Block = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: Annotations = ()


@dataclass(frozen=True, slots=True)
class ActionRef(Node):
    """An entry of a table's `actions` list: a name with optional bound args."""

    name: Expr
    args: tuple[Argument, ...] = ()
    annotations: Annotations = ()


@dataclass(frozen=True, slots=True)
class TableEntry(Node):
    """A const/initial entry: keyset, action call, optional priority."""

    keys: tuple[Expr, ...]
    action: ActionRef
    priority: Optional[Expr] = None
    const: bool = False
    annotations: Annotations = ()


@dataclass(frozen=True, slots=True)
class TableProperty(Node):
    """A table property.  `kind` is "key", "actions", "entries",
    "default_action" or "value" (any other ``name = expr;``)."""

    name: str
    kind: str
    value: object = None
    const: bool = False
    annotations: Annotations = ()
    # where the property's name is written, and for a key where p4c places
    # the list of key elements (just after its "{")
    name_pos: Pos = field(default=NOWHERE, kw_only=True)
    list_pos: Pos = field(default=NOWHERE, kw_only=True)


@dataclass(frozen=True, slots=True)
class TableDecl(Decl):
    properties: tuple[TableProperty, ...] = ()


@dataclass(frozen=True, slots=True)
class SelectCase(Node):
    keyset: Expr
    state: str


@dataclass(frozen=True, slots=True)
class Select(Node):
    exprs: tuple[Expr, ...]
    cases: tuple[SelectCase, ...]


@dataclass(frozen=True, slots=True)
class ParserState(Decl):
    """`transition` is a state name (str), a `Select`, or None when absent
    (only valid in accept/reject)."""

    stmts: tuple[Stmt, ...] = ()
    transition: Union[str, Select, None] = None


@dataclass(frozen=True, slots=True)
class ParserTypeDecl(Decl):
    """``parser P<T>(params);`` (a parser type, no body)."""

    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()


@dataclass(frozen=True, slots=True)
class ParserDecl(Decl):
    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    ctor_params: tuple[Param, ...] = ()
    locals: tuple[Decl, ...] = ()
    states: tuple[ParserState, ...] = ()


@dataclass(frozen=True, slots=True)
class ControlTypeDecl(Decl):
    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()


@dataclass(frozen=True, slots=True)
class ControlDecl(Decl):
    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    ctor_params: tuple[Param, ...] = ()
    locals: tuple[Decl, ...] = ()
    body: Block = field(default=None)  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class PackageDecl(Decl):
    type_params: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()


@dataclass(frozen=True, slots=True)
class Program(Node):
    decls: tuple[Decl, ...]
