"""Errors of BMv2's run-time API, independent of the Thrift layer.

The run-time modules raise `RtError(kind, code)` with BMv2's error code
name ("DUPLICATE_ENTRY"); thrift.handler turns it into the Thrift exception of
that kind (InvalidTableOperation, InvalidMcOperation, ...), which
simple_switch_CLI prints as "Invalid table operation (DUPLICATE_ENTRY)".
`detail` is p4scope's explanation, logged by the switch.
"""

from __future__ import annotations

KINDS = ("table", "counter", "meter", "register", "mc", "mirroring", "devmgr", "vset",
         "learn", "swap", "crc", "toeplitz", "idlookup")


class RtError(Exception):
    def __init__(self, kind: str, code: str, detail: str = ""):
        assert kind in KINDS, kind
        super().__init__(f"{kind}: {code}" + (f": {detail}" if detail else ""))
        self.kind = kind
        self.code = code
        self.detail = detail


def table_error(code: str, detail: str = "") -> RtError:
    return RtError("table", code, detail)
