"""Raw tokens of a preprocessed P4-16 text, positioned in the original files.

`tokenize()` cuts the C preprocessor's output into `RawToken`s: keywords,
identifiers, literals and operators.  It skips blanks and comments and reads
the preprocessor's line markers (GCC's ``# 12 "file.p4" 1 3`` and
``#line 12 "file.p4"``) so that every token carries the `Pos` it had in the
file the user wrote.  Any other line that starts with ``#`` is ignored, as
p4c does.

Identifiers are not yet told apart from type names: `typenames` does that
afterwards, because it needs to look at the tokens around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diagnostics import Pos
from .widths import literal_width_error

KEYWORDS = frozenset(
    """abstract action actions apply bool bit break const continue control
    default else entries enum error exit extern false for header header_union
    if in inout int key list match_kind out parser package priority return
    select state string struct switch table this transition true tuple type
    typedef varbit value_set void""".split()
)
# A keyword's terminal is its text upper-cased; `_` is the don't-care.
_KEYWORD_KINDS = {k: ("VALUESET" if k == "value_set" else k.upper()) for k in KEYWORDS}
_KEYWORD_KINDS["_"] = "DONTCARE"

# Operators and punctuation, longest first (the regex tries them in order).
_OPERATORS = {
    "{#}": "INVALID",
    "&&&": "MASK",
    "|+|=": "ASSIGN_OP",
    "|-|=": "ASSIGN_OP",
    "<<=": "ASSIGN_OP",
    ">>=": "ASSIGN_OP",
    "|+|": "PLUS_SAT",
    "|-|": "MINUS_SAT",
    "...": "DOTS",
    "..": "RANGE",
    "<<": "SHL",
    ">>": "SHR",
    "&&": "AND",
    "||": "OR",
    "==": "EQ",
    "!=": "NE",
    ">=": "GE",
    "<=": "LE",
    "++": "PP",
    "+=": "ASSIGN_OP",
    "+:": "PLUS_COLON",
    "-=": "ASSIGN_OP",
    "*=": "ASSIGN_OP",
    "/=": "ASSIGN_OP",
    "%=": "ASSIGN_OP",
    "&=": "ASSIGN_OP",
    "|=": "ASSIGN_OP",
    "^=": "ASSIGN_OP",
    "+": "PLUS",
    "-": "MINUS",
    "*": "STAR",
    "/": "SLASH",
    "%": "PERCENT",
    "|": "PIPE",
    "&": "AMP",
    "^": "CARET",
    "~": "TILDE",
    "!": "BANG",
    "(": "_LPAREN",
    ")": "_RPAREN",
    "[": "_LBRACKET",
    "]": "_RBRACKET",
    "{": "_LBRACE",
    "}": "_RBRACE",
    "<": "LT",
    ">": "GT",
    ":": "_COLON",
    ",": "_COMMA",
    "?": "_QUESTION",
    ".": "DOT",
    "=": "_ASSIGN",
    ";": "_SEMI",
    "@": "AT",
}

_INTEGER = r"""
    (?:[0-9]+[ws])?
    (?: 0[xX][0-9a-fA-F_]+ | 0[dD][0-9_]+ | 0[oO][0-7_]+ | 0[bB][01_]+ | [0-9][0-9_]* )
