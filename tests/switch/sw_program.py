"""The switch tests' program, basic.p4, compiled by p4scope at test time.

`compiled()` gives its P4Info and BMv2 JSON from p4scope's compiler.
`p4c_style_json()` is a second BMv2 JSON for the same program, written here
in p4c-bm2-ss's layout (one copy of an action per table, keyless tables for
apply-block statements), so the switch is also checked against JSON shaped
like real p4c output.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent
CPU_PORT = 255


def _f(h, f):
    return {"type": "field", "value": [h, f]}


def _hex(v, width_bytes=None):
    return {"type": "hexstr", "value": hex(v)}


def _rt(i):
    return {"type": "runtime_data", "value": i}


def _hdr(h):
    return {"type": "header", "value": h}


def _assign(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def _valid(h):
    return {"type": "expression",
            "value": {"op": "d2b", "left": None, "right": _f(h, "$valid$")}}


STD_FIELDS = [
    ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
    ["instance_type", 32, False], ["packet_length", 32, False],
    ["enq_timestamp", 32, False], ["enq_qdepth", 19, False], ["deq_timedelta", 32, False],
    ["deq_qdepth", 19, False], ["ingress_global_timestamp", 48, False],
    ["egress_global_timestamp", 48, False], ["mcast_grp", 16, False],
    ["egress_rid", 16, False], ["checksum_error", 1, False], ["parser_error", 32, False],
    ["priority", 3, False], ["_padding", 3, False],
]


def _table(tid, name, key, actions, *, default, next_, match_type="exact", ttype="simple",
           profile=None, size=1024, counters=False, timeout=False, const_default=False):
    names = [a[1] for a in actions]
    t = {
        "name": name, "id": tid,
        "key": [{"match_type": mt, "name": kn, "target": tgt, "mask": None}
                for mt, kn, tgt in key],
        "match_type": match_type, "type": ttype, "max_size": size,
        "with_counters": counters, "support_timeout": timeout, "direct_meters": None,
        "action_ids": [a[0] for a in actions], "actions": names,
        "base_default_next": next_,
        "next_tables": {n: next_ for n in names},
    }
    if profile:
        t["action_profile"] = profile
    if default is not None:
        t["default_entry"] = {"action_id": default, "action_const": const_default,
                              "action_data": [], "action_entry_const": const_default}
    return t


def p4c_style_json() -> dict:
    actions = [
        {"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []},  # fwd
        {"name": "NoAction", "id": 1, "runtime_data": [], "primitives": []},  # routes
        {"name": "NoAction", "id": 2, "runtime_data": [], "primitives": []},  # acl
        {"name": "NoAction", "id": 3, "runtime_data": [], "primitives": []},  # nexthop
        {"name": "NoAction", "id": 4, "runtime_data": [], "primitives": []},  # ecmp
        {"name": "NoAction", "id": 5, "runtime_data": [], "primitives": []},  # fixed_default
        {"name": "IngressImpl.drop", "id": 6, "runtime_data": [],
         "primitives": [{"op": "mark_to_drop", "parameters": [_hdr("standard_metadata")]}]},
        {"name": "IngressImpl.drop", "id": 7, "runtime_data": [],
         "primitives": [{"op": "mark_to_drop", "parameters": [_hdr("standard_metadata")]}]},
        {"name": "IngressImpl.drop", "id": 8, "runtime_data": [],
         "primitives": [{"op": "mark_to_drop", "parameters": [_hdr("standard_metadata")]}]},
    ]
    fwd_ids = {}
    for i, tbl in enumerate(["fwd", "routes", "nexthop", "ecmp"]):
        aid = 9 + i
        actions.append({"name": "IngressImpl.forward", "id": aid,
                        "runtime_data": [{"name": "port", "bitwidth": 9}],
                        "primitives": [_assign(_f("standard_metadata", "egress_spec"), _rt(0))]})
        fwd_ids[tbl] = aid
    actions += [
        {"name": "IngressImpl.to_cpu", "id": 13, "runtime_data": [], "primitives": [
            _assign(_f("standard_metadata", "egress_spec"), _hex(CPU_PORT)),
            {"op": "add_header", "parameters": [_hdr("packet_in")]},
            _assign(_f("packet_in", "ingress_port"), _f("standard_metadata", "ingress_port")),
        ]},
        {"name": "IngressImpl.flood", "id": 14, "runtime_data": [{"name": "group", "bitwidth": 16}],
         "primitives": [_assign(_f("standard_metadata", "mcast_grp"), _rt(0))]},
        {"name": "IngressImpl.learn", "id": 15, "runtime_data": [], "primitives": [
            _assign(_f("scalars", "learn_src"), _f("ethernet", "src")),
            _assign(_f("scalars", "learn_port"), _f("standard_metadata", "ingress_port")),
            {"op": "generate_digest", "parameters": [_hex(1), _hex(1)]},
        ]},
        {"name": "act", "id": 16, "runtime_data": [], "primitives": [
            _assign(_f("standard_metadata", "egress_spec"), _f("packet_out", "egress_port")),
            {"op": "remove_header", "parameters": [_hdr("packet_out")]},
        ]},
        {"name": "IngressImpl.mirror", "id": 18, "runtime_data": [{"name": "port", "bitwidth": 9}],
         "primitives": [
             _assign(_f("standard_metadata", "egress_spec"), _rt(0)),
             {"op": "clone_ingress_pkt_to_egress", "parameters": [_hex(5), _hex(0)]},
         ]},
        {"name": "act_0", "id": 17, "runtime_data": [], "primitives": [
            {"op": "remove_header", "parameters": [_hdr("packet_out")]},
            _assign(_f("standard_metadata", "egress_spec"), _hex(CPU_PORT)),
            {"op": "add_header", "parameters": [_hdr("packet_in")]},
            _assign(_f("packet_in", "ingress_port"), _f("standard_metadata", "ingress_port")),
        ]},
    ]
    tables = [
        _table(0, "tbl_act", [], [(16, "act")], default=16, next_=None, const_default=True),
        _table(7, "tbl_act_0", [], [(17, "act_0")], default=17, next_=None, const_default=True),
        _table(1, "IngressImpl.fwd", [("exact", "hdr.ethernet.dst", ["ethernet", "dst"])],
               [(fwd_ids["fwd"], "IngressImpl.forward"), (6, "IngressImpl.drop"),
                (13, "IngressImpl.to_cpu"), (14, "IngressImpl.flood"),
                (15, "IngressImpl.learn"), (18, "IngressImpl.mirror"), (0, "NoAction")],
               default=0, next_="node_4", counters=True, timeout=True),
        _table(2, "IngressImpl.routes", [("lpm", "hdr.probe.addr", ["probe", "addr"])],
               [(fwd_ids["routes"], "IngressImpl.forward"), (1, "NoAction")],
               default=1, next_="IngressImpl.acl", match_type="lpm"),
        _table(3, "IngressImpl.acl", [("ternary", "hdr.probe.flags", ["probe", "flags"]),
                                      ("range", "hdr.probe.level", ["probe", "level"]),
                                      ("optional", "hdr.probe.kind", ["probe", "kind"])],
               [(7, "IngressImpl.drop"), (2, "NoAction")],
               default=2, next_="IngressImpl.nexthop", match_type="range"),
        _table(4, "IngressImpl.nexthop", [("exact", "hdr.probe.level", ["probe", "level"])],
               [(fwd_ids["nexthop"], "IngressImpl.forward"), (3, "NoAction")],
               default=None, next_="IngressImpl.ecmp", ttype="indirect",
               profile="IngressImpl.nh_profile"),
        _table(5, "IngressImpl.ecmp", [("exact", "hdr.probe.addr", ["probe", "addr"])],
               [(fwd_ids["ecmp"], "IngressImpl.forward"), (4, "NoAction")],
               default=None, next_="IngressImpl.fixed_default", ttype="indirect_ws",
               profile="IngressImpl.ecmp_selector"),
        _table(6, "IngressImpl.fixed_default",
               [("exact", "hdr.ethernet.ether_type", ["ethernet", "ether_type"])],
               [(8, "IngressImpl.drop"), (5, "NoAction")],
               default=5, next_=None, const_default=True),
    ]
    ingress = {
        "name": "ingress", "id": 0, "init_table": "node_2",
        "tables": tables,
        "action_profiles": [
            {"name": "IngressImpl.nh_profile", "id": 0, "max_size": 128},
            {"name": "IngressImpl.ecmp_selector", "id": 1, "max_size": 64,
             "selector": {"algo": "crc16", "input": [_f("probe", "kind")]}},
        ],
        "conditionals": [
            {"name": "node_2", "id": 0, "expression": _valid("packet_out"),
             "true_next": "node_3", "false_next": "IngressImpl.fwd"},
            {"name": "node_3", "id": 2, "expression": {"type": "expression", "value": {
                "op": "==", "left": _f("packet_out", "egress_port"), "right": _hex(CPU_PORT)}},
             "true_next": "tbl_act_0", "false_next": "tbl_act"},
            {"name": "node_4", "id": 1, "expression": _valid("probe"),
             "true_next": "IngressImpl.routes", "false_next": "IngressImpl.fixed_default"},
        ],
    }
    egress = {"name": "egress", "id": 1, "init_table": None, "tables": [],
              "action_profiles": [], "conditionals": []}
    return {
        "header_types": [
            {"name": "scalars_0", "id": 0, "fields": [
                ["learn_src", 48, False], ["learn_port", 9, False], ["_padding_0", 7, False]]},
            {"name": "standard_metadata", "id": 1, "fields": STD_FIELDS},
            {"name": "packet_out_t", "id": 2, "fields": [["egress_port", 9, False],
                                                         ["_pad", 7, False]]},
            {"name": "packet_in_t", "id": 3, "fields": [["ingress_port", 9, False],
                                                        ["_pad", 7, False]]},
            {"name": "ethernet_t", "id": 4, "fields": [["dst", 48, False], ["src", 48, False],
                                                       ["ether_type", 16, False]]},
            {"name": "probe_t", "id": 5, "fields": [["addr", 32, False], ["flags", 16, False],
                                                    ["level", 8, False], ["kind", 8, False]]},
        ],
        "headers": [
            {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True,
             "pi_omit": True},
            {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata",
             "metadata": True, "pi_omit": True},
            {"name": "packet_out", "id": 2, "header_type": "packet_out_t", "metadata": False,
             "pi_omit": True},
            {"name": "packet_in", "id": 3, "header_type": "packet_in_t", "metadata": False,
             "pi_omit": True},
            {"name": "ethernet", "id": 4, "header_type": "ethernet_t", "metadata": False,
             "pi_omit": True},
            {"name": "probe", "id": 5, "header_type": "probe_t", "metadata": False,
             "pi_omit": True},
        ],
        "header_stacks": [], "header_union_types": [], "header_unions": [],
        "header_union_stacks": [], "field_lists": [],
        "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2],
                   ["StackOutOfBounds", 3], ["HeaderTooShort", 4], ["ParserTimeout", 5],
                   ["ParserInvalidArgument", 6]],
        "enums": [],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [],
             "transitions": [
                 {"type": "hexstr", "value": "0x00ff", "mask": None,
                  "next_state": "parse_packet_out"},
                 {"type": "default", "value": None, "mask": None, "next_state": "parse_ethernet"}],
             "transition_key": [_f("standard_metadata", "ingress_port")]},
            {"name": "parse_packet_out", "id": 1,
             "parser_ops": [{"parameters": [{"type": "regular", "value": "packet_out"}],
                             "op": "extract"}],
             "transitions": [{"type": "default", "value": None, "mask": None,
                              "next_state": "parse_ethernet"}],
             "transition_key": []},
            {"name": "parse_ethernet", "id": 2,
             "parser_ops": [{"parameters": [{"type": "regular", "value": "ethernet"}],
                             "op": "extract"}],
             "transitions": [
                 {"type": "hexstr", "value": "0x88b5", "mask": None, "next_state": "parse_probe"},
                 {"type": "default", "value": None, "mask": None, "next_state": None}],
             "transition_key": [_f("ethernet", "ether_type")]},
            {"name": "parse_probe", "id": 3,
             "parser_ops": [{"parameters": [{"type": "regular", "value": "probe"}],
                             "op": "extract"}],
             "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}],
             "transition_key": []},
        ]}],
        "parse_vsets": [],
        "deparsers": [{"name": "deparser", "id": 0,
                       "order": ["packet_in", "ethernet", "probe"], "primitives": []}],
        "meter_arrays": [{"name": "IngressImpl.rate_meter", "id": 0, "is_direct": False,
                          "rate_count": 2, "type": "bytes", "size": 4}],
        "counter_arrays": [
            {"name": "IngressImpl.port_packets", "id": 0, "is_direct": False, "size": 8},
            {"name": "IngressImpl.fwd_counter", "id": 1, "is_direct": True,
             "binding": "IngressImpl.fwd"},
        ],
        "register_arrays": [{"name": "IngressImpl.scratch", "id": 0, "bitwidth": 32,
                             "size": 16}],
        "calculations": [],
        "learn_lists": [{"id": 1, "name": "learn_t", "elements": [
            _f("scalars", "learn_src"), _f("scalars", "learn_port")]}],
        "actions": actions,
        "pipelines": [ingress, egress],
        "checksums": [], "force_arith": [], "extern_instances": [], "field_aliases": [],
        "program": "basic.p4",
        "__meta__": {"version": [2, 23], "compiler": "tests/switch/program.py"},
    }


@lru_cache(maxsize=None)
def _compiled() -> tuple[bytes, str]:
    from p4scope.compiler import compile_file

    r = compile_file(HERE / "basic.p4")
    return r.p4info.SerializeToString(), json.dumps(r.bmv2_json)


def p4info():
    """basic.p4's P4Info (a fresh message each call)."""
    from finsy.proto import p4i

    msg = p4i.P4Info()
    msg.ParseFromString(_compiled()[0])
    return msg


def json_text() -> str:
    """basic.p4's BMv2 JSON from p4scope's compiler."""
    return _compiled()[1]


def huge_field_json(bits: int) -> str:
    """basic.p4's JSON with a metadata field of `bits` bits (hostile input)."""
    doc = json.loads(json_text())
    doc["header_types"][0]["fields"].append(["huge", bits, False])
    return json.dumps(doc)


def p4c_style_json_text() -> str:
    return json.dumps(p4c_style_json(), indent=1)
