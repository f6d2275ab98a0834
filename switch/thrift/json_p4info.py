"""A P4Info derived from a BMv2 JSON document alone.

BMv2's run-time API (simple_switch_CLI) works from the JSON: a switch
started with `program.json` and no P4Runtime controller is configured by
table names, not P4Info ids. p4scope keeps a single table shadow for both
APIs (p4runtime.tables.TableManager, written with P4Runtime entities), so when no
P4Info was given this module writes one that describes the JSON exactly:
one table, action, counter, meter, register and action profile per JSON
object, keys and parameters in JSON order with their widths. Ids are
sequential per kind (nobody outside the switch ever sees them).
"""

from __future__ import annotations

import json
from typing import Any

from finsy.proto import p4i

from ..p4runtime.schema import (ACTION, ACTION_PROFILE, COUNTER, DIRECT_COUNTER, DIRECT_METER,
                                METER, REGISTER, TABLE, VALUE_SET)

_MATCH = {"exact": p4i.MatchField.EXACT, "valid": p4i.MatchField.EXACT,
          "lpm": p4i.MatchField.LPM, "ternary": p4i.MatchField.TERNARY,
          "range": p4i.MatchField.RANGE, "optional": p4i.MatchField.OPTIONAL}


def field_widths(doc: dict) -> dict[tuple[str, str], int]:
    """(header instance, field) -> bit width, for every header of the JSON."""
    types = {}
    for ht in doc.get("header_types", []):
        types[ht["name"]] = {f[0]: int(f[1]) for f in ht.get("fields", [])
                             if isinstance(f[1], int)}
    out: dict[tuple[str, str], int] = {}
    for h in doc.get("headers", []):
        for f, w in types.get(h.get("header_type"), {}).items():
            out[(h["name"], f)] = w
    return out


def key_fields(doc: dict, table: dict, widths=None) -> list[tuple[str, str, int]]:
    """(name, match type, width) of each key field of a JSON table, named as
    simple_switch_CLI names them ("hdr.field", "hdr_valid")."""
    widths = field_widths(doc) if widths is None else widths
    out = []
    for k in table.get("key", []):
        target = k.get("target")
        mt = k["match_type"]
        if mt == "valid" or isinstance(target, str):
            name = f"{target}_valid" if isinstance(target, str) else ".".join(target)
            out.append((name, mt, 1))
        elif target[1] == "$valid$":
            out.append((f"{target[0]}_valid", mt, 1))
        else:
            out.append((".".join(target), mt, widths.get((target[0], target[1]), 0)))
    return out


