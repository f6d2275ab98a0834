"""The C preprocessor pass, as p4c runs `cpp -C -undef -nostdinc` first.

`preprocess()` expands #include, #define/#undef, #if/#ifdef/#elif/#else/
#endif, function-like macros, __FILE__ and __LINE__ with the pcpp library and
returns one text for the parser.  The text keeps every token at the line and
column it had in its own file: comments become blanks of the same shape, and
a GCC line marker ``# N "file"`` precedes any line whose file or line number
the parser could not infer by counting newlines.  `#line N "file"` in the
source is honoured the same way.

Include search (GCC's rules, with p4c's include path at the end):
``#include "f"`` looks in the including file's folder, then the -I folders,
then the bundled compiler/p4include; ``#include <f>`` skips the first.

Errors (missing include, #error, unbalanced conditionals, bad macro calls)
are reported through `Diagnostics` with the file, line and column; pcpp never
prints anything.

Macro expansion is bounded, so that exponential macros (``#define A1
(A0+A0)`` ... ``#define A30 (A29+A29)``, 2**30 tokens) end in an error
instead of a hang: one macro use may produce at most
`MAX_EXPANSION_TOKENS` tokens and all uses of one compilation together
`MAX_PROGRAM_EXPANSION_TOKENS`, counting the output of every nesting level
(that is the work done).  Past a limit preprocessing stops with an error at
the macro use being expanded.  cpp has no such limit; ordinary programs
stay far below it.

Speed: the bundled core.p4/v1model.p4 are the bulk of a typical input, so the
token output and macro effects of an include are memoised per (file text,
macro state on entry) and replayed on the next compilation.
"""

from __future__ import annotations

import copy
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from pcpp import Action, OutputDirective, Preprocessor
from pcpp.parser import default_lexer

from .diagnostics import Diagnostics, ErrorKind, Pos

BUNDLED_INCLUDE_DIR = str(Path(__file__).resolve().parent / "p4include")

# A gap of more blank lines than this gets a line marker instead of newlines.
_MAX_NEWLINE_GAP = 8
_MAX_INCLUDE_DEPTH = 200   # as GCC
_NOT_NEWLINE = re.compile(r"[^\n]")
# Tokens macro expansion may produce for one macro use, and for all uses in
# one compilation (see the module doc); about 0.5 s and 2 s of work.
MAX_EXPANSION_TOKENS = 1_000_000
MAX_PROGRAM_EXPANSION_TOKENS = 4_000_000


def preprocess(
    text: str,
    filename: str,
    include_dirs: list[str],
    defines: dict[str, str],
    diags: Diagnostics,
) -> str:
    """Preprocess one P4 source text; errors go to `diags`.

    `filename` names the text in line markers and diagnostics and gives the
    folder for its quoted includes.  `defines` maps NAME (or NAME(args) for a
    function-like macro) to its replacement text, as -D NAME=VALUE does.
    """
    pp = _P4Preprocessor(include_dirs, diags)
    return pp.run(text, filename, defines)


# ---------------------------------------------------------------------------
# Include memoisation


@dataclass
class _IncludeResult:
    """What processing an include file did, to replay it without re-lexing."""

    tokens: list            # output tokens, in order
    defined: dict           # macros (re)defined, name -> pcpp Macro
    undefined: frozenset    # macros removed
    include_once: dict      # include_once entries added
    sources: dict           # abspath -> (display name, text) of files read
    remaps: dict            # abspath -> #line remaps made inside
    counter: int            # __COUNTER__ increments
    stamps: dict            # abspath -> (mtime, size) of every file read

    def still_valid(self) -> bool:
        """False once a nested include changed on disk since it was read."""
        return all(_stamp(p) == s for p, s in self.stamps.items())


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


_cache: dict[tuple, _IncludeResult] = {}
_cache_lock = threading.Lock()
_CACHE_MAX = 64
# Directives pcpp cannot handle without an argument.
_NEEDS_ARGUMENT = frozenset({"define", "undef", "if", "ifdef", "ifndef", "elif"})
# Not part of the memo key: __FILE__ is set per file, and files that use the
# clock macros are never memoised.
_KEY_IGNORED_MACROS = frozenset({"__FILE__", "__DATE__", "__TIME__"})
# Files using these cannot be replayed: their expansion changes per run.
_UNCACHEABLE_WORDS = ("__DATE__", "__TIME__", "__COUNTER__")


