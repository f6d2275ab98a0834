"""The v1model parser as a BMv2 parser (p4c's ParserConverter).

    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type, h.eth.flag) {
            (0x0800, 1): ipv4;   (0x86dd &&& 0xffff, _): ipv6;   default: accept;
        }
    }
becomes
    {"name": "start",
     "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "eth"}]}],
     "transition_key": [{"type": "field", "value": ["eth", "type"]},
                        {"type": "field", "value": ["eth", "flag"]}],
     "transitions": [{"type": "hexstr", "value": "0x080001", "mask": null, "next_state": "ipv4"},
                     {"type": "hexstr", "value": "0x86dd00", "mask": "0xffff00", "next_state": "ipv6"},
                     {"type": "default", "value": null, "mask": null, "next_state": null}]}

Each key component is padded to whole bytes before the parts are
concatenated (12-bit 0xaba and 2-bit 0x3 give 0x0aba03).  Keys that are not
fields (slices, lookahead, expressions) are first `set` into a `scalars`
temporary.  Ranges become value/mask pairs.  `accept` and `reject` are both
the end of parsing (next_state null), as p4c emits them.  Assignments become
``set``; other statements run as ``primitive`` ops.  A sub-parser call
splits the state: the sub-parser's states are inlined (renamed
``<instance>_<state>``) and its accept continues with the rest of the state.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ast
from .. import types
from .env import BlockBinding, Env, PacketBinding, StateB, ValueSetB
from .expressions import NextV, UnionMemberOfNext
from .names import Namer
from .primitives import BodyLowerer
from .primlist import PrimitiveList
from .values import (HeaderV, Leaf, StackV, StructV, Value, as_data, expr_node, hex_text, hexstr,
                     mask, param, describe)

PARSER_OPS = {"extract", "extract_VL", "set", "verify", "advance", "shift"}


class ParserBody(BodyLowerer):
    """Statements of one parser state."""

    def __init__(self, ctx, out: PrimitiveList) -> None:
        super().__init__(ctx, out, mode="parser")

    def verify(self, cond: dict, err: dict, e: ast.Node) -> None:
        self.emit("verify", [cond, err])

    def packet_method(self, pkt: PacketBinding, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        if pkt.kind != "packet_in":
            self.unsupported(e, f"packet_out.{name} in a parser")
            return None
        args = [a.value for a in e.args]
        if name == "extract":
            if not args:
                self.unsupported(e, "extract without a header")
                return None
            if args[0] is None:
                # extract(_): into a scratch header of the given type
                t = self.resolve_type(e.type_args[0], env) if e.type_args else types.Unknown()
                if not isinstance(types.strip_newtype(t), types.StructLike):
                    self.unsupported(e, "extract(_) without a header type")
                    return None
                target = self.temp(t, "tmp_hdr", e.pos)
            else:
                target = self.ex.value(args[0], env)
            hdr = self.extract_target(target, e)
            if hdr is None:
                return None
            if len(args) > 1:
                n = self.ex.leaf(args[1], env)  # type: ignore[arg-type]
                self.emit("extract_VL", [hdr, {"type": "expression", "value": as_data(n)}])
            else:
                self.emit("extract", [hdr])
            return None
        if name == "advance":
            n = self.ex.leaf(args[0], env)  # type: ignore[arg-type]
            if not (n.is_const or n.is_field):
                tmp = self.temp(types.Bits(32), "tmp", e.pos)
                self.assign(tmp, n, e)
                n = tmp  # type: ignore[assignment]
            self.emit("advance", [n.node if not n.is_const else {"type": "hexstr", "value": hex_text(int(n.const), 32)}])
            return None
        if name == "lookahead":
            t = self.type_of(e)
            if e.type_args:
                t = self.resolve_type(e.type_args[0], env)
            return self.lookahead(t, e)
        self.unsupported(e, f"packet_in.{name} in a parser")
        return None

    def extract_target(self, v: Any, e: ast.Node) -> Optional[dict]:
        if isinstance(v, NextV):
            return {"type": "stack", "value": v.stack.name}
        if isinstance(v, HeaderV):
            if v.node is not None:
                # union member of a union stack's next element
                self.unsupported(e, "extracting into a stack element chosen at run time")
                return None
            return {"type": "regular", "value": v.name}
        if isinstance(v, UnionMemberOfNext):
            return {"type": "union_stack", "value": [v.stack.name, v.member]}
        self.unsupported(e, f"extracting into {describe(v)}")
        return None

    def lookahead(self, t: types.Type, e: ast.Node) -> Optional[Value]:
        """As p4c: look ahead into one scalar of the type's width, then
        slice the fields of headers and structs out of it."""
        w = types.width_of(t)
        if w is None or w == 0:
            self.unsupported(e, f"lookahead of type {t}")
            return None
        whole = self.temp(types.Bits(w), "tmp", e.pos)
        assert isinstance(whole, Leaf)
        self.emit("set", [whole.node, {"type": "lookahead", "value": [0, w]}])
        if types.bits_of(t) is not None:
            return Leaf(whole.node, t, "data")
        v = self.temp(t, "tmp_hdr", e.pos)
        leaves: list[Leaf] = []
        self._unpack_targets(v, leaves, e)
        off = w
        for leaf in leaves:
            fw = types.width_of(leaf.type) or 0
            off -= fw
            node = whole.node
            if off:
                node = expr_node(">>", node, {"type": "hexstr", "value": hex(off)})
            node = expr_node("&", node, hexstr(mask(fw), fw))
            self.emit("set", [leaf.node, param(node)])
        return v

    def _unpack_targets(self, v: Value, out: list, e: ast.Node) -> None:
        if isinstance(v, Leaf):
            out.append(v)
        elif isinstance(v, HeaderV):
            self.emit("add_header", [v.header_node()])
            out.extend(v.leaves())
        elif isinstance(v, StackV) and not v.union_stack:
            for h in v.elems:
                self._unpack_targets(h, out, e)
        elif isinstance(v, StructV):
            for x in v.fields.values():
                self._unpack_targets(x, out, e)
        else:
            self.unsupported(e, f"lookahead into {describe(v)}")


def to_parser_ops(prims: list[dict]) -> list[dict]:
    """Action primitives as parser ops: assignments become `set`, parser ops
    stay, everything else is wrapped in a `primitive` op."""
    out = []
    for p in prims:
        if p["op"] == "assign":
            out.append({"parameters": p["parameters"], "op": "set"})
        elif p["op"] in PARSER_OPS:
            out.append({"parameters": p["parameters"], "op": p["op"]})
        else:
            out.append({"op": "primitive", "parameters": [p]})
    return out


class ParserLowering:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.states: list[dict] = []
        self.namer = Namer()

    def lower(self, blk, params: dict[str, Any]) -> dict:
        env, inits = self.ctx.block_env(blk, params)
        for st in blk.decl.states:
            self.namer.reserve(st.name)
        start = self.inline(blk, env, inits, None, top=True)
        return {"name": "parser", "id": 0, "init_state": start, "parse_states": self.states}

    def inline(self, blk, env: Env, inits: list, accept: Optional[str], top: bool = False,
               prefix: str = "", pre_ops: Optional[list] = None) -> Optional[str]:
        """Lower the states of parser `blk`; returns the name of its start state."""
        senv = env.child()
        names: dict[str, Optional[str]] = {"accept": accept, "reject": None}
        for st in blk.decl.states:
            if st.name in ("accept", "reject"):
                continue
            names[st.name] = st.name if top else self.namer.fresh(f"{prefix}_{st.name}" if prefix else st.name)
        for n, jn in names.items():
            senv.declare(n, StateB(jn))
        by_name = {st.name: st for st in blk.decl.states}
        if "start" not in by_name:
            self.ctx.unsupported(blk.decl.pos, "a parser without a start state")
            return None
        for st in blk.decl.states:
            if st.name in ("accept", "reject"):
                continue
            first = inits if st.name == "start" else []
            self.state(st, names[st.name], senv, first, accept)  # type: ignore[arg-type]
        return names["start"]

    def new_state(self, name: str) -> dict:
        j = {"name": name, "id": len(self.states), "parser_ops": [], "transitions": [],
             "transition_key": []}
        self.states.append(j)
        return j

    def state(self, st: ast.ParserState, jname: str, penv: Env, inits: list, accept: Optional[str]) -> None:
        env = penv.child()
        cur = OpenState(self.new_state(jname), ParserBody(self.ctx, PrimitiveList()))
        for d in inits:
            cur.body.assign(env.lookup(d.name), cur.body.ex.value(d.init, env), d.init)
        cur = self.stmts(st.stmts, env, cur)
        self.transition(st, cur.json, cur.body, env)
        cur.close()

    def stmts(self, stmts, env: Env, cur: "OpenState") -> "OpenState":
        """Lower statements into the open state `cur`; sub-parser calls and
        `if` statements end it and continue in new states.  Returns the state
        left open at the end."""
        for s in stmts:
            sub = self.subparser_call(s, env)
            if sub is not None:
                bb, call = sub
                cont = self.namer.fresh(f"{cur.json['name']}_0")
                start = self.apply_subparser(bb, call, env, cur.body, cont)
                cur.close([_default(start)])
                cur = OpenState(self.new_state(cont), ParserBody(self.ctx, PrimitiveList()))
            elif isinstance(s, ast.If):
                cur = self.if_stmt(s, env, cur)
            elif isinstance(s, ast.Block):
                cur = self.stmts(s.stmts, env.child(), cur)
            else:
                cur.body.stmt(s, env)
        return cur

    def if_stmt(self, s: ast.If, env: Env, cur: "OpenState") -> "OpenState":
        """`if` in a parser state: the state ends with a select on the
        condition; each branch is a state of its own; both continue in a new
        state with the rest of the statements.

            state s { A; if (c) { B } C; transition t; }
        becomes
            s: A; tmp = c; select(tmp) { 1: s_true; default: s_0 }
            s_true: B -> s_0        s_0: C; transition t
        """
        c = cur.body.ex.leaf(s.cond, env)
        if c.is_const:
            branch = s.then if c.const else s.else_
            return self.stmts([branch], env.child(), cur) if branch is not None else cur
        tmp = cur.body.temp(types.Bits(1), "tmp", s.pos)
        assert isinstance(tmp, Leaf)
        cur.body.assign(tmp, c, s.cond)
        base = cur.json["name"]
        cont = self.namer.fresh(f"{base}_0")
        then_name = self.namer.fresh(f"{base}_true")
        else_name = self.namer.fresh(f"{base}_false") if s.else_ is not None else cont
        cur.json["transition_key"] = [{"type": "field", "value": tmp.node["value"]}]
        cur.close([{"type": "hexstr", "value": "0x01", "mask": None, "next_state": then_name},
                   _default(else_name)])
        for name, branch in ((then_name, s.then), (else_name if s.else_ is not None else None, s.else_)):
            if name is None or branch is None:
                continue
            b = OpenState(self.new_state(name), ParserBody(self.ctx, PrimitiveList()))
            b = self.stmts([branch], env.child(), b)
            b.close([_default(cont)])
        return OpenState(self.new_state(cont), ParserBody(self.ctx, PrimitiveList()))

    # ---------------------------------------------------------- sub-parsers

    def subparser_call(self, s: ast.Stmt, env: Env) -> Optional[tuple[BlockBinding, ast.Call]]:
        if not isinstance(s, ast.CallStmt):
            return None
        c = s.call
        if not (isinstance(c.callee, (ast.Member, ast.TypeMember)) and c.callee.name == "apply"):
            return None
        if isinstance(c.callee, ast.TypeMember):
            t = self.ctx.checker.resolve_type(c.callee.type, self.ctx.type_scope(env))
            blk = env.blk
            if isinstance(t, types.Block) and blk is not None and t.decl.name in blk.children:
                return BlockBinding(blk.children[t.decl.name]), c
            return None
        if isinstance(c.callee.expr, ast.Name):
            b = env.lookup(c.callee.expr.name)
            if isinstance(b, BlockBinding):
                return b, c
        return None

    def apply_subparser(self, bb: BlockBinding, call: ast.Call, env: Env, body: ParserBody, cont: str) -> Optional[str]:
        inst = bb.inst
        if inst.kind != "parser":
            self.ctx.unsupported(call.pos, "applying a control from a parser")
            return cont
        callee_env = Env(self.ctx.root_env, inst)
        body.bind_arguments(inst.decl.params, call.args, callee_env, env, call, callee_env, alias_in=True)
        benv, inits = self.ctx.block_env(inst, dict(callee_env.names), env)
        # initializers of the sub-parser's locals run before its start state
        for d in inits:
            body.assign(benv.lookup(d.name), body.ex.value(d.init, benv), d.init)
        prefix = inst.path.rsplit(".", 1)[-1]
        return self.inline(inst, benv, [], cont, prefix=prefix)

    # ----------------------------------------------------------- transitions

    def transition(self, st: ast.ParserState, j: dict, body: ParserBody, env: Env) -> None:
        tr = st.transition
        if tr is None:
            j["transitions"] = [_default(None)]
            return
        if isinstance(tr, str):
            j["transitions"] = [_default(self.state_name(tr, env, st))]
            return
        if isinstance(tr, ast.Select):
            self.select(tr, j, body, env)
            return
        self.ctx.unsupported(st.pos, "this transition")

    def state_name(self, name: str, env: Env, where: ast.Node) -> Optional[str]:
        b = env.lookup(name)
        if isinstance(b, StateB):
            return b.name
        self.ctx.unsupported(where.pos, f"transition to {name}")
        return None

    def select(self, sel: ast.Select, j: dict, body: ParserBody, env: Env) -> None:
        widths: list[int] = []
        keys: list[dict] = []
        for x in sel.exprs:
            sf = self.stack_field(x, body, env)
            if sf is not None:
                keys.append(sf[0])
                widths.append(sf[1])
                continue
            v = body.ex.leaf(x, env)
            b = types.bits_of(v.type)
            w = b.width if b is not None else (types.width_of(v.type) or 32)
            if isinstance(types.strip_newtype(v.type), types.Bool):
                w = 1
            if v.is_field and v.node.get("type") == "field":
                keys.append({"type": "field", "value": v.node["value"]})
            else:
                tt = v.type if types.bits_of(v.type) is not None else types.Bits(w)
                tmp = body.temp(tt, "tmp", x.pos)
                body.assign(tmp, v, x)
                keys.append({"type": "field", "value": tmp.node["value"]})  # type: ignore[union-attr]
            widths.append(w)
        j["transition_key"] = keys
        trans: list[dict] = []
        for case in sel.cases:
            nxt = self.state_name(case.state, env, case)
            ks = case.keyset
            if not widths and isinstance(ks, (ast.Default, ast.DontCare)):
                trans.append(_default(nxt))
                break
            # a tuple key set; `{v}` is one for a single key too
            comps = list(ks.elems) if isinstance(ks, ast.ListExpr) and (
                len(widths) > 1 or len(ks.elems) == 1) else [ks]
            if len(comps) == 1 and len(widths) > 1 and isinstance(comps[0], (ast.Default, ast.DontCare)):
                comps = [comps[0]] * len(widths)
            vset = self.value_set(comps, env)
            if vset is not None and len(comps) == 1:
                # a struct value set matches the whole key
                trans.append({"type": "parse_vset", "value": vset.name, "mask": None, "next_state": nxt})
                continue
            if len(comps) != len(widths):
                self.ctx.unsupported(case.pos, "a select case with the wrong number of values")
                continue
            if all(isinstance(c, (ast.Default, ast.DontCare)) for c in comps):
                trans.append(_default(nxt))
                break  # later cases can never match
            vset = self.value_set(comps, env)
            if vset is not None:
                if len(comps) != 1:
                    self.ctx.unsupported(case.pos, "a value set inside a tuple key set")
                    continue
                trans.append({"type": "parse_vset", "value": vset.name, "mask": None, "next_state": nxt})
                continue
            for value, m in self.expand(comps, widths, body, env, case):
                trans.append({"type": "hexstr", "value": value, "mask": m, "next_state": nxt})
        if not trans or trans[-1]["type"] != "default":
            pass  # no match: BMv2 sets error.NoMatch
        j["transitions"] = trans

    def stack_field(self, x: ast.Expr, body: ParserBody, env: Env) -> Optional[tuple[dict, int]]:
        """`stack.last.f` as a ``stack_field`` key (the last extracted element)."""
        if not (isinstance(x, ast.Member) and isinstance(x.expr, ast.Member) and x.expr.name == "last"):
            return None
        s = body.ex.value(x.expr.expr, env)
        if not isinstance(s, StackV) or s.union_stack:
            return None
        ft = s.type.elem.field_type(x.name)  # type: ignore[attr-defined]
        w = types.width_of(ft) if ft is not None else None
        if w is None:
            return None
        return {"type": "stack_field", "value": [s.name, x.name]}, w

    def value_set(self, comps: list[ast.Expr], env: Env) -> Optional[ValueSetB]:
        for c in comps:
            if isinstance(c, ast.Name):
                b = env.lookup(c.name)
                if isinstance(b, ValueSetB):
                    return b
        return None

    def expand(self, comps: list[ast.Expr], widths: list[int], body: ParserBody, env: Env,
               where: ast.Node) -> list[tuple[str, Optional[str]]]:
        """The (value, mask) hex pairs matching one key set."""
        per: list[list[tuple[int, int]]] = []   # per component: (value, mask) alternatives
        for c, w in zip(comps, widths):
            full = mask(w)
            if isinstance(c, (ast.Default, ast.DontCare)):
                per.append([(0, 0)])
            elif isinstance(c, ast.Mask):
                v, m = self.c(c.value, env, body), self.c(c.mask, env, body)
                per.append([(v & m & full, m & full)])
            elif isinstance(c, ast.Range):
                lo, hi = self.c(c.lo, env, body), self.c(c.hi, env, body)
                alts = range_to_masks(lo & full, hi & full, w)
                if len(alts) > 64:
                    self.ctx.unsupported(c.pos, "a select range needing more than 64 masks")
                per.append(alts)
            else:
                per.append([(self.c(c, env, body) & full, full)])
        combos: list[list[tuple[int, int]]] = [[]]
        for alts in per:
            combos = [prev + [a] for prev in combos for a in alts]
        out = []
        for combo in combos:
            vtext, mtext, masked = "", "", False
            for (v, m), w in zip(combo, widths):
                nbytes = (w + 7) // 8
                vtext += f"{v:0{nbytes * 2}x}"
                mtext += f"{m:0{nbytes * 2}x}"
                if m != mask(w):
                    masked = True
            out.append(("0x" + vtext, "0x" + mtext if masked else None))
        return out

    def c(self, x: ast.Expr, env: Env, body: ParserBody) -> int:
        try:
            v = body.ex.const(x, env)
        except Exception:
            v = None
        if not isinstance(v, int):
            self.ctx.unsupported(x.pos, "a select case value that is not a constant")
            return 0
        return int(v)


class OpenState:
    """A parser state whose ops are still being emitted."""

    def __init__(self, json: dict, body: ParserBody) -> None:
        self.json = json
        self.body = body

    def close(self, transitions: Optional[list[dict]] = None) -> None:
        self.json["parser_ops"] = to_parser_ops(self.body.out.finish())
        if transitions is not None:
            self.json["transitions"] = transitions


def _default(nxt: Optional[str]) -> dict:
    return {"type": "default", "value": None, "mask": None, "next_state": nxt}


def range_to_masks(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """Value/mask pairs covering exactly [lo, hi] (prefix decomposition)."""
    out: list[tuple[int, int]] = []
    full = mask(width)
    while lo <= hi:
        size = lo & -lo if lo else 1 << width
        while size > hi - lo + 1:
            size >>= 1
        out.append((lo, full & ~(size - 1)))
        lo += size
    return out
