"""Text dumps of what the passes make, for `p4scope compile --dump-after`.

The syntax tree is printed one node a line, indented under its parent, with
its plain fields (`name=...`), its position and, once the checker has run,
the type of each expression (`: bit<8>`).  The block tree after elaboration
is printed one instance a line with its control-plane name.
"""

from __future__ import annotations

import os
from typing import Optional

from . import ast
from .diagnostics import Pos
from .typemap import TypeMap

_SKIPPED = ("pos", "nid")


def dump_tree(node: ast.Node, types: Optional[TypeMap] = None) -> str:
    """The tree under `node`.  For a whole program, the declarations of the
    bundled core.p4 and v1model.p4 are shown as one `#include <...>` line
    each, as p4c's ToP4 prints system files."""
    from .preprocess import BUNDLED_INCLUDE_DIR

    lines: list[str] = []
    if isinstance(node, ast.Program):
        lines.append("Program")
        shown: set[str] = set()
        for i, d in enumerate(node.decls):
            if d.pos.file.startswith(BUNDLED_INCLUDE_DIR + os.sep):
                if d.pos.file not in shown:
                    shown.add(d.pos.file)
                    lines.append(f"  #include <{os.path.basename(d.pos.file)}>")
                continue
            _node_lines(d, f"decls[{i}]", 1, types, lines)
    else:
        _node_lines(node, "", 0, types, lines)
    return "\n".join(lines) + "\n"


def _node_lines(node: ast.Node, label: str, depth: int, types: Optional[TypeMap],
                lines: list[str]) -> None:
    plain: list[str] = []
    children: list[tuple[str, object]] = []
    for f in node.__dataclass_fields__:
        if f in _SKIPPED:
            continue
        v = getattr(node, f)
        if isinstance(v, ast.Node) or (isinstance(v, tuple) and any(
                isinstance(x, ast.Node) for x in v)):
            children.append((f, v))
        elif isinstance(v, Pos):
            if v.line > 0:
                plain.append(f"{f}=@{v}")
        elif not (v is None or v is False or (isinstance(v, (str, tuple)) and not v)):
            plain.append(f"{f}={v!r}")
    head = "  " * depth + (f"{label}: " if label else "") + type(node).__name__
    if plain:
        head += " " + " ".join(plain)
    if node.pos.line > 0:
        head += f" @{node.pos}"
    if types is not None and isinstance(node, ast.Expr) and node in types:
        head += f" : {types[node]}"
    lines.append(head)
    for f, v in children:
        if isinstance(v, ast.Node):
            _node_lines(v, f, depth + 1, types, lines)
        else:
            for i, x in enumerate(v):  # type: ignore[arg-type]
                if isinstance(x, ast.Node):
                    _node_lines(x, f"{f}[{i}]", depth + 1, types, lines)


def dump_scope(checker) -> str:
    """The global scope: one `kind name` line per top-level symbol."""
    lines = [f"{sym.kind} {name}" for name, sym in checker.glob.names.items()]
    if checker.errors:
        lines.append("error {" + ", ".join(checker.errors) + "}")
    if checker.match_kinds:
        lines.append("match_kind {" + ", ".join(checker.match_kinds) + "}")
    return "\n".join(lines) + "\n"


def dump_blocks(ir) -> str:
    """The elaborated program: package, then each block instance and its
    children, with constructor arguments."""
    lines: list[str] = []
    if ir.main is not None and ir.package is not None:
        lines.append(f"main: {ir.package.name}")
    for g in ir.global_instances:
        lines.append(f"instance {g.name}")
    stack = [(1, b) for b in reversed(ir.blocks)]
    while stack:
        depth, b = stack.pop()
        role = f" ({b.param_name})" if b.param_name else ""
        args = ", ".join(f"{k}={v!r}" for k, v in b.args.items())
        lines.append("  " * depth + f"{b.kind} {b.path}: {b.decl.name}{role}"
                     + (f"({args})" if args else ""))
        stack.extend((depth + 1, c) for c in reversed(list(b.children.values())))
    return "\n".join(lines) + "\n"