def clear_cache() -> None:
    """Forget memoised includes.  Only tests need this: an edited file is
    never replayed stale (its text is in the key, nested files are stat-ed)."""
    with _cache_lock:
        _cache.clear()


def _macro_key(m) -> tuple:
    return (m.name, tuple(m.arglist) if m.arglist is not None else None,
            m.variadic, tuple((t.type, t.value) for t in m.value))


# One lexer is built per process; each preprocessor gets a clone.
_lexer_proto = None


def _new_lexer():
    global _lexer_proto
    if _lexer_proto is None:
        _lexer_proto = default_lexer()
    return _lexer_proto.clone()


# ---------------------------------------------------------------------------


class _P4Preprocessor(Preprocessor):
    """pcpp configured for P4: our include search, diagnostics, no printing."""

    def __init__(self, include_dirs: list[str], diags: Diagnostics):
        super().__init__(_new_lexer())
        self.diags = diags
        self.include_dirs = [str(d) for d in include_dirs]
        self.rewrite_paths = []        # token.source stays the absolute path
        self.expand_filemacro = False  # we define __FILE__ with the display name
        self.undef("__PCPP__")
        self.display: dict[str, str] = {}      # abspath -> name shown to users
        self.texts: dict[str, str] = {}        # abspath -> text read
        # abspath -> [(physical line, new line, new display name)] from #line
        self.remaps: dict[str, list[tuple[int, int, str]]] = {}
        self._recording: list[_Recorder] = []
        self._expansion_depth = 0     # nesting of expand_macros calls
        self._expanded_tokens = 0     # tokens produced by nested expansions
        self._use_tokens = 0          # the same, for the current macro use
        self._expansion_stopped = False

    # -- driver ---------------------------------------------------------------

    def run(self, text: str, filename: str, defines: dict[str, str]) -> str:
        for name, value in defines.items():
            self.define(f"{name} {value}" if value != "" else name)
        abspath = os.path.abspath(filename)
        self._register(abspath, filename, text)
        self._define_file(filename)
        self.parse(text, filename)
        try:
            return self._write()
        except Exception as e:  # a pcpp bug must not become a traceback
            self._error_at(self.lastdirective, f"preprocessor failed here ({type(e).__name__}: {e})")
            return ""

    def _register(self, abspath: str, name: str, text: str) -> None:
        self.display.setdefault(abspath, name)
        self.texts[abspath] = text
        self.diags.sources.add(self.display[abspath], text)
        for rec in self._recording:
            rec.sources[abspath] = (self.display[abspath], text)

    def _define_file(self, name: str) -> None:
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        self.define(f'__FILE__ "{quoted}"')

    # -- includes -------------------------------------------------------------

    def include(self, tokens, original_line):
        """Resolve and expand one #include (replaces pcpp's search)."""
        directive = self.lastdirective
        here = self.source or ""
        if not tokens:
            self._error_at(directive, "#include expects \"FILE\" or <FILE>")
            return
        first = tokens[0]
        if first.value == "<":
            end = next((i for i, t in enumerate(tokens) if t.value == ">"), None)
            if end is None:
                self._error_at(first, "missing '>' in #include <FILE>")
                return
            name = "".join(t.value for t in tokens[1:end])
            system = True
        elif first.type == self.t_STRING:
            name = first.value[1:-1]
            system = False
        else:
            self._error_at(first, "#include expects \"FILE\" or <FILE>")
            return
        found = self._find(name, system, here)
        if found is None:
            where = ([self._display_dir(here)] if not system else []) \
                + self.include_dirs + [BUNDLED_INCLUDE_DIR]
            self._error_at(first, f"cannot find include file '{name}' "
                                  f"(searched: {', '.join(d or '.' for d in where)})")
            return
        abspath, shown = found
        if self.include_depth >= _MAX_INCLUDE_DEPTH:
            self._error_at(first, f"#include nested more than {_MAX_INCLUDE_DEPTH} deep "
                                  f"(does '{name}' include itself?)")
            return
        if abspath in self.include_once:
            guard = self.include_once[abspath]
            if guard is None or guard in self.macros:
                return   # #pragma once, or an include guard still defined
        yield from self._include_file(abspath, shown)

    def _find(self, name: str, system: bool, here: str) -> tuple[str, str] | None:
        dirs: list[tuple[str, str]] = []
        if os.path.isabs(name):
            dirs.append(("", ""))
        else:
            if not system:
                dirs.append((os.path.dirname(here), self._display_dir(here)))
            dirs += [(d, d) for d in self.include_dirs]
            dirs.append((BUNDLED_INCLUDE_DIR, BUNDLED_INCLUDE_DIR))
        for real, shown in dirs:
            path = os.path.join(real, name)
            if os.path.isfile(path):
                return os.path.abspath(path), os.path.join(shown, name)
        return None

    def _display_dir(self, abspath: str) -> str:
        return os.path.dirname(self.display.get(abspath, abspath))

    def _include_file(self, abspath: str, shown: str):
        try:
            with open(abspath, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            self._error_at(self.lastdirective, f"cannot read include file '{shown}': {e.strerror}")
            return
        if text.startswith("\ufeff"):
            text = text[1:]
        self.display.setdefault(abspath, shown)
        key = self._cache_key(abspath, text)
        if key is not None:
            with _cache_lock:
                hit = _cache.get(key)
            if hit is not None and hit.still_valid():
                yield from self._replay(hit)
                return
        self._register(abspath, shown, text)
        self._define_file(self.display[abspath])
        if key is None:
            yield from self.parsegen(text, shown, abspath)
            return
        rec = _Recorder(self)
        self._recording.append(rec)
        rec.sources[abspath] = (self.display[abspath], text)
        try:
            for tok in self.parsegen(text, shown, abspath):
                rec.tokens.append(tok)
                yield tok
        finally:
            self._recording.pop()
        if rec.clean():
            result = rec.finish()
            with _cache_lock:
                if len(_cache) >= _CACHE_MAX:
                    _cache.clear()
                _cache[key] = result

    def _cache_key(self, abspath: str, text: str) -> tuple | None:
        """The memo key: the file, its text and everything that can change
        how it expands; None when replaying would not be exact."""
        if any(w in text for w in _UNCACHEABLE_WORDS):
            return None
        macros = tuple(sorted(_macro_key(m) for n, m in self.macros.items()
                              if n not in _KEY_IGNORED_MACROS))
        return (abspath, self.display[abspath], text, macros,
                tuple(sorted(self.include_once.items())),
                tuple(self.include_dirs))

    def _replay(self, hit: _IncludeResult):
        for abspath, (shown, text) in hit.sources.items():
            self.display.setdefault(abspath, shown)
            self._register(abspath, self.display[abspath], text)
        for abspath, remaps in hit.remaps.items():
            self.remaps.setdefault(abspath, []).extend(remaps)
        for rec in self._recording:
            rec.nested_remaps(hit.remaps)
        for name in hit.undefined:
            self.macros.pop(name, None)
        self.macros.update(hit.defined)
        self.include_once.update(hit.include_once)
        self.countermacro += hit.counter
        yield from hit.tokens

    # -- bounded macro expansion ---------------------------------------------

    def expand_macros(self, tokens, expanding_from=[]):  # noqa: B006 (pcpp's signature)
        """pcpp's expansion, stopped with an error once one macro use, or all
        of them together, produced more tokens than the limits allow.  pcpp
        recurses through this method, so every nested expansion is counted
        when it returns."""
        depth = self._expansion_depth
        if depth == 0:
            if self._expansion_stopped:
                return tokens
            try:
                return self._expand_counted(tokens, expanding_from)
            except _ExpansionTooLarge as e:
                self._expansion_stopped = True
                use = self._expanding_use(tokens)
                self._error_at(use, f"expansion of macro '{use.value}' is too large: {e}")
                return tokens
        if depth == 1:   # called from the top level: a new macro use (or argument)
            self._use_tokens = 0
        out = self._expand_counted(tokens, expanding_from)
        self._use_tokens += len(out)
        self._expanded_tokens += len(out)
        if self._use_tokens > MAX_EXPANSION_TOKENS:
            raise _ExpansionTooLarge(f"over {MAX_EXPANSION_TOKENS} tokens")
        if self._expanded_tokens > MAX_PROGRAM_EXPANSION_TOKENS:
            raise _ExpansionTooLarge(f"the program's macro expansions exceed "
                                     f"{MAX_PROGRAM_EXPANSION_TOKENS} tokens in all")
        return out

    def _expand_counted(self, tokens, expanding_from):
        self._expansion_depth += 1
        try:
            return super().expand_macros(tokens, expanding_from)
        finally:
            self._expansion_depth -= 1

    def _expanding_use(self, tokens):
        """The macro use pcpp was expanding in the top-level `tokens` when it
        gave up: pcpp replaces each use by its expansion in place, so it is
        the first macro name still there as written."""
        for i, t in enumerate(tokens):
            if t.type != self.t_ID or t.expanded_from or t.value not in self.macros:
                continue
            if self.macros[t.value].arglist is None:
                return t
            nxt = next((u for u in tokens[i + 1:]
                        if u.type not in self.t_WS and u.type not in self.t_COMMENT), None)
            if nxt is not None and nxt.value == "(":
                return t
        return tokens[0]

    # -- hooks ----------------------------------------------------------------

    def on_error(self, file, line, msg):
        self.diags.error(ErrorKind.PREPROCESS,
                         Pos(self.display.get(file, file or "<unknown>"), line or 0, 1),
                         _tidy(msg))

    def on_comment(self, tok):
        return True   # kept as tokens; `_write` turns them into blanks

    def on_directive_handle(self, directive, toks, ifpassthru, precedingtoks):
        self.lastdirective = directive
        # Comments inside a directive are whitespace (cpp -C drops them too).
        for t in toks:
            if t.type in self.t_COMMENT:
                t.type, t.value = self.t_SPACE, " "
        self.tokenstrip(toks)
        if not toks and directive.value in _NEEDS_ARGUMENT:
            what = "an expression" if directive.value in ("if", "elif") else "a macro name"
            self._error_at(directive, f"#{directive.value} without {what}")
            if directive.value in ("define", "undef"):
                raise OutputDirective(Action.IgnoreAndRemove)
            # keep the conditional on the #if stack so #endif still matches
            zero = copy.copy(directive)
            zero.type, zero.value = self.t_INTEGER, "0"
            toks.append(zero)
        return True

    def on_directive_unknown(self, directive, toks, ifpassthru, precedingtoks):
        word = directive.value
        text = "".join(t.value for t in toks if t.type not in self.t_COMMENT).strip()
        if word == "error":
            self._error_at(directive, f"#error {text}".rstrip(), hash_col=True)
        elif word == "warning":
            self.diags.warning(ErrorKind.PREPROCESS, self._pos(directive, True),
                               f"#warning {text}".rstrip())
        elif word == "line" or (directive.type == self.t_INTEGER):
            self._line_directive(directive, toks)
        elif word == "pragma":
            pass   # p4c's lexer skips them; `#pragma once` is handled by pcpp
        else:
            # p4c runs cpp in assembler mode, which passes unknown directives
            # through, and its lexer skips every line starting with '#': such
            # lines are accepted, so only warn.
            self.diags.warning(ErrorKind.PREPROCESS, self._pos(directive, True),
                               f"ignoring unknown preprocessor directive #{word}")
        return True

    def _line_directive(self, directive, toks) -> None:
        """`#line N ["file"]` (or `# N "file"`): renumber the following lines."""
        args = [t for t in self.expand_macros(list(toks))
                if t.type not in self.t_WS and t.type not in self.t_COMMENT]
        if directive.type == self.t_INTEGER:
            args.insert(0, directive)
        if not args or not str(args[0].value).isdigit():
            self._error_at(directive, "#line expects a line number")
            return
        number = int(args[0].value)
        source = directive.source
        name = None
        if len(args) > 1 and args[1].type == self.t_STRING:
            name = args[1].value[1:-1]
        if name is None:
            name = self._map(source, directive.lineno)[0]
        entry = (directive.lineno + 1, number, name)
        self.remaps.setdefault(source, []).append(entry)
        for rec in self._recording:
            rec.remaps.setdefault(source, []).append(entry)

    # -- positions and errors -------------------------------------------------

    def _map(self, source: str, line: int) -> tuple[str, int]:
        """Physical (file, line) -> the (name, line) the user should see."""
        shown = self.display.get(source, source)
        for phys, number, name in reversed(self.remaps.get(source, ())):
            if line >= phys:
                return name, number + line - phys
        return shown, line

    def _pos(self, tok, hash_col: bool = False) -> Pos:
        if tok is None:
            return Pos(self.display.get(self.source, self.source or "<unknown>"), 0, 0)
        name, line = self._map(tok.source, tok.lineno)
        col = self._column(tok)
        if hash_col:
            col = 1
        return Pos(name, line, col)

    def _column(self, tok) -> int:
        """1-based column of a token lexed from one of the files read."""
        text = self.texts.get(tok.source)
        if text is None or getattr(tok, "expanded_from", None):
            return 1
        # pcpp lexes the text with trailing blanks of each line removed.
        lines = text.splitlines()
        offset = sum(len(line.rstrip()) + 1 for line in lines[: tok.lineno - 1])
        return max(tok.lexpos - offset, 0) + 1

    def _error_at(self, tok, message: str, hash_col: bool = False) -> None:
        self.diags.error(ErrorKind.PREPROCESS, self._pos(tok, hash_col), message)

    # -- output ---------------------------------------------------------------

    def _write(self) -> str:
        """Join the output tokens, adding line markers where needed."""
        out: list[str] = []
        cur_name: str | None = None
        cur_line = 0
        line: list = []
        newline_types = self.t_NEWLINE
        comment1, comment2 = self.t_COMMENT1, self.t_COMMENT2
        ws = self.t_WS
        comments = self.t_COMMENT

        def flush() -> None:
            nonlocal cur_name, cur_line
            # Lines holding only blanks and comments are left out; the line
            # numbers of the tokens that follow keep positions right.
            if all(t.type in ws or t.type in comments for t in line):
                return
            first = next(t for t in line if t.type not in ws)
            name, lineno = self._map(first.source, first.lineno)
            if name != cur_name or lineno < cur_line or lineno - cur_line > _MAX_NEWLINE_GAP:
                out.append(f'# {lineno} "{_escape(name)}"\n')
            else:
                out.append("\n" * (lineno - cur_line))
            cur_name = name
            parts = []
            for t in line:
                v = t.value
                if t.type == comment1:
                    if getattr(t, "expanded_from", None):
                        v = " "
                    else:
                        v = _NOT_NEWLINE.sub(" ", v)
                elif t.type == comment2:
                    v = ""
                parts.append(v)
            body = "".join(parts).rstrip(" \t")
            out.append(body)
            out.append("\n")
            cur_line = lineno + 1 + body.count("\n")

        for tok in self.parser:
            if tok.type == newline_types and tok.value == "\n":
                flush()
                line = []
            else:
                line.append(tok)
        flush()
        self.parser = None
        return "".join(out)


class _ExpansionTooLarge(Exception):
    """Macro expansion went over MAX_EXPANSION_TOKENS (caught at the top)."""


class _Recorder:
    """Collects what one include did while it is processed the first time."""

    def __init__(self, pp: _P4Preprocessor):
        self.pp = pp
        self.tokens: list = []
        self.macros_before = dict(pp.macros)
        self.once_before = dict(pp.include_once)
        self.counter_before = pp.countermacro
        self.errors_before = len(pp.diags.errors)
        self.warnings_before = len(pp.diags.warnings)
        self.sources: dict[str, tuple[str, str]] = {}
        self.remaps: dict[str, list] = {}

    def nested_remaps(self, remaps: dict) -> None:
        for source, entries in remaps.items():
            self.remaps.setdefault(source, []).extend(entries)

    def clean(self) -> bool:
        """True when the include reported nothing (reports are not replayed)."""
        d = self.pp.diags
        return len(d.errors) == self.errors_before and len(d.warnings) == self.warnings_before

    def finish(self) -> _IncludeResult:
        pp = self.pp
        after = pp.macros
        before = self.macros_before
        defined = {n: m for n, m in after.items()
                   if n != "__FILE__" and before.get(n) is not m}
        undefined = frozenset(n for n in before if n not in after)
        once = {k: v for k, v in pp.include_once.items()
                if k not in self.once_before or self.once_before[k] != v}
        # Output tokens are never modified once yielded, so the replay can
        # hand out these copies as they are.
        tokens = [copy.copy(t) for t in self.tokens]
        return _IncludeResult(tokens, defined, undefined, once, dict(self.sources),
                              {k: list(v) for k, v in self.remaps.items()},
                              pp.countermacro - self.counter_before,
                              {p: _stamp(p) for p in self.sources})


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _tidy(msg: str) -> str:
    """pcpp's messages, in the lower-case style of the other diagnostics."""
    if msg.startswith("Unterminated "):
        return "unterminated " + msg[len("Unterminated "):].split(" ", 1)[0]
    if msg.startswith("Misplaced "):
        return msg[len("Misplaced "):] + " without #if"
    return msg[:1].lower() + msg[1:]
