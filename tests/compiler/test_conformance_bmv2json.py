"""`p4scope conformance bmv2-json`: would BMv2 load p4scope's JSON of p4c's
samples, with p4c's JSON as the model; on a hand-made copy of the layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.compiler import compile_file

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    action add(bit<8> v) { hdr.h.a = hdr.h.a + v; }
    table t { key = { hdr.h.b: exact; } actions = { add; } default_action = add(1); }
    apply { t.apply(); }
}
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """testdata/p4_16_samples with two programs, and a reference folder
    holding a JSON for one of them (the other one p4c "rejected")."""
    samples = tmp_path / "testdata" / "p4_16_samples"
    samples.mkdir(parents=True)
    (samples / "add-bmv2.p4").write_text(PROGRAM)
    (samples / "rejected-bmv2.p4").write_text(PROGRAM)
    ref = tmp_path / "reference" / "p4c-bm2-ss"
    ref.mkdir(parents=True)
    # stands in for p4c's JSON: an accepted one
    (ref / "add-bmv2.json").write_text(json.dumps(compile_file(samples / "add-bmv2.p4").bmv2_json))
    return tmp_path / "testdata", tmp_path / "reference"


def run(*args: str):
    return CliRunner().invoke(app, ["conformance", "bmv2-json", *args])


def test_accepted_json_and_skipped_programs(layout):
    testdata, reference = layout
    res = run(str(testdata), str(reference))
    assert res.exit_code == 0, res.output
    assert "BMv2 would load          1" in res.output
    assert "BMv2 would refuse        0" in res.output
    assert "p4c rejects (skipped)    1" in res.output
    # the folder of JSON files itself works too
    assert run(str(testdata), str(reference / "p4c-bm2-ss")).exit_code == 0


def test_action_data_lowered_as_runtime_data_in_an_expression_is_reported(layout, monkeypatch):
    # the lowering before the fix: action data left as runtime_data inside `+`
    from p4scope.compiler.bmv2 import values

    monkeypatch.setattr(values, "_in_expression", lambda operand: operand)
    testdata, reference = layout
    res = run(str(testdata), str(reference))
    assert res.exit_code == 1
    assert "BMv2 would refuse        1" in res.output
    assert "add-bmv2: actions[0] ('I.add').primitives[0] ('assign')" in res.output
    assert "Invalid 'type' in expression: 'runtime_data'" in res.output


def test_a_flagged_reference_is_a_fault_of_the_check(layout):
    testdata, reference = layout
    ref = reference / "p4c-bm2-ss" / "add-bmv2.json"
    j = json.loads(ref.read_text())
    j["actions"][0]["primitives"][0]["parameters"][1] = {"type": "local", "value": 0}
    ref.write_text(json.dumps(j))
    res = run(str(testdata), str(reference))
    assert res.exit_code == 1
    assert "passes the check: 0" in res.output
    assert "a fault of the check" in res.output


def test_a_program_that_does_not_compile_is_counted(layout):
    testdata, reference = layout
    (testdata / "p4_16_samples" / "add-bmv2.p4").write_text(PROGRAM.replace("apply { t.apply(); }", "apply {"))
    res = run(str(testdata), str(reference))
    assert res.exit_code == 1
    assert "failed to compile        1" in res.output
    assert "add-bmv2: " in res.output


def test_bad_arguments_exit_2_naming_them(layout, tmp_path):
    testdata, reference = layout
    res = run(str(tmp_path / "none"), str(reference))
    assert res.exit_code == 2 and "p4_16_samples" in res.output
    res = run(str(testdata), str(tmp_path / "none"))
    assert res.exit_code == 2 and "REFERENCE" in res.output
    res = run(str(testdata), str(reference), "--timeout", "0")
    assert res.exit_code == 2 and "--timeout" in res.output
    res = run(str(testdata), str(reference), "--filter", "zz*")
    assert res.exit_code == 2
