"""The controller's view of a P4Info: every object found by name.

    schema = Schema("build/dut.p4info.txtpb")
    t = schema.table("smac")                 # DutIngress.smac
    f = t.field("src_addr")                  # hdr.ethernet.src_addr
    a = t.action("smac_hit")                 # DutIngress.smac_hit
    schema.counter("drop_counter").size      # 8192

The index itself is p4scope.switch.p4runtime.schema's `P4Schema`, the one the
P4Runtime server uses (see there why it lives in the lower layer); this
module adds what only a controller needs: P4Info files to read, and no
refusals (`strict=False`). Ids always come from the P4Info (p4c's scheme or
anything else); nothing in the controller hard-codes one. Unknown names
raise `UnknownName` with suggestions (p4scope.switch.p4runtime.names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Union

from finsy.proto import p4i
from google.protobuf import json_format, text_format

from ..switch.p4runtime.names import NameIndex, UnknownName
from ..switch.p4runtime.schema import (ActionInfo, ActionProfileInfo, CounterInfo, DigestInfo,
                                       MatchFieldInfo, MeterInfo, P4Schema, PacketMetadataInfo,
                                       ParamInfo, RegisterInfo, TableInfo)

__all__ = [
    "ActionInfo", "ActionProfileInfo", "CounterInfo", "DigestInfo", "MatchFieldInfo",
    "MeterInfo", "NameIndex", "P4InfoSource", "PacketMetadataInfo", "ParamInfo",
    "RegisterInfo", "Schema", "TableInfo", "UnknownName", "load_p4info",
]

P4InfoSource = Union[str, Path, bytes, "p4i.P4Info"]


def load_p4info(src: P4InfoSource) -> p4i.P4Info:
    """A P4Info message from a message, a file (.txt/.txtpb/.pb.txt text,
    .json JSON, anything else binary) or the bytes of a binary one."""
    if isinstance(src, p4i.P4Info):
        return src
    msg = p4i.P4Info()
    if isinstance(src, bytes):
        msg.ParseFromString(src)
        return msg
    path = Path(src)
    data = path.read_bytes()
    suffix = path.name.split(".", 1)[-1] if "." in path.name else ""
    if suffix.endswith(("txt", "txtpb", "textproto", "pbtxt")):
        text_format.Parse(data.decode(), msg)
    elif suffix.endswith("json"):
        json_format.Parse(data.decode(), msg)
    else:
        msg.ParseFromString(data)
    return msg


class Schema(P4Schema):
    """Index of one P4Info (a message, a file or a binary's bytes)."""

    def __init__(self, p4info: P4InfoSource, *, strict: bool = False):
        super().__init__(load_p4info(p4info), strict=strict)
