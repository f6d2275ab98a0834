"""P4Runtime errors: one exception type carrying a google.rpc code.

Handlers raise `P4RuntimeError(code, message)`; the server turns it into a
gRPC status (or into one `p4.v1.Error` of a batch). Messages name the
offending field, e.g. "table_entry.match[1].lpm.prefix_len: 33 > 32 bits".
"""

from __future__ import annotations

from finsy.proto import rpc_code

Code = rpc_code.Code


class P4RuntimeError(Exception):
    """A request failed with a canonical google.rpc code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = int(code)
        self.message = message

    def __repr__(self) -> str:
        return f"P4RuntimeError({Code.Name(self.code)}, {self.message!r})"


def invalid(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.INVALID_ARGUMENT, msg)


def not_found(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.NOT_FOUND, msg)


def exists(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.ALREADY_EXISTS, msg)


def denied(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.PERMISSION_DENIED, msg)


def precondition(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.FAILED_PRECONDITION, msg)


def out_of_range(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.OUT_OF_RANGE, msg)


def exhausted(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.RESOURCE_EXHAUSTED, msg)


def unimplemented(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.UNIMPLEMENTED, msg)


def internal(msg: str) -> P4RuntimeError:
    return P4RuntimeError(Code.INTERNAL, msg)
