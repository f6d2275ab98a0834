"""The P4-16 parser: preprocessed text in, `ast.Program` out.

    program = parse(text, diags, "x.p4")

Three steps: `lexer.tokenize` cuts the text into tokens positioned in the
original files (through the preprocessor's line markers); `typenames` tells
type names from identifiers and type-argument brackets from comparisons;
lark's LALR(1) parser, driven with grammar.lark, builds a parse tree that
`astbuilder` turns into the syntax tree.

A syntax error is reported as ``syntax error, unexpected X (expected Y)`` at
the offending token and parsing stops there (p4c also stops at the first
one); `parse` then returns an empty program, never raises for bad input.
"""

from __future__ import annotations

import threading
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import Lexer

from . import ast
from .astbuilder import AstBuilder
from .diagnostics import Diagnostics, ErrorKind, Pos
from .lexer import LexError, read_line_marker, tokenize
from .typenames import TypeNames, fold_annotations

_GRAMMAR = Path(__file__).with_name("grammar.lark")


class _NoLexer(Lexer):
    """Tokens are fed to the parser one by one (see `_run`); lark's own
    lexer is never used."""

    def __init__(self, lexer_conf) -> None:
        pass

    def lex(self, lexer_state, parser_state):  # pragma: no cover
        raise NotImplementedError


_lark: Lark | None = None
_lark_lock = threading.Lock()


def _parser() -> Lark:
    """The lark parser, built on first use.  Building the LALR tables takes
    about half a second, so lark caches them in a file keyed by the grammar's
    hash."""
    global _lark
    with _lark_lock:
        if _lark is None:
            _lark = Lark(
                _GRAMMAR.read_text(),
                parser="lalr",
                lexer=_NoLexer,
                start=["program", "anno_exprs", "anno_p4rt"],
                propagate_positions=True,
                maybe_placeholders=True,
                cache=True,
            )
        return _lark


class SyntaxErrorAt(Exception):
    def __init__(self, pos: Pos, message: str):
        super().__init__(message)
        self.pos = pos
        self.message = message


def parse(text: str, diags: Diagnostics, filename: str = "<input>") -> ast.Program:
    """Parse one preprocessed P4-16 program; errors go to `diags`."""
    text = text.removeprefix("\ufeff")  # a byte-order mark is not part of it
    _register_sources(text, filename, diags)
    try:
        raw = tokenize(text, filename)
        names = TypeNames()
        tokens = names.classify(fold_annotations(raw, text))
        tree = _run(tokens, "program", Pos(filename, 1, 1))
        return _build(tree, names)
    except (LexError, SyntaxErrorAt) as e:
        diags.error(ErrorKind.SYNTAX, e.pos, e.message)
    except RecursionError:
        diags.error(ErrorKind.SYNTAX, Pos(filename, 1, 1), "program nested too deeply to parse")
    return ast.Program(decls=(), pos=Pos(filename, 1, 1))


def _build(tree: Tree, names: TypeNames) -> ast.Program:
    try:
        return AstBuilder(names.bodies, _parse_annotation_body).transform(tree)
    except VisitError as e:
        # lark wraps what a rule's method raised; a bug there is not the
        # user's, so only running out of stack is reported as theirs.
        raise e.orig_exc from None


def _run(tokens: list[Token], start: str, where: Pos) -> Tree:
    """Feed `tokens` to the LALR parser; raises SyntaxErrorAt."""
    ip = _parser().parse_interactive(start=start)
    tok = prev = None
    try:
        for tok in tokens:
            ip.feed_token(tok)
            prev = tok
        return ip.feed_eof(tok)
    except UnexpectedToken as e:
        raise _syntax_error(e, ip, prev, tokens, where) from None
    except UnexpectedInput as e:  # pragma: no cover (other lark errors)
        raise SyntaxErrorAt(where, f"syntax error: {e}") from None


def _parse_annotation_body(tokens: list[Token], start: str | None = None) -> Tree | None:
    """The parse tree of an annotation body as an expression list (or as
    p4runtime_translation's ``"uri", bit<W>``), None if it is neither.
    With `start` (a rule p4c parses that annotation's body with), the body
    must be one: a syntax error is raised as p4c reports it."""
    if not tokens:
        return None
    if start is not None:
        return _run(tokens, start, tokens[0].start_pos)
    for start in ("anno_exprs", "anno_p4rt"):
        try:
            return _run(tokens, start, tokens[0].start_pos)
        except SyntaxErrorAt:
            continue
    return None


# ------------------------------------------------------------------ errors

