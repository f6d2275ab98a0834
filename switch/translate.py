"""P4Info ids <-> BMv2 JSON names: the only place that knows both.

p4c gives a P4 object the same fully qualified name in the P4Info and in
the BMv2 JSON ("MyIngress.ipv4_lpm"), keys and action parameters in the
same order, and digests the name of their learn list. A JSON action may
appear several times under one name (p4c copies actions per table); the
engine resolves an action name within the table, so a (table, action name)
pair is enough. When a P4Info object has no JSON counterpart, the pipeline
config is refused with INVALID_ARGUMENT naming the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .bmv2json import Bmv2Program, JsonTable
from .errors import invalid
from .schema import P4Schema, TableInfo

# P4Info match type -> JSON match types it may be lowered to
_COMPATIBLE = {
    "exact": ("exact", "valid"),
    "lpm": ("lpm",),
    "ternary": ("ternary",),
    "range": ("range",),
    "optional": ("optional", "ternary"),
}


@dataclass(slots=True)
class TableMap:
    info: TableInfo
    json: JsonTable
    name: str
    """The engine's (JSON) table name."""
    actions: dict[int, str]
    """P4Info action id -> JSON action name."""
    json_actions: dict[str, int]
    """JSON action name -> P4Info action id (for const entries and defaults)."""


def _find(name: str, names, what: str) -> str:
    if name in names:
        return name
    tails = [n for n in names if n.endswith("." + name) or name.endswith("." + n)]
    if len(tails) == 1:
        return tails[0]
    raise invalid(f"pipeline config: {what} '{name}' of the P4Info is not in the BMv2 JSON"
                  + (f" (candidates: {', '.join(sorted(tails))})" if tails else ""))


class Translation:
    """Every P4Info object resolved to its BMv2 JSON name, checked once."""

    def __init__(self, schema: P4Schema, prog: Bmv2Program):
        self.schema = schema
        self.prog = prog
        self.tables: dict[int, TableMap] = {}
        self.counters: dict[int, str] = {}
        self.meters: dict[int, str] = {}
        self.registers: dict[int, str] = {}
        self.action_profiles: dict[int, str] = {}
        self.digests: dict[int, str] = {}
        self.digest_by_learn_list: dict[str, int] = {}
        self.value_sets: dict[int, str] = {}
        for t in schema.tables:
            self.tables[t.id] = self._table(t)
        for c in schema.counters:
            self.counters[c.id] = _find(c.name, prog.counters, "counter")
        for m in schema.meters:
            self.meters[m.id] = _find(m.name, prog.meters, "meter")
        for r in schema.registers:
            name = _find(r.name, prog.registers, "register")
            if prog.registers[name].bitwidth != r.bitwidth:
                raise invalid(f"pipeline config: register '{r.name}' is {r.bitwidth} bits wide in "
                              f"the P4Info and {prog.registers[name].bitwidth} in the BMv2 JSON")
            self.registers[r.id] = name
        for ap in schema.action_profiles:
            self.action_profiles[ap.id] = _find(ap.name, prog.action_profiles, "action profile")
        for d in schema.digests:
            if d.name in prog.learn_lists:
                ll = d.name
            elif len(schema.digests) == 1 and len(prog.learn_lists) == 1:
                ll = prog.learn_lists[0]
            else:
                ll = _find(d.name, prog.learn_lists, "digest")
            self.digests[d.id] = ll
            self.digest_by_learn_list[ll] = d.id
        for vs in schema.value_sets:
            self.value_sets[vs.id] = _find(vs.name, prog.value_sets, "value set")

    def _table(self, t: TableInfo) -> TableMap:
        name = _find(t.name, self.prog.tables, "table")
        jt = self.prog.tables[name]
        if len(jt.keys) != len(t.fields):
            raise invalid(f"pipeline config: table '{t.name}' has {len(t.fields)} match fields in "
                          f"the P4Info and {len(jt.keys)} in the BMv2 JSON")
        for f, k in zip(t.fields, jt.keys):
            if k.match_type not in _COMPATIBLE.get(f.match_type, (f.match_type,)):
                raise invalid(f"pipeline config: table '{t.name}': match field '{f.name}' is "
                              f"{f.match_type} in the P4Info and {k.match_type} in the BMv2 JSON")
        actions: dict[int, str] = {}
        json_actions: dict[str, int] = {}
        for aid in t.action_scopes:
            a = self.schema.actions.by_id[aid]
            an = _find(a.name, jt.actions, f"action of table '{t.name}'")
            widths = self.prog.action_params.get(an, [])
            if len(widths) != len(a.params):
                raise invalid(f"pipeline config: action '{a.name}' has {len(a.params)} parameters "
                              f"in the P4Info and {len(widths)} in the BMv2 JSON")
            actions[aid] = an
            json_actions[an] = aid
        return TableMap(t, jt, name, actions, json_actions)

    def table(self, table_id: int) -> Optional[TableMap]:
        return self.tables.get(table_id)
