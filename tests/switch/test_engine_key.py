"""Keys handed to the engine are laid out in the device's field widths (the
BMv2 JSON's): the same bytes as before when the P4Info agrees, and for an
@p4runtime_translation field (SDN width in the P4Info) OUT_OF_RANGE for a
value the device's field cannot hold instead of a silently cut key."""

from __future__ import annotations

import pytest

from p4scope.switch.p4runtime.errors import P4RuntimeError
from p4scope.switch.p4runtime.match import engine_key
from p4scope.switch.p4runtime.schema import MatchFieldInfo

OUT_OF_RANGE = 11


def field(mt: str, bits: int = 64, translated: bool = True) -> MatchFieldInfo:
    return MatchFieldInfo(1, "hdr.f", bits, mt, translated)


def test_same_width_is_fixed_bytes():
    got = engine_key([field("exact", 48, False), field("ternary", 16, False)],
                     (5, (0x12, 0xFF)), (48, 16), "table_entry", "table 't'")
    assert got == [("exact", bytes(5) + b"\x05"), ("ternary", b"\x00\x12", b"\x00\xff")]


@pytest.mark.parametrize("mt, key, want", [
    ("exact", 5, ("exact", bytes(5) + b"\x05")),
    ("range", (0, 2**64 - 1), ("range", bytes(6), b"\xff" * 6)),      # don't care: the device's
    ("optional", (7, 2**64 - 1), ("ternary", bytes(5) + b"\x07", b"\xff" * 6)),
    ("lpm", (0x0A << 40, 8), ("lpm", b"\x0a" + bytes(5), 8)),
])
def test_translated_values_that_fit_the_device(mt, key, want):
    assert engine_key([field(mt)], (key,), (48,), "table_entry", "table 't'") == [want]


@pytest.mark.parametrize("mt, key, says", [
    ("exact", 1 << 56, "does not fit the device's 48-bit field"),
    ("ternary", (1, 1 << 50), "does not fit the device's 48-bit field"),
    ("range", (0, 1 << 48), "does not fit the device's 48-bit field"),
    ("lpm", (0, 56), "prefix length 56 is longer than the device's 48-bit field"),
])
def test_translated_values_past_the_device_field_are_out_of_range(mt, key, says):
    with pytest.raises(P4RuntimeError) as e:
        engine_key([field(mt)], (key,), (48,), "updates[0].entity.table_entry", "table 't'")
    assert e.value.code == OUT_OF_RANGE
    assert says in e.value.message and "updates[0].entity.table_entry.match" in e.value.message
