"""The VerifyChecksum and ComputeChecksum controls as BMv2 `checksums`.

    update_checksum(hdr.ipv4.isValid(), { hdr.ipv4.version, ... },
                    hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
becomes a calculation {"name": "calc", "algo": "csum16", "input": [fields]}
and a checksum
    {"name": "cksum", "target": ["ipv4", "hdrChecksum"], "type": "generic",
     "calculation": "calc", "verify": false, "update": true,
     "if_cond": d2b(ipv4.$valid$)}
The `_with_payload` variants add the payload to the calculation's input.
An `if` around such calls is folded into `if_cond`.  BMv2 runs verify
checksums after the parser and update checksums before the deparser; other
statements in these controls are not supported (nor by p4c).
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .env import Env
from .externs import HASH_ALGOS
from .primitives import BodyLowerer
from .values import Leaf, as_bool, expr_node


class ChecksumBody(BodyLowerer):
    def __init__(self, ctx, owner: "ChecksumLowering") -> None:
        super().__init__(ctx, mode="checksum")
        self.owner = owner
        self.guard: Optional[dict] = None

    def checksum_call(self, e: ast.Call, env: Env, verify: bool, payload: bool) -> None:
        self.owner.checksum(e, env, verify, payload, self)


class ChecksumLowering:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.namer = ctx.checksum_namer

    def lower(self, blk, params: dict[str, Any], verify_block: bool) -> None:
        env, inits = self.ctx.block_env(blk, params)
        body = ChecksumBody(self.ctx, self)
        self.verify_block = verify_block
        for d in inits:
            self.ctx.unsupported(d.pos, "a local with an initializer in a checksum control")
        self.stmts(blk.decl.body.stmts, env, body)
        if body.out.prims:
            self.ctx.unsupported(blk.decl.pos, "statements other than checksum calls in a checksum control")

    def stmts(self, stmts, env: Env, body: ChecksumBody) -> None:
        for s in stmts:
            if isinstance(s, ast.Block):
                self.stmts(s.stmts, env.child(), body)
            elif isinstance(s, ast.If) and s.else_ is None:
                c = body.ex.leaf(s.cond, env)
                outer = body.guard
                cond = as_bool(c)
                body.guard = cond if outer is None else expr_node("and", outer, cond)
                self.stmts([s.then], env.child(), body)
                body.guard = outer
            elif isinstance(s, ast.CallStmt):
                body.call(s.call, env, want_value=False)
            elif isinstance(s, ast.Empty):
                pass
            else:
                self.ctx.unsupported(s.pos, f"{type(s).__name__} in a checksum control")

    def checksum(self, e: ast.Call, env: Env, verify: bool, payload: bool, body: ChecksumBody) -> None:
        ex = body.externs
        a = ex.args(e, ["condition", "data", "checksum", "algo"])
        if verify != self.verify_block:
            self.ctx.unsupported(e.pos, f"{'verify' if verify else 'update'}_checksum in this control")
            return
        cond = body.ex.leaf(a["condition"], env)  # type: ignore[arg-type]
        if cond.is_const and not cond.const:
            return
        if_cond: Optional[dict] = None if cond.is_const else as_bool(cond)
        if body.guard is not None:
            if_cond = body.guard if if_cond is None else expr_node("and", body.guard, if_cond)
        inputs = ex.calc_inputs(a["data"], env, e)
        if payload:
            inputs.append({"type": "payload", "value": None})
        algo = a["algo"]
        aname = algo.name if isinstance(algo, (ast.Member, ast.TypeMember)) else None
        if aname not in HASH_ALGOS:
            self.ctx.unsupported(e.pos, "this checksum algorithm")
            return
        target = body.lvalue(a["checksum"], env)  # type: ignore[arg-type]
        if not (isinstance(target, Leaf) and target.is_field):
            self.ctx.unsupported(e.pos, "a checksum that is not a header or metadata field")
            return
        if body.out.prims:
            self.ctx.unsupported(e.pos, "checksum data that needs computing first")
        calc = self.ctx.calculation(HASH_ALGOS[aname], inputs, e.pos)  # type: ignore[index]
        self.ctx.checksums.append({
            "name": self.namer.fresh("cksum"), "id": len(self.ctx.checksums),
            "target": target.node["value"], "type": "generic", "calculation": calc,
            "verify": verify, "update": not verify,
            "if_cond": if_cond if if_cond is not None else {"type": "bool", "value": True}})
