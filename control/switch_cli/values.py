"""Values typed at `p4scope switch-cli`, as simple_switch_CLI reads them.

A value of a 32-bit field may be an IPv4 address, of a 48-bit field a MAC
address, of a 128-bit field an IPv6 address; anything else is an integer
in Python syntax (10, 0x0a, 0b1010). The result is big-endian bytes of the
field's byte width; a value that needs more bytes is an error (as in
BMv2, bits beyond the width inside the last byte are the switch's to mask).
Match values: exact `v`, lpm `v/len`, ternary `v&&&mask`, range `lo->hi`,
valid `0|1`.
"""

from __future__ import annotations

import ipaddress


class InputError(Exception):
    """A bad command argument; the shell prints it (BMv2: "Error: ...")."""


class MatchKeyError(InputError):
    """Printed as "Invalid match key: ..."."""


class RuntimeDataError(InputError):
    """Printed as "Invalid runtime data: ..."."""


def _int_bytes(v: int, nbytes: int) -> bytes:
    if v < 0:
        raise InputError("Parameter is negative")
    if v >> (8 * nbytes):
        raise InputError("Parameter is too large")
    return v.to_bytes(nbytes, "big")


def parse_value(text: str, width: int) -> bytes:
    nbytes = (width + 7) // 8
    if width == 32 and "." in text:
        parts = text.split(".")
        try:
            if len(parts) != 4:
                raise ValueError
            return bytes(int(p) for p in parts)
        except ValueError:
            raise InputError("Invalid IPv4 address") from None
    if width == 48 and ":" in text:
        parts = text.split(":")
        try:
            if len(parts) != 6:
                raise ValueError
            return bytes(int(p, 16) for p in parts)
        except ValueError:
            raise InputError("Invalid MAC address") from None
    if width == 128 and ":" in text:
        try:
            return ipaddress.IPv6Address(text).packed
        except ValueError:
            raise InputError("Invalid IPv6 address") from None
    try:
        v = int(text, 0)
    except ValueError:
        raise InputError("Invalid input, could not cast to integer, try in hex with 0x "
                         "prefix") from None
    return _int_bytes(v, nbytes)


def parse_action_data(params: list[tuple[str, int]], words: list[str]) -> list[bytes]:
    out = []
    for w, (_, width) in zip(words, params):
        try:
            out.append(parse_value(w, width))
        except InputError as e:
            raise RuntimeDataError(f"Error while parsing {w} - {e}") from None
    return out


def parse_match_key(keys: list[tuple[str, str, int]], words: list[str]) -> list[tuple]:
    """Match parameters (thrift.tables.MatchParam on the switch) for a table's key fields."""
    out: list[tuple] = []

    def val(w: str, width: int) -> bytes:
        try:
            return parse_value(w, width)
        except InputError as e:
            raise MatchKeyError(f"Error while parsing {w} - {e}") from None

    for w, (_, kind, width) in zip(words, keys):
        if kind == "exact":
            out.append(("exact", val(w, width)))
        elif kind == "lpm":
            prefix, sep, plen = w.partition("/")
            if not sep:
                raise MatchKeyError(f"Invalid LPM value {w}, use '/' to separate prefix and "
                                    "length")
            try:
                n = int(plen)
            except ValueError:
                raise MatchKeyError(f"Invalid LPM value {w}, the prefix length is not an "
                                    "integer") from None
            out.append(("lpm", val(prefix, width), n))
        elif kind == "ternary":
            v, sep, m = w.partition("&&&")
            if not sep:
                raise MatchKeyError(f"Invalid ternary value {w}, use '&&&' to separate key and "
                                    "mask")
            out.append(("ternary", val(v, width), val(m, width)))
        elif kind == "range":
            lo, sep, hi = w.partition("->")
            if not sep:
                raise MatchKeyError(f"Invalid range value {w}, use '->' to separate range start "
                                    "and range end")
            a, b = val(lo, width), val(hi, width)
            if a > b:
                raise MatchKeyError(f"start is less than end in expression {w}")
            out.append(("range", a, b))
        elif kind == "valid":
            try:
                out.append(("valid", bool(int(w, 0))))
            except ValueError:
                raise MatchKeyError(f"Invalid valid value {w}, use 0 or 1") from None
        else:
            raise MatchKeyError(f"unsupported match kind '{kind}'")
    return out


def hexstr(b: bytes) -> str:
    return b.hex()


def byte_str(b: bytes) -> str:
    """BMv2's printable bytes: "0a:00:00:01"."""
    return ":".join(f"{c:02x}" for c in b)
