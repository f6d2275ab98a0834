"""Reading and writing P4Info files in p4c's three formats.

* text (``.txtpb``, ``.txt``): p4c's layout exactly, i.e. the lines
  ``# proto-file: p4/config/v1/p4info.proto`` and
  ``# proto-message: p4.config.v1.P4Info``, a blank line, then protobuf text
  format with non-ASCII bytes escaped in octal, as C++ TextFormat prints it.
  Golden files of p4c's test suite come out byte for byte.
* binary (``.bin``): the serialized message.
* JSON (``.json``): protobuf's JSON mapping (camelCase names, as p4c's
  MessageToJsonString with whitespace), indented by one space.

The format is `fmt` when given (p4c's ``--p4runtime-format`` values
``text``, ``binary``, ``json``), otherwise it follows the file extension the
way p4c's ``--p4runtime-files`` does.  Files are written atomically: a
reader never sees half a P4Info.
"""

from __future__ import annotations

import os
from pathlib import Path

from finsy.proto import p4i
from google.protobuf import json_format, text_format

P4Info = p4i.P4Info

TEXT, BINARY, JSON = "text", "binary", "json"
FORMATS = (TEXT, BINARY, JSON)
_FORMAT_ALIASES = {
    "text": TEXT, "txt": TEXT, "txtpb": TEXT, "text_protobuf": TEXT,
    "binary": BINARY, "bin": BINARY,
    "json": JSON,
}
_EXTENSIONS = {".txtpb": TEXT, ".txt": TEXT, ".bin": BINARY, ".json": JSON}


class P4InfoFormatError(ValueError):
    """Unknown format name or file extension."""


def format_for(path: str | os.PathLike, fmt: str | None = None) -> str:
    """"text", "binary" or "json" for writing `path`, given an optional
    explicit format."""
    if fmt:
        try:
            return _FORMAT_ALIASES[fmt.lower()]
        except KeyError:
            raise P4InfoFormatError(
                f"unknown P4Runtime format '{fmt}'; use text, binary or json") from None
    suffix = Path(path).suffix.lower()
    try:
        return _EXTENSIONS[suffix]
    except KeyError:
        raise P4InfoFormatError(
            f"{path}: unknown file kind; known suffixes are .bin, .txt, .json, and .txtpb"
        ) from None


def text_header(msg) -> str:
    """The two comment lines and blank line p4c puts before text format."""
    d = msg.DESCRIPTOR
    return f"# proto-file: {d.file.name}\n# proto-message: {d.full_name}\n\n"


def to_text(msg) -> str:
    return text_header(msg) + text_format.MessageToString(msg, as_utf8=False)


def to_json(msg) -> str:
    return json_format.MessageToJson(msg, indent=1) + "\n"


def encode(msg, fmt: str) -> bytes:
    """The bytes of `msg` in one of the three formats."""
    fmt = format_for("", fmt)
    if fmt == BINARY:
        return msg.SerializeToString()
    if fmt == JSON:
        return to_json(msg).encode("utf-8")
    return to_text(msg).encode("utf-8")


def write_p4info(msg, path: str | os.PathLike, fmt: str | None = None) -> None:
    """Write `msg` to `path` atomically in the chosen (or implied) format."""
    data = encode(msg, format_for(path, fmt))
    write_bytes_atomic(Path(path), data)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` whole or not at all (p4scope.fileio)."""
    from ..fileio import write_atomic

    write_atomic(path, data)


def read_p4info(path: str | os.PathLike, fmt: str | None = None) -> "p4i.P4Info":
    """Read a P4Info file; the format is `fmt`, else the extension, else it
    is guessed from the content (binary unless it parses as JSON or text)."""
    data = Path(path).read_bytes()
    try:
        kind = format_for(path, fmt)
    except P4InfoFormatError:
        if fmt:
            raise
        kind = _guess(data)
    return decode(data, kind)


def decode(data: bytes, fmt: str) -> "p4i.P4Info":
    msg = P4Info()
    fmt = format_for("", fmt)
    if fmt == BINARY:
        msg.ParseFromString(data)
    elif fmt == JSON:
        json_format.Parse(data.decode("utf-8"), msg)
    else:
        text_format.Parse(data.decode("utf-8"), msg)
    return msg


def _guess(data: bytes) -> str:
    head = data.lstrip()[:1]
    if head == b"{":
        return JSON
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return BINARY
    if text.lstrip().startswith("#") or all(c.isprintable() or c.isspace() for c in text[:200]):
        return TEXT
    return BINARY
