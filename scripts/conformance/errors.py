"""Conformance against p4c: p4c's negative tests must be rejected.

`p4scope conformance errors DIR` compiles every program
``DIR/p4_16_errors/*.p4`` (p4c's own error corpus, each written to fail)
with p4scope's compiler and sorts the outcomes:

- accepted: p4scope compiled a program p4c rejects (a miss);
- crashed: p4scope failed with an internal error or ran out of time;
- rejected: p4scope reported an error.  Its first error is compared with
  the first error of p4c's ``DIR/p4_16_errors_outputs/<file>.p4-stderr``:
  same file and line, and the same column where p4c underlines one
  (``at p4c's position``); same line, other column; elsewhere; or p4c gives
  no position at all.  A program for an architecture p4scope does not
  compile (anything but v1model and architecture-free programs; P4_14) only
  counts as ``rejected (unsupported)``, whatever the position.

p4c prints ``file(line): ... error: ...`` followed by the source line and a
caret line.  That source line is from the preprocessed text, where the
preprocessor has squeezed runs of blanks inside a line to one, so the caret
column is mapped back onto the original line before it is compared.  An
error inside core.p4 or v1model.p4 matches by file name alone: p4scope
bundles its own copies of these, with the same declarations on other lines.

DIR is a local copy of p4c's ``testdata`` folder (never part of this
repository).
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .cli import _INCLUDES_V1MODEL, _deadline, _Timeout

ACCEPTED, CRASHED = "accepted", "crashed"
MATCH, LINE_ONLY, ELSEWHERE, NO_POSITION, UNSUPPORTED = (
    "match", "line-only", "elsewhere", "no-position", "unsupported")
REJECTED = (MATCH, LINE_ONLY, ELSEWHERE, NO_POSITION, UNSUPPORTED)

SUPPORTED_ARCHS = ("v1model", "none")
# p4c's system includes, which p4scope replaces with its own (declaration-
# compatible) files: an error inside one matches p4c's by file name alone.
BUNDLED_INCLUDES = ("core.p4", "v1model.p4")

_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
_P4_14 = re.compile(r"^\s*header_type\s+\w+\s*\{", re.MULTILINE)


# ---------------------------------------------------------------------------
# Which architecture a program is written for


def program_arch(path: Path, depth: int = 0) -> str:
    """The architecture a program is written for: "v1model" when it (or a
    file it includes with quotes) includes v1model.p4, the include's stem
    for another system include (psa, pna, ebpf_model, ...), "p4-14" for
    P4_14 source, else "none": an architecture-free program such as most of
    p4c's front-end tests."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "none"
    if _INCLUDES_V1MODEL.search(text):
        return "v1model"
    for kind, name in _INCLUDE.findall(text):
        stem = Path(name).name
        if kind == "<" and stem != "core.p4":
            return stem.removesuffix(".p4")
        if kind == '"' and depth < 4 and stem not in ("core.p4", "v1model.p4"):
            inner = program_arch(path.parent / name, depth + 1)
            if inner != "none":
                return inner
    if _P4_14.search(text):
        return "p4-14"
    return "none"


# ---------------------------------------------------------------------------
# p4c's expected first error

_HEADER = re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)(?::(?P<col>\d+))?\):\s*(?P<rest>.*)$")
_ERROR_TEXT = re.compile(r"(^|\]\s*|^\s*)error:|^syntax error")
_CARET = re.compile(r"^(\s*)\^+\s*$")


@dataclass
class P4cError:
    """p4c's first error: where (file base name, line, 1-based column) and
    what.  `line` is None when p4c printed no position."""

    message: str
    file: str = ""
    line: Optional[int] = None
    col: Optional[int] = None

    def where(self, program: str) -> str:
        return "-" if self.line is None else _where(self.file, self.line, self.col, program)


def _where(file: str, line: int, col: Optional[int], program: str) -> str:
    """line:col, with the file name when it is not the program itself."""
    text = f"{line}:{col}" if col else str(line)
    return text if file == program else f"{file}:{text}"


