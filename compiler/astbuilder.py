"""Turns lark's parse tree (rules of grammar.lark) into `ast` nodes.

One method per rule or alias of grammar.lark, named after it, receiving the
rule's children in order: kept tokens (keywords, operators, names, which are
lark `Token`s and so also `str`), already built nodes, and None for each
absent ``[optional]`` part.  Every node's `pos` is that of the first token
of its rule, which lark computes even for dropped punctuation.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from lark import Token, Transformer, Tree, v_args

from . import ast
from .diagnostics import NOWHERE, Pos
from .lexer import parse_integer


def _pos(meta) -> Pos:
    p = getattr(meta, "start_pos", None)
    return p if isinstance(p, Pos) else NOWHERE


def _tok_pos(tok) -> Pos:
    p = getattr(tok, "start_pos", None)
    return p if isinstance(p, Pos) else NOWHERE


# annotations whose body p4c parses with a rule of its own (grammar.lark's name)
_STRUCTURED_BODIES = {"p4runtime_translation": "anno_p4rt"}


def _annos(a) -> ast.Annotations:
    return a if a is not None else ()


def _stmt(x) -> ast.Stmt:
    """A statement, or a declaration wrapped as one."""
    if isinstance(x, ast.Decl):
        return ast.DeclStmt(x, pos=x.pos)
    return x


@v_args(meta=True, inline=True)
class AstBuilder(Transformer):
    """`bodies` maps id() of each ANNOTATION_BODY token to its tokens;
    `parse_body` parses such tokens as an expression list (or returns None)."""

    def __init__(self, bodies: dict[int, list[Token]], parse_body: Callable[..., Optional[Tree]]):
        super().__init__(visit_tokens=False)
        self._bodies = bodies
        self._parse_body = parse_body

    # ------------------------------------------------------------ program

    def program(self, m, *decls):
        flat: list[ast.Decl] = []
        for d in decls:
            flat.extend(d) if isinstance(d, tuple) else flat.append(d)
        return ast.Program(tuple(flat), pos=_pos(m))

    # -------------------------------------------------------------- names

    def non_type_name(self, m, tok):
        return tok

    def name(self, m, tok):
        return tok

    def table_kw_name(self, m, tok):
        return tok

    def prefixed_non_type_name(self, m, dot, tok):
        return ast.Name(str(tok), toplevel=dot is not None, pos=_pos(m))

    # -------------------------------------------------------- annotations

    def annotations(self, m, *annos):
        return tuple(annos)

    def anno_plain(self, m, at, name):
        return ast.Annotation(str(name), pos=_pos(m))

    def anno_body(self, m, at, name, body):
        exprs: tuple = ()
        tokens = self._bodies.get(id(body), [])
        # p4c parses @p4runtime_translation's body by its own grammar
        structured = _STRUCTURED_BODIES.get(str(name))
        tree = self._parse_body(tokens, structured) if structured else self._parse_body(tokens)
        if tree is not None:
            exprs = self.transform(tree)
        return ast.Annotation(str(name), body=exprs, tokens=str(body), pos=_pos(m))

    def anno_list(self, m, at, name, *exprs):
        return ast.Annotation(str(name), body=tuple(exprs), structured=True, pos=_pos(m))

    def anno_kv(self, m, at, name, *pairs):
        return ast.Annotation(str(name), kv=tuple(pairs), structured=True, pos=_pos(m))

    def kv_pair(self, m, name, value):
        return (str(name), value)

    def anno_exprs(self, m, *exprs):
        return tuple(exprs)

    def anno_p4rt(self, m, uri, typ):
        return (self.string(m, uri), typ)

    def p4rt_type(self, m, *c):
        """p4c's encoding: ``bit<W>`` is the integer W, ``string`` the
        string "string"."""
        if c[0].type == "STRING":
            return ast.StringLit("string", pos=_pos(m))
        lit = c[2] if c[0].type == "BIT" else c[0]
        return self.integer(m, lit)

    # -------------------------------------------------------------- types

    def type_name(self, m, dot, tok):
        return ast.TypeName(str(tok), toplevel=dot is not None, pos=_pos(m))

    def specialized_type(self, m, base, lt, args, gt):
        return ast.TypeSpecialized(base, args, pos=_pos(m))

    def stack_type(self, m, elem, size):
        return ast.TypeStack(elem, size, pos=_pos(m))

    def tuple_type(self, m, kw, lt, args, gt):
        return ast.TypeTuple(args or (), pos=_pos(m))

    def list_type(self, m, kw, lt, elem, gt):
        return ast.TypeList(elem, pos=_pos(m))

    def t_bool(self, m, kw):
        return ast.TypeBool(pos=_pos(m))

    def t_error(self, m, kw):
        return ast.TypeError_(pos=_pos(m))

    def t_string(self, m, kw):
        return ast.TypeString(pos=_pos(m))

    def t_int(self, m, kw):
        return ast.TypeInt(pos=_pos(m))

    def t_match_kind(self, m, kw):
        return ast.TypeMatchKind(pos=_pos(m))

    def t_bit(self, m, kw, lt=None, width=None, gt=None):
        if width is None:
            width = ast.IntLit(1, text="1", pos=_pos(m))
        return ast.TypeBits(width, pos=_pos(m))

    def t_int_w(self, m, kw, lt, width, gt):
        return ast.TypeBits(width, signed=True, pos=_pos(m))

    def t_varbit(self, m, kw, lt, width, gt):
        return ast.TypeVarbit(width, pos=_pos(m))

    def t_void(self, m, kw):
        return ast.TypeVoid(pos=_pos(m))

    def t_dontcare(self, m, kw):
        return ast.TypeDontCare(pos=_pos(m))

    def t_unknown(self, m, tok):
        return ast.TypeName(str(tok), pos=_pos(m))

    def type_args(self, m, *args):
        return tuple(args)

    def type_params(self, m, lt, *rest):
        return tuple(str(n) for n in rest[:-1])

    # ------------------------------------------------------- declarations

    def const_decl(self, m, annos, kw, typ, name, value):
        return ast.ConstDecl(str(name), _annos(annos), type=typ, value=value, pos=_pos(m))

    def var_decl(self, m, decl):
        return decl

    def var_decl_nosemi(self, m, annos, typ, name, dims, init):
        typ = _array_type(typ, dims)
        return ast.VarDecl(str(name), _annos(annos), type=typ, init=init, pos=_pos(m))

    def instantiation(self, m, annos, typ, args, name, init):
        return ast.Instantiation(
            str(name), _annos(annos), type=typ, args=args or (), initializer=init, pos=_pos(m)
        )

    def obj_initializer(self, m, *decls):
        return ast.Block(tuple(_stmt(d) for d in decls), pos=_pos(m))

    def params(self, m, *ps):
        return tuple(ps)

    def param(self, m, annos, direction, typ, name, default):
        return ast.Param(
            str(name), _annos(annos), direction=direction or "", type=typ, default=default, pos=_pos(m),
            name_pos=_tok_pos(name),
        )

    def direction(self, m, tok):
        return str(tok)

    def header_decl(self, m, annos, kw, name, tparams, *fields):
        return ast.HeaderDecl(str(name), _annos(annos), fields=fields, type_params=tparams or (), pos=_pos(m))

    def header_union_decl(self, m, annos, kw, name, tparams, *fields):
        return ast.HeaderUnionDecl(
            str(name), _annos(annos), fields=fields, type_params=tparams or (), pos=_pos(m)
        )

    def struct_decl(self, m, annos, kw, name, tparams, *fields):
        return ast.StructDecl(str(name), _annos(annos), fields=fields, type_params=tparams or (), pos=_pos(m))

    def struct_field(self, m, annos, typ, name, dims):
        return ast.Field(str(name), _annos(annos), type=_array_type(typ, dims), pos=_pos(m))

    def array_dims(self, m, *sizes):
        return sizes

    def enum_decl(self, m, annos, kw, name, *members):
        members = tuple(ast.EnumMember(str(n), pos=_tok_pos(n)) for n in members)
        return ast.EnumDecl(str(name), _annos(annos), members=members, pos=_pos(m))

    def ser_enum_decl(self, m, annos, kw, typ, name, *members):
        return ast.EnumDecl(str(name), _annos(annos), members=members, type=typ, pos=_pos(m))

    def enum_value(self, m, name, value):
        return ast.EnumMember(str(name), value, pos=_pos(m))

    def error_decl(self, m, kw, *names):
        return ast.ErrorDecl("error", members=tuple(str(n) for n in names), pos=_pos(m))

    def match_kind_decl(self, m, kw, *names):
        return ast.MatchKindDecl("match_kind", members=tuple(str(n) for n in names), pos=_pos(m))

    def typedef_decl(self, m, annos, kw, typ, name):
        return ast.TypedefDecl(str(name), _annos(annos), type=typ, pos=_pos(m))

    def typedef_derived_decl(self, m, annos, kw, decl, name):
        """``typedef struct S {...} T;``: the struct, then the typedef."""
        typ = ast.TypeName(decl.name, pos=decl.pos)
        return (decl, ast.TypedefDecl(str(name), _annos(annos), type=typ, pos=_pos(m)))

    def newtype_decl(self, m, annos, kw, typ, name):
        return ast.TypedefDecl(str(name), _annos(annos), type=typ, newtype=True, pos=_pos(m))

    def package_decl(self, m, annos, kw, name, tparams, params):
        return ast.PackageDecl(
            str(name), _annos(annos), type_params=tparams or (), params=params or (), pos=_pos(m)
        )

    def extern_object(self, m, annos, kw, name, tparams, *methods):
        return ast.ExternDecl(str(name), _annos(annos), type_params=tparams or (), methods=methods, pos=_pos(m))

    def extern_forward(self, m, annos, kw, name):
        return ast.ExternDecl(str(name), _annos(annos), pos=_pos(m))

    def extern_function(self, m, annos, kw, proto):
        return ast.ExternFunctionDecl(proto.name, _annos(annos), proto=proto, pos=_pos(m))

    def function_proto(self, m, ret, name, tparams, params):
        return ast.FunctionProto(
            str(name), return_type=ret, type_params=tparams or (), params=params or (), pos=_pos(m)
        )

    def method(self, m, annos, proto):
        return dataclasses.replace(proto, annotations=_annos(annos), pos=_pos(m))

    def abstract_method(self, m, annos, kw, proto):
        return dataclasses.replace(proto, annotations=_annos(annos), abstract=True, pos=_pos(m))

    def constructor(self, m, annos, name, params):
        return ast.FunctionProto(str(name), _annos(annos), params=params or (), pos=_pos(m))

    def function_decl(self, m, annos, proto, body):
        return ast.FunctionDecl(proto.name, _annos(annos), proto=proto, body=body, pos=_pos(m))

    def action_decl(self, m, annos, kw, name, params, body):
        return ast.ActionDecl(str(name), _annos(annos), params=params or (), body=body, pos=_pos(m),
                              name_pos=_tok_pos(name))

    # ------------------------------------------------------------ parsers

    def parser_type_decl(self, m, annos, kw, name, tparams, params):
        return ast.ParserTypeDecl(
            str(name), _annos(annos), type_params=tparams or (), params=params or (), pos=_pos(m)
        )

    def parser_decl(self, m, annos, kw, name, tparams, params, ctor, *body):
        return ast.ParserDecl(
            str(name),
            _annos(annos),
            type_params=tparams or (),
            params=params or (),
            ctor_params=ctor or (),
            locals=tuple(d for d in body if not isinstance(d, ast.ParserState)),
            states=tuple(d for d in body if isinstance(d, ast.ParserState)),
            pos=_pos(m),
            name_pos=_tok_pos(name),
        )

    def ctor_params(self, m, params):
        return params or ()

    def value_set_decl(self, m, annos, kw, lt, typ, gt, size, name):
        return ast.ValueSetDecl(str(name), _annos(annos), type=typ, size=size, pos=_pos(m))

    def parser_state(self, m, annos, kw, name, *body):
        *stmts, transition = body
        return ast.ParserState(
            str(name), _annos(annos), stmts=tuple(_stmt(s) for s in stmts), transition=transition, pos=_pos(m)
        )

    def transition(self, m, kw, target):
        return target if isinstance(target, ast.Select) else str(target)

    def select_expr(self, m, kw, exprs, *cases):
        return ast.Select(exprs or (), cases, pos=_pos(m))

    def select_case(self, m, keyset, state):
        return ast.SelectCase(keyset, str(state), pos=_pos(m))

    def expression_list(self, m, *exprs):
        return tuple(exprs)

    def tuple_keyset(self, m, *keys):
        return ast.ListExpr(tuple(keys), pos=_pos(m))

    def mask(self, m, value, op, mask):
        return ast.Mask(value, mask, pos=_pos(m))

    def range(self, m, lo, op, hi):
        return ast.Range(lo, hi, pos=_pos(m))

    def default(self, m, kw):
        return ast.Default(pos=_pos(m))

    def dont_care(self, m, kw):
        return ast.DontCare(pos=_pos(m))

    # ----------------------------------------------------------- controls

    def control_type_decl(self, m, annos, kw, name, tparams, params):
        return ast.ControlTypeDecl(
            str(name), _annos(annos), type_params=tparams or (), params=params or (), pos=_pos(m)
        )

    def control_decl(self, m, annos, kw, name, tparams, params, ctor, *rest):
        *locals_, _apply, body = rest
        return ast.ControlDecl(
            str(name),
            _annos(annos),
            type_params=tparams or (),
            params=params or (),
            ctor_params=ctor or (),
            locals=tuple(locals_),
            body=body,
            pos=_pos(m),
            name_pos=_tok_pos(name),
        )

    def table_decl(self, m, annos, kw, name, *props):
        return ast.TableDecl(str(name), _annos(annos), properties=props, pos=_pos(m),
                             name_pos=_tok_pos(name))

    def key_prop(self, m, kw, brace, *elems):
        return ast.TableProperty("key", "key", value=elems, pos=_pos(m), name_pos=_tok_pos(kw),
                                 list_pos=brace)

    def key_open(self, m):
        # p4c places the key element list just after the "{"
        p = _pos(m)
        return Pos(p.file, p.line, p.col + 1) if p.line > 0 else p

    def key_element(self, m, expr, match_kind, annos):
        return ast.KeyElement(expr, str(match_kind), _annos(annos), pos=_pos(m))

    def actions_prop(self, m, kw, *refs):
        return ast.TableProperty("actions", "actions", value=refs, pos=_pos(m), name_pos=_tok_pos(kw))

    def action_item(self, m, annos, ref):
        return dataclasses.replace(ref, annotations=_annos(annos), pos=_pos(m))

    def action_ref(self, m, name, args):
        return ast.ActionRef(name, args or (), pos=_pos(m))

    def entries_prop(self, m, annos, const, kw, *entries):
        return ast.TableProperty(
            "entries", "entries", value=entries, const=const is not None, annotations=_annos(annos), pos=_pos(m),
            name_pos=_tok_pos(kw),
        )

    def value_prop(self, m, annos, const, name, value):
        name_pos = _tok_pos(name)
        name = str(name)
        kind = "value"
        if name == "default_action":
            kind = "default_action"
            value = _action_ref(value)
        return ast.TableProperty(name, kind, value=value, const=const is not None, annotations=_annos(annos),
                                 pos=_pos(m), name_pos=name_pos)

    def entry(self, m, const, priority, keyset, action, annos):
        keys = keyset.elems if isinstance(keyset, ast.ListExpr) else (keyset,)
        return ast.TableEntry(
            keys, action, priority=priority, const=const is not None, annotations=_annos(annos), pos=_pos(m)
        )

    def entry_priority(self, m, kw, value):
        return value

    # --------------------------------------------------------- statements

    def block(self, m, annos, *stmts):
        return ast.Block(tuple(_stmt(s) for s in stmts), _annos(annos), pos=_pos(m))

    def call_stmt(self, m, callee, args):
        return ast.CallStmt(ast.Call(callee, (), args or (), pos=_pos(m)), pos=_pos(m))

    def call_stmt_targs(self, m, callee, lt, targs, gt, args):
        return ast.CallStmt(ast.Call(callee, targs, args or (), pos=_pos(m)), pos=_pos(m))

    def assign(self, m, target, value):
        return ast.Assign(target, value, pos=_pos(m))

    def compound_assign(self, m, target, op, value):
        return ast.CompoundAssign(str(op)[:-1], target, value, pos=_pos(m))

    def empty_stmt(self, m):
        return ast.Empty(pos=_pos(m))

    def exit_stmt(self, m, kw):
        return ast.Exit(pos=_pos(m))

    def return_stmt(self, m, kw, value):
        return ast.Return(value, pos=_pos(m))

    def break_stmt(self, m, kw):
        return ast.Break(pos=_pos(m))

    def continue_stmt(self, m, kw):
        return ast.Continue(pos=_pos(m))

    def if_stmt(self, m, kw, cond, then, else_kw, else_):
        return ast.If(cond, then, else_, pos=_pos(m))

    def switch_stmt(self, m, kw, expr, *cases):
        return ast.Switch(expr, cases, pos=_pos(m))

    def switch_case(self, m, label, body):
        return ast.SwitchCase(label, body, pos=_pos(m))

    def for_stmt(self, m, annos, kw, init, cond, update, body):
        return ast.For(init or (), cond, update or (), body, pos=_pos(m))

    def for_in_stmt(self, m, annos, kw, var_annos, typ, name, in_kw, iterable, body):
        return ast.ForIn(typ, str(name), iterable, body, pos=_pos(m))

    def for_list(self, m, *stmts):
        return tuple(_stmt(s) for s in stmts)

    def for_updates(self, m, *stmts):
        return tuple(stmts)

    # -------------------------------------------------------- expressions

    def integer(self, m, tok):
        value, width, signed = parse_integer(str(tok))
        return ast.IntLit(value, width, signed, str(tok), pos=_tok_pos(tok))

    def paren(self, m, e):
        # p4c's position of a parenthesized expression is its "("
        return dataclasses.replace(e, pos=_pos(m))

    def string(self, m, tok):
        # p4c places a string literal at its closing quote
        pos, text = _tok_pos(tok), str(tok)
        if pos.line > 0 and "\n" not in text:
            pos = Pos(pos.file, pos.line, pos.col + len(text) - 1)
        return ast.StringLit(text[1:-1], pos=pos)

    def true(self, m, tok):
        return ast.BoolLit(True, pos=_pos(m))

    def false(self, m, tok):
        return ast.BoolLit(False, pos=_pos(m))

    def this_expr(self, m, tok):
        return ast.Name("this", pos=_pos(m))

    def name_expr(self, m, expr):
        return expr

    def member(self, m, expr, dot, name):
        return ast.Member(expr, str(name), pos=_pos(m))

    def type_member(self, m, typ, dot, name):
        return ast.TypeMember(typ, str(name), pos=_pos(m))

    def error_member(self, m, kw, dot, name):
        return ast.ErrorMember(str(name), pos=_pos(m))

    def index(self, m, expr, index):
        return ast.Index(expr, index, pos=_pos(m))

    def slice(self, m, expr, hi, lo):
        return ast.Slice(expr, hi, lo, pos=_pos(m))

    def binary(self, m, left, op, right):
        return ast.Binary(str(op), left, right, pos=_pos(m))

    def unary(self, m, op, expr):
        return ast.Unary(str(op), expr, pos=_pos(m))

    def cast(self, m, typ, expr):
        if isinstance(expr, ast.StructExpr) and expr.type is None:
            # `(T){f = e}` is the typed struct expression.
            return ast.StructExpr(expr.fields, typ, pos=_pos(m))
        return ast.Cast(typ, expr, pos=_pos(m))

    def mux(self, m, cond, then, else_):
        return ast.Mux(cond, then, else_, pos=_pos(m))

    def call(self, m, callee, args):
        return ast.Call(callee, (), args or (), pos=_pos(m))

    def call_targs(self, m, callee, lt, targs, gt, args):
        return ast.Call(callee, targs, args or (), pos=_pos(m))

    def constructor_call(self, m, typ, args):
        return ast.ConstructorCall(typ, args or (), pos=_pos(m))

    def list_expr(self, m, *elems):
        return ast.ListExpr(tuple(elems), pos=_pos(m))

    def struct_expr(self, m, *fields):
        return ast.StructExpr(tuple(fields), pos=_pos(m))

    def invalid(self, m, tok):
        return ast.InvalidExpr(pos=_pos(m))

    def args(self, m, *args):
        return tuple(args)

    def arg(self, m, value):
        return ast.Argument(value, pos=_pos(m))

    def dont_care_arg(self, m, tok):
        return ast.Argument(None, pos=_pos(m))

    def named_arg(self, m, name, value):
        return ast.Argument(value, str(name), pos=_pos(m))

    def named_dont_care_arg(self, m, name, tok):
        return ast.Argument(None, str(name), pos=_pos(m))


def _array_type(typ: ast.TypeRef, sizes: tuple) -> ast.TypeRef:
    """The type of `name` in ``T name[2][3]``: T[3][2], as in C."""
    for size in reversed(sizes):
        typ = ast.TypeStack(typ, size, pos=typ.pos)
    return typ


def _action_ref(expr) -> ast.ActionRef:
    """`default_action = a(1)` names an action the way the actions list does."""
    if isinstance(expr, ast.Call) and not expr.type_args:
        return ast.ActionRef(expr.callee, expr.args, pos=expr.pos)
    return ast.ActionRef(expr, pos=expr.pos)
