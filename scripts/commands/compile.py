"""`p4scope compile` and the compile-everything main job."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

from rich.console import Console

from .compile_paths import (PathProblem, cannot_write, check_output, json_output_path,
                            read_program)


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


def _check_p4info_options(p4info: Optional[Path], fmt: Optional[str]) -> Optional[str]:
    """A bad --p4runtime-format value, or a P4Info file whose kind is neither
    given nor implied by its suffix (p4c: "unknown file kind")."""
    from p4scope.compiler.p4info_io import FORMATS, P4InfoFormatError, format_for

    if fmt is not None:
        try:
            format_for("", fmt)
        except P4InfoFormatError:
            return f"--p4runtime-format {fmt}: must be one of {', '.join(FORMATS)}"
    if p4info is not None and fmt is None:
        try:
            format_for(p4info)
        except P4InfoFormatError as e:
            return f"--p4info {e} (or give --p4runtime-format)"
    return None


def _outputs(program: Path, output: "str | Path | None", p4info: Optional[Path]) -> Path:
    """The JSON output path, after refusing unusable output paths."""
    out = json_output_path(program, output)
    check_output("-o", out, program)
    if p4info is not None:
        check_output("--p4info", p4info, program)
    return out


def _dump_passes(names: list[str]) -> tuple[list[str], Optional[str]]:
    """The pass names --dump-after gives (comma-separated or repeated), or
    the problem with one of them."""
    from p4scope.compiler.driver import pass_names

    known = pass_names()
    wanted = [n.strip() for arg in names for n in arg.split(",") if n.strip()]
    for n in wanted:
        if n not in known:
            return [], f"--dump-after {n}: no such pass (see --list-passes: {', '.join(known)})"
    return wanted, None


def _dump_observer(wanted: list[str]):
    """Prints each wanted pass's dump to stdout as the pass finishes."""
    if not wanted:
        return None

    def observe(p, compilation) -> None:
        if p.name not in wanted or closed:
            return
        try:
            if len(wanted) > 1:
                sys.stdout.write(f"==> {p.name} <==\n")
            sys.stdout.write(p.dump(compilation))
            sys.stdout.flush()
        except BrokenPipeError:
            # The reader went away (`| head`): stop dumping, still compile;
            # point stdout at the null device so exit does not fail to flush.
            closed.append(True)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)

    closed: list[bool] = []
    return observe


def run_compile(program: Path, output, p4info, p4runtime_format, include, define,
                *, p4v=None, std=None, target=None, arch=None, dump_after=()) -> int:
    from p4scope.compiler import CompileError, compile_text
    from p4scope.compiler.p4info_io import write_p4info

    wanted, bad_pass = _dump_passes(list(dump_after))
    problem = bad_pass or _check_compat(p4v, std, target, arch) or _check_p4info_options(
        p4info, p4runtime_format)
    if problem:
        eprint(f"p4scope compile: error: {problem}")
        return 2
    try:
        source = read_program(program)
        out = _outputs(program, output, p4info)
    except PathProblem as e:
        eprint(f"p4scope compile: error: {e}")
        return 2 if e.usage else 1
    try:
        result = compile_text(source, str(program), [str(i) for i in include],
                              _parse_defines(define), observer=_dump_observer(wanted))
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
    writing = out
    try:
        write_text_atomic(out, json.dumps(result.bmv2_json, indent=2) + "\n")
        if p4info is not None:
            writing = p4info
            write_p4info(result.p4info, p4info, p4runtime_format)
    except OSError as e:
        eprint(f"p4scope compile: error: {cannot_write(writing, e)}")
        return 1
    return 0


def write_text_atomic(path: Path, text: str) -> None:
    from ..fileio import write_atomic

    write_atomic(path, text)


CACHE = ".cache"
"""build/.cache: compiles kept by their inputs' hash (compiler.cache), so a
main job whose programs did not change compiles nothing."""


def compile_all(src_dir: Path, build_dir: Path) -> int:
    """Compile every program in src_dir into build_dir and say what was made."""
    from p4scope.compiler import CompileError
    from p4scope.compiler.cache import compile_cached
    from p4scope.compiler.p4info_io import write_p4info

    programs = sorted(src_dir.glob("*.p4"))
    if not programs:
        eprint(f"no P4 programs in {src_dir}/")
        return 1
    # build/ is the project's own folder: made here, whereas `p4scope compile`
    # (like p4c) never creates an output folder.
    build_dir.mkdir(parents=True, exist_ok=True)
    out = Console(highlight=False, soft_wrap=True)
    failed = 0
    for prog in programs:
        t0 = time.perf_counter()
        try:
            result = compile_cached(prog, [str(src_dir / "include")], store=build_dir / CACHE)
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
