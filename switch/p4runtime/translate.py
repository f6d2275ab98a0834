"""P4Info ids <-> BMv2 JSON names: the only place that knows both.

p4c gives a P4 object the same fully qualified name in the P4Info and in
the BMv2 JSON ("MyIngress.ipv4_lpm"), keys and action parameters in the
same order, and digests the name of their learn list. A JSON action may
appear several times under one name (p4c copies actions per table); the
engine resolves an action name within the table, so a (table, action name)
pair is enough.

p4c leaves out of the JSON what the program cannot reach (an unused action
selector, a table in dead code), so a P4Info object without a JSON
counterpart is tolerated and only refused when a request uses it; but a
P4Info of which no table matches the JSON, or whose keys, match kinds, key
widths (_check_width) or action parameters differ, is refused with
INVALID_ARGUMENT: that is the wrong JSON for this P4Info. So is a P4Info
that declares nothing at all (at most pkg_info and type_info) for a JSON
with tables or externs: the controller could use none of them, and such a
config is a mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .bmv2json import Bmv2Program, JsonKey, JsonTable
from .errors import P4RuntimeError, invalid
from .schema import MatchFieldInfo, P4Schema, TableInfo

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
    key_widths: tuple[int, ...]
    """Each match field's width in the device (the JSON field's; the P4Info's
    for a masked key narrower than its field, or a field the JSON lacks)."""


def _find(name: str, names, what: str) -> str:
    if name in names:
        return name
    tails = [n for n in names if n.endswith("." + name) or name.endswith("." + n)]
    if len(tails) == 1:
        return tails[0]
    raise invalid(f"pipeline config: {what} '{name}' of the P4Info is not in the BMv2 JSON"
                  + (f" (candidates: {', '.join(sorted(tails))})" if tails else ""))


def _check_width(table: str, f: MatchFieldInfo, k: JsonKey) -> None:
    """INVALID_ARGUMENT when a match field is not as wide as the field its
    JSON key reads. A masked key (p4c: `f & mask`, or a slice of f) may be
    narrower in the P4Info; an @p4runtime_translation field has its SDN
    width there; a key whose field the JSON does not declare is the
    engine's to refuse."""
    if k.width is None or f.translated:
        return
    if f.bitwidth == k.width or (k.masked and 0 < f.bitwidth < k.width):
        return
    raise invalid(f"pipeline config: table '{table}': match field '{f.name}' is {f.bitwidth} "
                  f"bits wide in the P4Info and {k.width} in the BMv2 JSON")


def _check_not_empty(schema: P4Schema, prog: Bmv2Program) -> None:
    """INVALID_ARGUMENT for a P4Info without any object when the JSON has some."""
    if any(f.name not in ("pkg_info", "type_info") for f, _ in schema.p4info.ListFields()):
        return
    found = {
        "table": [n for n in prog.tables if not n.startswith("tbl_")],  # tbl_*: p4c's hidden tables
        "action profile": prog.action_profiles, "counter": prog.counters, "meter": prog.meters,
        "register": prog.registers, "digest": prog.learn_lists, "value set": prog.value_sets,
    }
    has = [f"{len(v)} {kind}(s)" for kind, v in found.items() if v]
    if has:
        raise invalid(f"config.p4info: empty (no table, action, extern or controller header), but "
                      f"the BMv2 JSON has {', '.join(has)}: give this program's P4Info")


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
        self.absent: dict[int, str] = {}
        """P4Info id -> why the object is not usable (not in the JSON)."""
        _check_not_empty(schema, prog)
        for t in schema.tables:
            m = self._optional(t.id, lambda t=t: self._table(t))
            if m is not None:
                self.tables[t.id] = m
        user_tables = [n for n in prog.tables if not n.startswith("tbl_")]
        if schema.tables and not self.tables and user_tables:
            raise invalid("pipeline config: no table of the P4Info is in the BMv2 JSON (is it "
                          "the JSON of another program?) " + next(iter(self.absent.values())))
        for c in schema.counters:
            self._resolve(self.counters, c.id, c.name, prog.counters, "counter")
        for m in schema.meters:
            self._resolve(self.meters, m.id, m.name, prog.meters, "meter")
        for r in schema.registers:
            if self._resolve(self.registers, r.id, r.name, prog.registers, "register"):
                jw = prog.registers[self.registers[r.id]].bitwidth
                if r.bitwidth and jw != r.bitwidth:
                    raise invalid(f"pipeline config: register '{r.name}' is {r.bitwidth} bits "
                                  f"wide in the P4Info and {jw} in the BMv2 JSON")
        for ap in schema.action_profiles:
            self._resolve(self.action_profiles, ap.id, ap.name, prog.action_profiles,
                          "action profile")
        for d in schema.digests:
            if d.name in prog.learn_lists:
                ll = d.name
            elif len(schema.digests) == 1 and len(prog.learn_lists) == 1:
                ll = prog.learn_lists[0]
            else:
                ll = self._optional(d.id, lambda d=d: _find(d.name, prog.learn_lists, "digest"))
                if ll is None:
                    continue
            self.digests[d.id] = ll
            self.digest_by_learn_list[ll] = d.id
        for vs in schema.value_sets:
            self._resolve(self.value_sets, vs.id, vs.name, prog.value_sets, "value set")

    def _optional(self, id_: int, f):
        try:
            return f()
        except P4RuntimeError as e:
            if "is not in the BMv2 JSON" not in e.message:
                raise
            self.absent[id_] = e.message.replace("pipeline config: ", "")
            return None

    def _resolve(self, out: dict, id_: int, name: str, names, what: str) -> bool:
        found = self._optional(id_, lambda: _find(name, names, what))
        if found is None:
            return False
        out[id_] = found
        return True

    def json_name(self, table: dict[int, str], id_: int, where: str) -> str:
        """The JSON name of an object, or INVALID_ARGUMENT if p4c left it out."""
        name = table.get(id_)
        if name is None:
            raise invalid(f"{where}: {self.absent.get(id_, f'id {id_} has no BMv2 JSON object')}")
        return name

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
            _check_width(t.name, f, k)
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
        widths = tuple(k.width if k.width is not None and not (k.masked and f.bitwidth < k.width)
                       else f.bitwidth for f, k in zip(t.fields, jt.keys))
        return TableMap(t, jt, name, actions, json_actions, widths)

    def table(self, table_id: int) -> Optional[TableMap]:
        return self.tables.get(table_id)
