"""Where P4 values live in BMv2: header types, header instances, stacks,
unions and the `scalars` metadata header.

BMv2 has no variables.  p4c gives every scalar local and every scalar field of
the user metadata a field of one metadata header named `scalars` (padded to
whole bytes with `_padding_N` fields), every header-typed object a header
instance, every stack a header stack, every union a header union.  `Storage`
allocates those, hands back the `values.Value` that denotes them, and
renders the JSON lists at the end.

Example: allocating ``bit<8> x`` then ``ethernet_t e`` gives scalars field
``x`` (`Leaf` on ``["scalars", "x"]``) and header instance ``e`` of header
type ``ethernet_t``.
"""

from __future__ import annotations

from typing import Optional

from .. import types as compiler_types
from ..diagnostics import Pos
from .values import HeaderV, Leaf, StackV, StructV, UnionV, Value, field_node

SCALARS = "scalars"
STANDARD_METADATA = "standard_metadata"


def scalar_layout(t: compiler_types.Type) -> Optional[tuple[int, bool]]:
    """(width, signed) of a scalar type as BMv2 stores it, or None."""
    t = compiler_types.strip_newtype(t)
    if isinstance(t, compiler_types.Bits):
        return t.width, t.signed
    if isinstance(t, compiler_types.Bool):
        return 1, False
    if isinstance(t, (compiler_types.Error, compiler_types.MatchKind)):
        return 32, False
    if isinstance(t, compiler_types.Enum):
        return (t.base.width, t.base.signed) if t.base is not None else (32, False)
    return None


def is_scalar(t: compiler_types.Type) -> bool:
    return scalar_layout(t) is not None


