"""Reading an STF file (p4c's tools/stf format) into statements.

Like p4c's STF lexer and parser (tools/stf, with bmv2stf.py's extra
commands), a line that is not a well-formed command is an error naming its
line: an unknown command, a missing or extra argument, a value that is not
a number, packet data that is not hex.  p4c fails such a test; so does
p4scope, with ``FILE:LINE: error: message``.  Commands are case-insensitive
and ``#`` starts a comment, as in p4c.

p4scope also takes a few spellings p4c does not: ``_`` in numbers, ``0o``
octal values, ``lo..hi`` range keys, decimal ternary keys (all bits
significant) and an `add` without keys.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Tuple


class StfError(Exception):
    """A malformed STF line or a command the program cannot satisfy; `line`
    is the STF line (None when the problem is not on one line)."""

    def __init__(self, message: str, line: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message

    def at(self, line: int) -> "StfError":
        """This error placed on `line` (kept if it already names one)."""
        return self if self.line is not None else StfError(self.message, line)


def read_stf(path: Path) -> str:
    """The text of an STF file; StfError when it cannot be read or is not
    UTF-8 (naming the line of the first bad byte)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise StfError(f"cannot read the file: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise StfError(f"not UTF-8 text (byte 0x{data[e.start]:02x})", line) from None


def number(text: str) -> int:
    """An STF number: decimal (leading zeros allowed), 0x, 0b or 0o, with
    optional `_` separators.  Raises ValueError for anything else."""
    s = text.replace("_", "")
    if re.fullmatch(r"[0-9]+", s):
        return int(s, 10)
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+", s):
        return int(s, 0)
    raise ValueError(text)


def is_number(text: str, wildcards: bool = False) -> bool:
    """True for an STF number; with `wildcards`, `*` digits may stand in a
    0x/0b/0o value (ternary and lpm keys: ``0x**01``)."""
    if wildcards and text[:2].lower() in ("0x", "0b", "0o"):
        text = text[:2] + text[2:].replace("*", "0")
    try:
        number(text)
    except ValueError:
        return False
    return True


def _is_key_value(text: str) -> bool:
    """`value`, `value/prefix-length` or `lo..hi`."""
    if ".." in text:
        lo, _, hi = text.partition("..")
        return is_number(lo) and is_number(hi)
    value, slash, length = text.partition("/")
    return is_number(value, wildcards=True) and (not slash or is_number(length))


def _is_rate(text: str) -> bool:
    """A meter rate ``rate:burst`` (rate in units per microsecond, may be a
    fraction; burst a number)."""
    rate, colon, burst = text.partition(":")
    return bool(colon) and re.fullmatch(r"[0-9]+(\.[0-9]+)?", rate) is not None and is_number(burst)


# Direct commands passed on to the switch as simple_switch_CLI takes them:
# the kind of each argument (N number, S name, R meter rate); a trailing
# `+` means one or more of the last kind.
_DIRECT = {
    "mirroring_add": "N N",
    "mirroring_add_mc": "N N",
    "mirroring_delete": "N",
    "mirroring_get": "N",
    "mc_mgrp_create": "N",
    "mc_node_create": "N N+",
    "mc_node_update": "N N+",
    "mc_node_associate": "N N",
    "counter_read": "S N",
    "counter_write": "S N N N",
    "register_read": "S N",
    "register_write": "S N N",
    "register_reset": "S",
    "meter_get_rates": "S N",
    "meter_set_rates": "S N R+",
    "meter_array_set_rates": "S R+",
}
_KIND_NAMES = {"N": "a number", "S": "a name", "R": "a meter rate RATE:BURST"}
_ARG_CHECKS = {"N": is_number, "S": lambda t: True, "R": _is_rate}
_CHECK_COUNTER = re.compile(
    r"\S+?\(\s*[^()\s]+\s*\)(\s+(packets|bytes)\s*(==|!=|<=|<|>=|>)\s*\S+)?", re.IGNORECASE)
_NAME = r"[A-Za-z_.$\[\]0-9]+"
_ACTION = re.compile(rf"^(?P<name>{_NAME})\s*\((?P<args>.*)\)\s*(=\s*\S+)?$")
_ACTION_START = re.compile(rf"({_NAME})\s*\(")


def _strip_comment(line: str) -> str:
    i = line.find("#")
    return (line[:i] if i >= 0 else line).strip()


def parse_stf(text: str) -> List[Tuple[int, str, list]]:
    """(line number, command, arguments) for each statement; raises
    StfError on the first malformed line.

    Arguments: add -> [table, priority or None, [(key, value)], action,
    [(param, value)]]; setdefault -> the same with no priority and keys;
    packet/expect -> [port, data]; other commands -> their words."""
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line:
            continue
        cmd, _, rest = line.partition(" ")
        cmd = cmd.lower()
        try:
            out.append((no, cmd, _arguments(cmd, rest.strip(), line)))
        except StfError as e:
            raise e.at(no) from None
    return out


def _arguments(cmd: str, rest: str, line: str) -> list:
    if cmd in ("packet", "expect"):
        return _packet_arguments(cmd, rest)
    if cmd in ("add", "setdefault"):
        return _table_arguments(cmd, rest, line)
    words = rest.split()
    if cmd in ("wait", "no_packet"):
        if words:
            raise StfError(f"'{cmd}' takes no arguments")
    elif cmd == "remove":
        if [w.lower() for w in words] != ["all"]:
            raise StfError("'remove' takes one argument, 'all'")
    elif cmd == "check_counter":
        if not _CHECK_COUNTER.fullmatch(rest):
            raise StfError("expected 'check_counter COUNTER(INDEX) [packets|bytes OP VALUE]'")
    elif cmd in _DIRECT:
        _check_direct(cmd, words)
    else:
        raise StfError(f"unknown command '{cmd}'")
    return words


def _packet_arguments(cmd: str, rest: str) -> list:
    parts = rest.split(None, 1)
    if not parts:
        raise StfError(f"'{cmd}' needs a port")
    if not re.fullmatch(r"[0-9]+", parts[0]):
        raise StfError(f"'{cmd}': the port must be a decimal number, not '{parts[0]}'")
    data = "".join(parts[1].split()) if len(parts) > 1 else ""
    if cmd == "packet":
        if not data:
            raise StfError("'packet' needs the packet's bytes in hex")
        if not re.fullmatch(r"[0-9a-fA-F]*", data):
            raise StfError(f"packet data must be hex digits: '{_first_bad(data, '')}' is not")
        if len(data) % 2:
            raise StfError("packet data must be whole bytes (an even number of hex digits)")
    elif not re.fullmatch(r"[0-9a-fA-F*]*\$?", data):
        raise StfError(f"expected data must be hex digits or '*', optionally ending in '$': "
                       f"'{_first_bad(data, '*$')}' is not")
    return [parts[0], data]


def _first_bad(data: str, allowed: str) -> str:
    return next(c for i, c in enumerate(data)
                if not (c in "0123456789abcdefABCDEF" or c in allowed)
                or (c == "$" and i != len(data) - 1))


def _table_arguments(cmd: str, rest: str, line: str) -> list:
    m = _ACTION_START.search(rest)
    if not m:
        raise StfError(f"no action call in '{line}'")
    head = rest[: m.start()].split()
    am = _ACTION.match(rest[m.start():].strip())
    if not am:
        raise StfError(f"bad action call in '{line}'")
    args = []
    for a in filter(None, (x.strip() for x in am.group("args").split(","))):
        k, sep, v = a.partition(":")
        k, v = k.strip(), v.strip()
        if not sep or not k:
            raise StfError(f"bad action argument '{a}' (expected NAME:VALUE)")
        if not is_number(v):
            raise StfError(f"action argument {k}: '{v}' is not a number")
        args.append((k, v))
    if not head:
        raise StfError(f"'{cmd}' needs a table")
    table, rest_head = head[0], head[1:]
    prio = None
    if cmd == "add" and rest_head and re.fullmatch(r"\d+", rest_head[0]):
        prio = int(rest_head[0])
        rest_head = rest_head[1:]
    if cmd == "setdefault" and rest_head:
        raise StfError(f"'setdefault' takes a table and an action call, not '{rest_head[0]}'")
    keys = []
    for kv in rest_head:
        k, sep, v = kv.rpartition(":")
        if not sep or not k:
            raise StfError(f"bad key '{kv}' (expected FIELD:VALUE)")
        if not _is_key_value(v):
            raise StfError(f"key {k}: '{v}' is not a number")
        keys.append((k, v))
    return [table, prio, keys, am.group("name"), args]


def _check_direct(cmd: str, words: List[str]) -> None:
    kinds = _DIRECT[cmd].split()
    repeat = kinds[-1].endswith("+")
    kinds = [k.rstrip("+") for k in kinds]
    if len(words) < len(kinds) or (not repeat and len(words) > len(kinds)):
        raise StfError(f"'{cmd}' takes {len(kinds)}{' or more' if repeat else ''} "
                       f"argument{'s' if len(kinds) > 1 or repeat else ''}, got {len(words)}")
    for i, w in enumerate(words):
        kind = kinds[min(i, len(kinds) - 1)]
        if not _ARG_CHECKS[kind](w):
            raise StfError(f"'{cmd}' argument {i + 1}: '{w}' is not {_KIND_NAMES[kind]}")
