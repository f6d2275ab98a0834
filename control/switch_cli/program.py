"""What `p4scope switch-cli` knows of the program: read from the BMv2 JSON.

Like simple_switch_CLI, the client fetches the JSON from the switch
(bm_get_config) and names things the way it does: tables with their key
fields "hdr.field(kind, width)", actions with their parameters, and every
object also reachable by any unique dotted suffix of its name
("ipv4_lpm" for "MyIngress.ipv4_lpm").
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from ...switch.thrift.json_p4info import field_widths, key_fields


@dataclass
class CliAction:
    name: str
    params: list[tuple[str, int]]

    def describe(self) -> str:
        ps = ",\t".join(f"{n}({w})" for n, w in self.params)
        return f"{self.name:30} [{ps}]"


@dataclass
class CliTable:
    name: str
    match_type: str
    kind: str  # simple, indirect, indirect_ws
    keys: list[tuple[str, str, int]]  # (name, match kind, width); optional shown as ternary
    actions: list[str]
    support_timeout: bool
    action_profile: Optional[str] = None

    def describe(self) -> str:
        mk = ",\t".join(f"{n}({k}, {w})" for n, k, w in self.keys)
        impl = self.action_profile or "None"
        return f"{self.name:30} [implementation={impl}, mk={mk}]"

    @property
    def needs_priority(self) -> bool:
        return self.match_type in ("ternary", "range")


@dataclass
class CliArray:
    """A counter, meter or register array (or a parser value set)."""
    name: str
    size: int = 0
    is_direct: bool = False
    binding: Optional[str] = None
    unit: str = ""  # meters: packets or bytes
    width: int = 0  # registers; value sets: compressed width
    rate_count: int = 2


@dataclass
class CliProgram:
    tables: dict[str, CliTable] = field(default_factory=dict)
    actions: dict[str, CliAction] = field(default_factory=dict)
    action_profiles: dict[str, bool] = field(default_factory=dict)  # name -> with selector
    counters: dict[str, CliArray] = field(default_factory=dict)
    meters: dict[str, CliArray] = field(default_factory=dict)
    registers: dict[str, CliArray] = field(default_factory=dict)
    value_sets: dict[str, CliArray] = field(default_factory=dict)
    crc_calcs: dict[str, int] = field(default_factory=dict)  # name -> 16 or 32
    _suffix: dict[tuple[str, str], object] = field(default_factory=dict)

    def find(self, kind: str, name: str):
        """The object of `kind` named `name` or a unique suffix of it, or None."""
        return self._suffix.get((kind, name))


def load_program(json_text: str) -> CliProgram:
    doc = json.loads(json_text) if json_text else {}
    prog = CliProgram()
    for a in doc.get("actions", []):
        prog.actions.setdefault(a["name"], CliAction(
            a["name"], [(p["name"], int(p["bitwidth"])) for p in a.get("runtime_data", [])]))
    widths = field_widths(doc)
    for pipe in doc.get("pipelines", []):
        for ap in pipe.get("action_profiles", []):
            prog.action_profiles[ap["name"]] = "selector" in ap
        for t in pipe.get("tables", []):
            keys = [(n, "ternary" if k == "optional" else k, w)
                    for n, k, w in key_fields(doc, t, widths)]
            mt = t.get("match_type", "exact")
            prog.tables[t["name"]] = CliTable(
                t["name"], "ternary" if mt == "optional" else mt, t.get("type", "simple"), keys,
                list(dict.fromkeys(t.get("actions", []))), bool(t.get("support_timeout")),
                t.get("action_profile"))
    for c in doc.get("counter_arrays", []):
        prog.counters[c["name"]] = CliArray(c["name"], int(c.get("size", 0)),
                                            bool(c.get("is_direct")), c.get("binding"))
    for m in doc.get("meter_arrays", []):
        prog.meters[m["name"]] = CliArray(m["name"], int(m.get("size", 0)),
                                          bool(m.get("is_direct")), m.get("binding"),
                                          unit=m.get("type", "bytes"),
                                          rate_count=int(m.get("rate_count", 2)))
    for r in doc.get("register_arrays", []):
        prog.registers[r["name"]] = CliArray(r["name"], int(r.get("size", 0)),
                                             width=int(r.get("bitwidth", 0)))
    for v in doc.get("parse_vsets", []):
        prog.value_sets[v["name"]] = CliArray(v["name"],
                                              width=int(v.get("compressed_bitwidth", 0)))
    for calc in doc.get("calculations", []):
        if calc.get("algo") in ("crc16_custom", "crc32_custom"):
            prog.crc_calcs[calc["name"]] = 16 if calc["algo"] == "crc16_custom" else 32
    _index_suffixes(prog)
    return prog


def _index_suffixes(prog: CliProgram) -> None:
    count: Counter = Counter()
    entries: dict = {}
    for kind, objs in (("table", prog.tables), ("action", prog.actions),
                       ("action_profile", prog.action_profiles), ("counter", prog.counters),
                       ("meter", prog.meters), ("register", prog.registers),
                       ("value_set", prog.value_sets)):
        for name, obj in objs.items():
            parts = name.split(".")
            for i in range(len(parts)):
                key = (kind, ".".join(parts[i:]))
                entries[key] = name if kind == "action_profile" else obj
                count[key] += 1
    prog._suffix = {k: v for k, v in entries.items() if count[k] == 1}
