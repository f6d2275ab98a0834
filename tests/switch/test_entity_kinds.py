"""Write and Read dispatch through one table (pipeline.ENTITY_KINDS): every
entity kind of the P4Runtime spec reaches its manager or is refused with
UNIMPLEMENTED, and an Entity with no kind set is INVALID_ARGUMENT."""

from __future__ import annotations

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program

from p4scope.switch.p4runtime.errors import Code, P4RuntimeError
from p4scope.switch.p4runtime.pipeline import ENTITY_KINDS, UNSUPPORTED_KINDS, ForwardingPipeline

SPEC_KINDS = {f.name for f in p4r.Entity.DESCRIPTOR.oneofs_by_name["entity"].fields}


@pytest.fixture(scope="module")
def pipe():
    return ForwardingPipeline(program.p4info(), program.json_text())


def test_every_kind_of_the_spec_is_routed_or_refused():
    assert set(ENTITY_KINDS) | set(UNSUPPORTED_KINDS) == SPEC_KINDS
    assert not set(ENTITY_KINDS) & set(UNSUPPORTED_KINDS)


@pytest.mark.parametrize("kind", sorted(ENTITY_KINDS))
def test_each_kind_goes_to_a_method_of_its_manager(pipe, kind):
    route = ENTITY_KINDS[kind]
    manager = getattr(pipe, route.manager)
    assert getattr(type(manager), route.write.__name__) is route.write
    assert getattr(type(manager), route.read.__name__) is route.read


@pytest.mark.parametrize("kind", ["packet_replication_engine_entry", "digest_entry",
                                  "table_entry", "counter_entry", "register_entry"])
def test_wildcard_reads_reach_the_manager(pipe, kind):
    ent = p4r.Entity()
    getattr(ent, kind).SetInParent()  # every id 0: the wildcard
    out = p4r.ReadResponse().entities
    pipe.read_one(ent, out, "entities[0]")
    assert all(e.WhichOneof("entity") == kind for e in out)


def refusal(pipe, ent, where):
    """The P4RuntimeError of writing (where "updates[0]") or reading ent."""
    with pytest.raises(P4RuntimeError) as e:
        if where.startswith("updates"):
            pipe.write_one(p4r.Update.INSERT, ent, where)
        else:
            pipe.read_one(ent, p4r.ReadResponse().entities, where)
    return e.value


@pytest.mark.parametrize("where", ["updates[0]", "entities[0]"])
def test_entity_not_set_is_invalid_on_write_and_read(pipe, where):
    err = refusal(pipe, p4r.Entity(), where)
    assert err.code == Code.INVALID_ARGUMENT and err.message == f"{where}.entity: not set"


@pytest.mark.parametrize("where", ["updates[0]", "entities[0]"])
def test_extern_entries_are_unimplemented_on_write_and_read(pipe, where):
    err = refusal(pipe, p4r.Entity(extern_entry=p4r.ExternEntry(extern_id=1)), where)
    assert err.code == Code.UNIMPLEMENTED
    assert err.message.startswith(f"{where}.extern_entry: extern entries")
