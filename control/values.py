"""Values to and from P4Runtime's byte strings.

P4Runtime carries every field as a big-endian byte string in canonical
form (spec "Bytestrings": no leading zero bytes, zero is one zero byte);
BMv2/PI and p4scope's switch both accept it. What a person writes:

    3, 0x0a000001             int
    "10.0.0.1"                IPv4 address
    "00:00:0a:00:00:01"       MAC address
    "2001:db8::1"             IPv6 address
    "0x0a", "17"              numbers as text
    b"\\x0a\\x00\\x00\\x01"        bytes, big-endian

`encode(value, bitwidth)` checks the value fits the field and returns the
canonical bytes (the switch's codec.from_uint: one definition of the
canonical form); `decode(data)` returns the int.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Union

from ..switch.p4runtime.codec import from_uint

Value = Union[int, str, bytes, bytearray]

_MAC = re.compile(r"^[0-9a-fA-F]{1,2}([:-][0-9a-fA-F]{1,2}){5}$")


class BadValue(ValueError):
    """A value that cannot be a field of the given width."""


def to_int(value: Value, bitwidth: int = 0, what: str = "value") -> int:
    """The integer a value stands for (checked against `bitwidth` if > 0)."""
    if isinstance(value, bool):
        n = int(value)
    elif isinstance(value, int):
        n = value
    elif isinstance(value, (bytes, bytearray)):
        n = int.from_bytes(value, "big")
    elif isinstance(value, str):
        n = _parse_text(value.strip(), what)
    else:
        raise BadValue(f"{what}: {value!r} is not a number, address or bytes")
    if n < 0:
        raise BadValue(f"{what}: {value!r} is negative")
    if bitwidth and n >> bitwidth:
        raise BadValue(f"{what}: {value!r} does not fit in {bitwidth} bits "
                          f"(at most {(1 << bitwidth) - 1:#x})")
    return n


def _parse_text(s: str, what: str) -> int:
    if _MAC.match(s):
        return int("".join(p.rjust(2, "0") for p in re.split("[:-]", s)), 16)
    try:
        return int(ipaddress.ip_address(s))
    except ValueError:
        pass
    try:
        return int(s, 0)
    except ValueError:
        raise BadValue(f"{what}: '{s}' is not a number, MAC, IPv4 or IPv6 address") from None


def encode(value: Value, bitwidth: int, what: str = "value") -> bytes:
    """Canonical P4Runtime bytes of `value` for a field of `bitwidth` bits."""
    return from_uint(to_int(value, bitwidth, what))


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


def mask_of(prefix_len: int, bitwidth: int) -> int:
    return ((1 << prefix_len) - 1) << (bitwidth - prefix_len) if prefix_len else 0


def mac_text(n: int) -> str:
    return ":".join(f"{b:02x}" for b in n.to_bytes(6, "big"))


def ipv4_text(n: int) -> str:
    return str(ipaddress.IPv4Address(n))
