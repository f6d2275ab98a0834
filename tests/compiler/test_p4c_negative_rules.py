"""Programs p4c rejects are rejected, with the error where p4c puts it.

Each test is a small program of its own breaking one rule p4c's front end
(or BMv2 mid end, or P4Runtime serializer) enforces; the expected place is
the line and column p4c reports for that kind of error (see p4c's
testdata/p4_16_errors for the originals of these conditions).
"""

from __future__ import annotations

import pytest

from p4scope.compiler import CompileError
from p4scope.compiler.driver import compile_text

HEADER = """#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }
"""
PARSER = """parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
"""
REST = """control C(inout hs_t hdr, inout m_t m) { apply { } }
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def program(ingress: str = "apply { }", top: str = "", parser: str = PARSER) -> str:
    """A v1model program whose ingress control I has `ingress` as its
    locals and apply block."""
    return (HEADER + top + parser +
            "control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {\n"
            + ingress + "\n}\n" + REST)


def first_error(text: str, filename: str = "t.p4"):
    with pytest.raises(CompileError) as e:
        compile_text(text, filename)
    return e.value.diagnostics[0]


def at(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """(line, column) of the nth occurrence of `needle` in `text`."""
    i = -1
    for _ in range(nth):
        i = text.index(needle, i + 1)
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


def assert_error(text: str, message: str, where: tuple[int, int], file: str = "t.p4") -> None:
    d = first_error(text)
    assert message in d.message
    assert (d.pos.file.rsplit("/", 1)[-1], d.pos.line, d.pos.col) == (file, *where)


# -- actions: control-plane names, calls -------------------------------------------------

def test_actions_with_the_same_control_plane_name_conflict_at_the_second():
    text = program(
        top='@name("foo") action top_a() { }\n',
        ingress="""@name(".foo") action local_a() { }
    table t { key = { hdr.h.a : exact; } actions = { top_a; local_a; } }
    apply { t.apply(); }""")
    assert_error(text, ".foo: conflicting control plane name: foo", at(text, "local_a"))


def test_local_actions_of_one_control_with_the_same_global_name_conflict():
    text = program(ingress="""@name(".x") action a1() { }
    @name(".x") action a2() { }
    table t { key = { hdr.h.a : exact; } actions = { a1; a2; } }
    apply { t.apply(); }""")
    assert_error(text, ".x: conflicting control plane name: .x", at(text, "a2"))


def test_an_unused_action_takes_no_control_plane_name():
    text = program(top='@name("foo") action unused_a() { }\n',
                   ingress="""@name(".foo") action a() { }
    apply { a(); }""")
    compile_text(text, "t.p4")


def test_an_action_call_needs_every_argument():
    text = program(ingress="""action two(bit<8> x, bit<8> y) { hdr.h.a = x + y; }
    action one(bit<8> x) { two(x); }
    table t { key = { hdr.h.a : exact; } actions = { one; } }
    apply { t.apply(); }""")
    assert_error(text, "two(x): No argument supplied for y", at(text, "two(x)"))


def test_an_action_call_in_a_parser_is_an_error():
    parser = PARSER.replace("state start {", "state start { set_a(8w1);")
    text = program(top="action set_a(in bit<8> v) { }\n", parser=parser)
    assert_error(text, "set_a(8w1): Action calls are not allowed within parsers", at(text, "set_a(8w1)"))


@pytest.mark.parametrize("params, message, needle", [
    ("in int v", "v: parameters with type int must be directionless", "v)"),
    ("int v", "v: actions cannot have parameters with type int", "v)"),
])
def test_int_parameters(params, message, needle):
    text = program(ingress=f"action a({params}) {{ }}\n    apply {{ a(1); }}")
    assert_error(text, message, at(text, needle))


# -- tables ------------------------------------------------------------------------------

TABLE = """action a() { }
    action p(bit<8> v) { hdr.h.b = v; }
    table t {
        KEY
        actions = { a; p; }
        PROPS
    }
    apply { t.apply(); }"""


def table_program(key: str, props: str) -> str:
    return program(ingress=TABLE.replace("KEY", key).replace("PROPS", props))


def test_priorities_on_a_table_with_only_exact_and_lpm_keys():
    text = table_program("key = { hdr.h.a : exact; hdr.h.c : lpm; }",
                         "entries = { priority=10: (1, 2) : p(1); (2, 3) : p(2); }")
    line, col = at(text, "key = {")
    assert_error(text, "key match type does not require priorities, but some are specified",
                 (line, col + len("key = {")))


def test_first_entry_needs_a_priority_when_others_have_one():
    text = table_program("key = { hdr.h.a : ternary; }",
                         "entries = { 1 &&& 3 : p(1); priority=5: 2 : p(2); }")
    assert_error(text, "entry must have a priority", at(text, "1 &&& 3"))


def test_priorities_counting_below_zero_overflow():
    text = table_program("key = { hdr.h.a : ternary; }",
                         "priority_delta = 10;\n"
                         "        entries = { priority=12: 1 : p(1); 2 : p(2); 3 : p(3); }")
    line, col = at(text, "table t")
    assert_error(text, "t Overflow in priority computation", (line, col + len("table ")))


def test_const_entries_take_no_priorities():
    text = table_program("key = { hdr.h.a : ternary; }",
                         "const entries = { priority=12: 1 : p(1); }")
    assert_error(text, "Table with 'const' entries cannot have priorities", at(text, "priority=12"))


def test_descending_priorities_are_fine():
    compile_text(table_program("key = { hdr.h.a : ternary; }",
                               "priority_delta = 10;\n"
                               "        entries = { priority=30: 1 : p(1); 2 : p(2); 3 : p(3); }"), "t.p4")


def test_entries_before_the_key_are_an_error():
    text = program(ingress="""action a() { }
    table t {
        const entries = { 1 : a(); }
        key = { hdr.h.a : exact; }
        actions = { a; }
    }
    apply { t.apply(); }""")
    assert_error(text, "Entries list must be after table key", at(text, "entries"))


def test_defaultonly_action_in_an_entry_and_tableonly_default_action():
    text = program(ingress="""action a() { }
    action b() { }
    table t {
        key = { hdr.h.a : exact; }
        actions = { @tableonly a; @defaultonly b; }
        const entries = { 3 : b(); }
        default_action = a;
    }
    apply { t.apply(); }""")
    assert_error(text, "Action marked with defaultonly used in table", at(text, "3 : b()"))
    fixed = text.replace("3 : b()", "3 : a()")
    assert_error(fixed, "Action marked with tableonly used as default action", at(fixed, "default_action"))


@pytest.mark.parametrize("key, needle", [
    ("hdr.h.a + hdr.h.b", "hdr.h.a + hdr.h.b"),
    ("hdr.h.a & (hdr.h.b | 1)", "(hdr.h.b | 1)"),
])
def test_a_complex_key_needs_a_name(key, needle):
    text = table_program(f"key = {{ {key} : exact; }}", "")
    assert_error(text, "Complex key expression requires a @name annotation", at(text, needle))


@pytest.mark.parametrize("key", [
    "hdr.h.a + hdr.h.b : exact @name(\"sum\");",   # named
    "hdr.h.a & 0x0f : exact; hdr.h.c[7:0] : exact; hdr.h.isValid() : exact;",
])
def test_nameable_or_named_keys_compile(key):
    compile_text(table_program(f"key = {{ {key} }}", ""), "t.p4")


def test_a_mask_on_an_optional_key_is_an_invalid_key_expression():
    text = table_program("key = { hdr.h.a : optional; }", "const entries = { 0xaa &&& 0xf0 : p(1); }")
    assert_error(text, "0xaa &&& 0xf0 invalid key expression", at(text, "0xaa"))


# -- statements, expressions -------------------------------------------------------------

def test_switch_with_two_default_labels():
    text = program(ingress="""apply {
        switch (hdr.h.a) { 1: { } default: { } default: { } }
    }""")
    assert_error(text, "switch has multiple 'default' labels", at(text, "switch"))


def test_switch_label_after_default():
    text = program(ingress="""apply {
        switch (hdr.h.a) { default: { } 1: { } }
    }""")
    assert_error(text, "switch label 1 follows 'default' label", at(text, "switch"))


def test_switch_inside_an_action_is_refused_by_the_bmv2_target():
    text = program(ingress="""action a() { switch (hdr.h.a) { 1: { hdr.h.b = 1; } } }
    apply { a(); }""")
    assert_error(text, "switch statements not supported in actions on this target", at(text, "switch"))


def test_switch_in_an_apply_block_still_compiles():
    compile_text(program(ingress="apply { switch (hdr.h.a) { 1: { hdr.h.b = 1; } } }"), "t.p4")


def test_unsized_value_shifted_by_a_variable_amount():
    text = program(ingress="apply { hdr.h.a = (1 << hdr.h.b) + 8w2; }")
    assert_error(text, "1 << hdr.h.b: shift result type is arbitrary-precision int",
                 at(text, "(1 << hdr.h.b)"))


def test_shift_amount_of_a_new_type():
    text = program(top="type bit<8> Amount;\n",
                   ingress="apply { Amount n = (Amount)8w1; hdr.h.a = hdr.h.a << n; }")
    assert_error(text, "n: The right operand of shift must be either an expression of type bit<S>",
                 at(text, "n;"))


def test_shifts_p4c_accepts_compile():
    compile_text(program(ingress="apply { hdr.h.a = hdr.h.a << hdr.h.b; hdr.h.b = 1 << 3; hdr.h.c = 16w1 << hdr.h.a; }"),
                 "t.p4")


@pytest.mark.parametrize("slice_, message, needle", [
    ("8w2[-2:0]", "8w2[-2:0]: bit slicing should be specified as [msb:lsb]", "8w2"),
    ("8w2[{ }:0]", "{}: expected an integer value", "{ }"),
    ("8w2[7:{ }]", "{}: expected an integer value", "{ }"),
    ('8w2["x":0]', '"x": expected an integer value', '":0'),   # p4c: a string is at its closing quote
])
def test_bad_slice_bounds_are_errors_not_crashes(slice_, message, needle):
    text = HEADER + f"const bool tmp = (1 != {slice_});\n" + PARSER.replace("P(", "P0(") + "\n"
    assert_error(text, message, at(text, needle))


@pytest.mark.parametrize("label", ["0w0", "{0w0}", "3w1 &&& 3w3"])
def test_select_case_of_another_width(label):
    parser = PARSER.replace("transition accept;",
                            f"transition select(hdr.h.a[1:0]) {{ {label}: accept; default: reject; }}")
    text = program(parser=parser)
    assert_error(text, "which does not match the key type bit<2>", at(text, "select("))


def test_select_case_written_as_a_one_element_tuple_compiles():
    parser = PARSER.replace("transition accept;",
                            "transition select(hdr.h.a) { {8w1}: accept; default: reject; }")
    compile_text(program(parser=parser), "t.p4")


def test_parser_that_never_reaches_accept_or_reject():
    parser = """parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { transition s1; }
    state s1 { transition start; }
}
"""
    text = program(parser=parser)
    assert_error(text, "parser P: Parser never reaches accept or reject state", at(text, "P(packet_in"))


def test_p4runtime_translation_type_must_be_bit_string_or_integer():
    text = program(top='@p4runtime_translation("p4.org/x", bool)\ntype bit<8> T_t;\n')
    assert_error(text, "syntax error, unexpected 'bool'", at(text, "bool"))


@pytest.mark.parametrize("version, message", [
    ("-6419018", "-6419018: expected v1model version to be a non-negative number"),
    ("20000101", "20000101: unknown v1model version; initial supported version is 20180101, "
                 "latest is 20200408"),
])
def test_v1model_version_must_be_known(version, message):
    d = first_error(f"#define V1MODEL_VERSION {version}\n" + program())
    assert message in d.message
    assert d.pos.file.endswith("v1model.p4")
