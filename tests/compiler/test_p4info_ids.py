"""P4Info id assignment follows p4c's scheme."""

from __future__ import annotations

import pytest
from finsy.proto import p4i

from p4scope.compiler.diagnostics import Diagnostics, Pos
from p4scope.compiler.p4info_ids import (
    IdAllocator,
    IdPrefix,
    control_plane_name,
    hashed_id,
    jenkins_one_at_a_time,
    shortest_unique_suffixes,
)

# Two table names whose hashes agree in the low 24 bits.
COLLIDING = ("ingress.t10718", "ingress.t8383")


def test_check_values_from_p4c():
    assert hashed_id(IdPrefix.TABLE, "ingress.test1") == 36962230
    assert hashed_id(IdPrefix.TABLE, "ingress.ex1") == 38325502
    assert hashed_id(IdPrefix.ACTION, "NoAction") == 21257015


def test_jenkins_hash_known_values():
    # Reference values of the one-at-a-time hash.
    assert jenkins_one_at_a_time(b"a") == 0xCA2E9442
    assert jenkins_one_at_a_time("The quick brown fox jumps over the lazy dog") == 0x519E91F5
    assert jenkins_one_at_a_time(b"") == 0


def test_prefixes_match_p4info_proto():
    for prefix in IdPrefix:
        assert p4i.P4Ids.Prefix.Value(prefix.name) == prefix.value


def test_allocator_uses_hash_and_prefix():
    ids = IdAllocator()
    ids.add(IdPrefix.TABLE, "ingress.test1")
    ids.add(IdPrefix.ACTION, "NoAction")
    ids.add(IdPrefix.REGISTER, "ingress.r")
    got = ids.assign()
    assert got[(IdPrefix.TABLE, "ingress.test1")] == 36962230
    assert got[(IdPrefix.ACTION, "NoAction")] == 21257015
    assert got[(IdPrefix.REGISTER, "ingress.r")] >> 24 == 0x16
    assert ids.get(IdPrefix.TABLE, "ingress.test1") == 36962230


def test_leading_dot_is_not_part_of_the_name():
    assert control_plane_name(".NoAction") == "NoAction"
    assert control_plane_name("..x") == ".x"
    ids = IdAllocator()
    ids.add(IdPrefix.ACTION, ".NoAction")
    assert ids.get(IdPrefix.ACTION, "NoAction") == 21257015
    assert ids.get(IdPrefix.ACTION, ".NoAction") == 21257015


def test_collision_resolved_in_sorted_name_order():
    a, b = COLLIDING
    h = hashed_id(IdPrefix.TABLE, a)
    assert hashed_id(IdPrefix.TABLE, b) == h
    assert sorted([a, b]) == [a, b]
    for order in ([a, b], [b, a]):
        ids = IdAllocator()
        for name in order:
            ids.add(IdPrefix.TABLE, name)
        got = ids.assign()
        assert got[(IdPrefix.TABLE, a)] == h
        assert got[(IdPrefix.TABLE, b)] == h + 1


def test_same_hash_in_different_kinds_does_not_collide():
    a, b = COLLIDING
    ids = IdAllocator()
    ids.add(IdPrefix.TABLE, a)
    ids.add(IdPrefix.ACTION, b)
    got = ids.assign()
    assert got[(IdPrefix.TABLE, a)] & 0xFFFFFF == got[(IdPrefix.ACTION, b)] & 0xFFFFFF


def test_explicit_id_wins_and_pushes_hashed_ids_along():
    a, b = COLLIDING
    h = hashed_id(IdPrefix.TABLE, a)
    ids = IdAllocator()
    ids.add(IdPrefix.TABLE, b)
    ids.add(IdPrefix.TABLE, a)
    ids.add(IdPrefix.TABLE, "ingress.pinned", explicit_id=h & 0xFFFFFF)  # prefix added
    got = ids.assign()
    assert got[(IdPrefix.TABLE, "ingress.pinned")] == h
    assert got[(IdPrefix.TABLE, a)] == h + 1
    assert got[(IdPrefix.TABLE, b)] == h + 2
    assert not ids.errors


def test_explicit_id_with_full_prefix_is_kept():
    ids = IdAllocator()
    ids.add(IdPrefix.ACTION, "ingress.a", explicit_id=0x01000005)
    ids.add(IdPrefix.ACTION, "ingress.b", explicit_id=7)
    got = ids.assign()
    assert got[(IdPrefix.ACTION, "ingress.a")] == 0x01000005
    assert got[(IdPrefix.ACTION, "ingress.b")] == 0x01000007


def test_explicit_id_errors():
    diags = Diagnostics()
    ids = IdAllocator(diags)
    pos = Pos("p.p4", 3, 5)
    ids.add(IdPrefix.TABLE, "c.wrong_prefix", explicit_id=0x01000001, pos=pos)
    ids.add(IdPrefix.TABLE, "c.t1", explicit_id=9)
    ids.add(IdPrefix.TABLE, "c.t2", explicit_id=0x02000009)
    ids.add(IdPrefix.TABLE, "c.negative", explicit_id=-1)
    ids.add(IdPrefix.TABLE, "c.huge", explicit_id=1 << 32)
    got = ids.assign()
    messages = [m for _, m in ids.errors]
    assert len(messages) == 4
    assert "wrong 8-bit prefix" in messages[0] and ids.errors[0][0] == pos
    assert messages[1] == "@id 33554441 is assigned to multiple declarations"
    assert "unsigned integer" in messages[2] and "unsigned integer" in messages[3]
    assert [d.message for d in diags.errors] == messages
    # losers of an @id conflict still get a (hashed) id
    assert got[(IdPrefix.TABLE, "c.t1")] == 0x02000009
    assert got[(IdPrefix.TABLE, "c.t2")] == hashed_id(IdPrefix.TABLE, "c.t2")


def test_duplicate_add_keeps_the_first():
    ids = IdAllocator()
    ids.add(IdPrefix.ACTION, "NoAction", explicit_id=0x01000001)
    ids.add(IdPrefix.ACTION, "NoAction")
    assert ids.assign() == {(IdPrefix.ACTION, "NoAction"): 0x01000001}


def test_add_after_assign_is_refused():
    ids = IdAllocator()
    ids.assign()
    with pytest.raises(RuntimeError):
        ids.add(IdPrefix.TABLE, "x")


def test_aliases_are_shortest_unique_suffixes_over_all_kinds():
    ids = IdAllocator()
    ids.add(IdPrefix.TABLE, "ingress.fwd.t")
    ids.add(IdPrefix.TABLE, "egress.t")
    ids.add(IdPrefix.ACTION, "ingress.drop")
    ids.add(IdPrefix.ACTION, "NoAction")
    ids.add(IdPrefix.COUNTER, "ingress.fwd")
    assert ids.alias("ingress.fwd.t") == "fwd.t"
    assert ids.alias("egress.t") == "egress.t"
    assert ids.alias("ingress.drop") == "drop"
    assert ids.alias("NoAction") == "NoAction"
    assert ids.alias("ingress.fwd") == "fwd"


def test_alias_of_a_name_that_is_a_suffix_of_another():
    assert shortest_unique_suffixes(["t", "c.t", "d.c.t"]) == {"t": "t", "c.t": "c.t", "d.c.t": "d.c.t"}
    assert shortest_unique_suffixes(["d.a.c", "e.b.c"]) == {"d.a.c": "a.c", "e.b.c": "b.c"}
