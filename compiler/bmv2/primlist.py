"""A list of BMv2 primitives being emitted, with forward and backward jumps.

BMv2 actions may contain ``_jump`` and ``_jump_if_zero`` primitives whose
parameter is the index of the next primitive to run; `Label`s stand for
those indices until `PrimitiveList.finish` patches them:

    out.jump_if_zero(cond, else_l); ...; out.place(else_l)
    ->  {"op": "_jump_if_zero", "parameters": [b2d(cond), "0x4"]} ... (index 4)

A `Frame` is an inlined action or function body being lowered: where its
`return` jumps, where its result goes, what to copy out at its end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .values import Value, expr_node, param


class Label:
    __slots__ = ("index",)

    def __init__(self) -> None:
        self.index: Optional[int] = None


class PrimitiveList:
    """Primitives being emitted, with forward jumps patched at the end."""

    def __init__(self) -> None:
        self.prims: list[dict] = []
        self._fixups: list[tuple[dict, Label]] = []
        self.uses_jumps = False

    def emit(self, op: str, params: list[dict]) -> None:
        self.prims.append({"op": op, "parameters": params})

    def place(self, label: Label) -> None:
        label.index = len(self.prims)

    def jump(self, label: Label) -> None:
        p = {"type": "hexstr", "value": None}
        self.emit("_jump", [p])
        self._fixups.append((p, label))
        self.uses_jumps = True

    def jump_if_zero(self, cond_bool: dict, label: Label) -> None:
        p = {"type": "hexstr", "value": None}
        self.emit("_jump_if_zero", [param(expr_node("b2d", None, cond_bool)), p])
        self._fixups.append((p, label))
        self.uses_jumps = True

    def ends_with_jump(self) -> bool:
        return bool(self.prims) and self.prims[-1]["op"] == "_jump"

    def finish(self) -> list[dict]:
        for p, label in self._fixups:
            idx = label.index if label.index is not None else len(self.prims)
            p["value"] = hex(idx)
        self._fixups.clear()
        return self.prims


@dataclass
class Frame:
    """An inlined body being lowered: where `return` jumps to and where a
    function's result goes."""

    end: Label
    result: Optional[Value] = None
    is_function: bool = False
    outs: list = field(default_factory=list)   # copy-out triples of its parameters
    tail_return: int = 0   # id() of a `return` that ends the body (needs no jump)