# How terminals are named in messages.
_PUNCT = {
    "_LPAREN": "(", "_RPAREN": ")", "_LBRACKET": "[", "_RBRACKET": "]",
    "_LBRACE": "{", "_RBRACE": "}", "_COLON": ":", "_COMMA": ",",
    "_QUESTION": "?", "_ASSIGN": "=", "_SEMI": ";", "AT": "@", "DOT": ".",
    "LT": "<", "GT": ">", "LT_ARGS": "<", "GT_ARGS": ">", "INVALID": "{#}",
    "MASK": "&&&", "RANGE": "..", "DOTS": "...", "SHL": "<<", "SHR": ">>",
    "AND": "&&", "OR": "||", "EQ": "==", "NE": "!=", "GE": ">=", "LE": "<=",
    "PP": "++", "PLUS": "+", "MINUS": "-", "PLUS_SAT": "|+|",
    "MINUS_SAT": "|-|", "STAR": "*", "SLASH": "/", "PERCENT": "%",
    "PIPE": "|", "AMP": "&", "CARET": "^", "TILDE": "~", "BANG": "!",
    "DONTCARE": "_", "VALUESET": "value_set", "PLUS_COLON": "+:",
}
_WORDS = {
    "IDENTIFIER": "identifier", "TYPE_IDENTIFIER": "type name",
    "INTEGER": "integer", "STRING_LITERAL": "string literal",
    "ANNOTATION_BODY": "annotation body", "ASSIGN_OP": "assignment operator",
    "$END": "end of file",
}
# Terminals that could continue an expression: not worth listing when
# something else is expected too ("unexpected '}' (expected ';')").
_CONTINUATIONS = frozenset(
    """DOT LT_ARGS _LBRACKET _LPAREN _QUESTION MASK RANGE SHL SHR AND OR EQ NE
    GE LE LT GT PP PLUS MINUS PLUS_SAT MINUS_SAT STAR SLASH PERCENT PIPE AMP
    CARET""".split()
)
_CLOSERS = frozenset("_RPAREN _RBRACKET _RBRACE GT_ARGS".split())
# Keywords that can also be names: listed as "identifier" when one is.
_NAME_KEYWORDS = frozenset("TYPE_IDENTIFIER APPLY KEY ACTIONS STATE ENTRIES TYPE PRIORITY LIST".split())


def _describe(kind: str) -> str:
    if kind in _WORDS:
        return _WORDS[kind]
    if kind in _PUNCT:
        return f"'{_PUNCT[kind]}'"
    return f"'{kind.lower()}'"


def _syntax_error(e: UnexpectedToken, ip, prev: Token | None, tokens: list[Token], where: Pos) -> SyntaxErrorAt:
    tok = e.token
    if tok.type == "$END":
        unexpected = "end of file"
        pos = _end_pos(tokens, where)
    else:
        unexpected = _describe(tok.type)
        if tok.type in ("IDENTIFIER", "TYPE_IDENTIFIER", "INTEGER"):
            unexpected += f" '{tok}'"
        elif tok.type == "STRING_LITERAL":
            unexpected += f" {tok}"
        pos = tok.start_pos if isinstance(tok.start_pos, Pos) else where
    message = f"syntax error, unexpected {unexpected}"
    if tok.type == "PLUS_COLON":
        return SyntaxErrorAt(pos, f"{message}: indexed slices e[lo +: width] are not supported")
    if tok.type == "IDENTIFIER" and prev is not None and prev.type == "IDENTIFIER":
        # `T x;` with T unknown: the likely mistake is T, not x.
        return SyntaxErrorAt(pos, f"{message}; '{prev}' is not a declared type")
    expected = _expected(ip, e, at_end=tok.type == "$END")
    if expected:
        message += f" (expected {expected})"
    return SyntaxErrorAt(pos, message)


def _expected(ip, e: UnexpectedToken, at_end: bool) -> str:
    """What the parser could have taken instead, when that is short to say.
    At the end of the input what is missing is mostly a closing bracket."""
    try:
        kinds = set(ip.accepts())
    except Exception:  # pragma: no cover (lark internals)
        kinds = set(e.expected)
    kinds.discard("$END")
    if at_end and kinds & _CLOSERS:
        kinds &= _CLOSERS
    elif "INTEGER" in kinds:
        return "an expression"
    if kinds - _CONTINUATIONS:
        kinds -= _CONTINUATIONS
    if "IDENTIFIER" in kinds:
        kinds -= _NAME_KEYWORDS
    if not 0 < len(kinds) <= 4:
        return ""
    return " or ".join(sorted(_describe(k) for k in kinds))


def _end_pos(tokens: list[Token], where: Pos) -> Pos:
    if not tokens:
        return where
    last = tokens[-1]
    p = last.start_pos
    return Pos(p.file, p.line, p.col + len(last))


# ----------------------------------------------------------------- sources


def _register_sources(text: str, filename: str, diags: Diagnostics) -> None:
    """Make the original lines quotable in error messages.

    Without line markers the text is the file itself.  With markers, a file
    that neither the preprocessor registered nor the disk has gets its lines
    rebuilt from the preprocessed text, which keeps each line in place."""
    markers = [read_line_marker(l) if l.lstrip().startswith("#") else None for l in text.split("\n")]
    if not any(markers):
        diags.sources.add(filename, text)
        return
    lines: dict[str, dict[int, str]] = {}
    file, line = filename, 1
    for raw, marker in zip(text.split("\n"), markers):
        if marker:
            line, file = marker[0], marker[1] or file
            continue
        lines.setdefault(file, {})[line] = raw
        line += 1
    for name, known in lines.items():
        if name.startswith("<") and name != filename:
            continue  # <built-in>, <command-line>
        if diags.sources.line(name, 1) is None:
            last = max(known)
            diags.sources.add(name, "\n".join(known.get(i, "") for i in range(1, last + 1)))