def p4c_first_error(stderr: str, source_dir: Optional[Path] = None) -> Optional[P4cError]:
    """The first error in a p4c ``.p4-stderr`` text (None if it has none).
    `source_dir` is where the named file is found, to map the caret column
    onto the original line."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        rest = m.group("rest") if m else line
        if not _ERROR_TEXT.search(rest):
            continue
        if m is None:
            return P4cError(line.strip())
        err = P4cError(rest.strip(), Path(m.group("file")).name, int(m.group("line")))
        if m.group("col"):
            err.col = int(m.group("col"))
        elif i + 2 < len(lines) and _CARET.match(lines[i + 2]):
            shown, caret = lines[i + 1], len(_CARET.match(lines[i + 2]).group(1))
            original = _source_line(source_dir, m.group("file"), err.line)
            err.col = _original_column(shown, caret, original) + 1
        return err
    return None


def _source_line(source_dir: Optional[Path], name: str, line: int) -> Optional[str]:
    if source_dir is None:
        return None
    try:
        lines = (source_dir / name).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines[line - 1] if 1 <= line <= len(lines) else None


def _original_column(shown: str, index: int, original: Optional[str]) -> int:
    """The 0-based index in `original` of the character at `index` of
    `shown`, where `shown` is `original` with blank runs squeezed (the
    preprocessor's output).  Falls back to `index` if they do not align."""
    if original is None:
        return index
    i = j = 0
    while i < index:
        if i >= len(shown) or j >= len(original):
            return index
        if shown[i].isspace() and original[j].isspace():
            while i < len(shown) and shown[i].isspace():
                i += 1
            while j < len(original) and original[j].isspace():
                j += 1
            if i > index:
                return index  # the caret points into a blank run
            continue
        if shown[i] != original[j]:
            return index
        i += 1
        j += 1
    return j


# ---------------------------------------------------------------------------
# Running one program


@dataclass
class ErrorResult:
    name: str
    arch: str
    status: str                       # ACCEPTED, CRASHED or one of REJECTED
    ours: str = ""                    # "line:col" ("file:line:col" in an include) of p4scope's first error
    message: str = ""                 # p4scope's first error, or the crash
    p4c: Optional[P4cError] = None


def check_program(program: Path, stderr_file: Path, timeout: float = 60.0) -> ErrorResult:
    """Compile one negative test and compare its first error with p4c's.
    Never raises."""
    from p4scope.compiler import CompileError, compile_file

    arch = program_arch(program)
    result = ErrorResult(program.name, arch, CRASHED)
    try:
        stderr = stderr_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        stderr = ""
    result.p4c = p4c_first_error(stderr, program.parent)
    try:
        with _deadline(timeout):
            compile_file(program)
    except _Timeout:
        result.message = f"timeout: no result after {timeout:.0f} s"
    except CompileError as e:
        first = e.diagnostics[0] if e.diagnostics else None
        if first is not None:
            result.ours = _where(Path(first.pos.file).name, first.pos.line, first.pos.col,
                                 program.name)
            result.message = first.message
        result.status = _rejection(arch, first, result.p4c)
    except BaseException as e:  # noqa: BLE001 - an internal error is a result
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        text = str(e).strip().splitlines()
        result.message = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    else:
        result.status = ACCEPTED
    return result


def _rejection(arch: str, first, p4c: Optional[P4cError]) -> str:
    if arch not in SUPPORTED_ARCHS:
        return UNSUPPORTED
    if p4c is None or p4c.line is None or first is None:
        return NO_POSITION
    if Path(first.pos.file).name != p4c.file:
        return ELSEWHERE
    if p4c.file in BUNDLED_INCLUDES:
        return MATCH  # p4scope's own copy: same declarations, other lines
    if first.pos.line != p4c.line:
        return ELSEWHERE
    if p4c.col is not None and first.pos.col != p4c.col:
        return LINE_ONLY
    return MATCH


def find_error_programs(testdata: Path, pattern: Optional[str] = None) -> list[Path]:
    return [p for p in sorted((testdata / "p4_16_errors").glob("*.p4"))
            if not pattern or fnmatch.fnmatch(p.name, pattern)]


def stderr_for(testdata: Path, program: Path) -> Path:
    return testdata / "p4_16_errors_outputs" / f"{program.name}-stderr"


def run_errors_conformance(testdata: Path, pattern: Optional[str] = None, timeout: float = 60.0,
                           progress: Optional[Callable[[ErrorResult], None]] = None
                           ) -> list[ErrorResult]:
    results = []
    for program in find_error_programs(testdata, pattern):
        r = check_program(program, stderr_for(testdata, program), timeout)
        results.append(r)
        if progress:
            progress(r)
    return results


# ---------------------------------------------------------------------------
# Report

_LABELS = {
    MATCH: "at p4c's position", LINE_ONLY: "at p4c's line, other column",
    ELSEWHERE: "elsewhere", NO_POSITION: "p4c gives no position",
    UNSUPPORTED: "rejected (unsupported)", ACCEPTED: "ACCEPTED", CRASHED: "CRASHED",
}


def print_table(results: list[ErrorResult], out=None) -> None:
    """One row per program: result, architecture, both positions and
    p4scope's first message."""
    out = out or sys.stdout
    width = min(max([len(r.name) for r in results] + [7]), 48)
    print(f"{'program':<{width}}  {'result':<12} {'arch':<8} {'p4scope':<16} {'p4c':<16} message",
          file=out)
    for r in results:
        p4c = r.p4c.where(r.name) if r.p4c else "(no error in .p4-stderr)"
        print(f"{r.name:<{width}}  {r.status:<12} {r.arch:<8} {r.ours or '-':<16} {p4c:<16} "
              f"{r.message[:100]}", file=out)


def summary_line(results: list[ErrorResult]) -> str:
    n = Counter(r.status for r in results)
    rejected = sum(n[s] for s in REJECTED)
    parts = ", ".join(f"{n[s]} {_LABELS[s]}" for s in REJECTED)
    return (f"errors conformance: {len(results)} programs: {rejected} rejected ({parts}), "
            f"{n[ACCEPTED]} accepted, {n[CRASHED]} crashed")


def summarize(results: list[ErrorResult], testdata: Path, out=None) -> None:
    out = out or sys.stdout
    print(f"p4c's negative tests in {testdata / 'p4_16_errors'}\n", file=out)
    print_table(results, out)
    bad = [r for r in results if r.status in (ACCEPTED, CRASHED)]
    if bad:
        print("\nAccepted or crashed (p4c rejects these):", file=out)
        for r in bad:
            print(f"  {_LABELS[r.status]:<9} {r.name}: {r.message or 'compiled without error'}",
                  file=out)
    print("\n" + summary_line(results), file=out)
