"""Would BMv2's JSON loader accept this program?  The operand forms.

BMv2 (src/bm_sim/P4Objects.cpp) reads an operand in one of two ways, and
they accept different things:

- a primitive's parameter (`process_single_param`): ``runtime_data`` (an
  index below the action's parameter count), ``field``, ``hexstr``,
  ``header``, ..., or ``expression``, whose `value` is then read as an
  expression operand (so a computed parameter is wrapped twice); ``local``
  is refused: "Parameter type 'local' not supported";
- an expression operand (`build_expression`: every operand of an operator,
  conditions of conditionals and checksums, parser `set`/`verify`/
  `advance`/`extract_VL` expressions): ``local`` is the action data here,
  and ``runtime_data`` is refused: "Invalid 'type' in expression:
  'runtime_data'".  An operator node is ``{"op", "left", "right"}`` (and
  ``"cond"`` for ``?``); BMv2 asserts that ``==``/``!=`` and ``?`` compare
  or choose operands of one kind (data, bool, header, union) and that
  `access_field` reads a header.

`bmv2_json_problems` walks a whole program and returns one line per
operand BMv2 would refuse or misread, ``path: message``, with BMv2's own
message where it has one.  Names (headers, fields, tables) are not
resolved here: the engine's loader checks those.
"""

from __future__ import annotations

from typing import Any, Optional

# What an expression operand evaluates to (BMv2's ExprType).
DATA, BOOL, HEADER, STACK, UNION, UNION_STACK, UNKNOWN = (
    "data", "bool", "header", "header_stack", "header_union", "header_union_stack", "unknown")

# Operators of BMv2's ExprOpcodesMap: what each yields and what its operands
# must be (None: not checked).
_BINARY_DATA = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "two_comp_mod",
                "sat_cast", "usat_cast"}
_COMPARE_DATA = {">", "<", ">=", "<="}
_LOGICAL = {"and", "or"}
# unary: operator -> (operand kind, result kind)
_UNARY = {"not": (BOOL, BOOL), "~": (DATA, DATA), "d2b": (DATA, BOOL), "b2d": (BOOL, DATA),
          "valid": (HEADER, BOOL), "valid_union": (UNION, BOOL),
          "last_stack_index": (STACK, DATA), "size_stack": (STACK, DATA)}
_SPECIAL = {"?", "==", "!=", "access_field", "access_union_header", "dereference_stack",
            "dereference_header_stack", "dereference_union_stack"}
OPERATORS = _BINARY_DATA | _COMPARE_DATA | _LOGICAL | set(_UNARY) | _SPECIAL

# Operand types of an expression (build_expression) and of a primitive's
# parameter (process_single_param).
_EXPRESSION_TYPES = {"expression", "header", "field", "bool", "hexstr", "local", "register",
                     "header_stack", "stack_field", "header_union", "header_union_stack"}
_PARAMETER_TYPES = {"hexstr", "parameters_vector", "field_list", "runtime_data", "header",
                    "field", "calculation", "meter_array", "counter_array", "register_array",
                    "header_stack", "expression", "register", "extern", "string",
                    "stack_field", "header_union", "header_union_stack"}


def bmv2_json_problems(program: dict, limit: Optional[int] = None) -> list[str]:
    """Every operand of `program` (BMv2 JSON as a dict) that BMv2's loader
    would refuse or misread, one ``path: message`` line each."""
    c = _Checker(limit)
    try:
        c.program(program)
    except _Enough:
        pass
    return c.problems


class _Enough(Exception):
    """Raised once `limit` problems were found."""


