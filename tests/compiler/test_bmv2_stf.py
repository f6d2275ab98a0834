"""BMv2 backend, end to end: small programs compiled by p4scope run on
p4scope's engine with STF packet tests."""

from tests.compiler.bmv2_support import HEADERS, MAIN, REST, EGRESS, ingress, run_stf_on

PARSER = """
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); pkt.extract(hdr.h); transition accept; }
}
"""
DEPARSER_REST = REST.replace("pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.h);",
                             "pkt.emit(hdr.ethernet); pkt.emit(hdr.h);")

ETH = "000000000001 000000000002 88b5"


def run(body: str, locals_: str, stf: str):
    src = HEADERS + PARSER + DEPARSER_REST + EGRESS + ingress(body, locals_) + MAIN
    r = run_stf_on(src, stf)
    assert r.passed, r.messages


def test_arithmetic_wraps_and_forwards():
    run("sm.egress_spec = 2; hdr.h.a = hdr.h.a + 0xff; hdr.h.s = hdr.h.s - 1; hdr.h.w = hdr.h.a ++ hdr.h.b;",
        "",
        f"packet 0 {ETH} 05 10 80 0000\n"
        f"expect 2 {ETH} 04 10 7f 0410\n")


def test_table_entries_from_the_control_plane():
    locals_ = """
    action fwd(bit<9> port, bit<8> v) { sm.egress_spec = port; hdr.h.b = v; }
    action drop() { mark_to_drop(sm); }
    table t { key = { hdr.h.a: exact; } actions = { fwd; drop; } default_action = drop(); }
"""
    run("t.apply();", locals_,
        "add ingress.t hdr.h.a:0x01 ingress.fwd(port:3, v:0x77)\n"
        f"packet 0 {ETH} 01 00 00 0000\n"
        f"expect 3 {ETH} 01 77 00 0000\n"
        f"packet 0 {ETH} 02 00 00 0000\n")


def test_copy_out_and_exit():
    locals_ = """
    bit<8> c = 12;
    action f(inout bit<8> x) { hdr.h.a = x; c = 24; x = x + 1; exit; }
"""
    run("sm.egress_spec = 1; f(c); hdr.h.b = c; hdr.h.a = 0;", locals_,
        f"packet 0 {ETH} 00 00 00 0000\n"
        f"expect 1 {ETH} 0c 00 00 0000\n")


def test_switch_and_return_in_sub_control():
    locals_ = """
    action a1() { hdr.h.b = 1; }
    action a2() { hdr.h.b = 2; }
    table t { key = { hdr.h.a: exact; } actions = { a1; a2; } default_action = a2(); }
"""
    body = """
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            a1: { hdr.h.w = 0x1111; return; }
            default: { hdr.h.w = 0x2222; }
        }
        hdr.h.s = 5;
"""
    run(body, locals_,
        "add ingress.t hdr.h.a:0x01 ingress.a1()\n"
        f"packet 0 {ETH} 01 00 00 0000\n"
        f"expect 1 {ETH} 01 01 00 1111\n"
        f"packet 0 {ETH} 02 00 00 0000\n"
        f"expect 1 {ETH} 02 02 05 2222\n")


def test_loops():
    locals_ = """
    action sums() {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < hdr.h.a; i = i + 1) {
            if (i == 6) { break; }
            if ((i & 1) == 1) { continue; }
            acc = acc + i;
        }
        hdr.h.b = acc;
        bit<16> w = 0;
        for (bit<16> k in 1 .. 4) { w = w + k; }
        hdr.h.w = w;
    }
"""
    # a = 10: even i below 6 are 0, 2, 4 -> 6; 1+2+3+4 = 10
    run("sm.egress_spec = 1; sums();", locals_,
        f"packet 0 {ETH} 0a 00 00 0000\n"
        f"expect 1 {ETH} 0a 06 00 000a\n"
        f"packet 0 {ETH} 03 00 00 0000\n"
        f"expect 1 {ETH} 03 02 00 000a\n")


def test_if_in_a_parser_state():
    parser = """
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        if (hdr.ethernet.etherType == 0x88b5) {
            pkt.extract(hdr.h);
            meta.x = 1;
        } else {
            meta.x = 2;
        }
        meta.tag = (bit<16>)meta.x;
        transition accept;
    }
}
"""
    src = HEADERS + parser + DEPARSER_REST + EGRESS + ingress(
        "sm.egress_spec = 1; if (hdr.h.isValid()) { hdr.h.w = meta.tag; }") + MAIN
    r = run_stf_on(src, f"packet 0 {ETH} 00 00 00 0000\nexpect 1 {ETH} 00 00 00 0001\n"
                        "packet 0 000000000001 000000000002 0800 00 00 00 0000\n"
                        "expect 1 000000000001 000000000002 0800 00 00 00 0000\n")
    assert r.passed, r.messages


def test_signed_action_data_is_sign_extended():
    locals_ = """
    action widen(int<8> v) { hdr.h.w = (bit<16>)(int<16>)v; hdr.h.s = v; }
    table t { key = { hdr.h.a: exact; } actions = { widen; } }
"""
    run("sm.egress_spec = 1; t.apply();", locals_,
        "add ingress.t hdr.h.a:0x01 ingress.widen(v:0xfe)\n"
        f"packet 0 {ETH} 01 00 00 0000\n"
        f"expect 1 {ETH} 01 00 fe fffe\n")
