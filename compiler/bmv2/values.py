"""What a P4 expression denotes while it is lowered to BMv2 JSON.

BMv2 has no variables, only header instances (`scalars` holds the scalar
locals and metadata), so every P4 value the backend meets is one of:

- `Leaf`: a value of a scalar type (bit<W>, int<W>, bool, error, enum) as a
  BMv2 operand, e.g. ``{"type": "field", "value": ["scalars", "tmp_0"]}``,
  ``{"type": "hexstr", "value": "0x0a"}`` or an expression tree;
- `HeaderV`, `StackV`, `UnionV`: header instances, stacks and unions;
- `StructV`: a struct (or tuple) as the values of its fields;
- `InvalidV`: the ``{#}`` initializer.

BMv2 expressions distinguish booleans from data (bit strings); `Leaf.kind`
says which one an operand evaluates to, and `as_bool`/`as_data` insert the
``d2b``/``b2d`` conversions p4c inserts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .. import types


# ------------------------------------------------------------------ operands


def hexstr(value: int, width: Optional[int] = None) -> dict:
    """A BMv2 ``hexstr`` operand, zero-padded to whole bytes of `width` as
    p4c prints it: hexstr(10, 8) is ``0x0a``, hexstr(-1, 8) is ``-0x01``."""
    return {"type": "hexstr", "value": hex_text(value, width)}


def hex_text(value: int, width: Optional[int] = None) -> str:
    sign = "-" if value < 0 else ""
    digits = f"{abs(value):x}"
    if width is not None and width > 0:
        digits = digits.rjust((width + 7) // 8 * 2, "0")
    return f"{sign}0x{digits}"


def expr_node(op: str, left: Optional[dict], right: Optional[dict], cond: Optional[dict] = None) -> dict:
    """An expression tree node ``{"type": "expression", "value": {op, left, right}}``.

    Action data is ``runtime_data`` only as a primitive's own parameter;
    inside an expression BMv2 reads it as ``local`` and rejects
    ``runtime_data`` ("Invalid 'type' in expression"), so operands are
    rewritten here, as p4c's ExpressionConverter::fixLocal does."""
    v: dict[str, Any] = {"op": op, "left": _in_expression(left), "right": _in_expression(right)}
    if cond is not None:
        v["cond"] = _in_expression(cond)
    return {"type": "expression", "value": v}


def _in_expression(operand: Any) -> Any:
    if isinstance(operand, dict) and operand.get("type") == "runtime_data":
        return {"type": "local", "value": operand["value"]}
    return operand


def field_node(header: str, name: str) -> dict:
    return {"type": "field", "value": [header, name]}


def bool_node(v: bool) -> dict:
    return {"type": "bool", "value": bool(v)}


def param(node: dict) -> dict:
    """A primitive parameter: simple operands go as they are, expression trees
    are wrapped once more (BMv2 builds an expression from `value`)."""
    if node.get("type") == "expression":
        return {"type": "expression", "value": node}
    return node


def mask(width: int) -> int:
    return (1 << width) - 1 if width > 0 else 0


def wrap(v: int, width: int, signed: bool) -> int:
    """`v` truncated to `width` bits, as a two's complement value if signed."""
    if width <= 0:
        return 0
    v &= mask(width)
    if signed and v >> (width - 1):
        v -= 1 << width
    return v


# -------------------------------------------------------------------- values


class Value:
    """Base of everything a P4 expression can denote in the backend."""


@dataclass
class Leaf(Value):
    """A scalar value: `node` is a BMv2 operand.

    kind: "data" or "bool" (what BMv2 evaluates `node` to).  `const` holds
    the value when it is known at compile time (int, or bool for booleans).
    `lvalue` is True for fields (and field references via expressions).
    """

    node: dict
    type: types.Type
    kind: str = "data"
    const: Any = None
    lvalue: bool = False

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def is_field(self) -> bool:
        return self.node.get("type") == "field"


