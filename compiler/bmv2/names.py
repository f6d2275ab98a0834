"""Names in the BMv2 JSON.

Control-plane objects (tables, actions, counters, meters, registers, action
profiles, value sets) must carry exactly their P4Info names, because a
P4Runtime server maps P4Info names to JSON names.  `ControlPlaneNames` asks
the P4Info builder (`compiler/p4info.py`) for them instead of re-deriving
the rules, so both outputs can never disagree.

Objects the backend synthesizes get p4c's shapes: the action holding the
statements at line 28 of ``gauntlet_action_return-bmv2.p4`` is
``gauntlet_action_returnbmv2l28`` and its keyless table
``tbl_gauntlet_action_returnbmv2l28``; a direct call of action ``a`` runs in
table ``tbl_a``; conditionals are ``node_N``.  Duplicates get ``_0``,
``_1``, ... appended.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from .. import ast
from ..diagnostics import Pos
from ..frontend import BlockInstance, ProgramIR
from .. import cpnames


class ControlPlaneNames:
    """Fully qualified control-plane names (rules in compiler/cpnames.py)."""

    def __init__(self, ir: ProgramIR) -> None:
        self._names = cpnames.ControlPlaneNames(ir.checker.glob)
        self._glob = ir.checker.glob

    def local(self, blk: Optional[BlockInstance], d: ast.Decl) -> str:
        """A table, extern instance or value set declared in `blk` (or at top
        level when `blk` is None)."""
        return cpnames.global_name(d) if blk is None else cpnames.local_name(blk, d)

    def action(self, blk: Optional[BlockInstance], decl: ast.ActionDecl, is_global: bool) -> str:
        if is_global or blk is None:
            return cpnames.global_name(decl)
        return cpnames.local_name(blk, decl)

    def table_resource(self, blk: BlockInstance, prop: ast.TableProperty, table: ast.TableDecl) -> Optional[str]:
        """The name of the extern a table property (implementation, counters,
        meters) names or instantiates."""
        return self._names.table_resource(blk, prop, table)


def _sanitize(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "", s)


class Namer:
    """Unique names for synthesized objects in one namespace."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def reserve(self, name: str) -> None:
        self.used.add(name)

    def fresh(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        i = 0
        while f"{base}_{i}" in self.used:
            i += 1
        name = f"{base}_{i}"
        self.used.add(name)
        return name


def source_name(pos: Optional[Pos]) -> str:
    """p4c's name for code synthesized from the statement at `pos`:
    the file's base name without non-identifier characters, ``l``, line."""
    if pos is None or pos.line <= 0:
        return "act"
    stem = os.path.basename(pos.file)
    if stem.endswith(".p4"):
        stem = stem[:-3]
    return f"{_sanitize(stem)}l{pos.line}"
