"""The v1model deparser as a BMv2 deparser: the `order` of emitted headers.

    apply { pkt.emit(hdr.eth); pkt.emit(hdr.vlan); pkt.emit(hdr); }
becomes
    {"name": "deparser", "order": ["eth", "vlan[0]", "vlan[1]", ...], "primitives": []}

Emitting a struct emits its header fields in order, a stack its elements,
a union its members; BMv2 skips invalid headers, so `if (h.isValid())
pkt.emit(h);` needs no condition.  Other statements are not supported.
"""

from __future__ import annotations

from typing import Any

from .. import ast
from .env import Env, PacketBinding
from .primitives import BodyLowerer
from .values import HeaderV, StackV, StructV, UnionV, Value, describe


class DeparserLowering:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.order: list[str] = []

    def lower(self, blk, params: dict[str, Any]) -> dict:
        env, inits = self.ctx.block_env(blk, params)
        body = BodyLowerer(self.ctx, mode="deparser")
        for d in inits:
            self.ctx.unsupported(d.pos, "a deparser local with an initializer")
        self.stmts(blk.decl.body.stmts, env, body)
        return {"name": "deparser", "id": 0, "order": self.order, "primitives": []}

    def stmts(self, stmts, env: Env, body: BodyLowerer) -> None:
        for s in stmts:
            self.stmt(s, env, body)

    def stmt(self, s: ast.Stmt, env: Env, body: BodyLowerer) -> None:
        if isinstance(s, ast.Block):
            self.stmts(s.stmts, env.child(), body)
            return
        if isinstance(s, ast.Empty):
            return
        if isinstance(s, ast.If):
            # `if (h.isValid()) emit(h)` is what emit does anyway
            if self.only_validity_guarded(s):
                self.stmt(s.then, env.child(), body)
                return
        if isinstance(s, ast.CallStmt) and isinstance(s.call.callee, ast.Member):
            obj = body.ex.value(s.call.callee.expr, env)
            if isinstance(obj, PacketBinding) and s.call.callee.name == "emit" and s.call.args:
                arg = s.call.args[0].value
                if arg is not None:
                    self.emit(body.ex.value(arg, env), s)
                return
        self.ctx.unsupported(s.pos, f"{type(s).__name__} statement in a deparser")

    def only_validity_guarded(self, s: ast.If) -> bool:
        c = s.cond
        if s.else_ is not None:
            return False
        if not (isinstance(c, ast.Call) and isinstance(c.callee, ast.Member) and c.callee.name == "isValid"):
            return False
        then = s.then
        stmts = then.stmts if isinstance(then, ast.Block) else (then,)
        return all(isinstance(x, ast.CallStmt) and isinstance(x.call.callee, ast.Member)
                   and x.call.callee.name == "emit" and len(x.call.args) == 1
                   and x.call.args[0].value == c.callee.expr for x in stmts)

    def emit(self, v: Value, where: ast.Node) -> None:
        if isinstance(v, HeaderV):
            if v.node is not None:
                self.ctx.unsupported(where.pos, "emitting a stack element chosen at run time")
                return
            self.order.append(v.name)  # type: ignore[arg-type]
        elif isinstance(v, StackV):
            if v.union_stack:
                for u in v.unions:  # type: ignore[attr-defined]
                    self.emit(u, where)
            else:
                for h in v.elems:
                    self.emit(h, where)
        elif isinstance(v, UnionV):
            for h in v.members.values():
                self.emit(h, where)
        elif isinstance(v, StructV):
            for fv in v.fields.values():
                self.emit(fv, where)
        else:
            self.ctx.unsupported(where.pos, f"emitting {describe(v)}")
