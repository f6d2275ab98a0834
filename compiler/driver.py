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


def compile_file(
    path: str | Path,
    include_dirs: list[str] | tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
) -> CompileResult:
    """Compile one P4-16 program; raises CompileError on a user error."""
    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    return compile_text(text, str(path), include_dirs, defines)


def compile_text(
    text: str,
    filename: str = "<string>",
    include_dirs: list[str] | tuple[str, ...] = (),
    defines: dict[str, str] | None = None,
) -> CompileResult:
    from .preprocess import preprocess
    from .parser import parse

    diags = Diagnostics()
    source = preprocess(text, filename, list(include_dirs), defines or {}, diags)
    diags.check()
    program = parse(source, diags)
    diags.check()
    return CompileResult(diagnostics=diags, **_lower(program, diags))


def _lower(program, diags: Diagnostics) -> dict[str, Any]:
    from .frontend import run_frontend
    from .p4info import build_p4info
    from .bmv2 import build_bmv2_json

    ir = run_frontend(program, diags)
    diags.check()
    p4info = build_p4info(ir, diags)
    diags.check()
    bmv2_json = build_bmv2_json(ir, diags)
    diags.check()
    return {"p4info": p4info, "bmv2_json": bmv2_json}
