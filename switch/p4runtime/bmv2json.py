"""What the P4Runtime layer needs to know from a BMv2 JSON document.

Only names, shapes and initial contents: tables (keys, actions, default
entry, const entries, implementation), action profiles, counters, meters,
registers, learn lists and value sets. The engine reads the same document
for everything else; this module never interprets the pipeline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

from .errors import invalid


@dataclass(slots=True)
class JsonKey:
    name: str
    match_type: str  # exact, lpm, ternary, range, optional, valid
    width: Optional[int] = None
    """Bits of the field the key reads (None: its target is not a known field)."""
    masked: bool = False
    """The key has a mask (p4c: a masked field or a slice of it)."""


@dataclass(slots=True)
class JsonConstEntry:
    """One entry of a table's `entries` list, values as ints."""
    match: list[tuple]  # ("exact", v) | ("lpm", v, plen) | ("ternary", v, m) | ("range", lo, hi)
    action: str
    data: list[int]
    priority: int  # BMv2 priority: lower wins


@dataclass(slots=True)
class JsonTable:
    name: str
    keys: list[JsonKey]
    actions: list[str]
    ttype: str  # simple, indirect, indirect_ws
    action_profile: Optional[str]
    max_size: int
    with_counters: bool
    support_timeout: bool
    direct_meter: Optional[str]
    default_action: Optional[str]
    default_data: list[int]
    default_const: bool
    default_entry_const: bool
    entries: list[JsonConstEntry] = field(default_factory=list)


@dataclass(slots=True)
class JsonArray:
    """A counter, meter or register array."""
    name: str
    size: int
    is_direct: bool = False
    binding: Optional[str] = None
    bitwidth: int = 0
    rate_unit: str = ""


@dataclass(slots=True)
class Bmv2Program:
    tables: dict[str, JsonTable]
    action_params: dict[str, list[int]]
    """action name -> parameter bitwidths (same-named JSON actions agree)."""
    action_profiles: dict[str, tuple[int, bool]]  # name -> (max_size, with selector)
    counters: dict[str, JsonArray]
    meters: dict[str, JsonArray]
    registers: dict[str, JsonArray]
    learn_lists: list[str]
    value_sets: dict[str, int]  # name -> compressed bitwidth
    text: str


def _int(s: Any) -> int:
    if isinstance(s, int):
        return s
    s = str(s)
    neg = s.startswith("-")
    v = int(s.lstrip("-"), 16) if s.lstrip("-").lower().startswith("0x") else int(s.lstrip("-"))
    return -v if neg else v


def parse_program(text: str) -> Bmv2Program:
    """Reads the parts of a BMv2 JSON document the P4Runtime layer uses.

    Raises INVALID_ARGUMENT when the text is not a BMv2 JSON object."""
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise invalid(f"p4_device_config: not valid JSON: {e}") from None
    except RecursionError:
        raise invalid("p4_device_config: the JSON is nested too deeply (a BMv2 JSON is a few "
                      "levels deep; the engine refuses more than 128)") from None
    if not isinstance(doc, dict):
        raise invalid("p4_device_config: the BMv2 JSON must be an object")
    try:
        return _read(doc, text)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise invalid(f"p4_device_config: malformed BMv2 JSON ({type(e).__name__}: {e})") from None


@lru_cache(maxsize=4)
def parse_program_once(text: str) -> Bmv2Program:
    """parse_program, remembered for the last few texts: a switch set to the
    JSON it already runs (a testbed resets its switch so before each case)
    reads it once. The program is shared, so it is only ever read."""
    return parse_program(text)