class Storage:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.header_types: list[dict] = []
        self._type_names: dict[tuple, str] = {}
        self._used_type_names: set[str] = set()
        self.headers: list[dict] = []
        self.header_stacks: list[dict] = []
        self.header_unions: list[dict] = []
        self.header_union_types: list[dict] = []
        self.header_union_stacks: list[dict] = []
        self._union_type_names: dict[str, str] = {}
        self._instance_names: set[str] = {SCALARS, STANDARD_METADATA}
        self._stack_names: set[str] = set()
        self._union_names: set[str] = set()
        self.scalars: list[list] = []
        self._scalar_names: set[str] = set()
        self.standard_metadata: Optional[StructV] = None
        # scalars-header type first, as p4c does
        self._reserve_type_name("scalars_0")

    # ------------------------------------------------------------- naming

    @staticmethod
    def _unique(base: str, used: set[str]) -> str:
        name = base
        i = 0
        while name in used:
            name = f"{base}_{i}"
            i += 1
        used.add(name)
        return name

    def _reserve_type_name(self, name: str) -> str:
        return self._unique(name, self._used_type_names)

    # ------------------------------------------------------------- scalars

    def scalar(self, hint: str, t: compiler_types.Type, exact_name: bool = False) -> Leaf:
        """A new field of `scalars` holding a value of scalar type `t`."""
        layout = scalar_layout(t)
        if layout is None:
            raise ValueError(f"not a scalar type: {t}")
        width, signed = layout
        name = hint if exact_name and hint not in self._scalar_names else self._unique(hint, self._scalar_names)
        self._scalar_names.add(name)
        self.scalars.append([name, width, signed])
        return Leaf(field_node(SCALARS, name), t, "data", None, True)

    # -------------------------------------------------------- header types

    def header_type(self, st: compiler_types.StructLike, pos: Optional[Pos] = None) -> str:
        """The JSON header type of header `st` (created on first use)."""
        key = ("h", st.name)
        name = self._type_names.get(key)
        if name is not None:
            return name
        name = self._reserve_type_name(st.name)
        self._type_names[key] = name
        fields: list[list] = []
        entry: dict = {"name": name, "id": len(self.header_types), "fields": fields}
        self.header_types.append(entry)
        max_len = 0
        for fname, width, signed, varbit in self._flat_fields(st, "", pos):
            if varbit:
                fields.append([fname, "*"])
                max_len += width
            else:
                fields.append([fname, width, signed])
                max_len += width
        if any(len(f) == 2 for f in fields):
            entry["max_length"] = (max_len + 7) // 8
        return name

    def _flat_fields(self, st: compiler_types.StructLike, prefix: str, pos):
        for fname, ft in st.fields:
            full = f"{prefix}{fname}"
            layout = scalar_layout(ft)
            if layout is not None:
                yield full, layout[0], layout[1], False
            elif isinstance(ft, compiler_types.Varbit):
                yield full, ft.max_width, False, True
            elif isinstance(ft, compiler_types.StructLike) and ft.kind == "struct":
                yield from self._flat_fields(ft, f"{full}_", pos)
            else:
                self.ctx.unsupported(pos, f"header field {st.name}.{fname} of type {ft}")

    # ------------------------------------------------------------ instances

    def header(self, hint: str, st: compiler_types.StructLike, metadata: bool = False,
               pos: Optional[Pos] = None, exact_name: bool = False) -> HeaderV:
        tname = self.header_type(st, pos)
        name = self._unique(hint, self._instance_names) if not exact_name else hint
        self._instance_names.add(name)
        self.headers.append({"name": name, "id": len(self.headers), "header_type": tname,
                             "metadata": metadata, "pi_omit": True})
        return HeaderV(name, st)

    def stack(self, hint: str, t: compiler_types.Stack, pos: Optional[Pos] = None) -> StackV:
        elem = t.elem
        if isinstance(elem, compiler_types.StructLike) and elem.kind == "header_union":
            return self._union_stack(hint, t, pos)
        if not (isinstance(elem, compiler_types.StructLike) and elem.kind == "header"):
            self.ctx.unsupported(pos, f"stack of {elem}")
            return StackV(hint, t)
        name = self._unique(hint, self._stack_names | self._instance_names)
        self._stack_names.add(name)
        elems = [self.header(f"{name}[{i}]", elem, pos=pos) for i in range(t.size)]
        self.header_stacks.append({"name": name, "id": len(self.header_stacks),
                                   "header_type": self.header_type(elem, pos), "size": t.size,
                                   "header_ids": [self._header_id(h.name) for h in elems]})
        return StackV(name, t, elems)

    def _header_id(self, name: Optional[str]) -> int:
        for h in self.headers:
            if h["name"] == name:
                return h["id"]
        raise KeyError(name)

    def union_type(self, ut: compiler_types.StructLike, pos=None) -> str:
        name = self._union_type_names.get(ut.name)
        if name is not None:
            return name
        name = ut.name
        self._union_type_names[ut.name] = name
        hdrs = []
        for fname, ft in ut.fields:
            if not (isinstance(ft, compiler_types.StructLike) and ft.kind == "header"):
                self.ctx.unsupported(pos, f"union member {ut.name}.{fname} of type {ft}")
                continue
            hdrs.append([fname, self.header_type(ft, pos)])
        self.header_union_types.append({"name": name, "id": len(self.header_union_types), "headers": hdrs})
        return name

    def union(self, hint: str, ut: compiler_types.StructLike, pos=None, in_stack: bool = False) -> UnionV:
        tname = self.union_type(ut, pos)
        name = self._unique(hint, self._union_names | self._instance_names)
        self._union_names.add(name)
        uv = UnionV(name, ut)
        ids = []
        for fname, ft in ut.fields:
            if isinstance(ft, compiler_types.StructLike) and ft.kind == "header":
                hv = self.header(f"{name}.{fname}", ft, pos=pos)
                hv.union = uv
                uv.members[fname] = hv
                ids.append(self._header_id(hv.name))
        self.header_unions.append({"name": name, "id": len(self.header_unions), "union_type": tname,
                                   "header_ids": ids, "pi_omit": True})
        return uv

    def _union_stack(self, hint: str, t: compiler_types.Stack, pos) -> StackV:
        ut = t.elem
        assert isinstance(ut, compiler_types.StructLike)
        name = self._unique(hint, self._stack_names | self._instance_names)
        self._stack_names.add(name)
        unions = [self.union(f"{name}[{i}]", ut, pos, in_stack=True) for i in range(t.size)]
        ids = [next(u["id"] for u in self.header_unions if u["name"] == uv.name) for uv in unions]
        self.header_union_stacks.append({"name": name, "id": len(self.header_union_stacks),
                                         "union_type": self.union_type(ut, pos), "size": t.size,
                                         "header_union_ids": ids})
        sv = StackV(name, t, [], union_stack=True)
        sv.unions = unions  # type: ignore[attr-defined]
        return sv

    def varbit(self, hint: str, t: compiler_types.Varbit) -> Leaf:
        """A varbit variable: BMv2 keeps it in a metadata header of its own
        with one field named `field` (as p4c does)."""
        key = ("varbit", t.max_width)
        tname = self._type_names.get(key)
        if tname is None:
            tname = self._reserve_type_name(f"$varbit{t.max_width}")
            self._type_names[key] = tname
            self.header_types.append({"name": tname, "id": len(self.header_types),
                                      "fields": [["field", "*"]], "max_length": (t.max_width + 7) // 8})
        name = self._unique(hint.replace(".", "_"), self._instance_names)
        self.headers.append({"name": name, "id": len(self.headers), "header_type": tname,
                             "metadata": True, "pi_omit": True})
        return Leaf(field_node(name, "field"), t, "data", None, True)

    # --------------------------------------------------------------- values

    def alloc(self, hint: str, t: compiler_types.Type, pos: Optional[Pos] = None, *, scalar_prefix: str = "",
              header_prefix: str = "", metadata_headers: bool = False) -> Value:
        """Storage for a value of type `t`: scalars become fields of
        `scalars` named `scalar_prefix + hint`, headers become instances
        named `header_prefix + hint` (struct members joined with `_`)."""
        if is_scalar(t):
            return self.scalar(scalar_prefix + hint, t)
        ts = compiler_types.strip_newtype(t)
        if isinstance(ts, compiler_types.StructLike):
            if ts.kind == "header":
                return self.header(header_prefix + hint, ts, metadata_headers, pos)
            if ts.kind == "header_union":
                return self.union(header_prefix + hint, ts, pos)
            sv = StructV(ts)
            for fname, ft in ts.fields:
                sv.fields[fname] = self.alloc(
                    fname, ft, pos,
                    scalar_prefix=f"{scalar_prefix}{hint}.",
                    header_prefix=f"{header_prefix}{hint}_" if header_prefix or hint else "",
                    metadata_headers=metadata_headers)
            return sv
        if isinstance(ts, compiler_types.Stack):
            return self.stack(header_prefix + hint, ts, pos)
        if isinstance(ts, compiler_types.Tuple):
            sv = StructV(ts)
            for i, et in enumerate(ts.elems):
                sv.fields[f"f{i}"] = self.alloc(f"f{i}", et, pos, scalar_prefix=f"{scalar_prefix}{hint}.",
                                                header_prefix=f"{header_prefix}{hint}_")
            return sv
        if isinstance(ts, compiler_types.Varbit):
            return self.varbit(scalar_prefix + hint, ts)
        self.ctx.unsupported(pos, f"a variable of type {t}")
        return Leaf({"type": "hexstr", "value": "0x0"}, t)

    def alloc_root(self, name: str, t: compiler_types.Type, pos=None) -> Value:
        """Storage for a v1model block parameter shared by all blocks: the
        headers struct (headers named after their field) or the metadata
        struct (scalars named ``name.field``)."""
        ts = compiler_types.strip_newtype(t)
        if isinstance(ts, compiler_types.StructLike) and ts.kind == "struct":
            sv = StructV(ts)
            for fname, ft in ts.fields:
                sv.fields[fname] = self.alloc(fname, ft, pos, scalar_prefix=f"{name}.", header_prefix="")
            return sv
        return self.alloc(name, t, pos)

    def alloc_standard_metadata(self, st: compiler_types.StructLike) -> StructV:
        """The `standard_metadata` header (type and instance of that name),
        padded to whole bytes as p4c pads it."""
        fields: list[list] = []
        total = 0
        sv = StructV(st)
        for fname, ft in st.fields:
            layout = scalar_layout(ft) or (32, False)
            fields.append([fname, layout[0], layout[1]])
            total += layout[0]
            sv.fields[fname] = Leaf(field_node(STANDARD_METADATA, fname), ft, "data", None, True)
        if total % 8:
            fields.append(["_padding", 8 - total % 8, False])
        tname = "standard_metadata"
        self._used_type_names.add(tname)
        self._type_names[("h", "standard_metadata")] = tname
        self.header_types.append({"name": tname, "id": len(self.header_types), "fields": fields})
        self.headers.append({"name": STANDARD_METADATA, "id": len(self.headers), "header_type": tname,
                             "metadata": True, "pi_omit": True})
        self.standard_metadata = sv
        return sv

    # --------------------------------------------------------------- output

    def render(self) -> dict:
        """The header-related top-level JSON lists, with `scalars` first."""
        fields = list(self.scalars)
        total = sum(f[1] for f in fields)
        if total % 8:
            fields.append([self._unique("_padding_0", self._scalar_names), 8 - total % 8, False])
        scalars_type = {"name": "scalars_0", "id": 0, "fields": fields}
        types = [scalars_type] + [dict(h, id=i + 1) for i, h in enumerate(self.header_types)]
        scalars_hdr = {"name": SCALARS, "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True}
        # header ids shift by one because `scalars` comes first
        headers = [scalars_hdr] + [dict(h, id=h["id"] + 1) for h in self.headers]
        stacks = [dict(s, header_ids=[i + 1 for i in s["header_ids"]]) for s in self.header_stacks]
        unions = [dict(u, header_ids=[i + 1 for i in u["header_ids"]]) for u in self.header_unions]
        return {
            "header_types": types,
            "headers": headers,
            "header_stacks": stacks,
            "header_union_types": self.header_union_types,
            "header_unions": unions,
            "header_union_stacks": self.header_union_stacks,
        }
