"""Telling type names from other identifiers, and ``<`` from ``<``.

P4's grammar is only LALR(1) if the lexer knows which identifiers name types
(the P4-16 spec's grammar notes): ``T(x) y;`` instantiates, ``f(x);`` calls.  p4c
has its parser declare types into a symbol table that the lexer reads.  Here
a pass over the whole token list does the same job before the LALR parser
runs, by recognising the few shapes that declare types:

    header|header_union|struct|parser|control|package NAME ...
    extern NAME [<..>] { ... }          (an extern object, not a function)
    enum [bit<8>] NAME { ... }
    typedef|type T NAME;
    ... NAME<A, B> { ... }  or  ( ... )  type parameters, scoped to the
                                        declaration they belong to
    R f<T>(...)                         a generic function or method: T is a
                                        type until the end of its prototype

A name is a type from the token after its declaration on (type parameters
only up to the end of their declaration), the way p4c's lexer sees it.  A
variable or parameter may take a type's name (``bit<32> counter;`` with
v1model's extern `counter` in scope): ``T name`` followed by ``;``, ``=``,
``[``, ``,`` or ``)`` makes `name` an identifier again up to the end of its
block or declaration; struct fields do not (``h_t h_t;`` is a field).
``.name`` is looked up at the top level only.

The pass also classifies angle brackets, which have two jobs in P4:
``<``/``>`` around type arguments become LT_ARGS/GT_ARGS (``>>`` closing two
lists becomes two GT_ARGS), all others stay the LT/GT/SHR operators.  A ``<``
opens type arguments after a type name, ``bit``, ``int``, ``varbit``,
``tuple``, ``list`` and ``value_set``; after any other identifier only when
what follows looks like type arguments followed by ``(`` (as in
``pkt.lookahead<bit<8>>()``).

Finally it folds each annotation body ``@name( ... )`` into one
ANNOTATION_BODY token holding the text and the tokens between the
parentheses, since a body may hold any tokens (p4c keeps them unparsed too);
``@pragma name tokens`` to the end of the line is folded the same way.
"""

from __future__ import annotations

from lark import Token

from .diagnostics import Pos
from .lexer import LexError, RawToken, unexpected_character

# Tokens that can start a type (besides a type name).
_TYPE_START = frozenset(
    "TYPE_IDENTIFIER BIT INT VARBIT BOOL STRING ERROR VOID DONTCARE TUPLE LIST MATCH_KIND DOT".split()
)
# Tokens a type can end with, before the name of a function it returns.
_TYPE_END = frozenset("TYPE_IDENTIFIER GT_ARGS VOID BOOL BIT INT STRING ERROR MATCH_KIND".split())
# Tokens after which `<` always opens type arguments.
_GENERIC = frozenset("TYPE_IDENTIFIER BIT INT VARBIT TUPLE LIST VALUESET".split())
# Keywords that may be used as names (p4c's nonTypeName), and other name tokens.
_NAMES = frozenset("IDENTIFIER TYPE_IDENTIFIER APPLY KEY ACTIONS STATE ENTRIES TYPE PRIORITY LIST".split())
# Tokens an expression can end with (so a following `.` is member access).
_EXPR_END = _NAMES | {"_RPAREN", "_RBRACKET", "THIS", "GT_ARGS"}
# Tokens that cannot occur inside a list of type arguments.
_NOT_IN_TYPE_ARGS = frozenset(
    "_SEMI _LBRACE _RBRACE _ASSIGN ASSIGN_OP EQ NE AND OR _QUESTION _COLON MASK RANGE STRING_LITERAL".split()
)
_DECLARES_NEXT = frozenset("HEADER HEADER_UNION STRUCT PARSER CONTROL PACKAGE".split())


def fold_annotations(tokens: list[RawToken], text: str) -> list[RawToken]:
    """Fold annotation bodies into ANNOTATION_BODY tokens (see module doc)."""
    out: list[RawToken] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        out.append(tok)
        i += 1
        if tok.kind != "AT" or i >= n:
            continue
        name = tokens[i]
        if name.kind == "IDENTIFIER" and name.text == "pragma" and i + 1 < n:
            # @pragma NAME tokens... up to the end of the line.
            name = tokens[i + 1]
            j = i + 2
            while j < n and tokens[j].line == name.line:
                j += 1
            out.append(_annotation_name(name))
            body = tokens[i + 2 : j]
            start = body[0] if body else name
            out.append(_body_token(start, body, text))
            i = j
            continue
        if not (name.text[0].isalpha() or name.text[0] == "_"):
            continue  # not a name: the parser reports it
        out.append(_annotation_name(name))
        i += 1
        if i < n and tokens[i].kind == "_LPAREN":
            close = _matching_paren(tokens, i)
            body = tokens[i + 1 : close]
            out.append(_body_token(tokens[i], body, text, tokens[close]))
            i = close + 1
    return out


