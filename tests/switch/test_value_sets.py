"""Parser value sets (ValueSetEntry) and a packet they steer."""

from __future__ import annotations

import json

import grpc
import pytest
from finsy.proto import p4r

from tests.switch.sw_client import errors_of, update
from tests.switch.sw_entities import eth

from p4scope.compiler import compile_file

HERE = __import__("pathlib").Path(__file__).parent


@pytest.fixture
def vctl(client_factory):
    r = compile_file(HERE / "vset.p4")
    c = client_factory(1)
    c.set_pipeline(r.p4info, json.dumps(r.bmv2_json).encode())
    c.vs_id = r.p4info.value_sets[0].preamble.id
    return c


def vse(vs_id, *values):
    e = p4r.ValueSetEntry(value_set_id=vs_id)
    for v in values:
        e.members.add().match.add(field_id=1).exact.value = v.to_bytes(2, "big")
    return e


def test_value_set_steers_the_parser(vctl, switch):
    tagged = eth(1, ether_type=0x9000, payload=b"\x05" + b"\x00" * 45)
    switch.inject(2, tagged)
    assert [p for p, _ in switch.sent] == [1]  # not in the set: the tag is not parsed
    switch.sent.clear()
    vctl.write(update("modify", value_set_entry=vse(vctl.vs_id, 0x9000, 0x9100)))
    switch.inject(2, tagged)
    assert [p for p, _ in switch.sent] == [5]
    (r,) = vctl.read(p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=vctl.vs_id)))
    assert sorted(m.match[0].exact.value for m in r.value_set_entry.members) == [
        b"\x90\x00", b"\x91\x00"]


def test_value_set_errors(vctl):
    for utype in ("insert", "delete"):
        with pytest.raises(grpc.RpcError) as e:
            vctl.write(update(utype, value_set_entry=vse(vctl.vs_id, 1)))
        assert errors_of(e.value)[0].canonical_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    with pytest.raises(grpc.RpcError) as e:
        vctl.write(update("modify", value_set_entry=vse(vctl.vs_id, 1, 2, 3, 4, 5)))
    assert errors_of(e.value)[0].canonical_code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