def p4info_from_json(json_text: str) -> "p4i.P4Info":
    """A P4Info describing `json_text` (a BMv2 JSON document)."""
    doc: dict[str, Any] = json.loads(json_text)
    info = p4i.P4Info()
    widths = field_widths(doc)
    action_ids: dict[str, int] = {}
    for a in doc.get("actions", []):
        if a["name"] in action_ids:
            continue  # p4c copies an action per table under one name
        aid = (ACTION << 24) | (len(action_ids) + 1)
        action_ids[a["name"]] = aid
        msg = info.actions.add()
        msg.preamble.id, msg.preamble.name = aid, a["name"]
        for i, p in enumerate(a.get("runtime_data", [])):
            msg.params.add(id=i + 1, name=p["name"], bitwidth=int(p["bitwidth"]))
    tables = [t for pipe in doc.get("pipelines", []) for t in pipe.get("tables", [])]
    table_ids = {t["name"]: (TABLE << 24) | (i + 1) for i, t in enumerate(tables)}
    profile_ids: dict[str, int] = {}
    for pipe in doc.get("pipelines", []):
        for ap in pipe.get("action_profiles", []):
            pid = (ACTION_PROFILE << 24) | (len(profile_ids) + 1)
            profile_ids[ap["name"]] = pid
            msg = info.action_profiles.add()
            msg.preamble.id, msg.preamble.name = pid, ap["name"]
            msg.size = int(ap.get("max_size", 0))
            msg.with_selector = "selector" in ap
            msg.table_ids.extend(table_ids[t["name"]] for t in tables
                                 if t.get("action_profile") == ap["name"])
    direct_counters = {}
    n_counters = 0
    for c in doc.get("counter_arrays", []):
        if c.get("is_direct"):
            cid = (DIRECT_COUNTER << 24) | (len(direct_counters) + 1)
            direct_counters[c.get("binding")] = cid
            msg = info.direct_counters.add()
            msg.preamble.id, msg.preamble.name = cid, c["name"]
            msg.spec.unit = p4i.CounterSpec.BOTH
            msg.direct_table_id = table_ids.get(c.get("binding"), 0)
        else:
            n_counters += 1
            msg = info.counters.add()
            msg.preamble.id, msg.preamble.name = (COUNTER << 24) | n_counters, c["name"]
            msg.spec.unit = p4i.CounterSpec.BOTH
            msg.size = int(c.get("size", 0))
    direct_meters = {}
    n_meters = 0
    for m in doc.get("meter_arrays", []):
        unit = p4i.MeterSpec.PACKETS if m.get("type") == "packets" else p4i.MeterSpec.BYTES
        if m.get("is_direct"):
            mid = (DIRECT_METER << 24) | (len(direct_meters) + 1)
            direct_meters[m.get("binding")] = mid
            msg = info.direct_meters.add()
            msg.preamble.id, msg.preamble.name = mid, m["name"]
            msg.spec.unit = unit
            msg.direct_table_id = table_ids.get(m.get("binding"), 0)
        else:
            n_meters += 1
            msg = info.meters.add()
            msg.preamble.id, msg.preamble.name = (METER << 24) | n_meters, m["name"]
            msg.spec.unit = unit
            msg.size = int(m.get("size", 0))
    for i, r in enumerate(doc.get("register_arrays", [])):
        msg = info.registers.add()
        msg.preamble.id, msg.preamble.name = (REGISTER << 24) | (i + 1), r["name"]
        msg.size = int(r.get("size", 0))
        msg.type_spec.bitstring.bit.bitwidth = int(r["bitwidth"])
    for i, vs in enumerate(doc.get("parse_vsets", [])):
        msg = info.value_sets.add()
        msg.preamble.id, msg.preamble.name = (VALUE_SET << 24) | (i + 1), vs["name"]
        msg.size = int(vs.get("max_size", 0))
        msg.match.add(id=1, name="value", bitwidth=max(int(vs.get("compressed_bitwidth", 0)), 1),
                      match_type=p4i.MatchField.EXACT)
    for t in tables:
        msg = info.tables.add()
        msg.preamble.id, msg.preamble.name = table_ids[t["name"]], t["name"]
        for i, (name, mt, w) in enumerate(key_fields(doc, t, widths)):
            msg.match_fields.add(id=i + 1, name=name, bitwidth=max(w, 1), match_type=_MATCH[mt])
        for an in dict.fromkeys(t.get("actions", [])):
            if an in action_ids:
                msg.action_refs.add(id=action_ids[an])
        msg.size = int(t.get("max_size", 0))
        if t.get("action_profile") in profile_ids:
            msg.implementation_id = profile_ids[t["action_profile"]]
        if t["name"] in direct_counters:
            msg.direct_resource_ids.append(direct_counters[t["name"]])
        if t["name"] in direct_meters:
            msg.direct_resource_ids.append(direct_meters[t["name"]])
        if t.get("support_timeout"):
            msg.idle_timeout_behavior = p4i.Table.NOTIFY_CONTROL
        d = t.get("default_entry") or {}
        if d.get("action_const") and "action_id" in d:
            names = {a["id"]: a["name"] for a in doc.get("actions", [])}
            msg.const_default_action_id = action_ids.get(names.get(d["action_id"]), 0)
        if t.get("entries"):
            msg.is_const_table = True  # BMv2: JSON entries make the table immutable
            msg.has_initial_entries = True
    return info
