"""BMv2 backend: tables (keys, match types, entries, default entries),
their resources, and extern arrays."""

from tests.compiler.bmv2_support import action, action_by_id, compile_ingress, node, pipeline, table

ACTIONS = """
    action set_a(bit<8> v) { hdr.h.a = v; }
    action nop() { }
"""


def t_of(decl: str, body: str = "t.apply();", locals_: str = ""):
    j = compile_ingress(body, ACTIONS + locals_ + decl)
    return j, table(j, "ingress.t")


def test_keys_and_table_match_type():
    j, t = t_of("""table t { key = { hdr.h.a: exact; hdr.ipv4.dst: lpm; hdr.h.b & 0xf0: ternary;
                                     hdr.ipv4.isValid(): exact; }
                            actions = { set_a; nop; } size = 64; }""")
    assert t["key"] == [
        {"match_type": "exact", "name": "hdr.h.a", "target": ["h", "a"], "mask": None},
        {"match_type": "lpm", "name": "hdr.ipv4.dst", "target": ["ipv4", "dst"], "mask": None},
        {"match_type": "ternary", "name": "hdr.h.b & 0xf0", "target": ["h", "b"], "mask": "0xf0"},
        {"match_type": "exact", "name": "hdr.ipv4.$valid$", "target": ["ipv4", "$valid$"], "mask": None},
    ]
    assert t["match_type"] == "ternary"
    assert t["max_size"] == 64
    assert t["type"] == "simple"


def test_computed_key_goes_through_a_temporary():
    j, t = t_of("table t { key = { hdr.h.w[7:0]: exact @name(\"low\"); } actions = { nop; } }")
    k = t["key"][0]
    assert k["name"] == "low" and k["target"][0] == "scalars"
    # the key is computed by a keyless table just before
    first = node(j, pipeline(j)["init_table"])
    assert first["base_default_next"] == "ingress.t"
    prims = action_by_id(j, first["default_entry"]["action_id"])["primitives"]
    assert prims[0]["parameters"][0] == {"type": "field", "value": k["target"]}


def test_default_entry_with_constant_arguments():
    _, t = t_of("table t { key = { hdr.h.a: exact; } actions = { set_a; nop; } "
                "const default_action = set_a(5); }")
    de = t["default_entry"]
    assert de["action_const"] and de["action_entry_const"]
    assert de["action_data"] == ["0x5"]


def test_const_entries():
    j, t = t_of("""table t { key = { hdr.h.a: ternary; hdr.h.b: range; }
                            actions = { set_a; nop; }
                            const entries = { (0x10 &&& 0xf0, 1 .. 5): set_a(1);
                                              (_, _): nop(); } }""")
    e0, e1 = t["entries"]
    assert e0["match_key"] == [{"match_type": "ternary", "key": "0x10", "mask": "0xf0"},
                               {"match_type": "range", "start": "0x01", "end": "0x05"}]
    assert e0["action_entry"]["action_data"] == ["0x1"]
    assert action_by_id(j, e0["action_entry"]["action_id"])["name"] == "ingress.set_a"
    assert e0["priority"] < e1["priority"]
    assert e1["match_key"][0]["mask"] == "0x00"
    assert t["match_type"] == "range"
    assert t["max_size"] == 2


def test_lpm_entries():
    _, t = t_of("""table t { key = { hdr.ipv4.dst: lpm; } actions = { nop; }
                            const entries = { 0x0a000000 &&& 0xff000000: nop(); 0x0a000001: nop(); } }""")
    assert t["entries"][0]["match_key"] == [{"match_type": "lpm", "key": "0x0a000000", "prefix_length": 8}]
    assert t["entries"][1]["match_key"][0]["prefix_length"] == 32


def test_direct_counter_and_meter():
    j, t = t_of("""table t { key = { hdr.h.a: exact; } actions = { m_read; }
                            counters = dc; meters = dm; }""",
                locals_="""
    direct_counter(CounterType.packets) dc;
    direct_meter<bit<8>>(MeterType.bytes) dm;
    action m_read() { dm.read(meta.x); }
""")
    assert t["with_counters"] is True
    assert t["direct_meters"] == "ingress.dm"
    assert {"name": "ingress.dc", "id": 0, "is_direct": True, "binding": "ingress.t"} in j["counter_arrays"]
    m = j["meter_arrays"][0]
    assert m["is_direct"] and m["binding"] == "ingress.t" and m["type"] == "bytes"
    assert m["result_target"] == ["scalars", "metadata.x"]


def test_action_selector():
    j, t = t_of("""table t { key = { hdr.h.a: exact; hdr.ipv4.src: selector; hdr.ipv4.dst: selector; }
                            actions = { set_a; nop; }
                            implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w14); }""")
    assert t["type"] == "indirect_ws"
    assert [k["name"] for k in t["key"]] == ["hdr.h.a"]
    ap = pipeline(j)["action_profiles"][0]
    assert ap["name"] == t["action_profile"]
    assert ap["max_size"] == 64
    assert ap["selector"] == {"algo": "crc16", "input": [{"type": "field", "value": ["ipv4", "src"]},
                                                         {"type": "field", "value": ["ipv4", "dst"]}]}
    assert "default_entry" not in t


def test_counter_meter_register_arrays_and_their_primitives():
    locals_ = """
    counter(32w16, CounterType.packets_and_bytes) c;
    meter(32w8, MeterType.packets) m;
    register<bit<32>>(32w4) r;
    action use() { c.count(3); m.execute_meter(32w1, meta.x); r.read(hdr.ipv4.src, 2); r.write(1, hdr.ipv4.dst); }
    table u { actions = { use; } default_action = use(); }
"""
    j = compile_ingress("u.apply();", locals_)
    assert j["counter_arrays"] == [{"name": "ingress.c", "id": 0, "is_direct": False, "size": 16}]
    assert j["meter_arrays"][0]["name"] == "ingress.m" and j["meter_arrays"][0]["type"] == "packets"
    assert j["register_arrays"] == [{"name": "ingress.r", "id": 0, "size": 4, "bitwidth": 32}]
    ops = [(p["op"], [x["type"] for x in p["parameters"]]) for p in action(j, "ingress.use")["primitives"]]
    assert ops == [("count", ["counter_array", "hexstr"]),
                   ("execute_meter", ["meter_array", "hexstr", "field"]),
                   ("register_read", ["field", "register_array", "hexstr"]),
                   ("register_write", ["register_array", "hexstr", "field"])]


def test_table_not_applied_still_exists():
    j = compile_ingress("", "action nop() {} table lonely { key = { hdr.h.a: exact; } actions = { nop; } }")
    t = table(j, "ingress.lonely")
    assert t["next_tables"] == {"ingress.nop": None, "NoAction": None}
