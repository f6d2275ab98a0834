"""Lowering calls of v1model externs to BMv2 primitives and objects.

    c.count(i)                   count(counter_array c, i)
    m.execute_meter(i, r)        execute_meter(meter_array m, i, r)
    r.read(x, i) / r.write(i, v) register_read(x, register_array r, i) / register_write(r, i, v)
    random(x, lo, hi)            modify_field_rng_uniform(x, lo, hi)
    hash(x, algo, base, d, max)  calculation {algo, input: d} +
                                 modify_field_with_hash_based_offset(x, base, calc, max)
    digest(rcv, d)               learn_lists += {d's fields}; generate_digest(rcv, id)
    clone(I2E, s)                clone_ingress_pkt_to_egress(s, 0)
    clone3(E2E, s, d)            field_lists += d; clone_egress_pkt_to_egress(s, id)
    resubmit/recirculate(...)    resubmit(id) / recirculate(id)
    mark_to_drop(sm)             mark_to_drop(header standard_metadata)
    truncate(n), log_msg(...), assert(c), assume(c)

Results that must land in a field (the `out` arguments) go through a
temporary when the argument is not a plain field; operands BMv2 wants as
fields (hash inputs, digest and field-list elements) are copied into
temporaries when they are not fields.
"""

from __future__ import annotations

from typing import Optional

from .. import ast
from .. import types
from .env import Env, ExternBinding
from .values import (HeaderV, Leaf, StackV, StructV, UnionV, Value, as_data, expr_node, hexstr,
                     param, describe)

HASH_ALGOS = {
    "crc32": "crc32", "crc32_custom": "crc32_custom", "crc16": "crc16",
    "crc16_custom": "crc16_custom", "random": "random", "identity": "identity",
    "csum16": "csum16", "xor16": "xor16",
}


