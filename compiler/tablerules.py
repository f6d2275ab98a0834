"""Rules a table declaration must follow beyond the types of its parts, as
p4c's front end and P4Runtime serializer enforce them:

- the entries list comes after the key (TypeInference);
- an entry does not use an action marked @defaultonly in the actions list,
  and the default action is not one marked @tableonly (TypeInference);
- entry priorities (EntryPriorities): only tables with a key that is not
  all exact/lpm take them, a `const entries` list takes none, the first
  entry of a list that gives some must give one, and counting down (or up,
  with `largest_priority_wins = false`) by `priority_delta` must not leave
  the unsigned range;
- every key expression has a control-plane name: a path, member, index,
  slice, `&`, constant or isValid() call, else it needs @name
  (TableKeyNames);
- entry keys are values of the forms their match kind takes: no mask for
  exact/optional/range, no range for exact/optional/lpm/ternary
  (P4Runtime serializer, "invalid key expression").

Each rule reports at the place p4c reports it.
"""

from __future__ import annotations

from typing import Optional

from . import ast
from .checker import Checker, ConstError
from .diagnostics import ErrorKind
from .exprtext import expr_text
from .scope import Scope
from .widths import shortened

_NO_PRIORITY_KINDS = ("exact", "lpm")
_UNSIGNED_LIMIT = 2 ** 64          # p4c counts priorities in a size_t
# match kind -> the keyset forms p4c's P4Runtime serializer refuses for it
_REFUSED_FORMS = {
    "exact": (ast.Mask, ast.Range), "optional": (ast.Mask, ast.Range),
    "lpm": (ast.Range,), "ternary": (ast.Range,), "range": (ast.Mask,),
}


def check_table_rules(c: Checker, d: ast.TableDecl, scope: Scope) -> None:
    """Report every broken rule of table `d` (declared in `scope`), in the
    order p4c's passes would."""
    props = {p.kind if p.kind != "value" else p.name: p for p in d.properties}
    key = props.get("key")
    entries = props.get("entries")
    if entries is not None and key is not None and _before(entries.pos, key.pos):
        c.diags.error(ErrorKind.TYPE, entries.name_pos, "entries: Entries list must be after table key")
        return
    if entries is not None:
        _check_entry_actions(c, props, entries)
        _check_priorities(c, d, props, key, entries, scope)
    if key is not None:
        _check_key_names(c, key, scope)
        if entries is not None:
            _check_entry_forms(c, key, entries)


def _before(a, b) -> bool:
    return a.line > 0 and b.line > 0 and (a.line, a.col) < (b.line, b.col)


def _check_key_names(c: Checker, key: ast.TableProperty, scope: Scope) -> None:
    for k in key.value:  # type: ignore[union-attr]
        if any(a.name == "name" for a in k.annotations):
            continue
        bad = _unnamed_part(c, k.expr, scope)
        if bad is not None:
            c.err(ErrorKind.EXPECTED, bad,
                  f"{shortened(expr_text(bad))}: Complex key expression requires a @name annotation")


def _unnamed_part(c: Checker, e: ast.Expr, scope: Scope) -> Optional[ast.Expr]:
    """The first part of key expression `e` p4c cannot name (innermost
    first, as p4c visits them), or None when it has a name."""
    if isinstance(e, (ast.Name, ast.IntLit, ast.BoolLit)):
        return None
    if isinstance(e, ast.Member):
        return _unnamed_part(c, e.expr, scope)
    if isinstance(e, (ast.Index, ast.Slice)):
        parts = (e.expr, e.index) if isinstance(e, ast.Index) else (e.expr, e.hi, e.lo)
    elif isinstance(e, ast.Binary) and e.op == "&":
        parts = (e.left, e.right)
    elif isinstance(e, ast.Call) and isinstance(e.callee, ast.Member) and \
            e.callee.name == "isValid" and not e.args:
        parts = (e.callee.expr,)
    else:
        parts = ()
    for p in parts:
        bad = _unnamed_part(c, p, scope)
        if bad is not None:
            return bad
    if parts:
        return None
    try:  # p4c folds constants before it names keys
        c.const_value(e, scope)
        return None
    except ConstError:
        return e


