"""The P4-16 parser: every construct's syntax tree, precedence, positions
through line markers, syntax errors, and robustness on garbage."""

from __future__ import annotations

import dataclasses
import random

import pytest

from p4scope.compiler import ast
from p4scope.compiler.diagnostics import NOWHERE, Diagnostics, Pos
from p4scope.compiler.parser import parse

# ------------------------------------------------------------------ helpers


def parse_ok(src: str) -> ast.Program:
    diags = Diagnostics()
    program = parse(src, diags, "t.p4")
    assert not diags.errors, [d.render(diags.sources) for d in diags.errors]
    return program


def errors(src: str, filename: str = "t.p4") -> list[str]:
    diags = Diagnostics()
    program = parse(src, diags, filename)
    assert program.decls == () or not diags.errors
    return [f"{d.pos}: {d.message}" for d in diags.errors]


def strip(x):
    """`x` with every position set to NOWHERE, to compare with built nodes."""
    if isinstance(x, ast.Node):
        changes = {f.name: strip(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name != "pos"}
        return dataclasses.replace(x, pos=NOWHERE, **changes)
    if isinstance(x, tuple):
        return tuple(strip(e) for e in x)
    return x


def show(e) -> str:
    """A compact, fully parenthesised rendering of an expression or type."""
    match e:
        case None:
            return "_"
        case ast.IntLit():
            return e.text
        case ast.BoolLit():
            return str(e.value).lower()
        case ast.StringLit():
            return f'"{e.value}"'
        case ast.Name():
            return ("." if e.toplevel else "") + e.name
        case ast.Member():
            return f"{show(e.expr)}.{e.name}"
        case ast.TypeMember():
            return f"{show(e.type)}.{e.name}"
        case ast.ErrorMember():
            return f"error.{e.name}"
        case ast.Index():
            return f"{show(e.expr)}[{show(e.index)}]"
        case ast.Slice():
            return f"{show(e.expr)}[{show(e.hi)}:{show(e.lo)}]"
        case ast.Unary():
            return f"({e.op}{show(e.expr)})"
        case ast.Binary():
            return f"({show(e.left)} {e.op} {show(e.right)})"
        case ast.Mux():
            return f"({show(e.cond)} ? {show(e.then)} : {show(e.else_)})"
        case ast.Cast():
            return f"(({show(e.type)}){show(e.expr)})"
        case ast.Call():
            targs = f"<{', '.join(show(t) for t in e.type_args)}>" if e.type_args else ""
            return f"{show(e.callee)}{targs}({', '.join(show(a) for a in e.args)})"
        case ast.ConstructorCall():
            return f"new {show(e.type)}({', '.join(show(a) for a in e.args)})"
        case ast.Argument():
            return (f"{e.name} = " if e.name else "") + show(e.value)
        case ast.ListExpr():
            return "{" + ", ".join(show(x) for x in e.elems) + "}"
        case ast.StructExpr():
            typed = f"({show(e.type)})" if e.type else ""
            return typed + "{" + ", ".join(f"{n} = {show(v)}" for n, v in e.fields) + "}"
        case ast.InvalidExpr():
            return "{#}"
        case ast.DontCare():
            return "_"
        case ast.Default():
            return "default"
        case ast.Mask():
            return f"({show(e.value)} &&& {show(e.mask)})"
        case ast.Range():
            return f"({show(e.lo)} .. {show(e.hi)})"
        case ast.TypeBits():
            return f"{'int' if e.signed else 'bit'}<{show(e.width)}>"
        case ast.TypeVarbit():
            return f"varbit<{show(e.width)}>"
        case ast.TypeName():
            return ("." if e.toplevel else "") + e.name
        case ast.TypeSpecialized():
            return f"{show(e.base)}<{', '.join(show(a) for a in e.args)}>"
        case ast.TypeStack():
            return f"{show(e.elem)}[{show(e.size)}]"
        case ast.TypeTuple():
            return f"tuple<{', '.join(show(a) for a in e.elems)}>"
        case ast.TypeList():
            return f"list<{show(e.elem)}>"
        case ast.TypeBool():
            return "bool"
        case ast.TypeError_():
            return "error"
        case ast.TypeString():
            return "string"
        case ast.TypeInt():
            return "int"
        case ast.TypeVoid():
            return "void"
        case ast.TypeDontCare():
            return "_"
        case ast.TypeMatchKind():
            return "match_kind"
    raise AssertionError(f"show: {e!r}")


PRELUDE = """
extern packet_in { void extract<T>(out T hdr); T lookahead<T>(); void advance(in bit<32> n); }
extern Checksum16 { Checksum16(); bit<16> get<D>(in D data); }
extern register<T> { register(bit<32> size); void read(out T result, in bit<32> index); }
struct S { bit<8> a; bit<8> b; }
enum E { A, B }
"""


def apply_body(stmts: str, decls: str = "") -> tuple[ast.Stmt, ...]:
    """The statements of ``control C() { decls apply { stmts } }``."""
    program = parse_ok(PRELUDE + f"control C() {{ {decls} apply {{ {stmts} }} }}")
    return program.decls[-1].body.stmts


def expr(text: str) -> ast.Expr:
    """The expression `text` (as the value of an assignment)."""
    (stmt,) = apply_body(f"x = {text};")
    return stmt.value


# ----------------------------------------------------------- declarations


def test_empty_input_is_an_empty_program():
    for src in ("", "  \n\t\n", "// only a comment\n", "/* block */", ";;"):
        assert parse_ok(src).decls == ()


def test_header_union_struct_and_fields():
    h, u, s = parse_ok(
        """header h_t { bit<8> f; @name("g") varbit<32> g; }
        header_union u_t { h_t a; h_t b; }
        struct s_t { h_t[4] stack; tuple<bit<8>, bool> t; list<bit<8>> l; int<16> i; bit b; }"""
    ).decls
    assert strip(h) == ast.HeaderDecl(
        "h_t",
        fields=(
            ast.Field("f", type=ast.TypeBits(ast.IntLit(8, text="8"))),
            ast.Field(
                "g",
                (ast.Annotation("name", body=(ast.StringLit("g"),), tokens='"g"'),),
                type=ast.TypeVarbit(ast.IntLit(32, text="32")),
            ),
        ),
    )
    assert isinstance(u, ast.HeaderUnionDecl) and [f.name for f in u.fields] == ["a", "b"]
    assert [(f.name, show(f.type)) for f in s.fields] == [
        ("stack", "h_t[4]"),
        ("t", "tuple<bit<8>, bool>"),
        ("l", "list<bit<8>>"),
        ("i", "int<16>"),
        ("b", "bit<1>"),
    ]


def test_generic_struct_and_its_specialisation():
    s, t = parse_ok("struct P<T1, T2> { T1 first; T2 second; }\ntypedef P<bit<8>, bool> pair_t;").decls
    assert s.type_params == ("T1", "T2")
    assert [show(f.type) for f in s.fields] == ["T1", "T2"]
    assert show(t.type) == "P<bit<8>, bool>"


def test_plain_and_serializable_enums():
    e, f = parse_ok("enum E { A, B, }\nenum bit<8> F { X = 1, Y = 8w2 }").decls
    assert strip(e) == ast.EnumDecl("E", members=(ast.EnumMember("A"), ast.EnumMember("B")))
    assert f.name == "F" and show(f.type) == "bit<8>"
    assert [(m.name, show(m.value)) for m in f.members] == [("X", "1"), ("Y", "8w2")]


def test_typedef_newtype_and_const():
    a, b, c = parse_ok("typedef bit<48> mac_t;\ntype bit<9> port_t;\nconst mac_t BCAST = 48w0xFFFF_FFFF_FFFF;").decls
    assert strip(a) == ast.TypedefDecl("mac_t", type=ast.TypeBits(ast.IntLit(48, text="48")))
    assert b.newtype and b.name == "port_t"
    assert c.name == "BCAST" and show(c.type) == "mac_t" and c.value.value == 2**48 - 1


def test_error_and_match_kind():
    e, m = parse_ok("error { NoError, PacketTooShort }\nmatch_kind { exact, lpm, }").decls
    assert strip(e) == ast.ErrorDecl("error", members=("NoError", "PacketTooShort"))
    assert strip(m) == ast.MatchKindDecl("match_kind", members=("exact", "lpm"))


def test_types():
    (_, s) = parse_ok(
        """enum E { A }
        struct s_t { bit<(8 * 2)> a; .E b; error c; bool d; string e; match_kind f;
        tuple<> g; bit<W> h; }"""
    ).decls
    assert [show(f.type) for f in s.fields] == [
        "bit<(8 * 2)>", ".E", "error", "bool", "string", "match_kind", "tuple<>", "bit<W>",
    ]


# ---------------------------------------------------------------- parsers


def test_parser_states_select_and_keysets():
    (p,) = parse_ok(
        PRELUDE
        + """parser P(packet_in pkt, out S s) {
            value_set<bit<16>>(4) pvs;
            state start {
                pkt.extract(s);
                verify(s.a == 1, error.NoMatch);
                transition select(s.a, s.b) {
                    (8w1, 0x0 &&& 0xF): next;
                    (_, 1 .. 5): next;
                    (pvs, default): accept;
                    default: reject;
                }
            }
            state next { pkt.advance(32); transition accept; }
        }"""
    ).decls[-1:]
    assert isinstance(p, ast.ParserDecl) and p.name == "P"
    assert isinstance(p.locals[0], ast.ValueSetDecl) and show(p.locals[0].type) == "bit<16>"
    start, nxt = p.states
    assert [show(s.call) for s in start.stmts] == ["pkt.extract(s)", "verify((s.a == 1), error.NoMatch)"]
    assert [show(e) for e in start.transition.exprs] == ["s.a", "s.b"]
    assert [(show(c.keyset), c.state) for c in start.transition.cases] == [
        ("{8w1, (0x0 &&& 0xF)}", "next"),
        ("{_, (1 .. 5)}", "next"),
        ("{pvs, default}", "accept"),
        ("default", "reject"),
    ]
    assert nxt.transition == "accept"


def test_select_with_one_expression_and_parenthesised_keys():
    (p,) = parse_ok(
        "parser P() { state start { transition select(x) { (1): a; 2 &&& 3: b; (4 .. 5): c; _: d; } } }"
    ).decls
    cases = p.states[0].transition.cases
    assert [show(c.keyset) for c in cases] == ["1", "(2 &&& 3)", "{(4 .. 5)}", "_"]


def test_parser_lookahead_sub_parser_and_statements():
    (p,) = parse_ok(
        PRELUDE
        + """parser Sub(packet_in pkt);
        parser P(packet_in pkt)(bit<8> k) {
            Sub() sub;
            bit<8> v;
            state start {
                v = pkt.lookahead<bit<8>>();
                if (v == k) { sub.apply(pkt); }
                transition accept;
            }
        }"""
    ).decls[-1:]
    assert [c.name for c in p.ctor_params] == ["k"]
    assert strip(p.locals[0]) == ast.Instantiation("sub", type=ast.TypeName("Sub"))
    assign, cond = p.states[0].stmts
    assert show(assign.value) == "pkt.lookahead<bit<8>>()"
    assert show(cond.then.stmts[0].call) == "sub.apply(pkt)"


def test_parser_control_and_package_types_and_main():
    decls = parse_ok(
        PRELUDE
        + """parser Parser<H, M>(packet_in b, out H hdr, inout M meta);
        control Ingress<H, M>(inout H hdr, inout M meta);
        package V1Switch<H, M>(Parser<H, M> p, Ingress<H, M> ig);
        parser MyP(packet_in b, out S h, inout S m) { state start { transition accept; } }
        control MyI(inout S h, inout S m) { apply { } }
        V1Switch(MyP(), MyI()) main;"""
    ).decls[-6:]
    ptype, ctype, pkg, _, _, main = decls
    assert isinstance(ptype, ast.ParserTypeDecl) and ptype.type_params == ("H", "M")
    assert [(p.direction, p.name, show(p.type)) for p in ptype.params] == [
        ("", "b", "packet_in"),
        ("out", "hdr", "H"),
        ("inout", "meta", "M"),
    ]
    assert isinstance(ctype, ast.ControlTypeDecl) and ctype.type_params == ("H", "M")
    assert isinstance(pkg, ast.PackageDecl) and [show(p.type) for p in pkg.params] == [
        "Parser<H, M>",
        "Ingress<H, M>",
    ]
    assert main.name == "main" and show(main.type) == "V1Switch"
    assert [show(a) for a in main.args] == ["new MyP()", "new MyI()"]


def test_type_parameters_are_types_only_inside_their_declaration():
    decls = parse_ok("parser P<H>(in H h);\ncontrol C() { apply { H = 1; } }").decls
    assert show(decls[1].body.stmts[0].target) == "H"


# --------------------------------------------------------------- controls


def test_table_properties():
    (c,) = parse_ok(
        PRELUDE
        + """control C() {
            action a() {}
            action b(bit<8> v) {}
            table t {
                key = { h.x : exact @name("x"); h.y : ternary; }
                actions = { a; @defaultonly b(1); }
                const default_action = b(2);
                size = 1024;
                implementation = action_profile(32w128);
                counters = direct_counter(CounterType.packets);
                meters = m;
                idle_timeout = true;
                @my_anno my_prop = { 1, 2 };
            }
            apply { }
        }"""
    ).decls[-1:]
    table = c.locals[2]
    assert isinstance(table, ast.TableDecl) and table.name == "t"
    key, actions, default, *values = table.properties
    assert key.kind == "key"
    assert [(show(k.expr), k.match_kind, [a.name for a in k.annotations]) for k in key.value] == [
        ("h.x", "exact", ["name"]),
        ("h.y", "ternary", []),
    ]
    assert actions.kind == "actions"
    assert [(show(r.name), [show(a) for a in r.args], [a.name for a in r.annotations]) for r in actions.value] == [
        ("a", [], []),
        ("b", ["1"], ["defaultonly"]),
    ]
    assert default.kind == "default_action" and default.const
    assert show(default.value.name) == "b" and [show(a) for a in default.value.args] == ["2"]
    assert [(v.name, v.kind, show(v.value)) for v in values] == [
        ("size", "value", "1024"),
        ("implementation", "value", "action_profile(32w128)"),
        ("counters", "value", "direct_counter(CounterType.packets)"),
        ("meters", "value", "m"),
        ("idle_timeout", "value", "true"),
        ("my_prop", "value", "{1, 2}"),
    ]
    assert values[-1].annotations[0].name == "my_anno"


def test_const_entries_and_entries_with_priorities():
    (c,) = parse_ok(
        """control C() {
            table t {
                key = { a : ternary; b : range; }
                actions = { x; }
                const entries = {
                    (1, _) : x();
                    (0x1 &&& 0xF, 1 .. 2) : x(2) @comment("e");
                    priority = 10 : (_, _) : x;
                }
                entries = {
                    const priority = (1 + 2) : (5, 6) : x;
                    default : x;
                }
            }
            apply { }
        }"""
    ).decls
    const_entries, entries = c.locals[0].properties[2:]
    assert const_entries.kind == "entries" and const_entries.const and not entries.const
    assert [([show(k) for k in e.keys], show(e.action.name), show(e.priority) if e.priority else None)
            for e in const_entries.value] == [
        (["1", "_"], "x", None),
        (["(0x1 &&& 0xF)", "(1 .. 2)"], "x", None),
        (["_", "_"], "x", "10"),
    ]
    assert const_entries.value[1].annotations[0].name == "comment"
    first, second = entries.value
    assert first.const and show(first.priority) == "(1 + 2)" and [show(k) for k in first.keys] == ["5", "6"]
    assert [show(k) for k in second.keys] == ["default"]


def test_apply_statements():
    stmts = apply_body(
        """
        if (x == 1) y = 2; else if (z) { y = 3; } else ;
        switch (t.apply().action_run) {
            a:
            b: { exit; }
            default: { return; }
        }
        switch (x) { 1: { } 2: { } }
        bit<8> v = 1;
        const bit<8> K = 5;
        S s;
        y |+|= 1; y |-|= 2; y += 3; y <<= 1; y >>= 1; y &= 1; y ^= 2; y |= 4;
        h.s[1].f = .g;
        (y) = 1;
        return;
        exit;
        ;
        """
    )
    if_, sw, sw2, v, k, s, *rest = stmts
    assert show(if_.cond) == "(x == 1)" and isinstance(if_.then, ast.Assign)
    assert isinstance(if_.else_, ast.If) and isinstance(if_.else_.else_, ast.Empty)
    assert show(sw.expr) == "t.apply().action_run"
    assert [(show(c.label), c.body is None) for c in sw.cases] == [("a", True), ("b", False), ("default", False)]
    assert isinstance(sw.cases[1].body.stmts[0], ast.Exit)
    assert [show(c.label) for c in sw2.cases] == ["1", "2"]
    assert isinstance(v, ast.DeclStmt) and isinstance(v.decl, ast.VarDecl) and show(v.decl.init) == "1"
    assert isinstance(k.decl, ast.ConstDecl) and isinstance(s.decl, ast.VarDecl) and s.decl.init is None
    compound = rest[:8]
    assert [(c.op, show(c.target)) for c in compound] == [
        ("|+|", "y"), ("|-|", "y"), ("+", "y"), ("<<", "y"), (">>", "y"), ("&", "y"), ("^", "y"), ("|", "y"),
    ]
    member, paren, ret, ext, empty = rest[8:]
    assert show(member.target) == "h.s[1].f" and show(member.value) == ".g"
    assert show(paren.target) == "y"
    assert isinstance(ret, ast.Return) and ret.value is None
    assert isinstance(ext, ast.Exit) and isinstance(empty, ast.Empty)


def test_for_loops_break_continue():
    loop, for_in = apply_body(
        "for (bit<8> i = 0, j = 1; i < 4; i = i + 1, j = j << 1) { break; }"
        " for (bit<8> k in 1 .. 3) continue;"
    )
    assert [type(s).__name__ for s in loop.init] == ["DeclStmt", "Assign"]
    assert show(loop.cond) == "(i < 4)" and len(loop.update) == 2
    assert isinstance(loop.body.stmts[0], ast.Break)
    assert for_in.var == "k" and show(for_in.type) == "bit<8>" and show(for_in.iterable) == "(1 .. 3)"
    assert isinstance(for_in.body, ast.Continue)


# ------------------------------------------------------------ expressions


@pytest.mark.parametrize(
    "text, tree",
    [
        ("a & b == c", "((a & b) == c)"),
        ("a == b & c", "(a == (b & c))"),
        ("a | b < c", "((a | b) < c)"),
        ("a ^ b | c & d", "((a ^ b) | (c & d))"),
        ("a || b && c", "(a || (b && c))"),
        ("a && b == c || d", "((a && (b == c)) || d)"),
        ("a != b == c", "((a != b) == c)"),
        ("a < b == c > d", "((a < b) == (c > d))"),
        ("a <= b + c", "(a <= (b + c))"),
        ("a << 1 + 2", "(a << (1 + 2))"),
        ("a >> 2 & b", "((a >> 2) & b)"),
        ("a + b * c - d", "((a + (b * c)) - d)"),
        ("a ++ b + c", "((a ++ b) + c)"),
        ("a |+| b |-| c", "((a |+| b) |-| c)"),
        ("a * b / c % d", "(((a * b) / c) % d)"),
        ("-a * b", "((-a) * b)"),
        ("!a && ~b == c", "((!a) && ((~b) == c))"),
        ("- - a", "(-(-a))"),
        ("+a", "(+a)"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a || b ? c + 1 : d", "((a || b) ? (c + 1) : d)"),
        ("(a + b) * c", "((a + b) * c)"),
        ("(bit<8>) a + b", "(((bit<8>)a) + b)"),
        ("(bit<16>)(bit<8>) a", "((bit<16>)((bit<8>)a))"),
        ("(S) a", "((S)a)"),
        ("(int<8>) -a", "((int<8>)(-a))"),
        ("a[7:0] ++ b[3:0]", "(a[7:0] ++ b[3:0])"),
        ("h.s[i + 1].f", "h.s[(i + 1)].f"),
        ("a.b.c[2]", "a.b.c[2]"),
        (".a + .b.c", "(.a + .b.c)"),
        ("E.A", "E.A"),
        ("error.NoMatch", "error.NoMatch"),
        ("x > 1 && y < 2", "((x > 1) && (y < 2))"),
        ("x >> 2 >> 1", "((x >> 2) >> 1)"),
        ("true && false", "(true && false)"),
        ('"str"', '"str"'),
    ],
)
def test_expression_precedence(text, tree):
    assert show(expr(text)) == tree


def test_initializers():
    assert show(expr("{ a = 1, b = 2 }")) == "{a = 1, b = 2}"
    assert show(expr("{ a = 1, b = { c = 2 }, }")) == "{a = 1, b = {c = 2}}"
    assert show(expr("{ 1, 2, }")) == "{1, 2}"
    assert show(expr("{ }")) == "{}"
    assert show(expr("{#}")) == "{#}"
    typed = expr("(S){ a = 1, b = 2 }")
    assert isinstance(typed, ast.StructExpr) and show(typed) == "(S){a = 1, b = 2}"


def test_calls():
    assert show(expr("f(1, x, _)")) == "f(1, x, _)"
    assert show(expr("f(a = 1, b = _)")) == "f(a = 1, b = _)"
    assert show(expr("pkt.lookahead<bit<8>>()")) == "pkt.lookahead<bit<8>>()"
    assert show(expr("f<S, E>(x)")) == "f<S, E>(x)"
    assert show(expr("f<bit<8>>(x) + 1")) == "(f<bit<8>>(x) + 1)"
    assert show(expr("t.apply().hit")) == "t.apply().hit"
    assert show(expr("Checksum16()")) == "new Checksum16()"
    assert show(expr("register<bit<8>>(5)")) == "new register<bit<8>>(5)"
    (call,) = apply_body("digest<S>(1, { a = 1, b = 2 });")
    assert show(call.call) == "digest<S>(1, {a = 1, b = 2})"


def test_less_than_is_not_taken_for_type_arguments():
    assert show(expr("a < b && c > (d)")) == "((a < b) && (c > d))"
    assert show(expr("a < E.A")) == "(a < E.A)"
    assert show(expr("a < b")) == "(a < b)"


def test_instantiations():
    (c,) = parse_ok(
        PRELUDE
        + """control C() {
            Checksum16() ck;
            register<bit<32>>(1024) r;
            @name("r2") register<S>(32w16) r2;
            apply { }
        }"""
    ).decls[-1:]
    ck, r, r2 = c.locals
    assert strip(ck) == ast.Instantiation("ck", type=ast.TypeName("Checksum16"))
    assert show(r.type) == "register<bit<32>>" and [show(a) for a in r.args] == ["1024"]
    assert r2.annotations[0].name == "name" and show(r2.type) == "register<S>"


def test_instantiation_with_initializer_block():
    (_, c) = parse_ok(
        """extern Virtual { Virtual(); abstract bit<16> f(in bit<16> ix); void run(); }
        control C(inout bit<16> x) {
            Virtual() cntr = {
                bit<16> f(in bit<16> ix) { return ix + 1; }
            };
            apply { x = cntr.f(x); }
        }"""
    ).decls
    (inst,) = c.locals
    (fn,) = inst.initializer.stmts
    assert isinstance(fn, ast.DeclStmt) and isinstance(fn.decl, ast.FunctionDecl)
    assert fn.decl.name == "f" and show(fn.decl.proto.return_type) == "bit<16>"


def test_functions_and_externs():
    ext, fn_ext, fn_ext2, fwd, fn = parse_ok(
        """@pure extern Hasher<O> {
            Hasher(bit<32> algo);
            O get<D>(in D data);
            O get<D>(in D data, in bit<32> max);
            abstract void cb(in O o);
        }
        extern void hash<O, T>(out O result, in T data);
        extern T random<T>(in T lo, in T hi);
        extern Later;
        bit<8> max<T>(in T a, bit<8> b = 3) { return b; }"""
    ).decls
    assert isinstance(ext, ast.ExternDecl) and ext.type_params == ("O",) and ext.annotations[0].name == "pure"
    ctor, get1, get2, cb = ext.methods
    assert ctor.name == "Hasher" and ctor.return_type is None and [p.name for p in ctor.params] == ["algo"]
    assert (get1.name, show(get1.return_type), get1.type_params) == ("get", "O", ("D",))
    assert len(get2.params) == 2 and cb.abstract and show(cb.return_type) == "void"
    assert isinstance(fn_ext, ast.ExternFunctionDecl) and fn_ext.proto.type_params == ("O", "T")
    assert [(p.direction, show(p.type)) for p in fn_ext.proto.params] == [("out", "O"), ("in", "T")]
    assert show(fn_ext2.proto.return_type) == "T"
    assert isinstance(fwd, ast.ExternDecl) and fwd.methods == ()
    assert isinstance(fn, ast.FunctionDecl) and fn.proto.type_params == ("T",)
    assert show(fn.proto.params[1].default) == "3"
    assert isinstance(fn.body.stmts[0], ast.Return)


def test_actions():
    (a,) = parse_ok("@name(\"act\") action a(inout bit<8> x, bit<8> v) { x = v; }").decls
    assert a.name == "a" and a.annotations[0].body == (ast.StringLit("act", pos=a.annotations[0].body[0].pos),)
    assert [(p.direction, p.name) for p in a.params] == [("inout", "x"), ("", "v")]


# ------------------------------------------------------------ annotations


def test_annotations():
    (h,) = parse_ok(
        """@name("x") @id(3) @brief("a b") @controller_header("packet_in") @hidden
        @priority(10) @anno[k = 1, j = "s"] @l[1, "x",] @e[] @tok(a b (c d) [e)
        @p4runtime_translation("p4.org/port", bit<32>) @pkginfo(arch = "v1model") @empty()
        header h_t { bit<8> f; }"""
    ).decls
    got = {a.name: a for a in h.annotations}
    assert [show(e) for e in got["name"].body] == ['"x"'] and got["name"].tokens == '"x"'
    assert [show(e) for e in got["id"].body] == ["3"]
    assert [show(e) for e in got["brief"].body] == ['"a b"']
    assert [show(e) for e in got["controller_header"].body] == ['"packet_in"']
    assert got["hidden"].tokens is None and got["hidden"].body == ()
    assert [show(e) for e in got["priority"].body] == ["10"]
    assert got["anno"].structured and [(k, show(v)) for k, v in got["anno"].kv] == [("k", "1"), ("j", '"s"')]
    assert got["l"].structured and [show(e) for e in got["l"].body] == ["1", '"x"']
    assert got["e"].structured and got["e"].body == ()
    assert got["tok"].tokens == "a b (c d) [e" and got["tok"].body == ()
    # p4c's encoding of the P4Runtime type: bit<32> is the integer 32.
    assert [show(e) for e in got["p4runtime_translation"].body] == ['"p4.org/port"', "32"]
    assert got["pkginfo"].tokens == 'arch = "v1model"'
    assert got["empty"].tokens == "" and got["empty"].body == ()


def test_annotations_on_statements_and_parameters():
    (c,) = parse_ok(
        """control C(@optional in bit<8> x) {
            @hidden action a() { @atomic { x = 1; } }
            apply { @likely { } }
        }"""
    ).decls
    assert c.params[0].annotations[0].name == "optional"
    assert c.locals[0].body.stmts[0].annotations[0].name == "atomic"
    assert c.body.stmts[0].annotations[0].name == "likely"


def test_pragma_and_keyword_annotation_names():
    (s,) = parse_ok("@pragma my_pragma a b c\n@header @key @apply struct s {}").decls
    assert [(a.name, a.tokens) for a in s.annotations] == [
        ("my_pragma", "a b c"), ("header", None), ("key", None), ("apply", None),
    ]


# ------------------------------------------------------------- literals


@pytest.mark.parametrize(
    "text, value, width, signed",
    [
        ("42", 42, None, False),
        ("1_000", 1000, None, False),
        ("0x2A", 42, None, False),
        ("0X2a", 42, None, False),
        ("0xFF_FF", 65535, None, False),
        ("0o17", 15, None, False),
        ("0b1010", 10, None, False),
        ("0B1_0", 2, None, False),
        ("0d99", 99, None, False),
        ("8w5", 5, 8, False),
        ("16s0x10", 16, 16, True),
        ("4w0b1010", 10, 4, False),
        ("32w0xFFFF_FFFF", 2**32 - 1, 32, False),
        ("8s0o7", 7, 8, True),
        ("3w0d5", 5, 3, False),
    ],
)
def test_integer_literals(text, value, width, signed):
    lit = expr(text)
    assert strip(lit) == ast.IntLit(value, width, signed, text)


def test_string_literal_keeps_escapes():
    assert expr(r'"a\"b\\c"').value == r"a\"b\\c"


# ------------------------------------------------------- names and types


def test_contextual_keywords_are_names():
    stmts = apply_body(
        "key = 1; actions = 2; entries = 3; state = 4; type = 5; priority = 6; h.apply = 7; h.list = 8;"
        " size = 9; h.key.state = h.entries;"
    )
    assert [show(s.target) for s in stmts] == [
        "key", "actions", "entries", "state", "type", "priority", "h.apply", "h.list", "size", "h.key.state",
    ]
    (s,) = parse_ok("struct s { bit<8> key; bit<8> type; bit<8> state; bit<8> priority; bit<8> entries; }").decls
    assert [f.name for f in s.fields] == ["key", "type", "state", "priority", "entries"]


def test_shift_and_nested_type_arguments():
    (c,) = parse_ok(
        PRELUDE
        + "control C() { register<register<bit<32>>>(8) r; apply { x = y >> 2; x = y >>2>> 1; x = y >= 1; } }"
    ).decls[-1:]
    assert show(c.locals[0].type) == "register<register<bit<32>>>"
    assert [show(s.value) for s in c.body.stmts] == ["(y >> 2)", "((y >> 2) >> 1)", "(y >= 1)"]


def test_variables_and_parameters_may_hide_a_type_name():
    decls = parse_ok(
        """extern counter { counter(bit<32> n); }
        struct s { counter counter; counter other; }
        control C(inout bit<32> counter) {
            action a(bit<8> counter) { counter = 1; }
            apply { counter = counter + 1; }
        }
        control D() {
            counter(5) c;
            apply { bit<32> counter = 1; counter = counter + 1; }
        }
        control E() { counter(5) c; apply { } }"""
    ).decls
    s, c, d, e = decls[1:]
    assert [show(f.type) for f in s.fields] == ["counter", "counter"]
    assert show(c.body.stmts[0].value) == "(counter + 1)"
    assert show(d.body.stmts[1].target) == "counter"
    assert show(e.locals[0].type) == "counter"


def test_dot_prefix_looks_up_the_top_level():
    (_, f) = parse_ok("const bit X = 1;\nbit f<X>(in X x) { return .X; }").decls
    assert show(f.proto.params[0].type) == "X" and show(f.body.stmts[0].value) == ".X"


def test_typedef_of_a_struct_declaration():
    s, t = parse_ok("typedef struct Point { int<32> x; } Pt;\nconst Pt p = { x = 1 };").decls[:2]
    assert isinstance(s, ast.StructDecl) and s.name == "Point"
    assert strip(t) == ast.TypedefDecl("Pt", type=ast.TypeName("Point"))


def test_c_style_array_declarators():
    (s,) = parse_ok("struct s { bit<8> a[16]; bit<8> b[2][3]; }").decls
    assert [show(f.type) for f in s.fields] == ["bit<8>[16]", "bit<8>[3][2]"]
    (v,) = apply_body("bit<4> v[4];")
    assert show(v.decl.type) == "bit<4>[4]"


def test_width_expressions_and_specialised_type_members():
    (_, s) = parse_ok("const bit<8> W = 4;\nstruct s { bit<W + 1> a; bit<W * 2 - 1> b; int<(W)> c; }").decls
    assert [show(f.type) for f in s.fields] == ["bit<(W + 1)>", "bit<((W * 2) - 1)>", "int<W>"]
    (p,) = parse_ok(
        "parser Q<T>(in T t);\nparser P() { state start { Q<bit>.apply(1); transition accept; } }"
    ).decls[1:]
    assert show(p.states[0].stmts[0].call) == "Q<bit<1>>.apply(1)"


def test_stray_characters_are_fine_in_annotation_bodies_only():
    (h,) = parse_ok("@comment(That's it - ok?) header h {}").decls
    assert h.annotations[0].tokens == "That's it - ok?"
    assert errors("header h { bit<8> x; } `") == ["t.p4:1:24: unexpected character '`'"]


def test_indexed_slices_are_reported_as_unsupported():
    (msg,) = errors("control C() { apply { x = y[0 +: 8]; } }")
    assert msg.startswith("t.p4:1:31: syntax error, unexpected '+:'") and "not supported" in msg


def test_declarations_at_top_level_and_dot_prefixed_types():
    (_, c) = parse_ok("struct S { bit<8> a; }\nconst .S s = { a = 1 };").decls
    assert show(c.type) == ".S" and show(c.value) == "{a = 1}"


# -------------------------------------------------------------- positions


def test_positions_are_one_based_file_line_column():
    (h,) = parse_ok("\n  header h_t {\n    bit<8> f;\n  }").decls
    assert h.pos == Pos("t.p4", 2, 3)
    assert h.fields[0].pos == Pos("t.p4", 3, 5)
    assert h.fields[0].type.width.pos == Pos("t.p4", 3, 9)


def test_positions_follow_gcc_and_line_markers():
    src = (
        '# 1 "main.p4"\n'
        '# 1 "inc/lib.p4" 1 3\n'
        "header h_t {\n"
        "  bit<8> x;\n"
        "}\n"
        '# 7 "main.p4" 2\n'
        "\n"
        "struct s_t {\n"
        '#line 40 "other.p4"\n'
        "    h_t h;\n"
        "}\n"
    )
    h, s = parse_ok(src).decls
    assert h.pos == Pos("inc/lib.p4", 1, 1)
    assert h.fields[0].pos == Pos("inc/lib.p4", 2, 3)
    assert s.pos == Pos("main.p4", 8, 1)
    assert s.fields[0].pos == Pos("other.p4", 40, 5)


def test_positions_after_multiline_comments_and_strings():
    (a, b) = parse_ok('/* one\n two */ const bit<8> a = 1;\n@brief("x\ny") const bit<8> b = 2;').decls
    assert a.pos == Pos("t.p4", 2, 9)
    assert b.pos == Pos("t.p4", 3, 1)


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "src, message",
    [
        ("header h { bit<8> x }", "t.p4:1:21: syntax error, unexpected '}' (expected ';')"),
        ("control C() { apply { x = 1 } }", "t.p4:1:29: syntax error, unexpected '}' (expected ';')"),
        ("control C() { apply { if (x { } } }", "t.p4:1:29: syntax error, unexpected '{' (expected ')')"),
        ("struct S { bit<8> x;", "t.p4:1:21: syntax error, unexpected end of file (expected '}')"),
        ("typedef bit<8> ;", "t.p4:1:16: syntax error, unexpected ';' (expected identifier)"),
        ("const bit<8> x = ;", "t.p4:1:18: syntax error, unexpected ';' (expected an expression)"),
        ("control C() { apply { T x; } }", "t.p4:1:25: syntax error, unexpected identifier 'x'; 'T' is not a declared type"),
        ("control C() { table t { key = { x } } apply {} }", "t.p4:1:35: syntax error, unexpected '}' (expected ':')"),
        ("}", "t.p4:1:1: syntax error, unexpected '}'"),
        ("header h { bit<8> x; }\nheader $ {}", "t.p4:2:8: unexpected character '$'"),
        ("const bit<8> x = 1;\n/* no end", "t.p4:2:1: unterminated comment"),
        ('const string s = "abc;', "t.p4:1:18: unterminated string literal"),
        ("@name(\"x\" header h {}", "t.p4:1:6: unbalanced parentheses in annotation"),
        ('# 10 "x.p4"\nheader h {\n  bit<8> f\n}', "x.p4:12:1: syntax error, unexpected '}' (expected ';')"),
    ],
)
def test_syntax_errors(src, message):
    assert errors(src) == [message]


def test_syntax_error_quotes_the_source_line():
    diags = Diagnostics()
    parse("header h {\n    bit<8> f\n}\n", diags, "x.p4")
    assert diags.errors[0].render(diags.sources) == (
        "x.p4:3:1: error: syntax error, unexpected '}' (expected ';')\n}\n^"
    )


def test_syntax_error_in_a_file_known_only_through_markers_is_quoted():
    diags = Diagnostics()
    parse('# 5 "/nonexistent/dir/y.p4"\nheader h {\n    bit<8> f\n}\n', diags, "x.p4")
    assert diags.errors[0].render(diags.sources).splitlines() == [
        "/nonexistent/dir/y.p4:7:1: error: syntax error, unexpected '}' (expected ';')",
        "}",
        "^",
    ]


def test_garbage_never_raises():
    rng = random.Random(4)
    pieces = list("{}()[]<>;:,.=@#\"/*_-+&|!~^%?'$\\\n\t ") + [
        "header", "<<", ">>", "bit<", "struct", "(bit<8>)", "@name(", "/*", "0x", "8w", "table", "apply",
        "extern", "T<", "x", "1", "state", "transition", "select", "control", "{#}", "\x00", "é",
    ]
    valid = PRELUDE + "control C() { apply { x = f<bit<8>>(a) + b[3:0]; } }"
    for _ in range(300):
        if rng.random() < 0.5:
            src = "".join(rng.choice(pieces) for _ in range(rng.randrange(60)))
        else:
            i = rng.randrange(len(valid))
            src = valid[:i] + rng.choice(pieces) + valid[i + rng.randrange(3):]
        diags = Diagnostics()
        program = parse(src, diags, "g.p4")
        assert isinstance(program, ast.Program)
        for d in diags.errors:
            d.render(diags.sources)


def test_absurd_nesting_is_an_error_not_a_crash():
    src = "const bit<8> x = " + "1 + " * 5000 + "1;"
    diags = Diagnostics()
    parse(src, diags)
    assert len(diags.errors) <= 1


# ------------------------------------------------------------ real input


def test_bundled_core_and_v1model_parse():
    from p4scope.compiler.preprocess import preprocess

    diags = Diagnostics()
    text = preprocess("#include <core.p4>\n#include <v1model.p4>\n", "main.p4", [], {}, diags)
    program = parse(text, diags, "main.p4")
    assert not diags.errors
    names = {d.name for d in program.decls}
    assert {"packet_in", "NoAction", "V1Switch", "register", "mark_to_drop", "standard_metadata_t"} <= names
    assert all(d.pos.file.endswith(("core.p4", "v1model.p4")) for d in program.decls)
