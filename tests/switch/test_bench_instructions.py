"""`p4scope bench instructions`: callgrind's counts read right, the
difference of two runs per packet, and a real (short) count."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from p4scope.bench import instructions
from p4scope.bench.instructions import GENERATED, Count, function_name, parse_annotate, per_packet
from p4scope.cli import app

ANNOTATE = """\
--------------------------------------------------------------------------------
Profile data file 'callgrind.engine.1000' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Events shown:     Ir
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                 file:function
--------------------------------------------------------------------------------
  400,000 (40.00%)  ???:p4scope_dataplane::engine::Switch::receive_pkt [/x/p4scope_dataplane.so]
  100,000 (10.00%)  dataplane/src/pipeline/exec.rs:p4scope_dataplane::pipeline::exec::Exec::apply_table [/x/b]
   50,000 ( 5.00%)  /rustc/abc/library/core/src/slice/index.rs:p4scope_dataplane::pipeline::exec::Exec::apply_table [/x/b]
   30,000 ( 3.00%)  ???:0x0000000004f51000 [???]
   20,000 ( 2.00%)  ???:0x0000000004845000 [???]
   10,000 ( 1.00%)  ???:0x000000000010c9f4 [/usr/bin/python3.11]
    5,000 ( 0.50%)  ./string/../sysdeps/x86_64/multiarch/memset-vec-unaligned-erms.S:__memset_avx2_unaligned_erms [/usr/lib/libc.so.6]
    1,000 ( 0.10%)  <impl core::fmt::Debug for p4scope_dataplane::X>::fmt [/x/b]

--------------------------------------------------------------------------------
-- Auto-annotated source: dataplane/src/pipeline/exec.rs
--------------------------------------------------------------------------------
  90,000 ( 9.00%)      pub fn apply_table(&mut self, pkt: &mut Packet, ti: u32) -> Option<NodeRef> {
  10,000 ( 1.00%)  => dataplane/src/tables/mod.rs:p4scope_dataplane::tables::TableState::lookup_u128 (2x)
"""


def test_callgrind_annotate_rows_become_instructions_per_function():
    total, functions = parse_annotate(ANNOTATE)
    assert total == 1_000_000
    assert functions == Counter({
        "p4scope_dataplane::engine::Switch::receive_pkt": 400_000,
        # a function's lines inlined from other files add up under its name
        "p4scope_dataplane::pipeline::exec::Exec::apply_table": 150_000,
        # addresses in no object file: the code Cranelift built; Python's own stay apart
        GENERATED: 50_000,
        "0x000000000010c9f4": 10_000,
        "__memset_avx2_unaligned_erms": 5_000,
        "<impl core::fmt::Debug for p4scope_dataplane::X>::fmt": 1_000,
    })


@pytest.mark.parametrize("row, name", [
    ("???:a::b::c", "a::b::c"),
    ("dataplane/src/x.rs:a::b", "a::b"),
    ("x.S:memset", "memset"),
    ("a::b::c", "a::b::c"),  # a Rust path's colons are not a file's
])
def test_function_names_lose_their_file_and_keep_their_path(row, name):
    assert function_name(row) == name


def test_without_a_total_the_output_is_refused():
    with pytest.raises(ValueError, match="PROGRAM TOTALS"):
        parse_annotate("nothing here\n")


def test_the_difference_of_two_runs_per_packet():
    short = Count(10_000, 100, Counter({"a": 4_000, "b": 1_000}))
    long = Count(30_000, 300, Counter({"a": 12_000, "b": 1_000, "c": 600}))
    total, rows = per_packet(short, long)
    assert total == 100.0
    assert rows == [(40.0, "a"), (3.0, "c"), (0.0, "b")]
    with pytest.raises(ValueError):
        per_packet(long, short)


def test_a_real_count_is_the_same_twice():
    """The engine's L2/L3 program under callgrind: a plausible figure, and
    the same from a second invocation (what the bench is for) but for the
    set-up's few instructions that do not cancel out (hash tables seeded per
    process), shared by 9,000 packets here."""
    figures = []
    for _ in range(2):
        r = CliRunner().invoke(app, ["bench", "instructions", "--packets", "9000", "--top", "3"])
        assert r.exit_code == 0, r.output
        m = re.match(r"engine: ([\d,]+) instructions a packet \(callgrind, the difference of runs "
                     r"of 9,000 and 18,000 packets\)", r.output)
        assert m, r.output
        figures.append(int(m.group(1).replace(",", "")))
        assert "own instructions a packet, by function" in r.output
        assert len(r.output.splitlines()) == 5
    assert abs(figures[0] - figures[1]) <= 2
    assert 500 < figures[0] < 20_000


def test_without_valgrind_it_says_what_to_install(monkeypatch):
    monkeypatch.setattr(instructions.shutil, "which", lambda tool: None)
    r = CliRunner().invoke(app, ["bench", "instructions"])
    assert r.exit_code == 1 and "needs valgrind (apt-get install valgrind" in r.output


@pytest.mark.parametrize("status, stdout, says", [
    (1, "", "callgrind run failed (status 1): valgrind: boom"),
    (0, "", "the callgrind run printed no packet count"),
])
def test_a_failed_callgrind_run_is_reported_not_raised(monkeypatch, status, stdout, says):
    import subprocess

    def fake_run(args, **kw):
        out = next(a for a in args if a.startswith("--callgrind-out-file=")).split("=", 1)[1]
        open(out, "w").close()
        return subprocess.CompletedProcess(args, status, stdout=stdout, stderr="valgrind: boom")

    monkeypatch.setattr(instructions.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(instructions.subprocess, "run", fake_run)
    r = CliRunner().invoke(app, ["bench", "instructions"])
    assert r.exit_code == 1 and says in r.output and "Traceback" not in r.output
