"""`p4scope ptf`: the PTF suite against a switch it starts and stops.

    p4scope ptf --target p4scope|bmv2 [--program dut] [-- PTF ARGS]

In order: compile the program into the run directory; make veth pairs
swN <-> ptfN (N = 1..ports) in a namespace of the run's own (lab.py);
start the switch there with the simple_switch_grpc command line and
--no-p4; wait until its gRPC port accepts; run ptf there with
-i N@ptfN and the test parameters p4c's PTF base test reads (grpcaddr,
p4info, config) plus device_id, cpu_port and thrift; stop the switch;
remove the namespace. The exit status is ptf's (2: the run could not be
set up; 130: interrupted).

PTF port N is switch port N. The run directory (a temporary one unless
--run-dir is given) holds the build, switch.log, ptf.log and the
manifest; a temporary one is removed after a passing run and kept, with
its path printed, after a failing one.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from . import targets as ptf_targets
from .lab import PtfLab, ptf_iface, stop, switch_iface

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TEST_DIR = REPO / "ptf_tests"
SETUP_ERROR = 2


@dataclass
class PtfOptions:
    target: str = "p4scope"
    program: str = "dut"
    ports: int = 5
    ptf_args: list[str] = field(default_factory=list)
    run_dir: Optional[Path] = None
    keep: bool = False
    compiler: str = "auto"
    switch_binary: Optional[str] = None
    switch_log_level: str = "off"
    test_dir: Path = DEFAULT_TEST_DIR
    grpc_port: int = 9559
    thrift_port: int = 9090
    cpu_port: int = 255
    ready_timeout: float = 60.0
    timeout: float = 0.0
    """Seconds the ptf run may take (0: no limit)."""


class SetupError(Exception):
    pass


def program_source(program: str) -> Path:
    """A name in p4src/ ("dut") or a path to a .p4 file."""
    p = Path(program)
    if p.suffix == ".p4" or "/" in program:
        if not p.is_file():
            raise SetupError(f"--program {program}: no such file")
        return p.resolve()
    src = REPO / "p4src" / f"{program}.p4"
    if not src.is_file():
        names = sorted(x.stem for x in (REPO / "p4src").glob("*.p4"))
        raise SetupError(f"--program {program}: no p4src/{program}.p4 (there are: "
                         f"{', '.join(names)})")
    return src


def ptf_program() -> list[str]:
    here = Path(sys.executable).parent / "ptf"
    if here.exists():
        return [sys.executable, str(here)]
    found = shutil.which("ptf")
    if found is None:
        raise SetupError("ptf is not installed: bash scripts/setup.sh installs it "
                         "(requirements.txt pins ptf)")
    return [found]


def check_host() -> None:
    if os.geteuid() != 0:
        raise SetupError("needs root: network namespaces, veth pairs and raw sockets")
    for tool in ("ip", "ethtool", "sysctl"):
        if shutil.which(tool) is None:
            raise SetupError(f"{tool} is not installed (iproute2, ethtool, procps)")


def test_params(o: PtfOptions, built: ptf_targets.Built) -> str:
    """PTF's --test-params: Python assignments separated by ';'."""
    items = {"grpcaddr": f"127.0.0.1:{o.grpc_port}", "p4info": str(built.p4info),
             "config": str(built.json), "device_id": 0, "cpu_port": o.cpu_port,
             "thrift": f"127.0.0.1:{o.thrift_port}", "target": o.target}
    return ";".join(f"{k}={v!r}" for k, v in items.items())


