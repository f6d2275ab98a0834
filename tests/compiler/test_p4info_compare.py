"""P4Info comparison and the p4c conformance harness (on hand-made data)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from finsy.proto import p4i
from typer.testing import CliRunner

from p4scope.conformance import cli as conformance
from p4scope.bench.compile import Timing, print_table, stage_timers
from p4scope.cli import app
from p4scope.compiler.diagnostics import CompileError, Diagnostic, ErrorKind, Pos
from p4scope.compiler.p4info_io import write_p4info
from p4scope.conformance.cli import compare_p4info


def make_info() -> p4i.P4Info:
    info = p4i.P4Info()
    info.pkg_info.arch = "v1model"
    for tid, name, widths in ((33554433, "ingress.t", (9, 16)), (33554434, "ingress.u", (8,))):
        t = info.tables.add()
        t.preamble.id, t.preamble.name, t.preamble.alias = tid, name, name.split(".")[-1]
        for i, w in enumerate(widths, start=1):
            mf = t.match_fields.add()
            mf.id, mf.name, mf.bitwidth = i, f"f{i}", w
            mf.match_type = p4i.MatchField.EXACT
        for aid in (16777217, 21257015):
            t.action_refs.add(id=aid)
        t.action_refs[-1].scope = p4i.ActionRef.DEFAULT_ONLY
        t.action_refs[-1].annotations.append("@defaultonly")
        t.size = 1024
    for aid, name in ((16777217, "ingress.fwd"), (21257015, "NoAction")):
        a = info.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = aid, name, name.split(".")[-1]
    info.actions[1].preamble.annotations.extend(['@noWarn("unused")', "@hidden"])
    p = info.actions[0].params.add()
    p.id, p.name, p.bitwidth = 1, "port", 9
    struct = info.type_info.structs["meta_t"]
    struct.members.add(name="a").type_spec.bitstring.bit.bitwidth = 8
    struct.members.add(name="b").type_spec.bitstring.bit.bitwidth = 16
    return info


# -- comparison -------------------------------------------------------------------------


def test_equal_messages_have_no_differences():
    assert compare_p4info(make_info(), make_info()) == []


def test_order_of_top_level_objects_and_refs_is_ignored():
    ours = make_info()
    ours.tables.reverse()
    ours.actions.reverse()
    refs = list(ours.tables[0].action_refs)
    del ours.tables[0].action_refs[:]
    ours.tables[0].action_refs.extend(reversed(refs))
    anns = ours.actions[0].preamble.annotations
    anns[0], anns[1] = anns[1], anns[0]
    assert ours != make_info()
    assert compare_p4info(ours, make_info()) == []


def test_precise_path_for_a_match_field_width():
    ours = make_info()
    ours.tables[0].match_fields[1].bitwidth = 32
    assert compare_p4info(ours, make_info()) == [
        "tables[ingress.t].match_fields[2].bitwidth: 32 != 16"]


def test_missing_and_unexpected_objects():
    ours = make_info()
    del ours.tables[1]
    extra = ours.counters.add()
    extra.preamble.id, extra.preamble.name = 302000000, "ingress.c"
    assert compare_p4info(ours, make_info()) == [
        "tables[ingress.u]: missing",
        "counters[ingress.c]: unexpected",
    ]


def test_action_refs_are_named_and_enums_shown_by_name():
    ours = make_info()
    ours.tables[0].action_refs[1].scope = p4i.ActionRef.TABLE_AND_DEFAULT
    assert compare_p4info(ours, make_info()) == [
        "tables[ingress.t].action_refs[NoAction].scope: TABLE_AND_DEFAULT != DEFAULT_ONLY"]


def test_annotations_compared_as_multiset():
    ours = make_info()
    ours.actions[1].preamble.annotations.remove("@hidden")
    ours.actions[1].preamble.annotations.append('@name("x")')
    assert compare_p4info(ours, make_info()) == [
        'actions[NoAction].preamble.annotations: unexpected "@name(\\"x\\")"',
        'actions[NoAction].preamble.annotations: missing "@hidden"',
    ]


def test_ids_and_strings_differences():
    ours = make_info()
    ours.actions[0].preamble.id = 16777299
    ours.actions[0].params[0].name = "egress_port"
    assert compare_p4info(ours, make_info()) == [
        "actions[ingress.fwd].preamble.id: 16777299 != 16777217",
        'actions[ingress.fwd].params[1].name: "egress_port" != "port"',
    ]


def test_type_info_maps_and_ordered_members():
    ours = make_info()
    members = ours.type_info.structs["meta_t"].members
    members[0].name, members[1].name = "b", "a"
    ours.type_info.headers["h_t"].SetInParent()
    assert compare_p4info(ours, make_info()) == [
        'type_info.structs[meta_t].members[0].name: "b" != "a"',
        'type_info.structs[meta_t].members[1].name: "a" != "b"',
        "type_info.headers[h_t]: unexpected",
    ]


def test_presence_of_submessages():
    ours = make_info()
    ours.ClearField("type_info")
    assert compare_p4info(ours, make_info()) == ["type_info: absent != present"]


def test_repeated_list_length_difference():
    ours = make_info()
    ours.type_info.structs["meta_t"].members.add(name="c")
    assert compare_p4info(ours, make_info()) == [
        "type_info.structs[meta_t].members: 3 elements != 2"]


def test_limit_stops_early():
    ours = make_info()
    for t in ours.tables:
        t.size = 1
    assert len(compare_p4info(ours, make_info())) == 2
    assert len(compare_p4info(ours, make_info(), limit=1)) == 1


# -- the harness ------------------------------------------------------------------------


V1 = "#include <core.p4>\n#include <v1model.p4>\n"


@pytest.fixture
def testdata(tmp_path: Path) -> Path:
    samples = tmp_path / "p4_16_samples"
    outputs = tmp_path / "p4_16_samples_outputs"
    samples.mkdir()
    outputs.mkdir()
    for name in ("a-bmv2.p4", "b-bmv2.p4", "c-bmv2.p4", "d-bmv2.p4", "e-bmv2.p4"):
        (samples / name).write_text(V1 + f"// {name}\n")
        if name != "e-bmv2.p4":
            write_p4info(make_info(), outputs / f"{name}.p4info.txtpb")
    (samples / "psa-bmv2.p4").write_text('#include "bmv2/psa.p4"\n')
    (samples / "plain.p4").write_text(V1)
    return tmp_path


def fake_compiler(program: Path):
    """a: equal, b: different, c: compile error, d: missing module, e: no golden."""
    name = program.name
    if name in ("a-bmv2.p4", "e-bmv2.p4"):
        return make_info()
    if name == "b-bmv2.p4":
        info = make_info()
        info.tables[0].size = 7
        return info
    if name == "c-bmv2.p4":
        raise CompileError([Diagnostic(ErrorKind.SYNTAX, Pos(str(program), 3, 4), "unexpected '}'")])
    raise ModuleNotFoundError("No module named 'p4scope.compiler.parser'")


def test_find_samples_selects_v1model_bmv2_programs(testdata):
    names = [p.name for p in conformance.find_samples(testdata)]
    assert names == ["a-bmv2.p4", "b-bmv2.p4", "c-bmv2.p4", "d-bmv2.p4", "e-bmv2.p4"]
    assert [p.name for p in conformance.find_samples(testdata, "[ab]-*")] == ["a-bmv2.p4", "b-bmv2.p4"]


def test_harness_counts_and_reasons(testdata, monkeypatch, tmp_path):
    monkeypatch.setattr(conformance, "_compile_p4info", fake_compiler)
    results = conformance.run_p4info_conformance(testdata)
    status = {r.name: r.status for r in results}
    assert status == {"a-bmv2.p4": "equal", "b-bmv2.p4": "different", "c-bmv2.p4": "failed",
                      "d-bmv2.p4": "failed", "e-bmv2.p4": "no-golden"}
    by_name = {r.name: r for r in results}
    assert by_name["a-bmv2.p4"].byte_identical
    assert by_name["b-bmv2.p4"].reason == "tables[ingress.t].size: 7 != 1024"
    assert by_name["c-bmv2.p4"].reason.endswith("c-bmv2.p4:3:4: unexpected '}'")
    assert by_name["d-bmv2.p4"].reason == (
        "ModuleNotFoundError: No module named 'p4scope.compiler.parser'")

    out = io.StringIO()
    conformance.summarize(results, testdata, out)
    text = out.getvalue()
    assert "compiled               3" in text
    assert "P4Info equal           1   (byte-identical text: 1)" in text
    assert "P4Info differing       1" in text
    assert "failed to compile      2" in text
    assert "b-bmv2.p4: tables[ingress.t].size: 7 != 1024" in text
    assert "d-bmv2.p4: ModuleNotFoundError" in text

    report = tmp_path / "report.txt"
    conformance.write_report(results, report)
    lines = report.read_text().splitlines()
    assert lines[0].startswith("a-bmv2.p4\tequal\t") and lines[0].endswith("byte-identical")
    assert "    tables[ingress.t].size: 7 != 1024" in lines


def test_real_compiler_failure_is_a_result_not_a_crash(testdata):
    # Whatever state the compiler is in, checking a program returns a result.
    result = conformance.check_sample(testdata / "p4_16_samples" / "a-bmv2.p4",
                                      testdata / "p4_16_samples_outputs" / "a-bmv2.p4.p4info.txtpb")
    assert result.status in ("equal", "different", "failed")
    if result.status == "failed":
        assert result.reason


def test_timeout_becomes_a_failure(testdata, monkeypatch):
    def slow(program):
        while True:
            pass

    monkeypatch.setattr(conformance, "_compile_p4info", slow)
    result = conformance.check_sample(testdata / "p4_16_samples" / "a-bmv2.p4",
                                      testdata / "nowhere.txtpb", timeout=0.2)
    assert result.status == "failed" and result.reason.startswith("timeout")


def test_cli_subcommand(testdata, monkeypatch, tmp_path):
    monkeypatch.setattr(conformance, "_compile_p4info", fake_compiler)
    report = tmp_path / "r.txt"
    res = CliRunner().invoke(app, ["conformance", "p4info", str(testdata), "--jobs", "1",
                                   "--filter", "a-*", "--report", str(report)])
    assert res.exit_code == 0, res.output
    assert "P4Info equal           1" in res.output
    assert report.is_file()
    res = CliRunner().invoke(app, ["conformance", "p4info", str(testdata), "-j", "1"])
    assert res.exit_code == 1
    res = CliRunner().invoke(app, ["conformance", "p4info", str(tmp_path / "none")])
    assert res.exit_code == 2


# -- the compile benchmark ----------------------------------------------------------------


def test_stage_timers_wrap_and_restore():
    import p4scope.compiler.preprocess as pp
    from p4scope.compiler.diagnostics import Diagnostics

    original = pp.preprocess
    sink: dict[str, float] = {}
    with stage_timers(sink):
        assert pp.preprocess is not original
        pp.preprocess("const bit<8> x = 1;\n", "t.p4", [], {}, Diagnostics())
    assert pp.preprocess is original
    assert sink["preprocess"] > 0


def test_bench_table_layout():
    out = io.StringIO()
    print_table([Timing("a.p4", 0.012, {"preprocess": 0.004, "parse": 0.008}),
                 Timing("bb.p4", 0.001, {"preprocess": 0.001}, error="E: boom")], out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["program", "total", "ms", "preprocess", "parse"]
    assert lines[1].split() == ["a.p4", "12.0", "4.0", "8.0"]
    assert lines[2].split()[:4] == ["bb.p4", "1.0", "1.0", "-"]
    assert lines[2].endswith("failed: E: boom")
    assert lines[3].split() == ["all", "13.0"]
