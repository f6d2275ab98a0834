"""The compiler's entry points: run the pass list (passlist.PASSES) over one
program and hand back what the backends made."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .diagnostics import Diagnostics
from .passes import Compilation, Pass


@dataclass
class CompileResult:
    bmv2_json: Optional[dict[str, Any]] = None
    p4info: Any = None  # p4.config.v1.P4Info
    diagnostics: Diagnostics = field(default_factory=Diagnostics)


BACKENDS = ("p4info", "bmv2")

Observer = Callable[[Pass, Compilation], None]


def compile_file(
    path: str | Path,
    include_dirs: list[str] | tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
    backends: tuple[str, ...] = BACKENDS,
) -> CompileResult:
    """Compile one P4-16 program; raises CompileError on a user error.

    `backends` chooses the outputs: "p4info" and/or "bmv2"."""
    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    return compile_text(text, str(path), include_dirs, defines, backends)


def compile_text(
    text: str,
    filename: str = "<string>",
    include_dirs: list[str] | tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
    backends: tuple[str, ...] = BACKENDS,
    observer: Optional[Observer] = None,
) -> CompileResult:
    """Compile one program given as text.  `observer(pass, compilation)` is
    called after each pass that did not stop the run (--dump-after)."""
    c = _run(text, filename, include_dirs, defines, backends, observer, until=None)
    return CompileResult(bmv2_json=c.bmv2_json, p4info=c.p4info, diagnostics=c.diags)


def frontend_text(text: str, filename: str = "<string>",
                  include_dirs: list[str] | tuple[str, ...] = (),
                  defines: dict[str, str] | None = None):
    """Preprocess, parse and run the front end only (for tools and tests)."""
    return _run(text, filename, include_dirs, defines, (), None, until="frontend").ir


def pass_names() -> list[str]:
    """Every pass and sub-pass name, in running order."""
    from .passlist import PASSES

    return PASSES.names()


def pass_listing() -> str:
    """The pass list as `p4scope compile --list-passes` prints it."""
    from .passlist import PASSES

    return PASSES.listing()


def _run(text, filename, include_dirs, defines, backends, observer, until) -> Compilation:
    from .passlist import PASSES

    c = Compilation(Diagnostics(), text=text, filename=filename,
                    include_dirs=tuple(include_dirs), defines=defines or {},
                    backends=tuple(backends), observer=observer)
    return PASSES.run(c, until=until)
