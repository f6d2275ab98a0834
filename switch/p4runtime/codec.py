"""P4Runtime binary strings (spec section "Bytestrings").

A server accepts any length as long as the value fits the P4Info bit width
(leading zero bytes allowed; the empty string never) and answers with the
canonical form: the shortest string, b"\\x00" for zero.
"""

from __future__ import annotations

from .errors import P4RuntimeError, invalid, out_of_range, unimplemented


def to_uint(data: bytes, width: int, where: str) -> int:
    """The unsigned value of `data`; OUT_OF_RANGE if empty or wider than `width`."""
    if not data:
        raise out_of_range(f"{where}: empty bytestring (a value needs at least one byte)")
    v = int.from_bytes(data, "big")
    if v >> width:
        raise out_of_range(
            f"{where}: value 0x{v:x} does not fit in {width} bit{'s' if width != 1 else ''}")
    return v


def to_sint(data: bytes, width: int, where: str) -> int:
    """The two's complement value of `data` as an int<width> (sign-extended)."""
    if not data:
        raise out_of_range(f"{where}: empty bytestring (a value needs at least one byte)")
    v = int.from_bytes(data, "big", signed=True)
    if not -(1 << (width - 1)) <= v < (1 << (width - 1)):
        raise out_of_range(f"{where}: value {v} does not fit in int<{width}>")
    return v


def from_uint(v: int) -> bytes:
    """Canonical (shortest) bytestring of a non-negative value."""
    if v == 0:
        return b"\x00"
    return v.to_bytes((v.bit_length() + 7) // 8, "big")


def from_sint(v: int) -> bytes:
    """Canonical bytestring of a signed value (shortest two's complement)."""
    n = (v.bit_length() + 8) // 8 if v >= 0 else ((~v).bit_length() + 8) // 8
    return v.to_bytes(max(n, 1), "big", signed=True)


def fixed(v: int, width: int) -> bytes:
    """`v` as exactly ceil(width/8) big-endian bytes (the engine's layout)."""
    return v.to_bytes((width + 7) // 8, "big")


def to_port(data: bytes, where: str) -> int:
    """A port number from a PRE replica or watch port bytestring (as PI)."""
    if not data:
        raise invalid(f"{where}: port must not be the empty string")
    if len(data) > 4:
        raise unimplemented(f"{where}: ports of {len(data)} bytes are not supported (at most 4)")
    return int.from_bytes(data, "big")


def from_u128(msg) -> int:
    """A p4.v1.Uint128 as a Python int."""
    return (msg.high << 64) | msg.low


def to_u128(v: int, msg) -> None:
    msg.high = v >> 64
    msg.low = v & ((1 << 64) - 1)


__all__ = ["P4RuntimeError", "to_uint", "to_sint", "from_uint", "from_sint", "fixed",
           "to_port", "from_u128", "to_u128"]
