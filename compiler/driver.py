"""The compiler's pipeline: one function per stage, run in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .diagnostics import Diagnostics


@dataclass
class CompileResult:
    bmv2_json: Optional[dict[str, Any]] = None
    p4info: Any = None  # p4.config.v1.P4Info
    diagnostics: Diagnostics = field(default_factory=Diagnostics)


BACKENDS = ("p4info", "bmv2")


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
) -> CompileResult:
    from .frontend import run_frontend
    from .preprocess import preprocess
    from .parser import parse

    diags = Diagnostics()
    source = preprocess(text, filename, list(include_dirs), defines or {}, diags)
    diags.check()
    program = parse(source, diags, filename)
    diags.check()
    ir = run_frontend(program, diags)
    diags.check()
    result = CompileResult(diagnostics=diags)
    if "p4info" in backends:
        from .p4info import build_p4info

        result.p4info = build_p4info(ir, diags)
        diags.check()
    if "bmv2" in backends:
        from .bmv2 import build_bmv2_json

        result.bmv2_json = build_bmv2_json(ir, diags)
        diags.check()
    return result


def frontend_text(text: str, filename: str = "<string>",
                  include_dirs: list[str] | tuple[str, ...] = (),
                  defines: dict[str, str] | None = None):
    """Preprocess, parse and run the front end only (for tools and tests)."""
    from .frontend import run_frontend
    from .preprocess import preprocess
    from .parser import parse

    diags = Diagnostics()
    source = preprocess(text, filename, list(include_dirs), defines or {}, diags)
    diags.check()
    program = parse(source, diags, filename)
    diags.check()
    ir = run_frontend(program, diags)
    ir.checker.diags = diags
    return ir