def ptf_argv(o: PtfOptions, built: ptf_targets.Built, ports: list[int], run_dir: Path) -> list[str]:
    argv = [*ptf_program(), "--test-dir", str(o.test_dir)]
    for p in ports:
        argv += ["-i", f"{p}@{ptf_iface(p)}"]
    argv += ["--test-params", test_params(o, built), "--log-file", str(run_dir / "ptf.log")]
    return argv + list(o.ptf_args)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def _raise_on_sigterm() -> Callable[[], None]:
    """SIGTERM unwinds like Ctrl-C, so the `finally` clean-up runs."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    old = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, old)


def run(o: PtfOptions, log: Callable[[str], None] = print) -> int:
    try:
        check_host()
        if o.target not in ptf_targets.TARGETS:
            raise SetupError(f"--target {o.target}: choose one of {', '.join(ptf_targets.TARGETS)}")
        if not 1 <= o.ports <= 32:
            raise SetupError(f"--ports {o.ports}: give 1..32")
        if not o.test_dir.is_dir():
            raise SetupError(f"--test-dir {o.test_dir}: no such directory")
        source = program_source(o.program)
        ptf_program()
        switch_head = ptf_targets.switch_program(o.target, o.switch_binary)
        compiler = ptf_targets.which_compiler(o.target, o.compiler)
    except (SetupError, ptf_targets.TargetError) as e:
        log(f"p4scope ptf: error: {e}")
        return SETUP_ERROR
    temporary = o.run_dir is None
    run_dir = Path(tempfile.mkdtemp(prefix="p4scope-ptf-")) if temporary else o.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    restore = _raise_on_sigterm()
    status = SETUP_ERROR
    try:
        status = _run_in(o, source, compiler, switch_head, run_dir, log)
    except KeyboardInterrupt:
        log("p4scope ptf: interrupted")
        status = 130
    finally:
        restore()
        if temporary and status == 0 and not o.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
        else:
            log(f"p4scope ptf: run directory kept: {run_dir}")
    return status


def _run_in(o: PtfOptions, source: Path, compiler: str, switch_head: list[str], run_dir: Path,
            log: Callable[[str], None]) -> int:
    """Compile, lab, switch, ptf; the lab is removed whatever happens."""
    t0 = time.monotonic()
    try:
        built = ptf_targets.compile_program(source, run_dir / "build", compiler, log)
    except ptf_targets.TargetError as e:
        log(f"p4scope ptf: error: {e}")
        return SETUP_ERROR
    ports = list(range(1, o.ports + 1))
    lab = PtfLab(ports, run_dir).__enter__()
    problems: list[str] = []
    try:
        status = _switch_and_ptf(o, lab, built, ports, run_dir, switch_head, t0, log)
    finally:
        problems = lab.close()
    for pr in problems:
        log(f"p4scope ptf: clean-up: {pr}")
    if status is None:
        return SETUP_ERROR
    log(f"p4scope ptf: {o.target}: ptf exited with status {status} after "
        f"{time.monotonic() - t0:.1f}s")
    return status


def _switch_and_ptf(o: PtfOptions, lab: PtfLab, built: ptf_targets.Built, ports: list[int], run_dir: Path,
                    switch_head: list[str], t0: float,
                    log: Callable[[str], None]) -> Optional[int]:
    """ptf's exit status, or None when the switch never became ready."""
    switch_log = run_dir / "switch.log"
    cmd = ptf_targets.switch_argv(switch_head, ports, switch_iface, o.grpc_port, o.thrift_port,
                        o.cpu_port, o.switch_log_level)
    (run_dir / "switch.cmd").write_text(" ".join(cmd) + "\n")
    log(f"p4scope ptf: starting the {o.target} switch in namespace {lab.netns} "
        f"({len(ports)} ports)")
    sw = lab.popen(cmd, "switch", switch_log, cwd=run_dir)
    alive = lambda: sw.poll() is None  # noqa: E731
    if not lab.wait_tcp(o.grpc_port, o.ready_timeout, alive):
        why = (f"exited with status {sw.returncode}" if sw.poll() is not None
               else f"did not accept P4Runtime connections within {o.ready_timeout:.0f}s")
        log(f"p4scope ptf: error: the switch {why}; last lines of {switch_log}:\n"
            f"{_tail(switch_log)}")
        return None
    if not lab.wait_tcp(o.thrift_port, 10, alive):
        log(f"p4scope ptf: warning: no Thrift server on port {o.thrift_port}; "
            "tests that set queue rates will fail")
    log(f"p4scope ptf: switch ready after {time.monotonic() - t0:.1f}s; running ptf")
    argv = ptf_argv(o, built, ports, run_dir)
    (run_dir / "ptf.cmd").write_text(" ".join(argv) + "\n")
    p = lab.popen(argv, "ptf", cwd=run_dir)
    try:
        status = p.wait(o.timeout or None)
    except subprocess.TimeoutExpired:
        log(f"p4scope ptf: error: ptf still running after {o.timeout:.0f}s; stopping it")
        stop(p)
        status = 124
    switch_status = stop(sw)
    if switch_status not in (0, -signal.SIGTERM):
        log(f"p4scope ptf: the switch exited with status {switch_status}; last lines of "
            f"{switch_log}:\n{_tail(switch_log)}")
    return status
