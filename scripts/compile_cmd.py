"""`p4scope compile` and the compile-everything main job."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

from rich.console import Console


def eprint(text: str) -> None:
    """Write a diagnostic to stderr unwrapped (rich would fold long lines)."""
    sys.stderr.write(text + "\n")


def _parse_defines(defines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in defines:
        name, _, value = d.partition("=")
        out[name] = value if value else "1"
    return out


def _check_compat(p4v, std, target, arch) -> Optional[str]:
    if p4v is not None and p4v not in ("16", "p4-16"):
        return f"--p4v {p4v}: only P4-16 is supported"
    if std is not None and std.lower() not in ("p4-16", "p416", "16"):
        return f"--std {std}: only p4-16 is supported"
    if target is not None and target != "bmv2":
        return f"--target {target}: only bmv2 is supported"
    if arch is not None and arch != "v1model":
        return f"--arch {arch}: only v1model is supported"
    return None


def json_output_path(program: Path, output: Optional[Path]) -> Path:
    """Where the BMv2 JSON goes: -o FILE, -o DIR/ (p4c driver style), or
    next to nothing given: PROGRAM's stem + .json in the current directory."""
    if output is None:
        return Path(program.stem + ".json")
    if output.is_dir() or str(output).endswith("/"):
        return output / (program.stem + ".json")
    return output


def run_compile(program: Path, output, p4info, p4runtime_format, include, define,
                *, p4v=None, std=None, target=None, arch=None) -> int:
    from p4scope.compiler import CompileError, compile_file
    from p4scope.compiler.p4info_io import write_p4info

    problem = _check_compat(p4v, std, target, arch)
    if problem:
        eprint(f"p4scope compile: error: {problem}")
        return 2
    if not program.is_file():
        eprint(f"p4scope compile: error: {program}: no such file")
        return 1
    try:
        result = compile_file(program, [str(i) for i in include], _parse_defines(define))
    except CompileError as e:
        eprint(e.render())
        return 1
    except Exception as e:  # a compiler bug, not the user's mistake
        if os.environ.get("P4SCOPE_DEBUG"):
            raise
        eprint(f"{program}: internal compiler error: {type(e).__name__}: {e}\n"
               "(this is a bug in p4scope; set P4SCOPE_DEBUG=1 for the traceback)")
        return 3
    for w in result.diagnostics.warnings:
        eprint(w.render(result.diagnostics.sources))
    out = json_output_path(program, output)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result.bmv2_json, indent=2) + "\n")
    if p4info is not None:
        p4info.parent.mkdir(parents=True, exist_ok=True)
        write_p4info(result.p4info, p4info, p4runtime_format)
    return 0


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def compile_all(src_dir: Path, build_dir: Path) -> int:
    """Compile every program in src_dir into build_dir and say what was made."""
    from p4scope.compiler import CompileError, compile_file
    from p4scope.compiler.p4info_io import write_p4info

    programs = sorted(src_dir.glob("*.p4"))
    if not programs:
        eprint(f"no P4 programs in {src_dir}/")
        return 1
    build_dir.mkdir(parents=True, exist_ok=True)
    out = Console(highlight=False, soft_wrap=True)
    failed = 0
    for prog in programs:
        t0 = time.perf_counter()
        try:
            result = compile_file(prog, [str(src_dir / "include")])
        except CompileError as e:
            eprint(e.render())
            failed += 1
            continue
        js = build_dir / f"{prog.stem}.json"
        info = build_dir / f"{prog.stem}.p4info.txtpb"
        write_text_atomic(js, json.dumps(result.bmv2_json, indent=2) + "\n")
        write_p4info(result.p4info, info, None)
        ms = (time.perf_counter() - t0) * 1000
        p = result.p4info
        out.print(f"{prog} -> {js}, {info}  ({len(p.tables)} tables, {len(p.actions)} actions, "
                  f"{len(p.registers) + len(p.counters) + len(p.meters)} externs; {ms:.0f} ms)")
    return 1 if failed else 0