class ExternLowering:
    def __init__(self, ctx, body) -> None:
        self.ctx = ctx
        self.body = body
        self.ex = body.ex

    def unsupported(self, e: ast.Node, what: str) -> None:
        self.ctx.unsupported(e.pos, what)

    def emit(self, op: str, params: list[dict]) -> None:
        self.body.emit(op, params)

    def args(self, e: ast.Call, names: list[str]) -> dict[str, Optional[ast.Expr]]:
        out: dict[str, Optional[ast.Expr]] = {n: None for n in names}
        pos = [a for a in e.args if a.name is None]
        for n, a in zip(names, pos):
            out[n] = a.value
        for a in e.args:
            if a.name is not None and a.name in out:
                out[a.name] = a.value
        return out

    def data(self, x: Optional[ast.Expr], env: Env) -> dict:
        """An extern argument as a simple operand: expressions are computed
        into a temporary first, as p4c passes them."""
        assert x is not None
        v = self.ex.leaf(x, env)
        node = as_data(v)
        if node.get("type") == "expression":
            t = v.type if types.bits_of(v.type) is not None else self.body.type_of(x)
            if types.bits_of(t) is None:
                t = types.Bits(32)
            tmp = self.body.temp(t, "tmp", x.pos)
            self.body.assign(tmp, v, x)
            node = tmp.node
        return node

    def out_field(self, x: Optional[ast.Expr], env: Env, t: Optional[types.Type] = None):
        """A field operand to receive a result, and a function to call after
        the primitive (copies a temporary back when `x` is not a field)."""
        assert x is not None
        target = self.body.lvalue(x, env)
        if isinstance(target, Leaf) and target.is_field:
            return target.node, (lambda: None)
        tt = t or self.body.type_of(x)
        from .primitives import SliceTarget
        if not isinstance(target, (Leaf, SliceTarget)):
            self.unsupported(x, "an extern result that is not a scalar")
            return {"type": "hexstr", "value": "0x0"}, (lambda: None)
        tmp = self.body.temp(tt, "tmp", x.pos)
        if not isinstance(tmp, Leaf):
            self.unsupported(x, "an extern result that is not a scalar")
            return {"type": "hexstr", "value": "0x0"}, (lambda: None)
        return tmp.node, (lambda: self.body.assign(target, tmp, x))

    def as_field(self, v: Leaf, where: ast.Node) -> dict:
        """`v` as a field operand, copying it into a temporary if needed."""
        if v.is_field:
            return v.node
        t = v.type if types.bits_of(v.type) is not None or isinstance(types.strip_newtype(v.type), types.Bool) else types.Bits(32)
        tmp = self.body.temp(t, "tmp", where.pos)
        self.body.assign(tmp, v, where)
        return tmp.node

    def leaves(self, v: Value, where: ast.Node, headers_whole: bool = False) -> list[dict]:
        """The fields (in order) making up a list/struct/header value, each as
        a field operand (temporaries for non-fields)."""
        if isinstance(v, Leaf):
            return [self.as_field(v, where)]
        if isinstance(v, HeaderV):
            if headers_whole and v.node is None:
                return [{"type": "header", "value": v.name}]
            return [self.as_field(x, where) for x in v.leaves()]
        if isinstance(v, StructV):
            out: list[dict] = []
            for fv in v.fields.values():
                out.extend(self.leaves(fv, where, headers_whole))
            return out
        if isinstance(v, StackV):
            out = []
            for h in v.elems:
                out.extend(self.leaves(h, where, headers_whole))
            return out
        if isinstance(v, UnionV):
            out = []
            for h in v.members.values():
                out.extend(self.leaves(h, where, headers_whole))
            return out
        self.unsupported(where, f"{describe(v)} in a field list")
        return []

    # -------------------------------------------------------- functions

    def function(self, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        m = getattr(self, "f_" + name, None)
        if m is None:
            self.unsupported(e, f"extern function {name}")
            return None
        return m(e, env)

    def f_mark_to_drop(self, e: ast.Call, env: Env) -> None:
        self.emit("mark_to_drop", [{"type": "header", "value": "standard_metadata"}])

    def f_random(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["result", "lo", "hi"])
        dst, post = self.out_field(a["result"], env)
        self.emit("modify_field_rng_uniform", [dst, self.data(a["lo"], env), self.data(a["hi"], env)])
        post()

    def algo_name(self, x: Optional[ast.Expr], env: Env) -> str:
        name = x.name if isinstance(x, (ast.Member, ast.TypeMember)) else None
        if name is None or name not in HASH_ALGOS:
            self.unsupported(x or ast.Empty(), "hash algorithm")  # type: ignore[arg-type]
            return "crc32"
        if name == "random":
            self.unsupported(x, "the random hash algorithm on BMv2")  # type: ignore[arg-type]
        return HASH_ALGOS[name]

    def f_hash(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["result", "algo", "base", "data", "max"])
        algo = self.algo_name(a["algo"], env)
        inputs = self.calc_inputs(a["data"], env, e, constants_in_fields=True)
        calc = self.ctx.calculation(algo, inputs, e.pos)
        dst, post = self.out_field(a["result"], env)
        self.emit("modify_field_with_hash_based_offset",
                  [dst, self.data(a["base"], env), {"type": "calculation", "value": calc},
                   self.data(a["max"], env)])
        post()

    def calc_inputs(self, x: Optional[ast.Expr], env: Env, where: ast.Node,
                    constants_in_fields: bool = False) -> list[dict]:
        """The input list of a calculation.  Constants become sized hexstr
        inputs, or (for hashes, as p4c does) temporaries holding them."""
        assert x is not None
        v = self.ex.value(x, env)
        return self.input_list(v, where, constants_in_fields)

    def input_list(self, v: Value, where: ast.Node, constants_in_fields: bool = False) -> list[dict]:
        if isinstance(v, Leaf):
            if v.is_const and not constants_in_fields:
                b = types.bits_of(v.type)
                w = b.width if b is not None else 32
                return [{"type": "hexstr", "value": hexstr(int(v.const), w)["value"], "bitwidth": w}]
            return [self.as_field(v, where)]
        if isinstance(v, HeaderV) and v.node is None:
            return [{"type": "header", "value": v.name}]
        if isinstance(v, StructV):
            out: list[dict] = []
            for fv in v.fields.values():
                out.extend(self.input_list(fv, where, constants_in_fields))
            return out
        return self.leaves(v, where, headers_whole=True)

    def f_digest(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["receiver", "data"])
        dt = None
        if e.type_args:
            dt = self.body.resolve_type(e.type_args[0], env)
        else:
            dt = self.body.type_of(a["data"])  # type: ignore[arg-type]
        name = dt.name if isinstance(dt, types.StructLike) else self.ctx.tuple_name()
        v = self.ex.value(a["data"], env)  # type: ignore[arg-type]
        elems = self.leaves(v, e)
        lid = self.ctx.learn_list(name, elems, e.pos)
        self.emit("generate_digest", [self.data(a["receiver"], env), hexstr(lid)])

    def clone_type(self, x: Optional[ast.Expr]) -> str:
        name = x.name if isinstance(x, (ast.Member, ast.TypeMember)) else None
        if name not in ("I2E", "E2E"):
            self.unsupported(x or ast.Empty(), "clone type that is not a constant")  # type: ignore[arg-type]
            return "I2E"
        return name  # type: ignore[return-value]

    def _clone(self, e: ast.Call, env: Env, kind: str, session: Optional[ast.Expr], fl_id: int) -> None:
        op = "clone_ingress_pkt_to_egress" if kind == "I2E" else "clone_egress_pkt_to_egress"
        self.emit(op, [self.data(session, env), hexstr(fl_id)])

    def f_clone(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["type", "session"])
        self._clone(e, env, self.clone_type(a["type"]), a["session"], 0)

    def f_clone3(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["type", "session", "data"])
        fl = self.ctx.field_list(self.leaves(self.ex.value(a["data"], env), e), e.pos)  # type: ignore[arg-type]
        self._clone(e, env, self.clone_type(a["type"]), a["session"], fl)

    def preserved(self, x: Optional[ast.Expr], env: Env, e: ast.Call) -> int:
        try:
            idx = int(self.ex.const(x, env))  # type: ignore[arg-type]
        except Exception:
            self.unsupported(e, "a field list index that is not a constant")
            return 0
        return self.ctx.field_list(self.ctx.annotated_field_list(idx), e.pos)

    def f_clone_preserving_field_list(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["type", "session", "data"])
        fl = self.preserved(a["data"], env, e)
        self._clone(e, env, self.clone_type(a["type"]), a["session"], fl)

    def f_resubmit(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["data"])
        fl = self.ctx.field_list(self.leaves(self.ex.value(a["data"], env), e), e.pos)  # type: ignore[arg-type]
        self.emit("resubmit", [hexstr(fl)])

    def f_resubmit_preserving_field_list(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["index"])
        self.emit("resubmit", [hexstr(self.preserved(a["index"], env, e))])

    def f_recirculate(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["data"])
        fl = self.ctx.field_list(self.leaves(self.ex.value(a["data"], env), e), e.pos)  # type: ignore[arg-type]
        self.emit("recirculate", [hexstr(fl)])

    def f_recirculate_preserving_field_list(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["index"])
        self.emit("recirculate", [hexstr(self.preserved(a["index"], env, e))])

    def f_truncate(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["length"])
        self.emit("truncate", [self.data(a["length"], env)])

    def _check(self, op: str, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["check"])
        c = self.ex.leaf(a["check"], env)  # type: ignore[arg-type]
        node = expr_node("b2d", None, c.node) if c.kind == "bool" else c.node
        if c.is_const:
            node = hexstr(1 if c.const else 0)
        self.emit(op, [param(node)])

    def f_assert(self, e: ast.Call, env: Env) -> None:
        self._check("assert", e, env)

    def f_assume(self, e: ast.Call, env: Env) -> None:
        self._check("assume", e, env)

    def f_log_msg(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["msg", "data"])
        msg = a["msg"]
        text = msg.value if isinstance(msg, ast.StringLit) else ""
        vals: list[dict] = []
        if a["data"] is not None:
            v = self.ex.value(a["data"], env)
            vals = self.log_values(v, e)
        self.emit("log_msg", [{"type": "string", "value": text},
                              {"type": "parameters_vector", "value": vals}])

    def log_values(self, v: Value, e: ast.Node) -> list[dict]:
        if isinstance(v, Leaf):
            return [param(as_data(v))]
        if isinstance(v, HeaderV):
            return [param(x.node) for x in v.leaves()]
        if isinstance(v, StructV):
            out: list[dict] = []
            for fv in v.fields.values():
                out.extend(self.log_values(fv, e))
            return out
        self.unsupported(e, "this value in log_msg")
        return []

    def f_verify(self, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["check", "toSignal"])
        c = self.ex.leaf(a["check"], env)  # type: ignore[arg-type]
        err = self.ex.leaf(a["toSignal"], env)  # type: ignore[arg-type]
        from .values import as_bool
        self.body.verify(as_bool(c), err.node, e)

    def f_static_assert(self, e: ast.Call, env: Env) -> Optional[Value]:
        return None

    def f_verify_checksum(self, e: ast.Call, env: Env) -> None:
        self.body.checksum_call(e, env, verify=True, payload=False)

    def f_update_checksum(self, e: ast.Call, env: Env) -> None:
        self.body.checksum_call(e, env, verify=False, payload=False)

    def f_verify_checksum_with_payload(self, e: ast.Call, env: Env) -> None:
        self.body.checksum_call(e, env, verify=True, payload=True)

    def f_update_checksum_with_payload(self, e: ast.Call, env: Env) -> None:
        self.body.checksum_call(e, env, verify=False, payload=True)

    # ---------------------------------------------------------- methods

    def method(self, inst: ExternBinding, name: str, e: ast.Call, env: Env) -> Optional[Value]:
        m = getattr(self, f"m_{inst.kind}_{name}", None)
        if m is None:
            self.unsupported(e, f"method {name} of extern {inst.kind}")
            return None
        return m(inst, e, env)

    def m_counter_count(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["index"])
        self.emit("count", [{"type": "counter_array", "value": inst.name}, self.data(a["index"], env)])

    def m_direct_counter_count(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        return None  # counted by BMv2 when the table hits

    def m_meter_execute_meter(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["index", "result"])
        dst, post = self.out_field(a["result"], env)
        self.emit("execute_meter", [{"type": "meter_array", "value": inst.name},
                                    self.data(a["index"], env), dst])
        post()

    def m_direct_meter_read(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["result"])
        target = self.body.lvalue(a["result"], env)  # type: ignore[arg-type]
        if not (isinstance(target, Leaf) and target.is_field):
            self.unsupported(e, "direct_meter.read into a non-field")
            return None
        prev = inst.info.get("result_target")
        if prev is not None and prev != target.node["value"]:
            self.unsupported(e, "direct_meter.read into two different places")
        inst.info["result_target"] = target.node["value"]
        return None

    def m_register_read(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["result", "index"])
        dst, post = self.out_field(a["result"], env)
        self.emit("register_read", [dst, {"type": "register_array", "value": inst.name},
                                    self.data(a["index"], env)])
        post()

    def m_register_write(self, inst: ExternBinding, e: ast.Call, env: Env) -> None:
        a = self.args(e, ["index", "value"])
        self.emit("register_write", [{"type": "register_array", "value": inst.name},
                                     self.data(a["index"], env), self.data(a["value"], env)])