def _annotation_name(tok: RawToken) -> RawToken:
    # Any word can name an annotation, keywords included.
    return RawToken("IDENTIFIER", tok.text, tok.pos, tok.line, tok.start)


def _body_token(at: RawToken, body: list[RawToken], text: str, close: RawToken | None = None) -> RawToken:
    if close is not None:
        raw = text[at.start + 1 : close.start]
    elif body:
        raw = text[body[0].start : body[-1].start + len(body[-1].text)]
    else:
        raw = ""
    return RawToken("ANNOTATION_BODY", raw, at.pos, at.line, at.start, body)


def _matching_paren(tokens: list[RawToken], i: int) -> int:
    depth = 0
    for j in range(i, len(tokens)):
        kind = tokens[j].kind
        if kind == "_LPAREN":
            depth += 1
        elif kind == "_RPAREN":
            depth -= 1
            if depth == 0:
                return j
    raise LexError(tokens[i].pos, "unbalanced parentheses in annotation")


class TypeNames:
    """The set of type names known so far, with scopes: type parameters
    (types up to the end of their declaration) and variables or parameters
    named like a type (not a type up to the end of their block).

    `classify()` may be called again (for annotation bodies) and keeps what
    it learned."""

    def __init__(self) -> None:
        self.types: set[str] = set()
        # (end index, names, whether they are types), innermost last.
        self._scopes: list[tuple[int, frozenset[str], bool]] = []
        # The tokens of each ANNOTATION_BODY token, by id() of that token.
        self.bodies: dict[int, list[Token]] = {}

    def is_type(self, name: str, toplevel: bool = False) -> bool:
        """Whether `name` names a type here (at the top level for ``.name``)."""
        if not toplevel:
            for _, names, are_types in reversed(self._scopes):
                if name in names:
                    return are_types
        return name in self.types

    def classify(self, tokens: list[RawToken], declare: bool = True) -> list[Token]:
        """Lark tokens for `tokens`; `declare` False for annotation bodies,
        which may use but never declare types."""
        return _Pass(self, tokens, declare).run()