@dataclass(eq=False)
class HeaderV(Value):
    """A header instance.  `name` is the BMv2 header name; for an element
    of a stack picked at run time, `node` is the dereference expression."""

    name: Optional[str]
    type: types.StructLike
    node: Optional[dict] = None
    union: Optional["UnionV"] = None
    field_names: dict[str, str] = field(default_factory=dict)

    def header_node(self) -> dict:
        if self.node is not None:
            return self.node
        return {"type": "header", "value": self.name}

    def field(self, name: str) -> Any:
        """A field: a Leaf, or a StructV for a struct-typed field (stored
        flattened, ``row_e`` for ``row.e``)."""
        ft = self.type.field_type(name)
        assert ft is not None, name
        return self._member(name, ft)

    def _member(self, flat: str, ft: types.Type) -> Any:
        fs = types.strip_newtype(ft)
        if isinstance(fs, types.StructLike) and fs.kind == "struct":
            sv = StructV(fs)
            for n, t in fs.fields:
                sv.fields[n] = self._member(f"{flat}_{n}", t)
            return sv
        if self.node is None:
            node = field_node(self.name, flat)  # type: ignore[arg-type]
        else:
            idx = flat_field_names(self.type).index(flat)
            node = expr_node("access_field", self.node, idx)
        return Leaf(node, ft, "data", None, True)

    def leaves(self) -> list["Leaf"]:
        """Every scalar field, flattened, in order."""
        out: list[Leaf] = []

        def walk(v: Any) -> None:
            if isinstance(v, Leaf):
                out.append(v)
            elif isinstance(v, StructV):
                for x in v.fields.values():
                    walk(x)

        for n, _ in self.type.fields:
            walk(self.field(n))
        return out

    def valid(self) -> Leaf:
        if self.node is None:
            node = expr_node("d2b", None, field_node(self.name, "$valid$"))  # type: ignore[arg-type]
        else:
            node = expr_node("valid", None, self.node)
        return Leaf(node, types.Bool(), "bool")


def flat_field_names(st: types.StructLike, prefix: str = "") -> list[str]:
    """Field names of a header as stored: struct-typed fields flattened."""
    out: list[str] = []
    for n, t in st.fields:
        ts = types.strip_newtype(t)
        if isinstance(ts, types.StructLike) and ts.kind == "struct":
            out.extend(flat_field_names(ts, f"{prefix}{n}_"))
        else:
            out.append(f"{prefix}{n}")
    return out


def idx_node(i: int) -> dict:
    return {"type": "hexstr", "value": hex(i)}


@dataclass(eq=False)
class StackV(Value):
    name: str
    type: types.Stack
    elems: list[HeaderV] = field(default_factory=list)
    union_stack: bool = False

    def node(self) -> dict:
        return {"type": "header_stack" if not self.union_stack else "header_union_stack",
                "value": self.name}


@dataclass(eq=False)
class UnionV(Value):
    name: Optional[str]
    type: types.StructLike
    members: dict[str, HeaderV] = field(default_factory=dict)
    node: Optional[dict] = None

    def union_node(self) -> dict:
        if self.node is not None:
            return self.node
        return {"type": "header_union", "value": self.name}


@dataclass(eq=False)
class StructV(Value):
    """A struct, tuple or list value: `fields` in order (tuples use "f0".."fN")."""

    type: types.Type
    fields: dict[str, Value] = field(default_factory=dict)


@dataclass(eq=False)
class InvalidV(Value):
    """``{#}``: an invalid header or union."""


def leaf_const(value: Any, t: types.Type) -> Leaf:
    """A compile-time constant of type `t` as a Leaf."""
    if isinstance(value, bool) and isinstance(types.strip_newtype(t), types.Bool):
        return Leaf(bool_node(value), types.Bool(), "bool", value)
    if isinstance(value, bool):
        value = int(value)
    b = types.bits_of(t)
    width = b.width if b is not None else None
    if b is not None and isinstance(value, int):
        value = wrap(value, b.width, b.signed)
    return Leaf(hexstr(value, width), t, "data", value)


def as_bool(v: Leaf) -> dict:
    """The operand of `v` as a BMv2 boolean."""
    if v.kind == "bool":
        return v.node
    if v.is_const:
        return bool_node(bool(v.const))
    return expr_node("d2b", None, v.node)


def as_data(v: Leaf) -> dict:
    """The operand of `v` as BMv2 data (bool becomes 0/1)."""
    if v.kind == "data":
        return v.node
    if v.is_const:
        return hexstr(1 if v.const else 0, 1)
    return expr_node("b2d", None, v.node)


def describe(v: object) -> str:
    """What a value is, in a user's words (for error messages)."""
    names = {"Leaf": "a scalar value", "HeaderV": "a header", "StackV": "a header stack",
             "UnionV": "a header union", "StructV": "a struct or list", "InvalidV": "{#}",
             "NextV": "stack.next", "ExternBinding": "an extern instance", "TableBinding": "a table",
             "BlockBinding": "a parser or control instance", "PacketBinding": "the packet",
             "ActionBinding": "an action", "FunctionBinding": "a function", "ValueSetB": "a value set",
             "TypeRefV": "a type", "MethodV": "a method", "ApplyResultV": "a table's apply result",
             "SliceTarget": "a slice", "NoneType": "nothing"}
    return names.get(type(v).__name__, "this value")