"""

_TOKEN_RE = re.compile(
    r"""
      (?P<nl>\n)
    | (?P<ws>[ \t\r\f\v]+)
    | (?P<marker>(?<![^\n])[ \t]*\#[^\n]*)
    | (?P<line_comment>//[^\n]*)
    | (?P<block_comment>/\*.*?\*/)
    | (?P<open_comment>/\*)
    | (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<open_string>")
    | (?P<integer>"""
    + _INTEGER
    + r""")
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>"""
    + "|".join(re.escape(op) for op in _OPERATORS)
    + r""")
    | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_MARKER_RE = re.compile(r'[ \t]*\#[ \t]*(?:line\b)?[ \t]*([0-9]+)(?:[ \t]+"((?:[^"\\]|\\.)*)")?')
_WIDTH_RE = re.compile(r"([0-9]+)([ws])")


@dataclass(slots=True)
class RawToken:
    """One token: `kind` is a grammar terminal name (IDENTIFIER for every
    name until `typenames` runs), `text` the characters as written."""

    kind: str
    text: str
    pos: Pos
    line: int  # line in the preprocessed text (to find the end of a @pragma)
    start: int  # offset in the preprocessed text
    body: "list[RawToken] | None" = None  # the tokens of an ANNOTATION_BODY


class LexError(Exception):
    def __init__(self, pos: Pos, message: str):
        super().__init__(message)
        self.pos = pos
        self.message = message


def tokenize(text: str, filename: str) -> list[RawToken]:
    """Cut `text` into tokens; raises LexError on an unterminated comment or
    string, or a literal wider than p4c supports (``4096w1``).  A character P4 has no use for becomes an UNEXPECTED_CHAR token."""
    tokens: list[RawToken] = []
    append = tokens.append
    file = filename
    line = 1  # line of the original file
    pp_line = 1  # line of `text`
    line_start = 0  # offset where the current line of `text` starts
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        start = m.start()
        if kind == "nl":
            line += 1
            pp_line += 1
            line_start = m.end()
            continue
        if kind == "ws" or kind == "line_comment":
            continue
        if kind == "block_comment" or kind == "marker":
            value = m.group()
            if kind == "marker":
                marker = read_line_marker(value)
                if marker:
                    # The marker names the line that follows it.
                    line = marker[0] - 1
                    file = marker[1] or file
                continue
            newlines = value.count("\n")
            if newlines:
                line += newlines
                pp_line += newlines
                line_start = start + value.rindex("\n") + 1
            continue
        pos = Pos(file, line, start - line_start + 1)
        value = m.group()
        if kind == "ident":
            append(RawToken(_KEYWORD_KINDS.get(value, "IDENTIFIER"), value, pos, pp_line, start))
            continue
        if kind == "op":
            append(RawToken(_OPERATORS[value], value, pos, pp_line, start))
            continue
        if kind == "integer":
            width = _WIDTH_RE.match(value)
            if width is not None:
                too_wide = literal_width_error(value, width.group(1))
                if too_wide is not None:
                    raise LexError(pos, too_wide)
            append(RawToken("INTEGER", value, pos, pp_line, start))
            continue
        if kind == "string":
            append(RawToken("STRING_LITERAL", value, pos, pp_line, start))
            newlines = value.count("\n")
            if newlines:
                line += newlines
                pp_line += newlines
                line_start = start + value.rindex("\n") + 1
            continue
        if kind == "open_comment":
            raise LexError(pos, "unterminated comment")
        if kind == "open_string":
            raise LexError(pos, "unterminated string literal")
        # A stray character: `typenames` accepts it inside an annotation
        # body (as p4c does) and reports it anywhere else.
        append(RawToken("UNEXPECTED_CHAR", value, pos, pp_line, start))
    return tokens


def unexpected_character(tok: RawToken) -> LexError:
    return LexError(tok.pos, f"unexpected character {_show_char(tok.text)}")


def _show_char(c: str) -> str:
    if c.isprintable():
        return f"'{c}'"
    return f"U+{ord(c):04X}"


def read_line_marker(line: str) -> tuple[int, str | None] | None:
    """(line number, file name or None) of a line marker such as
    ``# 12 "f.p4" 1`` or ``#line 12 "f.p4"``; None for other lines."""
    m = _MARKER_RE.match(line)
    if m is None:
        return None
    name = m.group(2)
    if name is not None:
        name = name.replace('\\"', '"').replace("\\\\", "\\")
    return int(m.group(1)), name


def parse_integer(text: str) -> tuple[int, int | None, bool]:
    """The value, width (None when not given) and signedness of a literal
    such as ``42``, ``0x2A``, ``8w0b1010`` or ``16s0x10``; `_` separators are
    allowed after the first digit."""
    width = None
    signed = False
    body = text
    m = _WIDTH_RE.match(text)
    if m:
        width = int(m.group(1))
        signed = m.group(2) == "s"
        body = text[m.end() :]
    base = 10
    if len(body) > 1 and body[0] == "0" and body[1] in "xXdDoObB":
        base = {"x": 16, "d": 10, "o": 8, "b": 2}[body[1].lower()]
        body = body[2:]
    digits = body.replace("_", "")
    value = _digits_value(digits, base) if digits else 0
    return value, width, signed


# Python refuses to convert more decimal digits than this at once
# (sys.get_int_max_str_digits, 4300 by default).
_DECIMAL_CHUNK = 4000


def _digits_value(digits: str, base: int) -> int:
    """int(digits, base) for literals of any length: long decimal ones are
    split in halves (p4c takes integers of any size)."""
    if base != 10 or len(digits) <= _DECIMAL_CHUNK:
        return int(digits, base)
    low = len(digits) // 2
    return _digits_value(digits[:-low], 10) * 10 ** low + _digits_value(digits[-low:], 10)
