"""Where `p4scope compile` reads its program and writes its outputs, and the
checks made on those paths before compiling.

Like p4c, an output goes into a folder that must already exist (p4c opens
the file and reports "No such file or directory"; it never creates
folders), and a non-regular input such as /dev/null or a FIFO is read as
program text.  Unlike p4c, an output that names the program itself is
refused rather than overwriting the source.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Optional


class PathProblem(Exception):
    """A path the command cannot use; `usage` is True when the command line
    itself is wrong (exit 2) rather than the file system (exit 1)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


def json_output_path(program: Path, output: "str | Path | None") -> Path:
    """Where the BMv2 JSON goes: -o FILE, -o DIR or DIR/ (p4c driver style),
    or, with no -o, PROGRAM's stem + .json in the current directory.  Give
    -o as typed: Path() drops the trailing slash that marks a directory."""
    if output is None:
        return Path(program.stem + ".json")
    if os.path.isdir(output) or str(output).endswith("/"):
        return Path(output) / (program.stem + ".json")
    return Path(output)


def read_program(program: Path) -> str:
    """The program's text; any readable non-directory (a file, /dev/null, a
    FIFO) is a source.  Raises PathProblem naming the path and the reason."""
    try:
        with open(program, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PathProblem(f"{program}: {e.strerror}") from None
    return data.decode("utf-8", errors="replace")


def check_output(option: str, path: Path, program: Path) -> None:
    """Refuse an output `path` (given by `option`) that is the program
    itself, a directory, or inside a folder that does not exist."""
    if _same_file(path, program):
        raise PathProblem(f"{option} {path}: this is the input program; "
                          "refusing to overwrite it", usage=True)
    if os.path.isdir(path):
        raise _cannot_write(path, errno.EISDIR)
    parent = path.parent
    try:
        mode = os.stat(parent).st_mode
    except OSError as e:
        raise _cannot_write(path, e.errno) from None
    if not stat.S_ISDIR(mode):
        raise _cannot_write(path, errno.ENOTDIR)


def cannot_write(path: Path, err: OSError) -> PathProblem:
    """The error for a write that failed while writing `path`."""
    return _cannot_write(path, err.errno, err.strerror)


def _cannot_write(path: Path, code: Optional[int], reason: Optional[str] = None) -> PathProblem:
    reason = reason or (os.strerror(code) if code else "cannot be written")
    return PathProblem(f"cannot write output file {path}: {reason}")


def _same_file(a: Path, b: Path) -> bool:
    """True when `a` and `b` name one file (also through links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
