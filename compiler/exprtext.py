"""Print expressions the way p4c names them for the control plane.

Table key names in P4Info are the key expression as p4c prints it:
`hdr.ipv4.dstAddr`, `hdr.ethernet.srcAddr[22:18]`, `hdr.ipv4.$valid$` for
`hdr.ipv4.isValid()`, `hdr.ethernet.dstAddr & 0x10101010101`.
"""

from __future__ import annotations

from . import ast

_PREC = {
    "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, ">": 4, "<=": 4, ">=": 4,
    "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "++": 9, "+": 9, "-": 9,
    "|+|": 9, "|-|": 9, "*": 10, "/": 10, "%": 10,
}


def int_text(e: ast.IntLit) -> str:
    text = e.text.replace("_", "")
    body = text
    for sep in ("w", "s"):
        if sep in text and text.split(sep, 1)[0].isdigit():
            body = text.split(sep, 1)[1]
            break
    low = body.lower()
    v = e.value
    if low.startswith("0x"):
        digits = f"0x{v:x}" if v >= 0 else f"-0x{-v:x}"
    elif low.startswith("0b"):
        digits = f"0b{v:b}" if v >= 0 else f"-0b{-v:b}"
    elif low.startswith("0o"):
        digits = f"0o{v:o}" if v >= 0 else f"-0o{-v:o}"
    elif low.startswith("0d") or (v >= 0 and body.isdigit()):
        # the literal's own digits: str() refuses values over 4300 digits
        digits = (body[2:] if low.startswith("0d") else body).lstrip("0") or "0"
    else:
        digits = str(v)
    if e.width is not None:
        return f"{e.width}{'s' if e.signed else 'w'}{digits}"
    return digits


def expr_text(e: ast.Expr, prec: int = 0) -> str:
    if isinstance(e, ast.Name):
        return ("." if e.toplevel else "") + e.name
    if isinstance(e, ast.Member):
        return f"{expr_text(e.expr, 100)}.{e.name}"
    if isinstance(e, ast.TypeMember):
        return f"{type_text(e.type)}.{e.name}"
    if isinstance(e, ast.ErrorMember):
        return f"error.{e.name}"
    if isinstance(e, ast.Index):
        return f"{expr_text(e.expr, 100)}[{expr_text(e.index)}]"
    if isinstance(e, ast.Slice):
        return f"{expr_text(e.expr, 100)}[{expr_text(e.hi)}:{expr_text(e.lo)}]"
    if isinstance(e, ast.IntLit):
        return int_text(e)
    if isinstance(e, ast.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, ast.StringLit):
        return '"' + e.value + '"'
    if isinstance(e, ast.Call):
        c = e.callee
        if isinstance(c, ast.Member) and c.name == "isValid" and not e.args:
            return f"{expr_text(c.expr, 100)}.$valid$"
        args = ", ".join(expr_text(a.value) if a.value is not None else "_" for a in e.args)
        return f"{expr_text(c, 100)}({args})"
    if isinstance(e, ast.Unary):
        return f"{e.op}{expr_text(e.expr, 11)}"
    if isinstance(e, ast.Binary):
        p = _PREC.get(e.op, 0)
        s = f"{expr_text(e.left, p)} {e.op} {expr_text(e.right, p + 1)}"
        return f"({s})" if p < prec else s
    if isinstance(e, ast.Cast):
        return f"({type_text(e.type)}){expr_text(e.expr, 11)}"
    if isinstance(e, ast.Mux):
        s = f"{expr_text(e.cond, 1)} ? {expr_text(e.then)} : {expr_text(e.else_)}"
        return f"({s})" if prec > 0 else s
    if isinstance(e, ast.ListExpr):
        return "{" + ", ".join(expr_text(x) for x in e.elems) + "}"
    return type(e).__name__


def type_text(t: ast.TypeRef) -> str:
    if isinstance(t, ast.TypeBits):
        return f"{'int' if t.signed else 'bit'}<{expr_text(t.width)}>"
    if isinstance(t, ast.TypeName):
        return t.name
    if isinstance(t, ast.TypeBool):
        return "bool"
    if isinstance(t, ast.TypeVarbit):
        return f"varbit<{expr_text(t.width)}>"
    if isinstance(t, ast.TypeSpecialized):
        return f"{t.base.name}<{', '.join(type_text(a) for a in t.args)}>"
    return type(t).__name__
