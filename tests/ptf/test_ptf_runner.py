"""`p4scope ptf`'s pieces that need no root: command lines, test
parameters, program lookup, and its refusals (exit status 2, a reason)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from p4scope.ptf import runner as ptf_runner
from p4scope.ptf import targets as ptf_targets
from p4scope.ptf.lab import ptf_iface, switch_iface

ROOT = Path(__file__).resolve().parents[2]
BUILT = ptf_targets.Built(Path("/r/build/dut.json"), Path("/r/build/dut.p4info.txtpb"), "p4scope")


def ptf_params(text: str) -> dict:
    """What PTF makes of --test-params: the text is run as a class body."""
    ns: dict = {}
    exec("class _P:\n    " + text, ns)
    return {k: v for k, v in vars(ns["_P"]).items() if not k.startswith("__")}


def test_test_params_are_what_p4cs_base_test_reads():
    p = ptf_params(ptf_runner.test_params(ptf_runner.PtfOptions(target="bmv2", grpc_port=50051), BUILT))
    assert p == {"grpcaddr": "127.0.0.1:50051", "p4info": "/r/build/dut.p4info.txtpb",
                 "config": "/r/build/dut.json", "device_id": 0, "cpu_port": 255,
                 "thrift": "127.0.0.1:9090", "target": "bmv2"}


def test_ptf_command_line_maps_port_n_to_ptfn_and_passes_extra_args_last(tmp_path):
    o = ptf_runner.PtfOptions(ports=3, ptf_args=["--failfast", "l2"])
    argv = ptf_runner.ptf_argv(o, BUILT, [1, 2, 3], tmp_path)
    assert argv[-2:] == ["--failfast", "l2"]
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-i"] == ["1@ptf1", "2@ptf2",
                                                                      "3@ptf3"]
    assert argv[argv.index("--test-dir") + 1] == str(ptf_runner.DEFAULT_TEST_DIR)


def test_switch_command_line_is_simple_switch_grpcs():
    argv = ptf_targets.switch_argv(["SW"], [1, 2], switch_iface, 9559, 9090, 255)
    assert argv == ["SW", "-i", "1@sw1", "-i", "2@sw2", "--device-id", "0", "--thrift-port",
                    "9090", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:9559",
                    "--cpu-port", "255"]
    assert switch_iface(12) == "sw12" and ptf_iface(12) == "ptf12"


def test_p4scope_switch_program_is_this_environments():
    head = ptf_targets.switch_program("p4scope")
    assert Path(head[0]).parent == Path(sys.executable).parent or head[1:] == [
        "-m", "p4scope.switch.daemon"]


@pytest.mark.skipif(shutil.which("simple_switch_grpc") is not None,
                    reason="BMv2 is installed here")
def test_bmv2_target_without_bmv2_says_so():
    with pytest.raises(ptf_targets.TargetError, match="simple_switch_grpc is not installed"):
        ptf_targets.switch_program("bmv2")


def test_compiler_choice():
    assert ptf_targets.which_compiler("p4scope") == "p4scope"
    assert ptf_targets.which_compiler("bmv2", "p4scope") == "p4scope"
    expected = "p4c" if shutil.which(ptf_targets.P4C) else "p4scope"
    assert ptf_targets.which_compiler("bmv2") == expected


def test_program_lookup():
    assert ptf_runner.program_source("dut") == ROOT / "p4src" / "dut.p4"
    with pytest.raises(ptf_runner.SetupError, match="no p4src/nope.p4 .there are: .*dut"):
        ptf_runner.program_source("nope")
    with pytest.raises(ptf_runner.SetupError, match="no such file"):
        ptf_runner.program_source("/nonexistent/x.p4")


def test_refusals_exit_2_with_a_reason():
    r = subprocess.run([sys.executable, "-m", "p4scope.cli", "ptf", "--target", "tofino"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "error:" in r.stderr and ("tofino" in r.stderr or "needs root" in r.stderr)


def test_compile_into_the_run_directory(tmp_path):
    built = ptf_targets.compile_program(ROOT / "p4src" / "dut.p4", tmp_path, "p4scope", log=lambda s: None)
    assert built.json == tmp_path / "dut.json" and built.json.stat().st_size > 1000
    assert "tables" in built.p4info.read_text()


def test_compile_errors_are_reported(tmp_path):
    bad = tmp_path / "bad.p4"
    bad.write_text("control c() { apply { x = ; } }\n")
    with pytest.raises(ptf_targets.TargetError, match="compiling .*bad.p4 failed"):
        ptf_targets.compile_program(bad, tmp_path / "out", "p4scope", log=lambda s: None)


def test_switch_binary_is_made_absolute(monkeypatch):
    """The switch runs in the run directory: a relative --switch-binary must
    still name the same program."""
    exe = Path(sys.executable)
    monkeypatch.chdir(exe.parent)
    assert ptf_targets.switch_program("bmv2", f"./{exe.name}") == [str(exe.parent / exe.name)]
