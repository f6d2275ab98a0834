"""Builders of the small BMv2 JSON programs the engine tests write in the
test itself, and a frame to send through them."""

import json

STD_FIELDS = [
    ["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
    ["instance_type", 32, False], ["packet_length", 32, False], ["enq_timestamp", 32, False],
    ["enq_qdepth", 19, False], ["deq_timedelta", 32, False], ["deq_qdepth", 19, False],
    ["ingress_global_timestamp", 48, False], ["egress_global_timestamp", 48, False],
    ["mcast_grp", 16, False], ["egress_rid", 16, False], ["checksum_error", 1, False],
    ["parser_error", 32, False], ["priority", 3, False], ["_padding", 3, False],
]

ERRORS = [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
          ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6]]


def field(h, f):
    return {"type": "field", "value": [h, f]}


def hexv(v):
    return {"type": "hexstr", "value": hex(v)}


def expr(op, left, right):
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def assign(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def program(header_types=(), headers=(), states=None, deparse=(), actions=(), ingress=None,
            egress=None, **extra):
    """A BMv2 JSON document with standard_metadata and the given parts."""
    doc = {
        "header_types": [{"name": "standard_metadata", "id": 0, "fields": STD_FIELDS}]
        + [{"name": n, "id": i + 1, "fields": f} for i, (n, f) in enumerate(header_types)],
        "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata",
                     "metadata": True}]
        + [{"name": n, "id": i + 1, "header_type": t, "metadata": m}
           for i, (n, t, m) in enumerate(headers)],
        "header_stacks": [], "errors": ERRORS,
        "parsers": [{"name": "parser", "id": 0, "init_state": "start" if states else None,
                     "parse_states": states or []}],
        "deparsers": [{"name": "deparser", "id": 0, "order": list(deparse)}],
        "actions": list(actions),
        "pipelines": [ingress or {"name": "ingress", "id": 0, "init_table": None, "tables": [],
                                  "conditionals": []},
                      egress or {"name": "egress", "id": 1, "init_table": None, "tables": [],
                                 "conditionals": []}],
        "__meta__": {"version": [2, 23]},
    }
    doc.update(extra)
    return json.dumps(doc)


def table(name, tid, keys, action_ids, action_names, match_type="exact", default=None,
          next_tables=None, **extra):
    t = {"name": name, "id": tid, "key": keys, "match_type": match_type, "type": "simple",
         "max_size": 1024, "with_counters": False, "support_timeout": False, "direct_meters": None,
         "action_ids": action_ids, "actions": action_names, "base_default_next": None,
         "next_tables": next_tables or {a: None for a in action_names}}
    if default is not None:
        t["default_entry"] = {"action_id": default, "action_const": False, "action_data": [],
                              "action_entry_const": False}
    t.update(extra)
    return t


def key(h, f, kind="exact"):
    return {"match_type": kind, "name": f"{h}.{f}", "target": [h, f], "mask": None}


def ethernet_program(actions, tables, init, conditionals=(), egress=None, **extra):
    """Parses Ethernet, then applies `tables` in ingress."""
    return program(
        header_types=[("ethernet_t", [["dst", 48, False], ["src", 48, False], ["type", 16, False]])],
        headers=[("ethernet", "ethernet_t", False)],
        states=[{"name": "start", "id": 0,
                 "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
                 "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None,
                                                        "next_state": None}]}],
        deparse=["ethernet"],
        actions=actions,
        ingress={"name": "ingress", "id": 0, "init_table": init, "tables": tables,
                 "conditionals": list(conditionals)},
        egress=egress,
        **extra,
    )


FWD = {"name": "fwd", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}],
       "primitives": [assign(field("standard_metadata", "egress_spec"), {"type": "runtime_data", "value": 0})]}
DROP = {"name": "drop", "id": 1, "runtime_data": [],
        "primitives": [{"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]}


def eth(dst=0x0000000000AA, src=0x0000000000BB, typ=0x0800, payload=b"\x01\x02"):
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + typ.to_bytes(2, "big") + payload
