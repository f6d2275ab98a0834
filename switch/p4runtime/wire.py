"""The protobuf wire format, for answers built without message objects.

Reads of large tables are answered from serialized pieces (entry_wire.py)
joined into ReadResponse messages: building one upb message per entry costs
more than the rest of the Read. Tags come from the message descriptors, so
a field's number is never spelled here. Only what those answers need:
varints, length-delimited fields, non-negative integer fields.
"""

from __future__ import annotations

from finsy.proto import p4r

_VARINT, _LEN = 0, 2


def varint(v: int) -> bytes:
    """A non-negative integer as a base-128 varint."""
    if v < 0x80:
        return bytes((v,))
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _tag(message, field: str, wire_type: int) -> bytes:
    return varint(message.DESCRIPTOR.fields_by_name[field].number << 3 | wire_type)


def len_tag(message, field: str) -> bytes:
    """The tag of a length-delimited field (bytes, string, message)."""
    return _tag(message, field, _LEN)


def int_tag(message, field: str) -> bytes:
    """The tag of a varint field (integers, bool, enum)."""
    return _tag(message, field, _VARINT)


def delimited(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    return tag + varint(len(payload)) + payload


def uint_field(tag: bytes, v: int) -> bytes:
    """A non-negative integer field (omitted by the caller when 0, as proto3 does)."""
    return tag + varint(v)


_ENTITIES = len_tag(p4r.ReadResponse, "entities")


def entity_record(entity: bytes) -> bytes:
    """A serialized Entity as one element of ReadResponse.entities; records
    joined end to end are a serialized ReadResponse."""
    return _ENTITIES + varint(len(entity)) + entity


def records_of(entities) -> list[bytes]:
    """Each Entity message of a repeated field as a record."""
    return [entity_record(e.SerializeToString()) for e in entities]
