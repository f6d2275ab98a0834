"""Front end and P4Info on small programs: names, ids, widths, errors."""

import pytest
from finsy.proto import p4i

from p4scope.compiler import CompileError
from p4scope.compiler.driver import frontend_text
from p4scope.compiler.p4info import build_p4info

HEADERS = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t { bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
                bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
                bit<32> src; bit<32> dst; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }
struct metadata { bit<16> tag; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
"""

MAIN = "V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;\n"


def p4info_of(ingress: str, extra: str = ""):
    ir = frontend_text(HEADERS + extra + ingress + MAIN, "t.p4")
    return build_p4info(ir, ir.checker.diags)


def errors_of(src: str) -> str:
    with pytest.raises(CompileError) as e:
        frontend_text(src, "e.p4")
    return e.value.render()


def test_table_and_action_names_ids_and_widths():
    info = p4info_of("""
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table test1 {
        key = { hdr.ipv4.dst: lpm; hdr.ipv4.isValid(): exact; hdr.ethernet.src[47:40]: ternary; }
        actions = { fwd; drop; @defaultonly NoAction; }
        default_action = drop();
        size = 512;
    }
    apply { test1.apply(); }
}
""")
    (t,) = info.tables
    assert t.preamble.name == "ingress.test1"
    assert t.preamble.id == 36962230          # p4c's id for this name (jenkins hash)
    assert t.preamble.alias == "test1"
    assert [(m.name, m.bitwidth, m.match_type) for m in t.match_fields] == [
        ("hdr.ipv4.dst", 32, p4i.MatchField.LPM), ("hdr.ipv4.$valid$", 1, p4i.MatchField.EXACT),
        ("hdr.ethernet.src[47:40]", 8, p4i.MatchField.TERNARY)]
    assert t.size == 512
    names = {a.preamble.name: a for a in info.actions}
    assert set(names) == {"ingress.fwd", "ingress.drop", "NoAction"}
    assert names["NoAction"].preamble.id == 21257015
    assert [(p.name, p.bitwidth) for p in names["ingress.fwd"].params] == [("port", 9)]
    assert t.initial_default_action.action_id == names["ingress.drop"].preamble.id
    assert t.const_default_action_id == 0
    scopes = {r.id: r.scope for r in t.action_refs}
    assert scopes[21257015] == p4i.ActionRef.DEFAULT_ONLY


def test_extern_instances_and_direct_resources():
    info = p4info_of("""
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(64, CounterType.packets_and_bytes) port_counts;
    register<bit<32>>(1024) depth;
    meter(16, MeterType.bytes) m;
    direct_counter(CounterType.packets) dc;
    action count_it() { dc.count(); }
    table t { key = { sm.ingress_port: exact; } actions = { count_it; } counters = dc; }
    apply { t.apply(); port_counts.count((bit<32>)sm.ingress_port); depth.write(0, 1); }
}
""")
    (c,) = info.counters
    assert (c.preamble.name, c.size, c.spec.unit) == ("ingress.port_counts", 64, p4i.CounterSpec.BOTH)
    (r,) = info.registers
    assert (r.preamble.name, r.size, r.type_spec.bitstring.bit.bitwidth) == ("ingress.depth", 1024, 32)
    (m,) = info.meters
    assert (m.preamble.name, m.size, m.spec.unit) == ("ingress.m", 16, p4i.MeterSpec.BYTES)
    (dc,) = info.direct_counters
    assert dc.direct_table_id == info.tables[0].preamble.id
    assert list(info.tables[0].direct_resource_ids) == [dc.preamble.id]


def test_nested_control_instance_names():
    info = p4info_of("""
control inner(inout headers hdr, inout standard_metadata_t sm) {
    action a() { }
    table t { actions = { a; } }
    apply { t.apply(); }
}
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    inner() c1;
    apply { c1.apply(hdr, sm); }
}
""")
    assert [t.preamble.name for t in info.tables] == ["ingress.c1.t"]
    assert {a.preamble.name for a in info.actions} == {"ingress.c1.a", "NoAction"}


def test_digest_type_info():
    info = p4info_of("""
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { digest<learn_t>(1, {hdr.ethernet.src, sm.ingress_port}); }
}
""", extra="struct learn_t { bit<48> mac; bit<9> port; }\n")
    (d,) = info.digests
    assert d.preamble.name == "learn_t"
    assert d.type_spec.struct.name == "learn_t"
    members = info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("mac", 48), ("port", 9)]


def test_undefined_name_is_reported_with_position():
    msg = errors_of(HEADERS + """
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { hdr.ipv4.ttl = nosuch; }
}
""" + MAIN)
    assert "e.p4:" in msg and "nosuch: not declared" in msg


def test_width_mismatch_is_an_error():
    msg = errors_of(HEADERS + """
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { hdr.ipv4.ttl = hdr.ipv4.len; }
}
""" + MAIN)
    assert "width mismatch" in msg and "bit<16>" in msg and "bit<8>" in msg


def test_writing_an_in_parameter_is_an_error():
    msg = errors_of(HEADERS.replace(
        "control D(packet_out pkt, in headers hdr) { apply {",
        "control D(packet_out pkt, in headers hdr) { apply { hdr.ipv4.ttl = 1;") + """
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
""" + MAIN)
    assert "'in' parameter" in msg
