"""The targets `p4scope ptf` runs the PTF suite against.

A target is a compiler (P4 -> BMv2 JSON + P4Info) and a switch program
that takes simple_switch_grpc's command line:

    p4scope  p4scope compile             + p4scope switch
    bmv2     p4c-bm2-ss (p4scope compile + simple_switch_grpc
             when p4c is not installed)

Both switches are started the same way (topologies/cmdline.py builds the
argument vector), with --no-p4: the suite's base test pushes the pipeline
over P4Runtime, as p4c's PTF tests do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ..topologies import cmdline

TARGETS = ("p4scope", "bmv2")
COMPILERS = ("auto", "p4scope", "p4c")
P4C = "p4c-bm2-ss"


class TargetError(Exception):
    """The target cannot be used here (a program is missing, a compile failed)."""


@dataclass(frozen=True)
class Built:
    json: Path
    p4info: Path
    compiler: str


def which_compiler(target: str, choice: str = "auto") -> str:
    """'p4scope' or 'p4c' for `target` and the user's --compiler choice."""
    if choice == "p4c":
        if shutil.which(P4C) is None:
            raise TargetError(f"--compiler p4c: {P4C} is not installed (not on PATH)")
        return "p4c"
    if choice == "p4scope":
        return "p4scope"
    return "p4c" if target == "bmv2" and shutil.which(P4C) is not None else "p4scope"


def compile_program(source: Path, out_dir: Path, compiler: str,
                    log: Callable[[str], None] = print) -> Built:
    """Compiles `source` into out_dir/<name>.json and <name>.p4info.txtpb."""
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / f"{source.stem}.json"
    info = out_dir / f"{source.stem}.p4info.txtpb"
    if compiler == "p4c":
        argv = [shutil.which(P4C) or P4C, "--p4v", "16", "--p4runtime-files", str(info),
                "-o", str(js), str(source)]
    else:
        argv = [sys.executable, "-m", "p4scope.cli", "compile", str(source), "-o", str(js),
                "--p4info", str(info)]
    log(f"p4scope ptf: compiling {source} with {compiler}")
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0 or not js.is_file() or not info.is_file():
        raise TargetError(f"compiling {source} failed (status {r.returncode}):\n"
                          f"{(r.stderr or r.stdout).strip()}")
    return Built(js, info, compiler)


def switch_program(target: str, binary: Optional[str] = None) -> list[str]:
    """The switch's argument vector up to its options."""
    if binary:
        path = shutil.which(binary)
        if path is None:
            raise TargetError(f"--switch-binary {binary}: no such program")
        return [os.path.abspath(path)]
    if target == "p4scope":
        here = Path(sys.executable).parent / "p4scope-switch-grpc"
        if here.exists():
            return [str(here)]
        return [sys.executable, "-m", "p4scope.switch.daemon"]
    path = shutil.which(cmdline.BMV2_PROGRAM)
    if path is None:
        raise TargetError(f"{cmdline.BMV2_PROGRAM} is not installed (not on PATH): "
                          "--target bmv2 needs BMv2 built with P4Runtime support")
    return [path]


def switch_argv(head: list[str], ports: list[int], iface: Callable[[int], str], grpc_port: int,
                thrift_port: int, cpu_port: int, log_level: str = "off") -> list[str]:
    """`head` (switch_program()) and the simple_switch_grpc options."""
    cmd = cmdline.SwitchCommand(
        ports=tuple((p, iface(p)) for p in ports), device_id=0, grpc_port=grpc_port,
        thrift_port=thrift_port, program=None, cpu_port=cpu_port, log_level=log_level)
    return [*head, *cmd.args()]
