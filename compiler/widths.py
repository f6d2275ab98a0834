"""p4c's limits on widths, and their error messages.

p4c (ir/configuration.h, DefaultP4CConfiguration) supports bit<W> and
int<W> up to W = 2048: wider types are "Compiler only supports widths up to
2048" and wider literals such as ``4096w1`` "size too large".  A width that
does not even fit a C int, in bit<W>, int<W> or varbit<W>, is "this
implementation does not support bitstrings this large".  varbit<W> has no
other limit.
"""

from __future__ import annotations

from . import ast
from .exprtext import expr_text, type_text

MAX_WIDTH = 2048
_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1


def shortened(text: str, limit: int = 40) -> str:
    """`text` cut to about `limit` characters for a message (a 10,000-digit
    literal is not worth quoting whole)."""
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def type_width_error(t: ast.TypeBits | ast.TypeVarbit, width: int) -> tuple[ast.Node, str] | None:
    """(where, message) when `t`, whose width evaluated to `width`, is wider
    than p4c supports; None when it is fine (as far as these limits go)."""
    if not _INT_MIN <= width <= _INT_MAX:
        return t.width, f"{shortened(expr_text(t.width))}: this implementation does not support bitstrings this large"
    if isinstance(t, ast.TypeBits) and width > MAX_WIDTH:
        return t, f"{shortened(type_text(t))}: Compiler only supports widths up to {MAX_WIDTH}"
    return None


def literal_width_error(literal: str, width_digits: str) -> str | None:
    """The message for a literal such as ``4096w1`` (width given by
    `width_digits`) wider than p4c supports; None when it is fine."""
    digits = width_digits.lstrip("0")
    if len(digits) <= len(str(MAX_WIDTH)) and int(digits or "0") <= MAX_WIDTH:
        return None
    return (f"{shortened(literal)}: width {shortened(width_digits)} too large "
            f"(the compiler supports widths up to {MAX_WIDTH})")
