"""Which copy-in/copy-out of an inlined call p4c would not emit.

p4c's front end turns an action's (or function's) in/inout/out parameters
into locals: ``p = arg;`` before the body for in and inout, ``arg = p;``
after it (and before each return/exit) for inout and out
(RemoveActionParameters, function inlining).  The mid end's
LocalCopyPropagation then propagates ``p``'s value ``arg`` into its reads
while nothing overwrites ``arg`` (or anything ``arg`` reads, such as a
stack index), deletes ``arg = arg`` and deletes the then dead ``p = arg``.

For a parameter the body never mentions that leaves:
- in or directionless: no copy-in (a dead store);
- inout: no copies at all, unless something before the copy-out may write
  the argument's storage: then ``p`` no longer holds ``arg`` and p4c keeps
  both copies (e.g. ``action a(inout H v) { h.f = 2; }`` called as
  ``a(h)`` restores ``h``);
- out: the copy-out stays (``p`` has no value to propagate).

A parameter the body reads or writes keeps its copies here (p4c may still
drop some of them; the effect on the packet is the same).  "May write" is
judged on names, as LocalCopyPropagation does (``h.a`` and ``h.a.b``
overlap, ``h.a`` and ``h.b`` do not); any call in the body, and any
argument or assignment target that is not a plain path, counts as writing
everything.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .. import ast

_EVERYTHING = None   # a write set that overlaps every name


def elided_copies(pairs: Iterable[tuple[ast.Param, Optional[ast.Argument]]],
                  body: ast.Block) -> frozenset[str]:
    """Names of the parameters (paired with their arguments) whose copies
    p4c removes, for a call whose callee has `body`."""
    pairs = [(p, a) for p, a in pairs]
    candidates = [(p, a) for p, a in pairs
                  if a is not None and a.value is not None and p.direction != "out"]
    if not candidates:
        return frozenset()
    mentioned = _names(body, {p.name for p, _ in candidates})
    out: set[str] = set()
    writes: Optional[set[str]] | str = "unknown"
    for p, a in candidates:
        if p.name in mentioned:
            continue
        if p.direction != "inout":
            out.add(p.name)
            continue
        if writes == "unknown":
            writes = _body_writes(body)
            if writes is not _EVERYTHING:
                for q, b in pairs:     # other out/inout arguments are written back too
                    if q is p or q.direction not in ("out", "inout") or b is None or b.value is None:
                        continue
                    w = _path(b.value)
                    if w is None:
                        writes = _EVERYTHING
                        break
                    writes.add(w)
        reads = _paths(a.value)  # type: ignore[union-attr]
        if writes is _EVERYTHING or reads is None:
            continue
        if not any(_overlap(w, r) for w in writes for r in reads):  # type: ignore[union-attr]
            out.add(p.name)
    return frozenset(out)


def _names(node: object, wanted: set[str]) -> set[str]:
    """Which of `wanted` occur as names anywhere in `node`."""
    seen: set[str] = set()
    stack: list = [node]
    while stack and seen != wanted:
        n = stack.pop()
        if isinstance(n, ast.Name):
            if not n.toplevel and n.name in wanted:
                seen.add(n.name)
        elif isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "pos")
    return seen


def _body_writes(body: ast.Block) -> Optional[set[str]]:
    """Paths the body assigns, or _EVERYTHING when it calls anything (an
    action, a function, a method, a table) or loops."""
    writes: set[str] = set()
    stack: list = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call):
            if not (isinstance(n.callee, ast.Member) and n.callee.name == "isValid" and not n.args):
                return _EVERYTHING
        elif isinstance(n, (ast.For, ast.ForIn)):
            return _EVERYTHING
        elif isinstance(n, (ast.Assign, ast.CompoundAssign)):
            w = _path(n.target)
            if w is None:
                return _EVERYTHING
            writes.add(w)
        elif isinstance(n, ast.DeclStmt):
            name = getattr(n.decl, "name", None)
            if not isinstance(name, str):
                return _EVERYTHING
            writes.add(name)
        if isinstance(n, (list, tuple)):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "pos")
    return writes


def _path(e: ast.Expr) -> Optional[str]:
    """``h.s[1].f`` for a plain path; a run-time index stands for the whole
    stack (``h.s``); None when `e` is no path."""
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.Member):
        base = _path(e.expr)
        return None if base is None else f"{base}.{e.name}"
    if isinstance(e, ast.Index):
        base = _path(e.expr)
        if base is None:
            return None
        return f"{base}[{e.index.value}]" if isinstance(e.index, ast.IntLit) else base
    if isinstance(e, ast.Slice):
        return _path(e.expr)
    return None


def _paths(e: ast.Expr) -> Optional[set[str]]:
    """Every path an argument reads (its own and those of its indexes), or
    None when it holds a call."""
    if isinstance(e, (ast.Call, ast.ConstructorCall)):
        return None
    if isinstance(e, (ast.Name, ast.Member, ast.Index, ast.Slice)):
        p = _path(e)
        if p is not None:
            out = {p}
            for idx in _indexes(e):
                more = _paths(idx)
                if more is None:
                    return None
                out |= more
            return out
    out = set()
    for f in e.__dataclass_fields__:
        if f == "pos":
            continue
        for sub in _exprs(getattr(e, f)):
            more = _paths(sub)
            if more is None:
                return None
            out |= more
    return out


def _indexes(e: ast.Expr) -> list[ast.Expr]:
    out = []
    while isinstance(e, (ast.Member, ast.Index, ast.Slice)):
        if isinstance(e, ast.Index) and not isinstance(e.index, ast.IntLit):
            out.append(e.index)
        e = e.expr
    return out


def _exprs(v: object) -> list[ast.Expr]:
    """The outermost expressions inside `v` (lists, pairs, other nodes)."""
    if isinstance(v, ast.Expr):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _exprs(item)]
    if isinstance(v, ast.Node):
        return [x for f in v.__dataclass_fields__ if f != "pos" for x in _exprs(getattr(v, f))]
    return []


def _overlap(a: str, b: str) -> bool:
    """LocalCopyPropagation's name_overlap: equal, or one a field or
    element of the other."""
    if a == b:
        return True
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer.startswith(shorter) and longer[len(shorter)] in ".["
