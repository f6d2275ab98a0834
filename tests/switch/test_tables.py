"""Table entries: every match kind written, read, modified, deleted, and
checked against packets; default entries; action profiles."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4r

from tests.switch.sw_client import update
from tests.switch.sw_entities import action, eth, probe, table_entry


def read_table(c, schema, name, **kw):
    te = p4r.TableEntry(table_id=schema.tables.find(name).id, **kw)
    return [e.table_entry for e in c.read(p4r.Entity(table_entry=te))]


def ports(switch):
    out = [p for p, _ in switch.sent]
    switch.sent.clear()
    return out


def test_exact_insert_read_modify_delete(ctl, schema, switch):
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": b"\x00\x00\x00\x00\x00\x05"},
                     "forward", {"port": 2}, metadata=b"cookie", controller_metadata=7)
    ctl.write(update("insert", table_entry=te))
    (got,) = read_table(ctl, schema, "fwd")
    assert got.match[0].exact.value == b"\x05"  # canonical form
    assert got.action.action.params[0].value == b"\x02"
    assert got.metadata == b"cookie" and got.controller_metadata == 7
    switch.inject(1, eth(5))
    assert ports(switch) == [2]
    ctl.write(update("modify", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                       "forward", {"port": 4})))
    switch.inject(1, eth(5))
    assert ports(switch) == [4]
    (got,) = read_table(ctl, schema, "fwd")
    assert got.action.action.params[0].value == b"\x04" and got.metadata == b""
    ctl.write(update("delete", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5})))
    assert read_table(ctl, schema, "fwd") == []
    switch.inject(1, eth(5))
    assert ports(switch) == [0]  # default NoAction: egress_spec stays 0


def test_lpm_longest_prefix_wins(ctl, schema, switch):
    ctl.write(update("insert", table_entry=table_entry(
        schema, "routes", {"hdr.probe.addr": ("lpm", 0x0A000000, 8)}, "forward", {"port": 1})),
        update("insert", table_entry=table_entry(
            schema, "routes", {"hdr.probe.addr": ("lpm", 0x0A010000, 16)}, "forward", {"port": 2})))
    switch.inject(9, probe(1, 0x0A010203))
    switch.inject(9, probe(1, 0x0A020203))
    assert ports(switch) == [2, 1]
    got = read_table(ctl, schema, "routes")
    assert sorted((e.match[0].lpm.value, e.match[0].lpm.prefix_len) for e in got) == [
        (b"\x0a\x00\x00\x00", 8), (b"\x0a\x01\x00\x00", 16)]
    # a "don't care" (omitted) lpm field is an entry too
    ctl.write(update("insert", table_entry=table_entry(schema, "routes", {}, "forward",
                                                       {"port": 3})))
    switch.inject(9, probe(1, 0x0B000000))
    assert ports(switch) == [3]
    assert len(read_table(ctl, schema, "routes")) == 3


def test_ternary_range_optional_priorities(ctl, schema, switch):
    ctl.write(update("insert", table_entry=table_entry(schema, "routes", {}, "forward",
                                                       {"port": 6})))
    # the higher P4Runtime priority wins (PI inverts it for BMv2)
    ctl.write(
        update("insert", table_entry=table_entry(
            schema, "acl", {"hdr.probe.flags": ("ternary", 0x01, 0xFF)}, "NoAction",
            priority=10)),
        update("insert", table_entry=table_entry(
            schema, "acl", {"hdr.probe.kind": ("optional", 0)}, "drop", priority=5)),
        update("insert", table_entry=table_entry(
            schema, "acl", {"hdr.probe.level": ("range", 10, 20)}, "drop", priority=20)))
    switch.inject(9, probe(1, 0, flags=1, kind=0))   # first two match: NoAction wins
    switch.inject(9, probe(1, 0, flags=2, kind=0))   # only the optional one: drop
    switch.inject(9, probe(1, 0, flags=1, level=15))  # the range (priority 20): drop
    switch.inject(9, probe(1, 0, flags=2, kind=3))   # nothing: forwarded
    assert ports(switch) == [6, 6]
    got = {e.priority: e for e in read_table(ctl, schema, "acl")}
    assert set(got) == {5, 10, 20}
    assert got[20].match[0].range.low == b"\x0a" and got[20].match[0].range.high == b"\x14"
    assert got[5].match[0].optional.value == b"\x00"
    # read with a priority filter
    assert [e.priority for e in read_table(ctl, schema, "acl", priority=10)] == [10]
    # same key, other priority: another entry; same key and priority: exists
    ctl.write(update("insert", table_entry=table_entry(
        schema, "acl", {"hdr.probe.flags": ("ternary", 0x01, 0xFF)}, "drop", priority=11)))
    with pytest.raises(grpc.RpcError):
        ctl.write(update("insert", table_entry=table_entry(
            schema, "acl", {"hdr.probe.flags": ("ternary", 0x01, 0xFF)}, "drop", priority=11)))
    ctl.write(update("delete", table_entry=table_entry(
        schema, "acl", {"hdr.probe.flags": ("ternary", 0x01, 0xFF)}, priority=10)))
    assert sorted(e.priority for e in read_table(ctl, schema, "acl")) == [5, 11, 20]


def test_read_one_entry_and_filters(ctl, schema):
    for i in range(5):
        ctl.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": i + 1}, "forward" if i % 2 else "drop",
            {"port": i} if i % 2 else None, metadata=b"m" if i == 3 else b"")))
    one = read_table(ctl, schema, "fwd", match=[table_entry(
        schema, "fwd", {"hdr.ethernet.dst": 3}).match[0]])
    assert len(one) == 1 and one[0].match[0].exact.value == b"\x03"
    drops = read_table(ctl, schema, "fwd", action=p4r.TableAction(
        action=action(schema, "drop")))
    assert len(drops) == 3
    assert len(read_table(ctl, schema, "fwd", metadata=b"m")) == 1
    # all tables at once
    assert len(ctl.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 5
    # missing entry: nothing
    assert read_table(ctl, schema, "fwd", match=[table_entry(
        schema, "fwd", {"hdr.ethernet.dst": 99}).match[0]]) == []


def test_default_entry(ctl, schema, switch):
    (d,) = read_table(ctl, schema, "fwd", is_default_action=True)
    assert d.is_default_action and d.action.action.action_id == schema.actions.find("NoAction").id
    te = table_entry(schema, "fwd", None, "forward", {"port": 7}, is_default_action=True)
    ctl.write(update("modify", table_entry=te))
    switch.inject(1, eth(99))
    assert ports(switch) == [7]
    (d,) = read_table(ctl, schema, "fwd", is_default_action=True)
    assert d.action.action.params[0].value == b"\x07"
    # reset: MODIFY without action
    ctl.write(update("modify", table_entry=p4r.TableEntry(
        table_id=schema.tables.find("fwd").id, is_default_action=True)))
    switch.inject(1, eth(99))
    assert ports(switch) == [0]
    (d,) = read_table(ctl, schema, "fwd", is_default_action=True)
    assert d.action.action.action_id == schema.actions.find("NoAction").id
    # default entries are not in wildcard reads
    assert read_table(ctl, schema, "fwd") == []


def test_const_default_action_is_permission_denied(ctl, schema):
    te = table_entry(schema, "fixed_default", None, "drop", is_default_action=True)
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(update("modify", table_entry=te))
    assert e.value.code() == grpc.StatusCode.UNKNOWN
    from tests.switch.sw_client import errors_of
    (err,) = errors_of(e.value)
    assert err.canonical_code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    (d,) = read_table(ctl, schema, "fixed_default", is_default_action=True)
    assert d.is_const


def test_direct_counter_on_entry(ctl, schema, switch):
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2})
    te.counter_data.byte_count = 1000
    te.counter_data.packet_count = 10
    ctl.write(update("insert", table_entry=te))
    switch.inject(1, eth(5))
    switch.inject(1, eth(5))
    req = p4r.TableEntry(table_id=schema.tables.find("fwd").id)
    req.counter_data.SetInParent()
    (got,) = [e.table_entry for e in ctl.read(p4r.Entity(table_entry=req))]
    assert got.counter_data.packet_count == 12 and got.counter_data.byte_count == 1000 + 2 * 60
    # DirectCounterEntry read and write
    dce = p4r.DirectCounterEntry(table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}))
    (r,) = ctl.read(p4r.Entity(direct_counter_entry=dce))
    assert r.direct_counter_entry.data.packet_count == 12
    dce.data.packet_count = 0
    dce.data.byte_count = 0
    ctl.write(update("modify", direct_counter_entry=dce))
    switch.inject(1, eth(5))
    (r,) = ctl.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=schema.tables.find("fwd").id))))
    assert r.direct_counter_entry.data.packet_count == 1
    assert r.direct_counter_entry.data.byte_count == 60


def test_idle_timeout_fields(ctl, schema, switch):
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2},
                     idle_timeout_ns=10**10)
    ctl.write(update("insert", table_entry=te))
    req = p4r.TableEntry(table_id=schema.tables.find("fwd").id)
    req.time_since_last_hit.SetInParent()
    (got,) = [e.table_entry for e in ctl.read(p4r.Entity(table_entry=req))]
    assert got.idle_timeout_ns == 10**10 and got.HasField("time_since_last_hit")
    # tables without idle timeout refuse a TTL
    with pytest.raises(grpc.RpcError):
        ctl.write(update("insert", table_entry=table_entry(
            schema, "routes", {"hdr.probe.addr": ("lpm", 1, 32)}, "NoAction", idle_timeout_ns=5)))


def test_idle_timeout_notification(ctl, schema, switch):
    switch.device.pipeline.idle.interval_ns = 10_000_000
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2},
                     idle_timeout_ns=50_000_000, metadata=b"x")
    ctl.write(update("insert", table_entry=te))
    msg = ctl.expect("idle_timeout_notification", timeout=3)
    (n,) = msg.idle_timeout_notification.table_entry
    assert n.match[0].exact.value == b"\x05" and n.metadata == b"x"
    assert n.idle_timeout_ns == 50_000_000 and msg.idle_timeout_notification.timestamp > 0


def test_action_profile_members(ctl, schema, switch):
    ap = schema.action_profiles.find("nh_profile").id
    mem = p4r.ActionProfileMember(action_profile_id=ap, member_id=1,
                                  action=action(schema, "forward", port=4))
    ctl.write(update("insert", action_profile_member=mem))
    te = table_entry(schema, "nexthop", {"hdr.probe.level": 3})
    te.action.action_profile_member_id = 1
    ctl.write(update("insert", table_entry=te))
    switch.inject(9, probe(1, 0, level=3))
    assert ports(switch) == [4]
    # modifying the member changes the entries that use it
    mem.action.params[0].value = b"\x05"
    ctl.write(update("modify", action_profile_member=mem))
    switch.inject(9, probe(1, 0, level=3))
    assert ports(switch) == [5]
    (r,) = ctl.read(p4r.Entity(action_profile_member=p4r.ActionProfileMember()))
    assert r.action_profile_member.action.params[0].value == b"\x05"
    (t,) = read_table(ctl, schema, "nexthop")
    assert t.action.action_profile_member_id == 1
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(update("delete", action_profile_member=p4r.ActionProfileMember(
            action_profile_id=ap, member_id=1)))
    from tests.switch.sw_client import errors_of
    assert errors_of(e.value)[0].canonical_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    ctl.write(update("delete", table_entry=te))
    ctl.write(update("delete", action_profile_member=p4r.ActionProfileMember(
        action_profile_id=ap, member_id=1)))


def test_action_selector_groups(ctl, schema, switch):
    ap = schema.action_profiles.find("ecmp_selector").id
    for mid, port in ((1, 6), (2, 7)):
        ctl.write(update("insert", action_profile_member=p4r.ActionProfileMember(
            action_profile_id=ap, member_id=mid, action=action(schema, "forward", port=port))))
    grp = p4r.ActionProfileGroup(action_profile_id=ap, group_id=10)
    grp.members.add(member_id=1, weight=1)
    grp.members.add(member_id=2, weight=2)
    ctl.write(update("insert", action_profile_group=grp))
    (g,) = ctl.read(p4r.Entity(action_profile_group=p4r.ActionProfileGroup()))
    assert [(m.member_id, m.weight) for m in g.action_profile_group.members] == [(1, 1), (2, 2)]
    te = table_entry(schema, "ecmp", {"hdr.probe.addr": 0x0A000001})
    te.action.action_profile_group_id = 10
    ctl.write(update("insert", table_entry=te))
    switch.inject(9, probe(1, 0x0A000001, kind=4))
    assert ports(switch)[0] in (6, 7)
    (g,) = ctl.read(p4r.Entity(action_profile_group=p4r.ActionProfileGroup()))
    assert [(m.member_id, m.weight) for m in g.action_profile_group.members] == [(1, 1), (2, 2)]
    # one-shot: an action set instead of a group
    te2 = table_entry(schema, "ecmp", {"hdr.probe.addr": 0x0A000002})
    aset = te2.action.action_profile_action_set
    a = aset.action_profile_actions.add(weight=1)
    a.action.CopyFrom(action(schema, "forward", port=8))
    ctl.write(update("insert", table_entry=te2))
    switch.inject(9, probe(1, 0x0A000002))
    assert ports(switch) == [8]
    got = {e.match[0].exact.value: e for e in read_table(ctl, schema, "ecmp")}
    assert got[b"\x0a\x00\x00\x02"].action.WhichOneof("type") == "action_profile_action_set"
    # a group in use cannot go; an unknown member cannot join
    bad = p4r.ActionProfileGroup(action_profile_id=ap, group_id=10)
    bad.members.add(member_id=3, weight=1)
    with pytest.raises(grpc.RpcError):
        ctl.write(update("modify", action_profile_group=bad))
    with pytest.raises(grpc.RpcError):
        ctl.write(update("delete", action_profile_group=grp))


def test_table_full_is_resource_exhausted(ctl, schema):
    from tests.switch.sw_client import errors_of
    ups = [update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": i + 1},
                                                    "drop")) for i in range(1025)]
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(*ups)
    errs = errors_of(e.value)
    assert len(errs) == 1025 and all(x.canonical_code == 0 for x in errs[:1024])
    assert errs[1024].canonical_code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]


def test_hits_reset_time_since_last_hit(ctl, schema, switch):
    import time as _t
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2},
                     idle_timeout_ns=10**10)
    ctl.write(update("insert", table_entry=te))
    req = p4r.TableEntry(table_id=schema.tables.find("fwd").id)
    req.time_since_last_hit.SetInParent()

    def elapsed():
        (got,) = [e.table_entry for e in ctl.read(p4r.Entity(table_entry=req))]
        return got.time_since_last_hit.elapsed_ns

    _t.sleep(0.15)
    assert elapsed() >= 100_000_000
    switch.inject(1, eth(5))
    assert elapsed() < 100_000_000
