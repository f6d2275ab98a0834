"""P4Schema's lookups by name, one per kind of P4 object (schema.table,
schema.action, ...): a full name, an alias or a unique dotted suffix finds
the object, so does its id; anything else raises UnknownName naming the kind
and the closest names. One mechanism (schema.ByName) serves every kind."""

from __future__ import annotations

import pytest

from p4scope.switch.p4runtime.names import UnknownName
from p4scope.switch.p4runtime.schema import ByName, P4Schema

# lookup method -> (the map it reads, a short name in basic.p4, its full name)
KINDS = {
    "table": ("tables", "fwd", "IngressImpl.fwd"),
    "action": ("actions", "forward", "IngressImpl.forward"),
    "action_profile": ("action_profiles", "nh_profile", "IngressImpl.nh_profile"),
    "counter": ("counters", "port_packets", "IngressImpl.port_packets"),
    "meter": ("meters", "rate_meter", "IngressImpl.rate_meter"),
    "register": ("registers", "scratch", "IngressImpl.scratch"),
    "digest": ("digests", "learn_t", "learn_t"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_is_found_by_name_suffix_and_id(schema, kind):
    attr, short, full = KINDS[kind]
    lookup = getattr(schema, kind)
    found = lookup(short)
    assert found is getattr(schema, attr).find(full)
    assert found.name == full
    assert lookup(full) is found and lookup(found.id) is found


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_unknown_name_names_the_kind_and_the_closest(schema, kind):
    attr, short, full = KINDS[kind]
    with pytest.raises(UnknownName) as e:
        getattr(schema, kind)(short + "x")
    assert e.value.kind == getattr(schema, attr).kind
    assert full in e.value.suggestions


def test_every_kind_goes_through_the_one_mechanism():
    assert {name for name, v in vars(P4Schema).items() if isinstance(v, ByName)} == set(KINDS)


def test_each_schema_looks_up_its_own_p4info(schema):
    other = P4Schema(schema.p4info)
    assert other.table("fwd") is not schema.table("fwd")
    assert other.table("fwd") is other.tables.find("fwd")