class _Checker:
    def __init__(self, limit: Optional[int]) -> None:
        self.problems: list[str] = []
        self.limit = limit

    def report(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")
        if self.limit is not None and len(self.problems) >= self.limit:
            raise _Enough

    # ------------------------------------------------------------ program

    def program(self, j: dict) -> None:
        for i, ht in enumerate(_list(j, "header_types")):
            if isinstance(ht, dict) and ht.get("length_exp") is not None:
                self.expression(ht["length_exp"], f"{_at('header_types', i, ht)}.length_exp", None)
        for i, a in enumerate(_list(j, "actions")):
            path = _at("actions", i, a)
            nparams = len(a.get("runtime_data") or []) if isinstance(a, dict) else 0
            for k, prim in enumerate(_list(a, "primitives")):
                self.primitive(prim, f"{path}.primitives[{k}]", nparams)
        for i, p in enumerate(_list(j, "parsers")):
            for s, st in enumerate(_list(p, "parse_states")):
                path = f"{_at('parsers', i, p)}.{_at('parse_states', s, st)}"
                for k, op in enumerate(_list(st, "parser_ops")):
                    self.parser_op(op, f"{path}.parser_ops[{k}]")
        for i, pl in enumerate(_list(j, "pipelines")):
            for k, c in enumerate(_list(pl, "conditionals")):
                path = f"{_at('pipelines', i, pl)}.{_at('conditionals', k, c)}.expression"
                self.expression(c.get("expression") if isinstance(c, dict) else None, path, None)
        for i, ck in enumerate(_list(j, "checksums")):
            if isinstance(ck, dict) and ck.get("if_cond") is not None:
                self.expression(ck["if_cond"], f"{_at('checksums', i, ck)}.if_cond", None)

    def primitive(self, prim: Any, path: str, nparams: int) -> None:
        if not isinstance(prim, dict):
            self.report(path, "a primitive call must be an object {op, parameters}")
            return
        path = f"{path} ('{prim.get('op')}')"
        params = prim.get("parameters")
        if not isinstance(params, list):
            self.report(path, "'parameters' must be a list")
            return
        for k, p in enumerate(params):
            self.parameter(p, f"{path}.parameters[{k}]", nparams)

    def parser_op(self, op: Any, path: str) -> None:
        if not isinstance(op, dict):
            return
        kind = op.get("op")
        params = op.get("parameters") if isinstance(op.get("parameters"), list) else []
        path = f"{path} ('{kind}')"
        if kind == "extract_VL" and len(params) > 1:
            self.wrapped(params[1], f"{path}.parameters[1]", None, ("expression",))
        elif kind == "set" and len(params) > 1:
            self.wrapped(params[1], f"{path}.parameters[1]", None,
                         ("expression", "field", "hexstr", "lookahead"))
        elif kind == "verify" and len(params) > 1:
            self.expression(params[0], f"{path}.parameters[0]", None)
            if not isinstance(params[1], int):
                self.expression(params[1], f"{path}.parameters[1]", None)
        elif kind == "advance" and params:
            self.wrapped(params[0], f"{path}.parameters[0]", None, ("expression", "field", "hexstr"))
        elif kind == "primitive" and params:
            self.primitive(params[0], f"{path}.parameters[0]", 0)

    def wrapped(self, v: Any, path: str, nparams: Optional[int], allowed: tuple[str, ...]) -> None:
        """A parser operand whose `expression` form holds the expression in `value`."""
        t = v.get("type") if isinstance(v, dict) else None
        if t not in allowed:
            self.report(path, f"operand type '{t}' is not supported here (expected one of "
                              f"{', '.join(allowed)})")
        elif t == "expression":
            self.expression(v.get("value"), f"{path}.value", nparams)

    # ----------------------------------------------------------- operands

    def parameter(self, v: Any, path: str, nparams: int) -> None:
        """A primitive's parameter (BMv2's process_single_param)."""
        if not isinstance(v, dict):
            self.report(path, "a primitive parameter must be an object {type, value}")
            return
        t = v.get("type")
        value = v.get("value")
        if t == "local":
            self.report(path, "Parameter type 'local' not supported (action data is "
                              "'runtime_data' outside an expression)")
        elif t not in _PARAMETER_TYPES:
            self.report(path, f"Parameter type '{t}' not supported")
        elif t == "runtime_data":
            if not _is_index(value):
                self.report(path, "'runtime_data' needs an integer index")
            elif value >= nparams:
                self.report(path, f"Invalid 'runtime_data' parameter reference: trying to use "
                                  f"parameter at offset {value} but action only has "
                                  f"{nparams} parameter(s)")
        elif t == "expression":
            self.expression(value, f"{path}.value", nparams)
        elif t == "parameters_vector":
            for k, x in enumerate(value if isinstance(value, list) else []):
                self.parameter(x, f"{path}.value[{k}]", nparams)
        elif t == "field_list":
            for k, x in enumerate(value if isinstance(value, list) else []):
                if not (isinstance(x, dict) and x.get("type") == "field"):
                    self.report(f"{path}.value[{k}]", f"Invalid type '{_type(x)}', expected 'field'")
        elif t == "register":
            self.register(value, path, nparams)
        else:
            self.simple(t, value, path)

    def expression(self, v: Any, path: str, nparams: Optional[int]) -> str:
        """An expression operand (BMv2's build_expression); returns what it
        evaluates to.  `nparams` is the action's parameter count, None
        outside actions."""
        if v is None:
            return UNKNOWN
        if not isinstance(v, dict):
            self.report(path, f"an expression operand must be an object {{type, value}}, "
                              f"found {type(v).__name__}")
            return UNKNOWN
        t = v.get("type")
        value = v.get("value")
        if t not in _EXPRESSION_TYPES:
            hint = ""
            if t == "runtime_data":
                hint = " (action data inside an expression is 'local')"
            self.report(path, f"Invalid 'type' in expression: '{t}'{hint}")
            return UNKNOWN
        if t == "expression":
            return self.operator(value, f"{path}.value", nparams)
        if t == "local":
            if not _is_index(value):
                self.report(path, "'local' needs an integer index")
            elif nparams is None:
                self.report(path, "'local' outside an action: there is no action data to read")
            elif value >= nparams:
                self.report(path, f"'local' {value} but the action only has {nparams} parameter(s)")
            return DATA
        if t == "register":
            self.register(value, path, nparams)
            return DATA
        self.simple(t, value, path)
        return {"header": HEADER, "header_stack": STACK, "header_union": UNION,
                "header_union_stack": UNION_STACK, "bool": BOOL}.get(t, DATA)

    def operator(self, v: Any, path: str, nparams: Optional[int]) -> str:
        if not isinstance(v, dict) or "op" not in v:
            wrapped = isinstance(v, dict) and "type" in v
            self.report(path, "an expression's value must be an operator {op, left, right}"
                        + (" (this one is wrapped in 'expression' once too often)" if wrapped else ""))
            return UNKNOWN
        op = v["op"]
        path = f"{path}(op '{op}')"
        left, right = v.get("left"), v.get("right")
        if op not in OPERATORS:
            self.report(path, f"unknown operator '{op}'")
            return UNKNOWN
        if op == "?":
            if v.get("cond") is None:
                self.report(path, "'?' needs a 'cond'")
            self.expect(self.expression(v.get("cond"), f"{path}.cond", nparams), BOOL, f"{path}.cond")
            tl = self.expression(left, f"{path}.left", nparams)
            tr = self.expression(right, f"{path}.right", nparams)
            self.same(tl, tr, path)
            return tl
        if op in ("==", "!="):
            tl = self.expression(left, f"{path}.left", nparams)
            tr = self.expression(right, f"{path}.right", nparams)
            self.same(tl, tr, path)
            if UNKNOWN in (tl, tr):
                self.report(path, f"'{op}' needs two operands")
            return BOOL
        if op in ("access_field", "access_union_header"):
            want = HEADER if op == "access_field" else UNION
            self.expect(self.expression(left, f"{path}.left", nparams), want, f"{path}.left")
            if not _is_index(right):
                self.report(f"{path}.right", f"'{op}' needs an integer offset")
            return DATA if op == "access_field" else HEADER
        if op in ("dereference_stack", "dereference_header_stack", "dereference_union_stack"):
            want = UNION_STACK if op == "dereference_union_stack" else STACK
            self.expect(self.expression(left, f"{path}.left", nparams), want, f"{path}.left")
            self.expect(self.expression(right, f"{path}.right", nparams), DATA, f"{path}.right")
            return UNION if op == "dereference_union_stack" else HEADER
        if op in _UNARY:
            operand, result = _UNARY[op]
            if left is not None:
                self.report(f"{path}.left", f"'{op}' is unary: 'left' must be null")
            self.expect(self.expression(right, f"{path}.right", nparams), operand, f"{path}.right")
            return result
        # binary data operators (unary + and - have a null left) and logic
        operand = BOOL if op in _LOGICAL else DATA
        if left is None and op not in ("+", "-"):
            self.report(path, f"'{op}' needs a left operand")
        if left is not None:
            self.expect(self.expression(left, f"{path}.left", nparams), operand, f"{path}.left")
        self.expect(self.expression(right, f"{path}.right", nparams), operand, f"{path}.right")
        return BOOL if op in _LOGICAL or op in _COMPARE_DATA else DATA

    def register(self, value: Any, path: str, nparams: Optional[int]) -> None:
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            self.report(path, "'register' needs [register array, index]")
            return
        index = value[1]
        if not (isinstance(index, dict) and index.get("type") == "hexstr"):
            self.expression(index, f"{path}.value[1]", nparams)

    def simple(self, t: str, value: Any, path: str) -> None:
        """Operands named by a string or a [header, field] pair."""
        if t in ("field", "stack_field"):
            if not (isinstance(value, list) and len(value) == 2
                    and all(isinstance(x, str) for x in value)):
                self.report(path, f"'{t}' needs [header, field]")
        elif t == "bool":
            if not isinstance(value, bool):
                self.report(path, "'bool' needs true or false")
        elif t == "hexstr":
            if not (isinstance(value, str) and _is_hex(value)):
                self.report(path, f"'hexstr' needs a hexadecimal string, found {value!r}")
        elif not isinstance(value, str):
            self.report(path, f"'{t}' needs a name")

    def expect(self, got: str, want: str, path: str) -> None:
        if got != UNKNOWN and got != want:
            self.report(path, f"a {want} operand is needed here, found {got} "
                              "(BMv2 converts only with explicit d2b/b2d)")

    def same(self, tl: str, tr: str, path: str) -> None:
        if UNKNOWN not in (tl, tr) and tl != tr:
            self.report(path, f"operands of different kinds ({tl} and {tr}): BMv2 asserts they match")


def _list(j: Any, key: str) -> list:
    v = j.get(key) if isinstance(j, dict) else None
    return v if isinstance(v, list) else []


def _at(key: str, i: int, item: Any) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return f"{key}[{i}] ('{name}')" if name is not None else f"{key}[{i}]"


def _type(v: Any) -> Any:
    return v.get("type") if isinstance(v, dict) else type(v).__name__


def _is_index(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_hex(s: str) -> bool:
    body = s[1:] if s.startswith("-") else s
    if body[:2].lower() != "0x" or len(body) <= 2:
        return False
    try:
        int(body[2:], 16)
    except ValueError:
        return False
    return True