def _read(doc: dict, text: str) -> Bmv2Program:
    actions_by_id: dict[int, str] = {}
    action_params: dict[str, list[int]] = {}
    for a in doc.get("actions", []):
        actions_by_id[a["id"]] = a["name"]
        action_params.setdefault(a["name"], [p["bitwidth"] for p in a.get("runtime_data", [])])
    tables: dict[str, JsonTable] = {}
    profiles: dict[str, tuple[int, bool]] = {}
    widths = _field_widths(doc)
    for pipe in doc.get("pipelines", []):
        for ap in pipe.get("action_profiles", []):
            profiles[ap["name"]] = (int(ap.get("max_size", 0)), "selector" in ap)
        for t in pipe.get("tables", []):
            tables[t["name"]] = _table(t, actions_by_id, widths)
    counters = {c["name"]: JsonArray(c["name"], int(c.get("size", 0)), bool(c.get("is_direct")),
                                     c.get("binding"))
                for c in doc.get("counter_arrays", [])}
    meters = {m["name"]: JsonArray(m["name"], int(m.get("size", 0)), bool(m.get("is_direct")),
                                   m.get("binding"), rate_unit=m.get("type", ""))
              for m in doc.get("meter_arrays", [])}
    registers = {r["name"]: JsonArray(r["name"], int(r.get("size", 0)), bitwidth=int(r["bitwidth"]))
                 for r in doc.get("register_arrays", [])}
    learn = [ll["name"] for ll in doc.get("learn_lists", [])]
    vsets = {v["name"]: int(v.get("compressed_bitwidth", 0)) for v in doc.get("parse_vsets", [])}
    return Bmv2Program(tables, action_params, profiles, counters, meters, registers, learn,
                       vsets, text)


def _field_widths(doc: dict) -> dict[str, dict[str, int]]:
    """header instance -> field -> bits (varbit fields left out); every
    header has its validity bit, "$valid$"."""
    types = {ht["name"]: {f[0]: f[1] for f in ht.get("fields", [])
                          if isinstance(f[1], int) and not isinstance(f[1], bool)}
             for ht in doc.get("header_types", [])}
    return {h["name"]: {**types.get(h.get("header_type"), {}), "$valid$": 1}
            for h in doc.get("headers", [])}


def _key(k: dict, widths: dict[str, dict[str, int]]) -> JsonKey:
    target = k.get("target")
    width = None
    if k["match_type"] == "valid" and isinstance(target, str):
        width = 1  # old p4c: the header's validity, target its name
    elif isinstance(target, list) and len(target) == 2:
        width = widths.get(target[0], {}).get(target[1])
    return JsonKey(k.get("name", ""), k["match_type"], width, k.get("mask") is not None)


def _table(t: dict, actions_by_id: dict[int, str],
           widths: dict[str, dict[str, int]]) -> JsonTable:
    keys = [_key(k, widths) for k in t.get("key", [])]
    d = t.get("default_entry") or {}
    default_action = actions_by_id.get(d["action_id"]) if "action_id" in d else None
    entries = []
    for e in t.get("entries", []):
        match: list[tuple] = []
        for m in e["match_key"]:
            mt = m["match_type"]
            if mt == "lpm":
                match.append(("lpm", _int(m["key"]), int(m["prefix_length"])))
            elif mt in ("ternary", "optional"):
                match.append((mt, _int(m["key"]), _int(m["mask"])))
            elif mt == "range":
                match.append(("range", _int(m["start"]), _int(m["end"])))
            else:
                match.append((mt, _int(m["key"])))
        ae = e["action_entry"]
        entries.append(JsonConstEntry(match, actions_by_id[ae["action_id"]],
                                      [_int(x) for x in ae.get("action_data", [])],
                                      int(e.get("priority", 0))))
    meters = t.get("direct_meters")
    return JsonTable(
        name=t["name"], keys=keys, actions=list(t.get("actions", [])),
        ttype=t.get("type", "simple"), action_profile=t.get("action_profile"),
        max_size=int(t.get("max_size", 0)), with_counters=bool(t.get("with_counters")),
        support_timeout=bool(t.get("support_timeout")),
        direct_meter=meters if isinstance(meters, str) else None,
        default_action=default_action,
        default_data=[_int(x) for x in d.get("action_data", [])],
        default_const=bool(d.get("action_const")),
        default_entry_const=bool(d.get("action_entry_const")),
        entries=entries)
