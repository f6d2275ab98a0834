"""Named compiler passes and the manager that runs them in order.

A `Pass` reads and extends one `Compilation` (the inputs, then what each
pass made: preprocessed text, syntax tree, checker, block tree, outputs).
A pass that ends at a boundary (`stops_on_error`) raises `CompileError` once
errors were reported, so one run shows every error of a pass while later
passes never see a broken program (p4c's PassManager stops the same way).
Every pass can describe what it made as text (`dump`), which is what
`p4scope compile --dump-after PASS` prints, as p4c's `--top4` does; a pass
may be a group of sub-passes (`passes`), listed indented by
`--list-passes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from .diagnostics import Diagnostics


@dataclass(eq=False)
class Compilation:
    """The state the passes share: inputs first, then each pass's product."""

    diags: Diagnostics
    text: str = ""
    filename: str = "<string>"
    include_dirs: tuple[str, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    backends: tuple[str, ...] = ()
    source: str = ""                 # preprocess: the expanded source text
    program: Any = None              # parse: ast.Program
    checker: Any = None              # declare/check: checker.Checker
    body: Any = None                 # check: frontend.BodyChecker
    ir: Any = None                   # elaborate: frontend.ProgramIR
    p4info: Any = None               # p4info: p4.config.v1.P4Info
    bmv2_json: Optional[dict[str, Any]] = None
    # Called after each pass that did not stop the run (--dump-after).
    observer: Optional[Callable[["Pass", "Compilation"], None]] = None


@dataclass(frozen=True)
class Pass:
    name: str
    summary: str                                   # one line for --list-passes
    run: Callable[[Compilation], None]
    dump: Callable[[Compilation], str]
    stops_on_error: bool = True
    enabled: Callable[[Compilation], bool] = lambda c: True
    passes: tuple["Pass", ...] = ()                # the sub-passes `run` runs, if a group


class PassManager:
    """Runs a list of passes in order (see the module docstring)."""

    def __init__(self, passes: list[Pass] | tuple[Pass, ...]):
        self.passes = tuple(passes)

    def run(self, c: Compilation, until: Optional[str] = None) -> Compilation:
        """Run every enabled pass, or the passes up to and including `until`."""
        for p in self.passes:
            if not p.enabled(c):
                continue
            p.run(c)
            if p.stops_on_error:
                c.diags.check()
            if c.observer is not None:
                c.observer(p, c)
            if p.name == until:
                break
        return c

    def walk(self) -> Iterator[tuple[int, Pass]]:
        """(depth, pass) of every pass and sub-pass, in running order."""
        stack = [(0, p) for p in reversed(self.passes)]
        while stack:
            depth, p = stack.pop()
            yield depth, p
            stack.extend((depth + 1, s) for s in reversed(p.passes))

    def names(self) -> list[str]:
        return [p.name for _, p in self.walk()]

    def listing(self) -> str:
        """The pass list as `--list-passes` prints it: name and summary,
        sub-passes indented under their group."""
        rows = [("  " * depth + p.name, p.summary) for depth, p in self.walk()]
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {summary}" for name, summary in rows) + "\n"
