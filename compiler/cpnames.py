"""Control-plane names: the fully qualified names p4c gives tables, actions,
extern instances and value sets.  P4Info and BMv2 JSON both take their names
from here, so the two outputs cannot disagree (a P4Runtime server maps one
onto the other by name).

The rules, as p4c's front end applies them:
- an object declared in a block is named `<block path>.<name>`, where the
  block path is the top-level block's declaration name, then the instance
  names of nested controls and parsers (`ingress.c1.t`);
- `@name("x")` replaces the declared name; a leading dot makes it global
  (`@name(".x")` is `x`);
- top-level objects (global actions such as NoAction, top-level extern
  instances) keep their own name;
- an extern instantiated inside a table property is named by the
  property's `@name`, else `<block path>.<table>_<property>`.
"""

from __future__ import annotations

from typing import Optional

from . import ast
from .frontend import BlockInstance, annotation_string
from .scope import Scope, Symbol


def global_name(d: ast.Decl) -> str:
    """The name of a top-level declaration."""
    n = annotation_string(d.annotations, "name")
    base = n if n is not None else d.name
    return base[1:] if base.startswith(".") else base


def local_name(blk: BlockInstance, d: ast.Decl) -> str:
    """A table, extern instance or value set declared in block `blk`."""
    n = annotation_string(d.annotations, "name")
    if n is None:
        return blk.qualify(d.name)
    if n.startswith("."):
        return n[1:]
    return blk.qualify(n)


class ControlPlaneNames:
    """Names that depend on resolving a reference in a block's scope."""

    def __init__(self, glob: Scope):
        self.glob = glob

    def action(self, blk: BlockInstance, sym: Symbol) -> str:
        """An action, given the symbol its reference resolved to."""
        d: ast.ActionDecl = sym.decl  # type: ignore[assignment]
        if sym.scope is self.glob:
            return global_name(d)
        return local_name(blk, d)

    def table_resource(self, blk: BlockInstance, prop: ast.TableProperty,
                       table: ast.TableDecl) -> Optional[str]:
        """The extern a table property (implementation, counters, meters)
        names or instantiates; None when it names nothing known."""
        v = prop.value
        if isinstance(v, ast.Name):
            sym = (self.glob if v.toplevel else blk.scope).lookup(v.name)
            if sym is None or sym.kind != "instance":
                return None
            if sym.scope is self.glob:
                return global_name(sym.decl)  # type: ignore[arg-type]
            return local_name(blk, sym.decl)  # type: ignore[arg-type]
        if isinstance(v, (ast.ConstructorCall, ast.Call)):
            return anonymous_name(blk, prop, table)
        return None


def anonymous_name(blk: BlockInstance, prop: ast.TableProperty, table: ast.TableDecl) -> str:
    """An extern instantiated inside a table property."""
    n = annotation_string(prop.annotations, "name")
    if n is not None:
        return n.lstrip(".")
    return blk.qualify(f"{table.name}_{prop.name}")
