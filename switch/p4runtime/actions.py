"""Checking a P4Runtime `Action` and building it back for reads.

An action is kept as `(action_id, args)` with `args` the parameter values
as ints in P4Info order: the engine takes arguments by position.
"""

from __future__ import annotations

from .codec import from_uint, to_uint
from .errors import denied, invalid
from .schema import P4Schema

TABLE_AND_DEFAULT, TABLE_ONLY, DEFAULT_ONLY = 0, 1, 2

ActionSpec = tuple  # (action_id, (arg, ...))


def check_action(schema: P4Schema, action, where: str, allowed: dict[int, int] | None,
                 owner: str, default: bool = False) -> ActionSpec:
    """Checks `action` (p4.v1.Action); `allowed` maps the owner's action ids to
    their scope (None: any action of the P4Info)."""
    aid = action.action_id
    info = schema.actions.get(aid)
    if info is None:
        raise invalid(f"{where}.action_id: {aid} is not an action of the P4Info")
    if allowed is not None:
        scope = allowed.get(aid)
        if scope is None:
            names = ", ".join(schema.actions.by_id[a].name for a in allowed)
            raise invalid(f"{where}.action_id: action '{info.name}' is not an action of {owner} "
                          f"(its actions: {names})")
        if default and scope == TABLE_ONLY:
            raise denied(f"{where}: action '{info.name}' is @tableonly in {owner}: "
                         "it cannot be the default action")
        if not default and scope == DEFAULT_ONLY:
            raise denied(f"{where}: action '{info.name}' is @defaultonly in {owner}: "
                         "it can only be the default action")
    params = info.params
    args = [None] * len(params)
    index = info.param_index
    for i, p in enumerate(action.params):
        pos = index.get(p.param_id)
        if pos is None:
            raise invalid(f"{where}.params[{i}].param_id: {p.param_id} is not a parameter of "
                          f"action '{info.name}'")
        if args[pos] is not None:
            raise invalid(f"{where}.params[{i}]: parameter '{params[pos].name}' given twice")
        args[pos] = to_uint(p.value, params[pos].bitwidth, f"{where}.params[{i}].value")
    for pos, a in enumerate(args):
        if a is None:
            raise invalid(f"{where}.params: parameter '{params[pos].name}' of action "
                          f"'{info.name}' is missing")
    return aid, tuple(args)


def action_to_proto(schema: P4Schema, spec: ActionSpec, out) -> None:
    """Fills `out` (p4.v1.Action) canonically."""
    aid, args = spec
    out.action_id = aid
    params = schema.actions.by_id[aid].params
    for p, v in zip(params, args):
        out.params.add(param_id=p.id, value=from_uint(v))
