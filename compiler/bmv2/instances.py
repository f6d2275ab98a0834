"""Extern instances as BMv2 objects.

    counter(1024, CounterType.packets) c;      counter_arrays  {name, size: 1024, is_direct: false}
    meter(16, MeterType.bytes) m;              meter_arrays    {name, size: 16, rate_count: 2, type: "bytes"}
    register<bit<32>>(8) r;                    register_arrays {name, size: 8, bitwidth: 32}
    direct_counter / direct_meter              created when a table names them (need the binding)
    action_profile / action_selector           created by the table that uses them (pipeline-level)

Names are the P4Info names (`names.ControlPlaneNames`).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from ..frontend import BlockInstance
from .env import Env, ExternBinding

V1MODEL_EXTERNS = {"counter", "direct_counter", "meter", "direct_meter", "register",
                   "action_profile", "action_selector", "Checksum16"}


def _ctor_args(ctx, blk: Optional[BlockInstance], args, env: Optional[Env]) -> list[Any]:
    """Constructor arguments as compile-time values (enum members by name)."""
    out: list[Any] = []
    scope = blk.scope if blk is not None else ctx.checker.glob
    for a in args:
        v = a.value
        try:
            c = ctx.checker.const_value(v, scope)
        except Exception:
            c = v.name if isinstance(v, (ast.Member, ast.TypeMember)) else None
        if isinstance(c, tuple) and len(c) == 3 and c[0] == "enum":
            c = c[2]
        out.append(c)
    return out


def make_extern(ctx, blk: Optional[BlockInstance], d: ast.Instantiation, t: types.Extern,
                env: Optional[Env], name: Optional[str] = None) -> ExternBinding:
    kind = t.decl.name
    if name is None:
        name = ctx.names.local(blk, d)
    eb = ExternBinding(d, kind, t, name, blk)
    args = _ctor_args(ctx, blk, d.args, env)
    eb.info["args"] = args
    if kind == "counter":
        size = args[0] if args and isinstance(args[0], int) else 0
        ctx.counter_arrays.append({"name": name, "id": len(ctx.counter_arrays), "is_direct": False,
                                   "size": size})
    elif kind == "meter":
        size = args[0] if args and isinstance(args[0], int) else 0
        unit = args[1] if len(args) > 1 else "packets"
        ctx.meter_arrays.append({"name": name, "id": len(ctx.meter_arrays), "is_direct": False,
                                 "size": size, "rate_count": 2,
                                 "type": "bytes" if unit == "bytes" else "packets"})
    elif kind == "register":
        size = args[0] if args and isinstance(args[0], int) else 0
        width = types.width_of(t.args[0]) if t.args else None
        if width is None:
            ctx.unsupported(d.pos, f"register {name} of a type without a fixed width")
            width = 0
        ctx.register_arrays.append({"name": name, "id": len(ctx.register_arrays), "size": size,
                                    "bitwidth": width})
    elif kind in ("direct_counter", "direct_meter", "action_profile", "action_selector"):
        pass  # emitted by the table that uses it
    elif kind == "Checksum16":
        pass  # methods report unsupported
    else:
        ctx.unsupported(d.pos, f"extern {kind}")
    return eb


def bind_direct_counter(ctx, eb: ExternBinding, table: str) -> None:
    if eb.info.get("emitted"):
        if eb.info.get("binding") != table:
            ctx.unsupported(eb.decl.pos, f"direct counter {eb.name} used by two tables")
        return
    eb.info["emitted"] = True
    eb.info["binding"] = table
    ctx.counter_arrays.append({"name": eb.name, "id": len(ctx.counter_arrays), "is_direct": True,
                               "binding": table})


def bind_direct_meter(ctx, eb: ExternBinding, table: str, size: int) -> dict:
    if eb.info.get("emitted"):
        if eb.info.get("binding") != table:
            ctx.unsupported(eb.decl.pos, f"direct meter {eb.name} used by two tables")
        return eb.info["json"]
    args = eb.info.get("args", [])
    unit = args[0] if args else "packets"
    j = {"name": eb.name, "id": len(ctx.meter_arrays), "is_direct": True, "rate_count": 2,
         "type": "bytes" if unit == "bytes" else "packets", "size": size, "binding": table,
         "result_target": None}
    ctx.meter_arrays.append(j)
    eb.info["emitted"] = True
    eb.info["binding"] = table
    eb.info["json"] = j
    return j