class _Pass:
    def __init__(self, names: TypeNames, toks: list[RawToken], declare: bool):
        self.names = names
        self.toks = toks
        self.declare = declare
        self.out: list[Token] = []
        self.pending: dict[int, list[str]] = {}  # token index -> names it declares
        self.forced_args: set[int] = set()  # indices of `<` opening type parameters
        self.angles: list[int] = []  # paren depth at each open LT_ARGS
        self.depth = 0
        self.blocks: list[bool] = []  # open `{`s: whether each holds struct fields
        self.field_blocks: set[int] = set()  # indices of `{` opening struct-like bodies

    def kind(self, i: int) -> str:
        """The kind of token i, with type names recognised (for look-ahead)."""
        if i >= len(self.toks):
            return "$END"
        tok = self.toks[i]
        if tok.kind == "IDENTIFIER" and self.names.is_type(tok.text):
            return "TYPE_IDENTIFIER"
        return tok.kind

    def run(self) -> list[Token]:
        toks = self.toks
        scopes = self.names._scopes
        for i, tok in enumerate(toks):
            while self.declare and scopes and scopes[-1][0] < i:
                scopes.pop()
            kind = tok.kind
            if kind == "IDENTIFIER":
                if self.declare and self.kind(i + 1) == "LT":
                    self._generic_function(i)
                self.emit(tok, self._identifier(i))
            elif kind == "LT":
                self.emit(tok, "LT_ARGS" if self._opens_type_args(i) else "LT")
            elif kind == "GT":
                self.emit(tok, self._close_angle() or "GT")
            elif kind == "UNEXPECTED_CHAR" and self.declare:
                raise unexpected_character(tok)
            elif kind == "SHR" and self._closes_here():
                self._emit_split(tok)
            else:
                if kind == "_LBRACE":
                    self.blocks.append(i in self.field_blocks)
                elif kind == "_RBRACE" and self.blocks:
                    self.blocks.pop()
                if kind in ("_LPAREN", "_LBRACKET"):
                    self.depth += 1
                elif kind in ("_RPAREN", "_RBRACKET"):
                    self.depth -= 1
                elif kind in ("_SEMI", "_LBRACE", "_RBRACE"):
                    self.angles.clear()
                if self.declare:
                    self._declaration(i, kind)
                self.emit(tok, kind)
            declared = self.pending.pop(i, None)
            if declared:
                self.names.types.update(declared)
        return self.out

    def _identifier(self, i: int) -> str:
        """IDENTIFIER or TYPE_IDENTIFIER for the identifier at i."""
        name = self.toks[i].text
        out = self.out
        if len(out) >= 1 and out[-1].type == "DOT" and not (len(out) >= 2 and out[-2].type in _EXPR_END):
            # `.name` looks the name up at the top level.
            return "TYPE_IDENTIFIER" if self.names.is_type(name, toplevel=True) else "IDENTIFIER"
        if not self.names.is_type(name):
            return "IDENTIFIER"
        if self.declare and out and out[-1].type in _TYPE_END | {"_RBRACKET"}:
            # `T name` with name a type too: a variable or parameter that
            # hides the type (as `bit<32> counter;` does v1model's counter).
            follow = self.kind(i + 1)
            end = None
            if follow in ("_SEMI", "_ASSIGN", "_LBRACKET") and self.blocks and not self.blocks[-1]:
                end = self._enclosing_end(i, "_LBRACE", "_RBRACE")
            elif follow in ("_COMMA", "_RPAREN"):
                end = self._declaration_end(self._enclosing_end(i, "_LPAREN", "_RPAREN") + 1)
            if end is not None:
                self.names._scopes.append((end, frozenset([name]), False))
                return "IDENTIFIER"
        return "TYPE_IDENTIFIER"

    def _enclosing_end(self, i: int, open_kind: str, close_kind: str) -> int:
        """Index of the `close_kind` closing the bracket that i is inside."""
        depth = 0
        for j in range(i, len(self.toks)):
            kind = self.toks[j].kind
            if kind == open_kind:
                depth += 1
            elif kind == close_kind:
                depth -= 1
                if depth < 0:
                    return j
        return len(self.toks)

    # ------------------------------------------------------------ emitting

    def emit(self, tok: RawToken, kind: str) -> None:
        lt = Token(kind, tok.text, tok.pos, tok.pos.line, tok.pos.col)
        if tok.body is not None:
            self.names.bodies[id(lt)] = self.names.classify(tok.body, declare=False)
        self.out.append(lt)

    def _emit_split(self, tok: RawToken) -> None:
        """``>>`` closing a type-argument list: two ``>``."""
        self.angles.pop()
        second = self._closes_here()
        if second:
            self.angles.pop()
        p = tok.pos
        self.out.append(Token("GT_ARGS", ">", p, p.line, p.col))
        p2 = Pos(p.file, p.line, p.col + 1)
        self.out.append(Token("GT_ARGS" if second else "GT", ">", p2, p2.line, p2.col))

    # -------------------------------------------------------------- angles

    def _closes_here(self) -> bool:
        return bool(self.angles) and self.angles[-1] == self.depth

    def _close_angle(self) -> str | None:
        if self._closes_here():
            self.angles.pop()
            return "GT_ARGS"
        return None

    def _opens_type_args(self, i: int) -> bool:
        opens = i in self.forced_args
        if not opens and self.out:
            prev = self.out[-1].type
            member = len(self.out) >= 3 and self.out[-2].type == "DOT" and self.out[-3].type in _EXPR_END
            if prev in _GENERIC and not member:
                opens = True
            elif prev in _NAMES:
                opens = self._type_args_then_call(i)
        if opens:
            self.angles.append(self.depth)
        return opens

    def _type_args_then_call(self, i: int) -> bool:
        """Whether the `<` at i starts type arguments followed by a call."""
        if self.kind(i + 1) not in _TYPE_START:
            return False
        angles, parens = 1, 0
        for j in range(i + 1, min(i + 200, len(self.toks))):
            kind = self.toks[j].kind
            if kind in _NOT_IN_TYPE_ARGS:
                return False
            if kind == "_LPAREN":
                parens += 1
            elif kind == "_RPAREN":
                parens -= 1
                if parens < 0:
                    return False
            elif parens:
                continue
            elif kind == "LT":
                angles += 1
            elif kind in ("GT", "SHR"):
                angles -= 1 if kind == "GT" else 2
                if angles <= 0:
                    return angles == 0 and self.kind(j + 1) == "_LPAREN"
        return False

    # -------------------------------------------------------- declarations

    def _declaration(self, i: int, kind: str) -> None:
        """Note the type names that the declaration starting at i declares."""
        if self.out and self.out[-1].type == "DOT":
            return  # a member name, not a keyword in use
        kind_next = self.kind(i + 1)
        if kind in _DECLARES_NEXT:
            if kind_next in _NAMES:
                self._declare_at(i + 1, self.toks[i + 1].text)
                self._type_params(i + 2)
                if kind in ("HEADER", "HEADER_UNION", "STRUCT"):
                    brace = self._find(i + 2, "_LBRACE")
                    if brace is not None:
                        self.field_blocks.add(brace)  # `T t;` there is a field
        elif kind == "EXTERN":
            if kind_next in _NAMES and self.kind(i + 2) in ("_LBRACE", "LT", "_SEMI"):
                self._declare_at(i + 1, self.toks[i + 1].text)
                self._type_params(i + 2)
        elif kind == "ENUM":
            brace = self._find(i + 1, "_LBRACE")
            if brace is not None and self.kind(brace - 1) in _NAMES:
                self._declare_at(brace - 1, self.toks[brace - 1].text)
        elif kind == "TYPEDEF" or (kind == "TYPE" and kind_next in _TYPE_START):
            end = self._find(i + 1, "_SEMI")
            if end is not None:
                j = end - 1
                if self.kind(j) == "_RBRACKET":
                    j = self._find_back(j, "_LBRACKET") - 1
                if self.kind(j) in _NAMES:
                    self._declare_at(j, self.toks[j].text)

    def _declare_at(self, i: int, name: str) -> None:
        self.pending.setdefault(i, []).append(name)

    def _type_params(self, lt: int) -> frozenset[str] | None:
        """Declare the type parameters ``<A, B>`` at index lt, if any, for
        the rest of their declaration."""
        if self.kind(lt) != "LT":
            return None
        names = []
        j = lt + 1
        while self.kind(j) in _NAMES:
            names.append(self.toks[j].text)
            if self.kind(j + 1) != "_COMMA":
                break
            j += 2
        if not names or self.kind(j + 1) != "GT":
            return None
        params = frozenset(names)
        self.names._scopes.append((self._declaration_end(j + 2), params, True))
        self.forced_args.add(lt)
        return params

    def _generic_function(self, i: int) -> bool:
        """At a name followed by ``<``: if this is ``R f<T>(`` with R a type,
        declare the type parameters (and R, when it is one of them)."""
        prev = self.out[-1] if self.out else None
        if prev is None:
            return False
        j = i + 2
        names = []
        while self.kind(j) in ("IDENTIFIER", "TYPE_IDENTIFIER"):
            names.append(self.toks[j].text)
            if self.kind(j + 1) != "_COMMA":
                break
            j += 2
        if not names or self.kind(j + 1) != "GT" or self.kind(j + 2) != "_LPAREN":
            return False
        if prev.type == "IDENTIFIER" and prev.value in names:
            prev.type = "TYPE_IDENTIFIER"  # `T f<T>(...)`: T is the return type
        elif prev.type not in _TYPE_END:
            return False
        return self._type_params(i + 1) is not None

    def _declaration_end(self, i: int) -> int:
        """Index of the `;` or closing `}` that ends the declaration around i."""
        depth = 0
        for j in range(i, len(self.toks)):
            kind = self.toks[j].kind
            if kind in ("_LPAREN", "_LBRACKET", "_LBRACE"):
                depth += 1
            elif kind in ("_RPAREN", "_RBRACKET", "_RBRACE"):
                depth -= 1
                if depth <= 0 and kind == "_RBRACE":
                    return j
                if depth < 0:
                    return j
            elif kind == "_SEMI" and depth == 0:
                return j
        return len(self.toks)

    def _find(self, i: int, kind: str) -> int | None:
        """The next token of `kind` from i at bracket depth 0."""
        depth = 0
        for j in range(i, len(self.toks)):
            k = self.toks[j].kind
            if k == kind and depth == 0:
                return j
            if k in ("_LPAREN", "_LBRACKET", "_LBRACE"):
                depth += 1
            elif k in ("_RPAREN", "_RBRACKET", "_RBRACE"):
                depth -= 1
                if depth < 0:
                    return None
            elif k == "_SEMI" and depth == 0:
                return None
        return None

    def _find_back(self, i: int, kind: str) -> int:
        for j in range(i, -1, -1):
            if self.toks[j].kind == kind:
                return j
        return i
