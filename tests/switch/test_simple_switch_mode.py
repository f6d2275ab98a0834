"""simple_switch (`p4scope-switch`, or `p4scope switch -- --no-grpc`): the
Thrift API only, no gRPC server, so several run side by side; `p4scope
switch` stays simple_switch_grpc (gRPC on 127.0.0.1:9559 by default)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from p4scope.switch.options import parse_args

from tests.switch import sw_program as program

BIN = Path(sys.executable).parent


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (from /proc: its sockets' inodes)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                    ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def wait_ready(proc, ready: Path, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready.exists():
            return ready.read_text().strip()
        if proc.poll() is not None:
            raise AssertionError(f"exited early: {proc.communicate()}")
        time.sleep(0.05)
    raise AssertionError("not ready in time")


def stop(proc) -> str:
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"no clean stop: {proc.communicate()}") from None
    assert proc.returncode == 0, err
    return err


def test_simple_switch_serves_thrift_only_side_by_side(tmp_path):
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    commands = {
        "p4scope-switch": [str(BIN / "p4scope-switch")],
        "p4scope switch": [str(BIN / "p4scope"), "switch"],
    }
    procs = {}
    try:
        for name, cmd in commands.items():
            extra = ["--no-grpc"] if name == "p4scope switch" else []
            procs[name] = subprocess.Popen(
                [*cmd, "--thrift-port", "0", str(prog), "--", "--ready-file",
                 str(tmp_path / f"{name}.ready"), *extra],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, proc in procs.items():
            addr = wait_ready(proc, tmp_path / f"{name}.ready")  # the Thrift address
            host, _, port = addr.rpartition(":")
            assert host == "127.0.0.1"
            assert listening_ports(proc.pid) == {int(port)}  # no gRPC server, on 9559 or any
            cli = subprocess.run([str(BIN / "p4scope"), "switch-cli", "--thrift-port", port],
                                 input="switch_info\n", capture_output=True, text=True,
                                 timeout=60)
            assert cli.returncode == 0 and "device_id" in cli.stdout, cli
    finally:
        errs = {name: stop(proc) for name, proc in procs.items()}
    for name, err in errs.items():
        assert f"{name}: ready: Thrift on 127.0.0.1:" in err, err
        assert "P4Runtime" not in err and "Traceback" not in err


def test_grpc_options_are_not_simple_switch_options(tmp_path):
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    r = subprocess.run([str(BIN / "p4scope-switch"), str(prog), "--", "--grpc-server-addr",
                        "127.0.0.1:0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "unrecognised target option '--grpc-server-addr'" in r.stderr
    assert "simple_switch has no gRPC server" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([str(BIN / "p4scope"), "switch", str(prog), "--", "--no-grpc",
                        "--cpu-port", "64"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--cpu-port: there is no gRPC server with --no-grpc" in r.stderr


def test_command_lines_choose_the_servers(tmp_path):
    prog = tmp_path / "x.json"
    prog.write_text("{}")
    grpc = parse_args([str(prog)])  # p4scope switch, p4scope-switch-grpc
    assert grpc.grpc and grpc.grpc_server_addr == "127.0.0.1:9559"
    simple = parse_args([str(prog), "--", "--enable-swap", "--drop-port", "64"], grpc=False)
    assert not simple.grpc and simple.enable_swap and simple.drop_port == 64
    assert not parse_args([str(prog), "--", "--no-grpc"]).grpc
