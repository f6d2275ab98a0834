"""Reads answered from serialized entries (entry_wire.py, Device.read).

Every kind of table entry of basic.p4 (exact with cookies and idle timeout,
lpm, ternary/range/optional with omitted fields, action profile members,
selector groups and one-shot action sets, const entries) encodes to the
message TableManager._entry_to_proto builds; a Read of many entities gives
what the per-entity read gives, in order, split into ReadResponses of at
most READ_CHUNK entities.
"""

from __future__ import annotations

from finsy.proto import p4r

from tests.switch.sw_client import update

INSERT = p4r.Update.INSERT
from tests.switch.sw_entities import action, table_entry
from p4scope.switch import device as device_mod
from p4scope.switch.p4runtime.tables import Entry


def _entities(s):
    mp = s.action_profiles.find("nh_profile").id
    sel = s.action_profiles.find("ecmp_selector").id
    out = [
        p4r.Entity(action_profile_member=p4r.ActionProfileMember(
            action_profile_id=mp, member_id=1, action=action(s, "forward", port=2))),
        p4r.Entity(action_profile_member=p4r.ActionProfileMember(
            action_profile_id=sel, member_id=7, action=action(s, "forward", port=3))),
        p4r.Entity(action_profile_group=p4r.ActionProfileGroup(
            action_profile_id=sel, group_id=9, members=[
                p4r.ActionProfileGroup.Member(member_id=7, weight=1)])),
    ]
    tes = [
        table_entry(s, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2},
                    metadata=b"cookie", controller_metadata=7, idle_timeout_ns=10**9),
        table_entry(s, "fwd", {"hdr.ethernet.dst": b"\x00\x00\x00\x00\x00\x06"}, "drop"),
        table_entry(s, "routes", {"hdr.probe.addr": ("lpm", 0x0A000000, 8)}, "forward",
                    {"port": 1}),
        table_entry(s, "acl", {"hdr.probe.flags": ("ternary", 1, 0xF),
                               "hdr.probe.kind": ("optional", 3)}, "drop", priority=10),
        table_entry(s, "acl", {"hdr.probe.level": ("range", 2, 9)}, "drop", priority=2**31 - 1),
        table_entry(s, "nexthop", {"hdr.probe.level": 4}),
        table_entry(s, "ecmp", {"hdr.probe.addr": 1}),
        table_entry(s, "ecmp", {"hdr.probe.addr": 2}),
    ]
    tes[5].action.action_profile_member_id = 1
    tes[6].action.action_profile_group_id = 9
    aset = tes[7].action.action_profile_action_set
    aset.action_profile_actions.add(action=action(s, "forward", port=5), weight=2)
    aset.action_profile_actions.add(action=action(s, "forward", port=6), weight=1)
    for i in range(40):
        tes.append(table_entry(s, "routes", {"hdr.probe.addr": ("lpm", (i + 1) << 8, 24)},
                               "forward", {"port": i % 4}))
    return out + [p4r.Entity(table_entry=te) for te in tes]


def _direct_entity(tables, st, e) -> p4r.Entity:
    ent = p4r.Entity()
    tables._entry_to_proto(st, e, ent.table_entry)
    return ent


def test_every_entry_encodes_as_the_message_reads_built(ctl, schema, switch):
    ctl.write(*[p4r.Update(type=INSERT, entity=ent) for ent in _entities(schema)])
    tables = switch.device.pipeline.tables
    seen = 0
    for st in tables.tables.values():
        for e in st.entries.values():
            for _ in range(2):  # the second time from the entry's kept wire_key
                got = p4r.ReadResponse.FromString(st.wire.record(e)).entities
                assert list(got) == [_direct_entity(tables, st, e)]
            seen += 1
    assert seen == 48
    # a const entry (from a JSON's `entries`) and large values
    st = tables.tables[schema.tables.find("acl").id]
    e = Entry(((0xFFFF, 0xFFFF), (0, 255), (0, 0)), 2**31 - 1, 77,
              action=(schema.actions.find("drop").id, ()), metadata=b"\x00" * 300,
              controller_metadata=2**64 - 1, idle_timeout_ns=2**62, is_const=True)
    assert list(p4r.ReadResponse.FromString(st.wire.record(e)).entities) == [
        _direct_entity(tables, st, e)]


def test_a_modified_entry_reads_back_its_new_action(ctl, schema):
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2},
                     metadata=b"a")
    ctl.write(update("insert", table_entry=te))
    read = p4r.Entity(table_entry=p4r.TableEntry(table_id=te.table_id))
    (got,) = ctl.read(read)
    assert got.table_entry.action.action.params[0].value == b"\x02"
    ctl.write(update("modify", table_entry=table_entry(
        schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 3}, controller_metadata=4)))
    (got,) = ctl.read(read)
    assert got.table_entry.action.action.params[0].value == b"\x03"
    assert got.table_entry.metadata == b"" and got.table_entry.controller_metadata == 4


def test_a_read_of_many_entities_is_the_per_entity_reads_in_chunks(ctl, schema, switch,
                                                                   monkeypatch):
    monkeypatch.setattr(device_mod, "READ_CHUNK", 7)
    ctl.write(*[p4r.Update(type=INSERT, entity=ent) for ent in _entities(schema)])
    fwd = schema.tables.find("fwd").id
    with_counters = p4r.TableEntry(table_id=fwd)
    with_counters.counter_data.SetInParent()
    asks = [
        p4r.Entity(table_entry=p4r.TableEntry()),  # every table
        p4r.Entity(counter_entry=p4r.CounterEntry(
            counter_id=schema.counters.find("port_packets").id)),
        p4r.Entity(table_entry=with_counters),
        p4r.Entity(table_entry=p4r.TableEntry(table_id=fwd, is_default_action=True)),
        p4r.Entity(action_profile_member=p4r.ActionProfileMember()),
    ]
    dev = switch.device
    want = p4r.ReadResponse()
    for i, ask in enumerate(asks):
        dev.pipeline.read_one(ask, want.entities, f"entities[{i}]")
    chunks = dev.read(p4r.ReadRequest(device_id=0, entities=asks))
    assert [len(c.entities) for c in chunks[:-1]] == [7] * (len(chunks) - 1)
    assert 0 < len(chunks[-1].entities) <= 7
    got = [e for c in chunks for e in c.entities]
    assert got == list(want.entities)
    assert sum(e.WhichOneof("entity") == "counter_entry" for e in got) == 8
    assert sum(e.table_entry.HasField("counter_data") for e in got) == 2
    # over gRPC: the same entities
    assert ctl.read(*asks) == got
    # nothing selected: one empty response, as before
    empty = p4r.TableEntry(table_id=schema.tables.find("fixed_default").id)
    assert [len(c.entities) for c in dev.read(p4r.ReadRequest(
        device_id=0, entities=[p4r.Entity(table_entry=empty)]))] == [0]