def _action_item(props: dict, name: ast.Expr) -> Optional[ast.ActionRef]:
    """The element of the actions list that `name` refers to."""
    actions = props.get("actions")
    if actions is None or not isinstance(name, ast.Name):
        return None
    for ar in actions.value:
        if isinstance(ar.name, ast.Name) and ar.name.name == name.name:
            return ar
    return None


def _marked(ar: Optional[ast.ActionRef], annotation: str) -> bool:
    return ar is not None and any(a.name == annotation for a in ar.annotations)


def _check_entry_actions(c: Checker, props: dict, entries: ast.TableProperty) -> None:
    for ent in entries.value:  # type: ignore[union-attr]
        if _marked(_action_item(props, ent.action.name), "defaultonly"):
            c.err(ErrorKind.TYPE, ent, "Entry: Action marked with defaultonly used in table")
            return
    default = props.get("default_action")
    if default is not None and isinstance(default.value, ast.ActionRef) and \
            _marked(_action_item(props, default.value.name), "tableonly"):
        c.diags.error(ErrorKind.TYPE, default.name_pos,
                      "default_action: Action marked with tableonly used as default action")


def _check_entry_forms(c: Checker, key: ast.TableProperty, entries: ast.TableProperty) -> None:
    kinds = [k.match_kind for k in key.value]  # type: ignore[union-attr]
    for ent in entries.value:  # type: ignore[union-attr]
        for k, kind in zip(ent.keys, kinds):
            if isinstance(k, _REFUSED_FORMS.get(kind, ())):
                c.err(ErrorKind.INVALID, k, f"{shortened(_keyset_text(k))} invalid key expression")
                return


def _keyset_text(k: ast.Expr) -> str:
    if isinstance(k, ast.Mask):
        return f"{expr_text(k.value)} &&& {expr_text(k.mask)}"
    if isinstance(k, ast.Range):
        return f"{expr_text(k.lo)} .. {expr_text(k.hi)}"
    return expr_text(k)


def _check_priorities(c: Checker, d: ast.TableDecl, props: dict, key: Optional[ast.TableProperty],
                      entries: ast.TableProperty, scope: Scope) -> None:
    listed = list(entries.value)  # type: ignore[arg-type]
    with_priority = next((e for e in listed if e.priority is not None), None)
    if entries.const:
        if with_priority is not None:
            c.err(ErrorKind.INVALID, with_priority, "Table with 'const' entries cannot have priorities")
        return
    largest_wins = _property_value(c, props.get("largest_priority_wins"), scope, True)
    delta = _property_value(c, props.get("priority_delta"), scope, 1)
    if isinstance(delta, bool) or not isinstance(delta, int) or not 0 <= delta < 2 ** 32:
        c.diags.error(ErrorKind.INVALID, props["priority_delta"].value.pos,
                      "priority_delta must be a positive value")
        return
    if key is None or not key.value:
        return
    if all(k.match_kind in _NO_PRIORITY_KINDS for k in key.value):  # type: ignore[union-attr]
        if with_priority is not None:
            c.diags.error(ErrorKind.UNSUPPORTED, key.list_pos,
                          "key match type does not require priorities, but some are specified")
        return
    if with_priority is None:
        if 1 + len(listed) * delta >= _UNSIGNED_LIMIT:
            _overflow(c, d)
        return
    current = 0
    for i, ent in enumerate(listed):
        if ent.priority is not None:
            try:
                current = c.const_value(ent.priority, scope)
            except ConstError:
                current = None
            if isinstance(current, bool) or not isinstance(current, int):
                c.err(ErrorKind.INVALID, ent.priority, f"{shortened(expr_text(ent.priority))} must be a constant")
                return
            current %= _UNSIGNED_LIMIT
        elif i == 0:
            c.err(ErrorKind.EXPECTED, ent, "Entry entry must have a priority")
            return
        following = current - delta if largest_wins else current + delta
        if not 0 <= following < _UNSIGNED_LIMIT:
            _overflow(c, d)
            return
        current = following


def _property_value(c: Checker, prop: Optional[ast.TableProperty], scope: Scope, default):
    if prop is None or not isinstance(prop.value, ast.Expr):
        return default
    try:
        return c.const_value(prop.value, scope)
    except ConstError:
        return default


def _overflow(c: Checker, d: ast.TableDecl) -> None:
    c.diags.error(ErrorKind.WIDTH, d.where_named, f"{d.name} Overflow in priority computation")
