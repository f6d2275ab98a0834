"""Whole-program rules p4c's front end checks, each at the place p4c
reports it:

- `v1model_version`: the version constant of v1model.p4 (the program's
  ``#define V1MODEL_VERSION``) is a number p4c knows (p4c checks it while
  it prints the program back, before any other pass);
- `parsers_terminate`: every parser of the elaborated program can reach
  `accept` or `reject` from `start` (SimplifyParsers);
- `action_control_plane_names`: no two actions the program uses get the
  same control-plane name, as p4c sees them once controls are inlined into
  the top-level ones (DuplicateActionControlPlaneNameCheck).
"""

from __future__ import annotations

from . import ast
from . import types
from .diagnostics import Diagnostics, ErrorKind
from .exprtext import expr_text
from .frontend import BlockInstance, ProgramIR, annotation_string
from .widths import shortened

V1MODEL_VERSION_CONST = "__v1model_version"
V1MODEL_VERSIONS = (20180101, 20200408)   # p4c's V1Model::versionInitial, versionCurrent


def v1model_version(program: ast.Program, diags: Diagnostics) -> None:
    for d in program.decls:
        if isinstance(d, ast.ConstDecl) and d.name == V1MODEL_VERSION_CONST:
            v = d.value
            text = shortened(expr_text(v))
            if not isinstance(v, ast.IntLit) or v.value < 0:
                diags.error(ErrorKind.EXPECTED, v.pos,
                            f"{text}: expected v1model version to be a non-negative number")
            elif not V1MODEL_VERSIONS[0] <= v.value <= V1MODEL_VERSIONS[1]:
                diags.error(ErrorKind.EXPECTED, v.pos,
                            f"{text}: unknown v1model version; initial supported version is "
                            f"{V1MODEL_VERSIONS[0]}, latest is {V1MODEL_VERSIONS[1]}")
            return


def _instances(ir: ProgramIR) -> list[BlockInstance]:
    out: list[BlockInstance] = []
    stack = list(reversed(ir.blocks))
    while stack:
        b = stack.pop()
        out.append(b)
        stack.extend(reversed(list(b.children.values())))
    return out


def parsers_terminate(ir: ProgramIR, diags: Diagnostics) -> None:
    seen: set[int] = set()
    for b in _instances(ir):
        d = b.decl
        if not isinstance(d, ast.ParserDecl) or id(d) in seen:
            continue
        seen.add(id(d))
        reached = _reachable_states(d)
        if reached and not reached & {"accept", "reject"}:
            diags.error(ErrorKind.INVALID, d.where_named,
                        f"parser {d.name}: Parser never reaches accept or reject state")


def _reachable_states(d: ast.ParserDecl) -> set[str]:
    """States reachable from `start` (empty without one).  A state without
    a transition goes to reject."""
    states = {s.name: s for s in d.states}
    if "start" not in states:
        return set()
    reached, todo = set(), ["start"]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        st = states.get(name)
        if st is None:
            continue
        tr = st.transition
        if tr is None:
            todo.append("reject")
        elif isinstance(tr, str):
            todo.append(tr)
        else:
            todo.extend(case.state for case in tr.cases)
    return reached


class _ActionNames:
    """Control-plane names of the used actions, as p4c's check computes
    them: ".name" for a top-level action, ".<control>.<instance path>.name"
    for a local one, an @name with a leading dot as it is."""

    def __init__(self, ir: ProgramIR, diags: Diagnostics):
        self.diags = diags
        self.used = {id(t.decl) for t in ir.checker.expr_types.values() if isinstance(t, types.Action)}
        self.seen: dict[str, tuple[ast.ActionDecl, str]] = {}

    def add(self, d: ast.ActionDecl, full: str, shown: str) -> None:
        if id(d) not in self.used:
            return  # p4c removes unused actions first
        first = self.seen.get(full)
        if first is None:
            self.seen[full] = (d, shown)
        else:  # another action, or another inlined copy of this one
            self.diags.error(ErrorKind.DUPLICATE, d.where_named,
                             f"{shown}: conflicting control plane name: {first[1]}")

    def top_level(self, d: ast.ActionDecl) -> None:
        shown = annotation_string(d.annotations, "name") or d.name
        self.add(d, shown if shown.startswith(".") else f".{shown}", shown)

    def control(self, blk: BlockInstance, relative: str) -> None:
        """The actions of control instance `blk` and of the controls it
        instantiates (p4c inlines those: explicit instances where they are
        declared, direct `C.apply()` calls after the locals)."""
        inlined: set[str] = set()
        for loc in blk.decl.locals:  # type: ignore[attr-defined]
            if isinstance(loc, ast.ActionDecl):
                n = annotation_string(loc.annotations, "name") or loc.name
                if n.startswith("."):
                    self.add(loc, n, n)
                else:
                    shown = f"{relative}{n}"
                    self.add(loc, f".{blk.path}.{n}", shown)
            elif isinstance(loc, ast.Instantiation) and loc.name in blk.children:
                inlined.add(loc.name)
                self._child(blk, loc.name, relative)
        for name in blk.children:
            if name not in inlined:
                self._child(blk, name, relative)

    def _child(self, blk: BlockInstance, name: str, relative: str) -> None:
        child = blk.children[name]
        if isinstance(child.decl, ast.ControlDecl):
            self.control(child, f"{relative}{child.path.rsplit('.', 1)[-1]}.")


def action_control_plane_names(ir: ProgramIR, diags: Diagnostics) -> None:
    names = _ActionNames(ir, diags)
    tops: dict[int, BlockInstance] = {}
    for b in ir.blocks:
        tops.setdefault(id(b.decl), b)
    for d in ir.program.decls:
        if isinstance(d, ast.ActionDecl):
            names.top_level(d)
        elif isinstance(d, ast.ControlDecl) and id(d) in tops:
            names.control(tops[id(d)], "")

