"""Action profiles on an engine that has them (BMv2-style act_prof_* and
table_indirect_* calls), checked against a recording fake engine: weights
become member copies (as PI does), group changes are diffs, one-shot sets
get hidden members and groups that go away with their entry."""

from __future__ import annotations

import itertools

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program
from tests.switch.sw_entities import action, table_entry

from p4scope.switch.p4runtime.errors import P4RuntimeError
from p4scope.switch.p4runtime.pipeline import ForwardingPipeline

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


class FakeEngine:
    """Just enough of the engine for the P4Runtime layer, with action profiles."""

    def __init__(self):
        self.ids = itertools.count(1)
        self.members = {}  # handle -> (profile, action, args)
        self.groups = {}  # handle -> set of member handles
        self.entries = {}  # handle -> (table, key, ("member"|"group", h) or (action, args))

    @property
    def raw(self):
        return self

    # direct entries
    def table_add(self, table, action, key, args, priority):
        h = next(self.ids)
        self.entries[h] = (table, tuple(key), (action, tuple(args)))
        return h

    def table_modify(self, table, handle, action, args):
        t, k, _ = self.entries[handle]
        self.entries[handle] = (t, k, (action, tuple(args)))

    def table_delete(self, table, handle):
        del self.entries[handle]

    def table_set_default(self, table, action, args):
        pass

    def direct_counter_read(self, table, handle):
        return (0, 0)

    # action profiles
    def act_prof_create_member(self, profile, action, args):
        h = next(self.ids)
        self.members[h] = (profile, action, tuple(args))
        return h

    def act_prof_modify_member(self, profile, h, action, args):
        self.members[h] = (profile, action, tuple(args))

    def act_prof_delete_member(self, profile, h):
        assert not any(h in g for g in self.groups.values()), "member still in a group"
        del self.members[h]

    def act_prof_create_group(self, profile):
        h = next(self.ids)
        self.groups[h] = set()
        return h

    def act_prof_delete_group(self, profile, h):
        assert not any(e[2] == ("group", h) for e in self.entries.values()), "group in use"
        del self.groups[h]

    def act_prof_add_member_to_group(self, profile, m, g, watch_port=None):
        assert m not in self.groups[g]
        self.groups[g].add(m)

    def act_prof_remove_member_from_group(self, profile, m, g):
        self.groups[g].remove(m)

    def table_indirect_add(self, table, key, member, priority):
        h = next(self.ids)
        self.entries[h] = (table, tuple(key), ("member", member))
        return h

    def table_indirect_add_with_group(self, table, key, group, priority):
        h = next(self.ids)
        self.entries[h] = (table, tuple(key), ("group", group))
        return h

    def table_indirect_modify(self, table, handle, member):
        t, k, _ = self.entries[handle]
        self.entries[handle] = (t, k, ("member", member))

    def table_indirect_modify_with_group(self, table, handle, group):
        t, k, _ = self.entries[handle]
        self.entries[handle] = (t, k, ("group", group))


@pytest.fixture
def pipe():
    fake = FakeEngine()
    p = ForwardingPipeline(program.p4info(), program.json_text(), engine=fake)
    return p


def member(schema, ap, mid, port):
    return p4r.Entity(action_profile_member=p4r.ActionProfileMember(
        action_profile_id=schema.action_profiles.find(ap).id, member_id=mid,
        action=action(schema, "forward", port=port)))


def group(schema, mid_weights, gid=10):
    g = p4r.ActionProfileGroup(action_profile_id=schema.action_profiles.find("ecmp_selector").id,
                               group_id=gid)
    for mid, w in mid_weights:
        g.members.add(member_id=mid, weight=w)
    return p4r.Entity(action_profile_group=g)


def test_weights_groups_and_entries(pipe, schema):
    e = pipe.engine
    pipe.write_one(INSERT, member(schema, "ecmp_selector", 1, 4), "u")
    pipe.write_one(INSERT, member(schema, "ecmp_selector", 2, 5), "u")
    pipe.write_one(INSERT, group(schema, [(1, 1), (2, 2)]), "u")
    (gh,) = e.groups
    assert len(e.groups[gh]) == 3  # member 2 twice: two engine copies
    ports = sorted(e.members[m][2][0] for m in e.groups[gh])
    assert ports == [4, 5, 5]
    te = table_entry(schema, "ecmp", {"hdr.probe.addr": 1})
    te.action.action_profile_group_id = 10
    pipe.write_one(INSERT, p4r.Entity(table_entry=te), "u")
    (entry,) = [v for v in e.entries.values() if v[0] == "IngressImpl.ecmp"]
    assert entry[2] == ("group", gh)
    # shrink the group: member 2's copies leave it
    pipe.write_one(MODIFY, group(schema, [(1, 1)]), "u")
    assert [e.members[m][2] for m in e.groups[gh]] == [(4,)]
    # modifying a member changes every copy
    pipe.write_one(MODIFY, member(schema, "ecmp_selector", 2, 9), "u")
    assert {e.members[m][2] for m in e.members if e.members[m][2] != (4,)} == {(9,)}
    # a group in use cannot go
    with pytest.raises(P4RuntimeError, match="used by 1 table entry"):
        pipe.write_one(DELETE, group(schema, []), "u")


def test_member_entries(pipe, schema):
    e = pipe.engine
    pipe.write_one(INSERT, member(schema, "nh_profile", 3, 7), "u")
    te = table_entry(schema, "nexthop", {"hdr.probe.level": 2})
    te.action.action_profile_member_id = 3
    pipe.write_one(INSERT, p4r.Entity(table_entry=te), "u")
    ((mh,),) = [[k for k, v in e.members.items() if v[2] == (7,)]]
    assert [v[2] for v in e.entries.values() if v[0] == "IngressImpl.nexthop"] == [("member", mh)]
    pipe.write_one(DELETE, p4r.Entity(table_entry=te), "u")
    pipe.write_one(DELETE, member(schema, "nh_profile", 3, 7), "u")
    assert e.members == {}


def test_one_shot_sets_are_cleaned_up(pipe, schema):
    e = pipe.engine
    te = table_entry(schema, "ecmp", {"hdr.probe.addr": 2})
    for port, w in ((6, 1), (7, 3)):
        a = te.action.action_profile_action_set.action_profile_actions.add(weight=w)
        a.action.CopyFrom(action(schema, "forward", port=port))
    pipe.write_one(INSERT, p4r.Entity(table_entry=te), "u")
    assert len(e.groups) == 1 and len(next(iter(e.groups.values()))) == 4
    # modify: a new hidden group replaces the old one
    te.action.action_profile_action_set.action_profile_actions.pop()
    pipe.write_one(MODIFY, p4r.Entity(table_entry=te), "u")
    assert len(e.groups) == 1 and len(next(iter(e.groups.values()))) == 1
    pipe.write_one(DELETE, p4r.Entity(table_entry=te), "u")
    assert e.groups == {} and e.members == {}
    # nothing of it shows in reads
    out = p4r.ReadResponse().entities
    pipe.read_one(p4r.Entity(action_profile_member=p4r.ActionProfileMember()), out, "r")
    assert len(out) == 0


def test_a_full_engine_table_is_resource_exhausted():
    from p4scope.switch.engine import DataplaneEngine
    from p4scope.switch.p4runtime.errors import Code

    e = DataplaneEngine.__new__(DataplaneEngine)
    assert e._table_error(Exception("table 't': the table is full")).code == \
        Code.RESOURCE_EXHAUSTED
