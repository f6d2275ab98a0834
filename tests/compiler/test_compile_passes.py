"""The compiler as a list of named passes: `p4scope compile --list-passes`
and `--dump-after PASS` (p4c's --listFrontendPasses / --top4), and the
pass manager's stop at the first pass boundary with errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from p4scope.compiler import CompileError
from p4scope.compiler.driver import compile_text, pass_names

from tests.compiler.test_compile_cli import program_with

PASS_ORDER = ["preprocess", "parse", "frontend", "v1model-version", "declare", "check",
              "elaborate", "parsers-terminate", "unique-action-names", "p4info", "bmv2"]


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "p4scope.cli", "compile", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def good_program(tmp_path: Path) -> Path:
    p = tmp_path / "prog.p4"
    p.write_text(program_with("        hdr.h.b = hdr.h.b + 1;"))
    return p


def test_list_passes_prints_every_pass_in_running_order_without_a_program():
    r = run("--list-passes")
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines()]
    assert names == PASS_ORDER == pass_names()
    sub = [line for line in r.stdout.splitlines() if line.startswith("  ")]
    assert [s.split()[0] for s in sub] == PASS_ORDER[3:9]   # the front end's sub-passes


def test_dump_after_check_shows_the_types_and_still_writes_the_outputs(tmp_path):
    prog = good_program(tmp_path)
    r = run(prog, "-o", tmp_path / "out.json", "--dump-after", "check")
    assert r.returncode == 0, r.stderr
    assert "==>" not in r.stdout                      # one pass: the dump alone
    line = next(l for l in r.stdout.splitlines() if "Binary op='+'" in l)
    assert line.endswith(": bit<16>") and "prog.p4:" in line
    # the bundled includes are one line each, as p4c's ToP4 prints system files
    assert "  #include <core.p4>\n  #include <v1model.p4>\n" in r.stdout
    assert "ExternDecl name='packet_in'" not in r.stdout
    assert json.loads((tmp_path / "out.json").read_text())["pipelines"]


def test_dump_after_several_passes_heads_each_dump(tmp_path):
    prog = good_program(tmp_path)
    r = run(prog, "-o", tmp_path / "out.json", "--dump-after", "elaborate,p4info",
            "--dump-after", "bmv2")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    heads = [l for l in out.splitlines() if l.startswith("==> ")]
    assert heads == ["==> elaborate <==", "==> p4info <==", "==> bmv2 <=="]
    blocks = out.split("==> elaborate <==\n")[1].split("==> p4info <==")[0]
    assert "main: V1Switch" in blocks and "  control I: I (ig)" in blocks
    assert 'arch: "v1model"' in out.split("==> p4info <==")[1].split("==> bmv2 <==")[0]
    assert json.loads(out.split("==> bmv2 <==\n")[1]) == json.loads(
        (tmp_path / "out.json").read_text())


def test_dump_after_an_unknown_pass_is_a_usage_error(tmp_path):
    r = run(good_program(tmp_path), "-o", tmp_path / "out.json", "--dump-after", "typecheck")
    assert r.returncode == 2
    assert "--dump-after typecheck: no such pass" in r.stderr and "elaborate" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "out.json").exists()


def test_passes_before_an_error_are_dumped_and_the_error_stops_the_rest(tmp_path):
    prog = tmp_path / "bad.p4"
    prog.write_text(program_with("        hdr.h.a = nosuch;"))
    r = run(prog, "-o", tmp_path / "out.json", "--dump-after", "parse,elaborate")
    assert r.returncode == 1
    assert "==> parse <==" in r.stdout and "==> elaborate <==" not in r.stdout
    assert "nosuch: not declared" in r.stderr and not (tmp_path / "out.json").exists()


def test_the_observer_sees_passes_in_order_and_none_after_a_boundary_error():
    seen = []
    compile_text(program_with("        hdr.h.b = 1;"), "t.p4",
                 observer=lambda p, c: seen.append(p.name))
    assert seen == [n for n in PASS_ORDER if n != "frontend"][:8] + ["frontend", "p4info", "bmv2"]
    seen.clear()
    with pytest.raises(CompileError):
        compile_text(program_with("        hdr.h.a = hdr.h.b;"), "t.p4",
                     observer=lambda p, c: seen.append(p.name))
    # v1model-version and declare run without a boundary; check stops the run
    assert seen == ["preprocess", "parse", "v1model-version", "declare"]


def test_the_compile_benchmark_still_times_every_stage(tmp_path):
    from p4scope.bench.compile import STAGES, time_program

    t = time_program(good_program(tmp_path), [], repeat=1)
    assert not t.error and set(t.stages) == {label for label, _, _ in STAGES}
