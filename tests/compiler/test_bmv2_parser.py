"""BMv2 backend: parser states, transition keys and value/mask encoding,
value sets, lookahead, stacks, sub-parser inlining, deparser order."""

from tests.compiler.bmv2_support import HEADERS, MAIN, REST, EGRESS, compile_json, ingress

STACKS = """
header tag_t { bit<12> id; bit<2> kind; bit<2> pad; }
struct sheaders { ethernet_t ethernet; tag_t[3] tags; ipv4_t ipv4; }
"""


def prog(parser: str, extra: str = "", deparser: str = "") -> dict:
    rest = REST
    if deparser:
        rest = rest.replace("apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.h); }", deparser)
    return compile_json(HEADERS + extra + parser + rest + EGRESS + ingress("") + MAIN)


def states(j: dict) -> dict:
    return {s["name"]: s for s in j["parsers"][0]["parse_states"]}


def test_select_values_masks_and_default():
    j = prog("""
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            0x8100 &&& 0xefff: accept;
            default: reject;
        }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}""")
    s = states(j)["start"]
    assert s["parser_ops"] == [{"parameters": [{"type": "regular", "value": "ethernet"}], "op": "extract"}]
    assert s["transition_key"] == [{"type": "field", "value": ["ethernet", "etherType"]}]
    assert s["transitions"] == [
        {"type": "hexstr", "value": "0x0800", "mask": None, "next_state": "parse_ipv4"},
        {"type": "hexstr", "value": "0x8100", "mask": "0xefff", "next_state": None},
        {"type": "default", "value": None, "mask": None, "next_state": None},
    ]
    assert j["parsers"][0]["init_state"] == "start"


def test_multi_field_key_pads_each_part_to_bytes():
    j = prog("""
parser P(packet_in pkt, out sheaders hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.id, hdr.tags.last.kind) {
            (0xaba, 3): accept;
            (0xaba, _): accept;
        }
    }
}""".replace("out sheaders", "out sheaders"), extra=STACKS, deparser="apply { pkt.emit(hdr); }")
    s = states(j)["start"]
    assert s["parser_ops"] == [{"parameters": [{"type": "stack", "value": "tags"}], "op": "extract"}]
    assert s["transition_key"][0] == {"type": "stack_field", "value": ["tags", "id"]}
    assert s["transitions"][0]["value"] == "0x0aba03" and s["transitions"][0]["mask"] is None
    assert s["transitions"][1]["value"] == "0x0aba00" and s["transitions"][1]["mask"] == "0x0fff00"
    assert [h["name"] for h in j["headers"] if h["name"].startswith("tags")] == ["tags[0]", "tags[1]", "tags[2]"]
    assert j["header_stacks"][0]["name"] == "tags" and j["header_stacks"][0]["size"] == 3
    assert j["deparsers"][0]["order"] == ["ethernet", "tags[0]", "tags[1]", "tags[2]", "ipv4"]


def test_range_case_becomes_masks():
    j = prog("""
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) { 4 .. 7: accept; 8 .. 9: accept; }
    }
}""")
    t = states(j)["start"]["transitions"]
    assert [(x["value"], x["mask"]) for x in t] == [("0x04", "0xfc"), ("0x08", "0xfe")]


def test_value_set():
    j = prog("""
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) pvs;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { pvs: accept; default: accept; }
    }
}""")
    assert j["parse_vsets"] == [{"name": "P.pvs", "id": 0, "compressed_bitwidth": 16, "max_size": 4}]
    assert states(j)["start"]["transitions"][0] == {"type": "parse_vset", "value": "P.pvs", "mask": None,
                                                    "next_state": None}


def test_lookahead_key_goes_through_a_temporary():
    j = prog("""
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        transition select(pkt.lookahead<bit<8>>()) { 0x45: accept; default: accept; }
    }
}""")
    s = states(j)["start"]
    set_op = s["parser_ops"][0]
    assert set_op["op"] == "set" and set_op["parameters"][1] == {"type": "lookahead", "value": [0, 8]}
    assert s["transition_key"] == [{"type": "field", "value": set_op["parameters"][0]["value"]}]


def test_verify_and_assignment_ops():
    j = prog("""
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.NoMatch);
        meta.x = hdr.ipv4.ttl;
        transition accept;
    }
}""")
    ops = states(j)["start"]["parser_ops"]
    assert ops[1]["op"] == "verify"
    assert ops[1]["parameters"][1] == {"type": "hexstr", "value": "0x2"}
    assert ops[2] == {"parameters": [{"type": "field", "value": ["scalars", "metadata.x"]},
                                     {"type": "field", "value": ["ipv4", "ttl"]}], "op": "set"}


def test_sub_parser_is_inlined():
    j = prog("""
parser Sub(packet_in pkt, out ipv4_t ip) {
    state start { pkt.extract(ip); transition accept; }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.ethernet);
        sub.apply(pkt, hdr.ipv4);
        meta.x = 1;
        transition accept;
    }
}""")
    s = states(j)
    start = s["start"]
    inner = s[start["transitions"][0]["next_state"]]
    assert inner["parser_ops"][0]["parameters"][0] == {"type": "regular", "value": "ipv4"}
    cont = s[inner["transitions"][0]["next_state"]]
    assert cont["parser_ops"][0]["op"] == "set"
    assert cont["transitions"][0]["next_state"] is None
