"""Source positions and compiler diagnostics.

Every error a user can cause is reported through `Diagnostics.error` as
``file:line:col: error: message`` followed by the offending source line and a
caret, the way p4c and C compilers do.  Reports with the same kind and place
are shown once.  A pass boundary calls `Diagnostics.check()`, which raises
`CompileError` once errors were reported, so one run shows every error of a
pass but later passes never see a broken program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True, slots=True)
class Pos:
    """A place in the user's source: file name, 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOWHERE = Pos("<builtin>", 0, 0)


class ErrorKind(Enum):
    """The catalog of things that can be wrong with a P4 program."""

    PREPROCESS = "preprocess"
    SYNTAX = "syntax"
    UNDEFINED = "undefined"
    DUPLICATE = "duplicate"
    TYPE = "type"
    WIDTH = "width"
    DIRECTION = "direction"
    EXPECTED = "expected"
    UNSUPPORTED = "unsupported"
    INVALID = "invalid"
    ARCH = "arch"
    IO = "io"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    kind: ErrorKind
    pos: Pos
    message: str
    severity: str = "error"

    def render(self, sources: "SourceMap | None" = None) -> str:
        head = f"{self.pos}: {self.severity}: {self.message}"
        if sources is None or self.pos.line <= 0:
            return head
        line = sources.line(self.pos.file, self.pos.line)
        if line is None:
            return head
        caret = " " * (max(self.pos.col, 1) - 1) + "^"
        return f"{head}\n{line.rstrip()}\n{caret}"


class CompileError(Exception):
    """Raised at a pass boundary when the program has errors."""

    def __init__(self, diagnostics: list[Diagnostic], sources: "SourceMap | None" = None):
        self.diagnostics = diagnostics
        self.sources = sources
        super().__init__("\n".join(d.render(sources) for d in diagnostics))

    def render(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.diagnostics)


class SourceMap:
    """The text of every file the preprocessor read, to quote lines in errors."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def add(self, name: str, text: str) -> None:
        self._files[name] = text.splitlines()

    def line(self, name: str, lineno: int) -> str | None:
        lines = self._files.get(name)
        if lines is None:
            try:
                with open(name, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                return None
            self._files[name] = lines
        if 1 <= lineno <= len(lines):
            return lines[lineno - 1]
        return None


@dataclass
class Diagnostics:
    """Collects errors and warnings of one compilation."""

    sources: SourceMap = field(default_factory=SourceMap)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    _seen: set[tuple[ErrorKind, Pos, str]] = field(default_factory=set)

    def error(self, kind: ErrorKind, pos: Pos | None, message: str) -> None:
        pos = pos or NOWHERE
        key = (kind, pos, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.errors.append(Diagnostic(kind, pos, message))

    def warning(self, kind: ErrorKind, pos: Pos | None, message: str) -> None:
        self.warnings.append(Diagnostic(kind, pos or NOWHERE, message, "warning"))

    def fail(self, kind: ErrorKind, pos: Pos | None, message: str) -> "CompileError":
        """Report an error and return the exception that stops the pass now."""
        self.error(kind, pos, message)
        return CompileError(list(self.errors), self.sources)

    def check(self) -> None:
        """Pass boundary: stop if any error was reported."""
        if self.errors:
            raise CompileError(list(self.errors), self.sources)
