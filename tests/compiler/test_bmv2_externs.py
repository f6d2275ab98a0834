"""BMv2 backend: v1model extern calls (hash, random, digest, clone,
resubmit, recirculate, truncate, log_msg, assert) and checksums, plus the
fixed parts of the document (errors, field aliases, __meta__)."""

from tests.compiler.bmv2_support import (EGRESS, HEADERS, MAIN, PARSER, compile_ingress,
                                         compile_json, ingress, walk_primitives)


def ops(body: str, locals_: str = "", extra: str = ""):
    j = compile_ingress(body, locals_, extra=extra)
    return j, walk_primitives(j)


def test_hash_becomes_a_calculation():
    j, prims = ops("hash(meta.tag, HashAlgorithm.crc16, 16w0, { hdr.ipv4.src, hdr.ipv4.dst, 8w7 }, 16w64);")
    # the constant input is first copied into a temporary, as p4c does
    assert prims[0]["op"] == "assign" and prims[0]["parameters"][1] == {"type": "hexstr", "value": "0x07"}
    p = prims[1]
    assert p["op"] == "modify_field_with_hash_based_offset"
    dst, base, calc, mx = p["parameters"]
    assert dst == {"type": "field", "value": ["scalars", "metadata.tag"]}
    assert base == {"type": "hexstr", "value": "0x0000"} and mx == {"type": "hexstr", "value": "0x0040"}
    c = next(c for c in j["calculations"] if c["name"] == calc["value"])
    assert c["algo"] == "crc16"
    assert c["input"] == [{"type": "field", "value": ["ipv4", "src"]},
                          {"type": "field", "value": ["ipv4", "dst"]},
                          c["input"][2]]
    assert c["input"][2] == prims[0]["parameters"][0]


def test_random():
    _, prims = ops("random(meta.x, 8w1, 8w9);")
    assert prims[0] == {"op": "modify_field_rng_uniform", "parameters": [
        {"type": "field", "value": ["scalars", "metadata.x"]},
        {"type": "hexstr", "value": "0x01"}, {"type": "hexstr", "value": "0x09"}]}


def test_digest_learn_list_named_after_the_struct():
    extra = "struct learn_t { bit<48> src; bit<9> port; }\n"
    j, prims = ops("digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });", extra=extra)
    assert j["learn_lists"] == [{"id": 1, "name": "learn_t", "elements": [
        {"type": "field", "value": ["ethernet", "src"]},
        {"type": "field", "value": ["standard_metadata", "ingress_port"]}]}]
    assert prims[0] == {"op": "generate_digest", "parameters": [
        {"type": "hexstr", "value": "0x00000001"}, {"type": "hexstr", "value": "0x1"}]}


def test_clone_resubmit_recirculate_and_field_lists():
    extra = """
struct fl_meta_t { @field_list(1) bit<8> keep; bit<8> other; }
"""
    j, prims = ops("clone(CloneType.I2E, 32w5); clone3(CloneType.E2E, 32w6, { meta.tag });"
                   " resubmit_preserving_field_list(1);", extra=extra)
    assert prims[0]["op"] == "clone_ingress_pkt_to_egress"
    assert prims[0]["parameters"][1] == {"type": "hexstr", "value": "0x0"}
    assert prims[1]["op"] == "clone_egress_pkt_to_egress"
    fl = next(f for f in j["field_lists"] if f["id"] == int(prims[1]["parameters"][1]["value"], 16))
    assert fl["elements"] == [{"type": "field", "value": ["scalars", "metadata.tag"]}]
    assert prims[2]["op"] == "resubmit"


def test_preserving_field_list_uses_annotated_metadata():
    src = HEADERS.replace("struct metadata { bit<16> tag; bit<8> x; bool flag; }",
                          "struct metadata { @field_list(1) bit<16> tag; bit<8> x; bool flag; }")
    rest = """
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); } }
"""
    j = compile_json(src + PARSER + rest + EGRESS + ingress("resubmit_preserving_field_list(1);") + MAIN)
    assert j["field_lists"] == [{"id": 1, "name": "field_list1", "elements": [
        {"type": "field", "value": ["scalars", "metadata.tag"]}]}]


def test_truncate_log_assert_mark_to_drop():
    _, prims = ops('truncate(32w64); log_msg("x={}", { hdr.h.a }); assert(hdr.h.a == 1); mark_to_drop(sm);')
    assert [p["op"] for p in prims] == ["truncate", "log_msg", "assert", "mark_to_drop"]
    assert prims[1]["parameters"] == [{"type": "string", "value": "x={}"},
                                      {"type": "parameters_vector", "value": [
                                          {"type": "field", "value": ["h", "a"]}]}]


def test_checksums():
    rest = """
control VC(inout headers hdr, inout metadata meta) {
    apply { verify_checksum(hdr.ipv4.isValid(), { hdr.ipv4.version, hdr.ipv4.ihl }, hdr.ipv4.csum,
                            HashAlgorithm.csum16); }
}
control CC(inout headers hdr, inout metadata meta) {
    apply { update_checksum_with_payload(true, { hdr.ipv4.src }, hdr.ipv4.csum, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); } }
"""
    j = compile_json(HEADERS + PARSER + rest + EGRESS + ingress("") + MAIN)
    v, u = j["checksums"]
    assert v["verify"] and not v["update"] and v["target"] == ["ipv4", "csum"]
    assert v["if_cond"]["value"]["op"] == "d2b"
    assert u["update"] and not u["verify"] and u["if_cond"] == {"type": "bool", "value": True}
    calc = next(c for c in j["calculations"] if c["name"] == u["calculation"])
    assert calc["algo"] == "csum16" and calc["input"][-1]["type"] == "payload"


def test_document_fixed_parts():
    j = compile_ingress("")
    assert j["__meta__"]["version"] == [2, 23]
    assert j["errors"][:3] == [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2]]
    assert ["queueing_metadata.enq_qdepth", ["standard_metadata", "enq_qdepth"]] in j["field_aliases"]
    std = next(t for t in j["header_types"] if t["name"] == "standard_metadata")
    assert sum(f[1] for f in std["fields"]) % 8 == 0
    assert j["headers"][0]["name"] == "scalars"
    assert {p["name"] for p in j["pipelines"]} == {"ingress", "egress"}
    assert j["parsers"][0]["name"] == "parser" and j["deparsers"][0]["name"] == "deparser"
