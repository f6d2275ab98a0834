"""Action profile members and groups (spec "ActionProfileMember & Group").

The P4Runtime side (ids, validation, reference counts, reads) lives in the
manager; `_EngineProfiles` mirrors members, groups and indirect entries in
the engine with BMv2's run-time calls (as simple_switch_CLI names them:
act_prof_create_member / _group, act_prof_add_member_to_group,
table_indirect_add[_with_group], ...). A member of weight w is w engine
members with the same action, as PI does it, since BMv2 groups are sets.
One-shot action sets become hidden members and a hidden group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from finsy.proto import p4r

from .actions import ActionSpec, action_to_proto, check_action
from .codec import to_port
from .errors import exhausted, exists, invalid, not_found, precondition
from .schema import ActionProfileInfo, TableInfo
from .wildcard import selected

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline
    from .tables import Entry
    from .translate import TableMap

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass(slots=True)
class Member:
    action: ActionSpec
    groups: int = 0
    entries: list = field(default_factory=list)  # [(TableState, Entry)]
    copies: list[int] = field(default_factory=list)
    """Engine member handles: copies[:w] serve weight w."""


@dataclass(slots=True)
class Group:
    members: list[tuple[int, int, bytes]]  # (member id, weight, watch port)
    max_size: int
    entries: list = field(default_factory=list)
    handle: int = -1
    """Engine group handle."""


@dataclass(slots=True)
class Profile:
    info: ActionProfileInfo
    actions: Optional[dict[int, int]]
    """Action ids (-> scope) members may use: those of the profile's tables."""
    table: Optional["TableMap"]
    """A table implemented by the profile (to name actions to the engine)."""
    engine_name: Optional[str]
    members: dict[int, Member] = field(default_factory=dict)
    groups: dict[int, Group] = field(default_factory=dict)


class ActionProfileManager:
    def __init__(self, pipe: "ForwardingPipeline"):
        self.pipe = pipe
        self.schema = pipe.schema
        self.engine = pipe.engine
        self.profiles: dict[int, Profile] = {}
        for ap in pipe.schema.action_profiles:
            actions: Optional[dict[int, int]] = None
            table = None
            for tid in ap.table_ids:
                t = pipe.schema.tables.get(tid)
                if t is not None:
                    actions = dict(t.action_scopes)
                    table = pipe.tr.tables.get(tid)
                    break
            self.profiles[ap.id] = Profile(ap, actions, table, pipe.tr.action_profiles.get(ap.id))
        self.backend = _EngineProfiles(self, self.engine.raw)

    def _profile(self, ap_id: int, where: str) -> Profile:
        p = self.profiles.get(ap_id)
        if p is None:
            raise invalid(f"{where}.action_profile_id: {ap_id} is not an action profile of the "
                          "P4Info")
        return p

    @staticmethod
    def _owner(p: Profile) -> str:
        return f"action profile '{p.info.name}'"

    # ----- members ----------------------------------------------------------

    def write_member(self, utype: int, m, where: str = "action_profile_member") -> None:
        p = self._profile(m.action_profile_id, where)
        mid = m.member_id
        if mid == 0:
            raise invalid(f"{where}.member_id: 0 is not a valid member id")
        cur = p.members.get(mid)
        if utype == DELETE:
            if cur is None:
                raise not_found(f"{where}: {self._owner(p)} has no member {mid}")
            if cur.groups:
                raise precondition(f"{where}: member {mid} of {self._owner(p)} is in "
                                   f"{cur.groups} group(s): remove it from them first")
            if cur.entries:
                n = len(cur.entries)
                raise precondition(f"{where}: member {mid} of {self._owner(p)} is used by "
                                   f"{n} table entr{'y' if n == 1 else 'ies'}")
            self.backend.member_deleted(p, cur)
            del p.members[mid]
            return
        if utype not in (INSERT, MODIFY):
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")
        if not m.HasField("action"):
            raise invalid(f"{where}.action: a member needs an action")
        spec = check_action(self.schema, m.action, f"{where}.action", p.actions, self._owner(p))
        if utype == INSERT:
            if cur is not None:
                raise exists(f"{where}: {self._owner(p)} already has a member {mid}")
            if p.info.size and len(p.members) >= p.info.size:
                raise exhausted(f"{where}: {self._owner(p)} is full ({p.info.size} members)")
            mem = Member(spec)
            self.backend.member_created(p, mem)
            p.members[mid] = mem
            return
        if cur is None:
            raise not_found(f"{where}: {self._owner(p)} has no member {mid}")
        cur.action = spec
        self.backend.member_modified(p, mid, cur)

    def read_member(self, m, out, where: str = "action_profile_member") -> None:
        for p, mid, mem in self._selected(m.action_profile_id, m.member_id, "members", where):
            msg = out.add().action_profile_member
            msg.action_profile_id = p.info.id
            msg.member_id = mid
            action_to_proto(self.schema, mem.action, msg.action)

    # ----- groups -------------------------------------------------------------

    def write_group(self, utype: int, g, where: str = "action_profile_group") -> None:
        p = self._profile(g.action_profile_id, where)
        gid = g.group_id
        if not p.info.with_selector:
            raise invalid(f"{where}: {self._owner(p)} has no selector, so it has no groups")
        if gid == 0:
            raise invalid(f"{where}.group_id: 0 is not a valid group id")
        cur = p.groups.get(gid)
        if utype == DELETE:
            if cur is None:
                raise not_found(f"{where}: {self._owner(p)} has no group {gid}")
            if cur.entries:
                n = len(cur.entries)
                raise precondition(f"{where}: group {gid} of {self._owner(p)} is used by "
                                   f"{n} table entr{'y' if n == 1 else 'ies'}")
            self.backend.group_deleted(p, cur)
            for mid, _, _ in cur.members:
                p.members[mid].groups -= 1
            del p.groups[gid]
            return
        if utype not in (INSERT, MODIFY):
            raise invalid(f"{where}: update type {utype} is not INSERT, MODIFY or DELETE")
        if utype == MODIFY and cur is None:
            raise not_found(f"{where}: {self._owner(p)} has no group {gid}")
        if utype == INSERT and cur is not None:
            raise exists(f"{where}: {self._owner(p)} already has a group {gid}")
        info = p.info
        max_size = g.max_size
        if max_size < 0:
            raise invalid(f"{where}.max_size: {max_size} is negative")
        if info.max_group_size > 0 and not 0 < max_size <= info.max_group_size:
            raise invalid(f"{where}.max_size: {max_size}; {self._owner(p)} needs 0 < max_size <= "
                          f"{info.max_group_size} (its max_group_size)")
        if cur is not None and max_size != cur.max_size:
            raise invalid(f"{where}.max_size: {max_size} differs from the group's {cur.max_size} "
                          "(it cannot change after INSERT)")
        members: list[tuple[int, int, bytes]] = []
        seen = set()
        total = 0
        for i, gm in enumerate(g.members):
            at = f"{where}.members[{i}]"
            if gm.member_id in seen:
                raise invalid(f"{at}.member_id: member {gm.member_id} is listed twice (use the "
                              "weight to repeat it)")
            seen.add(gm.member_id)
            if gm.member_id not in p.members:
                raise not_found(f"{at}.member_id: {self._owner(p)} has no member {gm.member_id}")
            w = self._weight(info, gm.weight, at)
            members.append((gm.member_id, w, self._watch(gm, at)))
            total += max(w, 1)
        if max_size and total > max_size:
            raise exhausted(f"{where}.members: their total weight {total} exceeds max_size "
                            f"{max_size}")
        if cur is None:
            grp = Group(members, max_size)
            self.backend.group_set(p, grp, [])
            p.groups[gid] = grp
        else:
            old = cur.members
            cur.members = members
            self.backend.group_set(p, cur, old)
            for mid, _, _ in old:
                p.members[mid].groups -= 1
        for mid, _, _ in members:
            p.members[mid].groups += 1

    @staticmethod
    def _weight(info: ActionProfileInfo, w: int, at: str) -> int:
        if info.weights_disallowed:
            if w != 0:
                raise invalid(f"{at}.weight: {w}; action profile '{info.name}' disallows weights "
                              "(leave it 0)")
            return 0
        if w <= 0:
            raise invalid(f"{at}.weight: {w}; weights must be > 0")
        return w

    @staticmethod
    def _watch(gm, at: str) -> bytes:
        kind = gm.WhichOneof("watch_kind")
        if kind == "watch_port":
            if gm.watch_port:
                to_port(gm.watch_port, f"{at}.watch_port")
            return bytes(gm.watch_port)
        if kind == "watch":
            return gm.watch.to_bytes(4, "big", signed=True) if gm.watch else b""
        return b""

    def read_group(self, g, out, where: str = "action_profile_group") -> None:
        for p, gid, grp in self._selected(g.action_profile_id, g.group_id, "groups", where):
            msg = out.add().action_profile_group
            msg.action_profile_id = p.info.id
            msg.group_id = gid
            if grp.max_size:
                msg.max_size = grp.max_size
            for mid, w, watch in grp.members:
                gm = msg.members.add(member_id=mid, weight=w)
                if watch:
                    gm.watch_port = watch

    def _selected(self, profile_id: int, item_id: int, kind: str, where: str):
        """(profile, id, item) a read selects; 0 is the wildcard for the
        profile id and the member or group id. A wildcard read of groups
        covers only the profiles with a selector."""
        if profile_id == 0:
            profiles = [p for p in self.profiles.values()
                        if kind == "members" or p.info.with_selector]
        else:
            profiles = [self._profile(profile_id, where)]
        for p in profiles:
            for iid, item in selected(getattr(p, kind), item_id):
                yield p, iid, item

    # ----- table entries that use a profile --------------------------------

    def check_ref(self, t: TableInfo, ta, where: str) -> tuple:
        """("member", id) | ("group", id) | ("oneshot", action set) of a TableAction."""
        p = self.profiles[t.implementation_id]
        kind = ta.WhichOneof("type")
        if kind == "action_profile_member_id":
            mid = ta.action_profile_member_id
            if mid not in p.members:
                raise not_found(f"{where}.action_profile_member_id: {self._owner(p)} has no "
                                f"member {mid}")
            return ("member", mid)
        if kind == "action_profile_group_id":
            gid = ta.action_profile_group_id
            if not p.info.with_selector:
                raise invalid(f"{where}.action_profile_group_id: {self._owner(p)} has no "
                              "selector, so it has no groups")
            if gid not in p.groups:
                raise not_found(f"{where}.action_profile_group_id: {self._owner(p)} has no "
                                f"group {gid}")
            return ("group", gid)
        if kind == "action_profile_action_set":
            return ("oneshot", self._check_action_set(p, ta.action_profile_action_set,
                                                      f"{where}.action_profile_action_set"))
        raise invalid(f"{where}: no action given")

    def _check_action_set(self, p: Profile, aset, where: str) -> tuple:
        if not p.info.with_selector:
            raise invalid(f"{where}: {self._owner(p)} has no selector: one-shot action sets "
                          "need one")
        if aset.action_selection_mode or aset.size_semantics:
            raise invalid(f"{where}: per-group selection mode and size semantics are not "
                          "supported (leave them at their defaults)")
        out = []
        total = 0
        for i, a in enumerate(aset.action_profile_actions):
            at = f"{where}.action_profile_actions[{i}]"
            spec = check_action(self.schema, a.action, f"{at}.action", p.actions, self._owner(p))
            w = self._weight(p.info, a.weight, at)
            out.append((spec, w, self._watch(a, at)))
            total += max(w, 1)
        if not out:
            raise invalid(f"{where}: a one-shot action set needs at least one action")
        if p.info.max_group_size and total > p.info.max_group_size:
            raise exhausted(f"{where}: total weight {total} exceeds the max_group_size "
                            f"{p.info.max_group_size} of {self._owner(p)}")
        return tuple(out)

    def action_set_to_proto(self, oneshot: tuple, out) -> None:
        for spec, w, watch in oneshot:
            a = out.action_profile_actions.add(weight=w)
            action_to_proto(self.schema, spec, a.action)
            if watch:
                a.watch_port = watch

    def ref(self, t: TableInfo, e: "Entry", delta: int) -> None:
        """Records (+1) or forgets (-1) that table entry `e` uses a member/group."""
        if not t.implementation_id or not (e.member_id or e.group_id):
            return
        p = self.profiles[t.implementation_id]
        st = self.pipe.tables.tables[t.id]
        obj = p.members.get(e.member_id) if e.member_id else p.groups.get(e.group_id)
        if obj is None:
            return
        if delta > 0:
            obj.entries.append((st, e))
        else:
            obj.entries = [(s, x) for s, x in obj.entries if x is not e]

    def _profile_of(self, tm: "TableMap") -> Profile:
        return self.profiles[tm.info.implementation_id]

    def add_entry(self, tm: "TableMap", ek, eprio: int, ref: tuple) -> tuple[int, object]:
        return self.backend.add_entry(self._profile_of(tm), tm, ek, eprio, ref)

    def modify_entry(self, tm: "TableMap", e: "Entry", ref: tuple) -> None:
        old = e.profile_private
        e.profile_private = self.backend.modify_entry(self._profile_of(tm), tm, e.handle, ref)
        self.backend.release(self._profile_of(tm), old)

    def release_entry(self, tm: "TableMap", e: "Entry") -> None:
        if tm.info.implementation_id:
            self.backend.release(self._profile_of(tm), e.profile_private)

    def all_entities(self):
        """(members, groups) as Entity messages, for RECONCILE_AND_COMMIT."""
        out = p4r.ReadResponse().entities
        for p in self.profiles.values():
            self.read_member(p4r.ActionProfileMember(action_profile_id=p.info.id), out)
        groups = p4r.ReadResponse().entities
        for p in self.profiles.values():
            if p.info.with_selector:
                self.read_group(p4r.ActionProfileGroup(action_profile_id=p.info.id), groups)
        return list(out), list(groups)


def _watch_port(watch: bytes) -> Optional[int]:
    """The engine's watch port of a member's watch port bytestring (b"": none).
    The engine leaves the member out of selection while that port is down,
    as PI's watch-port enforcer deactivates it on a port-down event."""
    return int.from_bytes(watch, "big") if watch else None


class _EngineProfiles:
    """Members, groups and indirect entries in the engine (BMv2's act_prof_* /
    table_indirect_* calls)."""

    def __init__(self, mgr: ActionProfileManager, raw):
        self.mgr = mgr
        self.e = raw

    def _action(self, p: Profile, spec: ActionSpec) -> tuple[str, list]:
        if p.table is None:
            raise invalid(f"action profile '{p.info.name}' implements no table of the BMv2 JSON")
        return p.table.actions[spec[0]], list(spec[1])

    def _name(self, p: Profile) -> str:
        if p.engine_name is None:
            raise invalid(f"action profile '{p.info.name}' is not in the BMv2 JSON")
        return p.engine_name

    def _copy(self, p: Profile, spec: ActionSpec) -> int:
        action, args = self._action(p, spec)
        return self.e.act_prof_create_member(self._name(p), action, args)

    def member_created(self, p, m):
        m.copies = [self._copy(p, m.action)]

    def member_modified(self, p, mid, m):
        action, args = self._action(p, m.action)
        for h in m.copies:
            self.e.act_prof_modify_member(self._name(p), h, action, args)

    def member_deleted(self, p, m):
        for h in m.copies:
            self.e.act_prof_delete_member(self._name(p), h)
        m.copies = []

    def _handles(self, p: Profile, members) -> dict[int, Optional[int]]:
        """Engine members serving (member id, weight, watch port) triples,
        copies made as needed -> the port each watches (None: none)."""
        out: dict[int, Optional[int]] = {}
        for mid, w, watch in members:
            m = p.members[mid]
            while len(m.copies) < max(w, 1):
                m.copies.append(self._copy(p, m.action))
            for h in m.copies[:max(w, 1)]:
                out[h] = _watch_port(watch)
        return out

    def _add(self, name: str, h: int, grp: int, watch: Optional[int]) -> None:
        self.e.act_prof_add_member_to_group(name, h, grp, watch_port=watch)

    def group_set(self, p, g, old):
        """The engine group made to hold `g.members` (it held `old`); a
        member whose watch port changed is removed and added again."""
        name = self._name(p)
        if g.handle < 0:
            g.handle = self.e.act_prof_create_group(name)
        want = self._handles(p, g.members)
        have = self._handles(p, old) if old else {}
        for h in sorted(have):
            if h not in want or want[h] != have[h]:
                self.e.act_prof_remove_member_from_group(name, h, g.handle)
        for h in sorted(want):
            if h not in have or want[h] != have[h]:
                self._add(name, h, g.handle, want[h])

    def group_deleted(self, p, g):
        if g.handle >= 0:
            self.e.act_prof_delete_group(self._name(p), g.handle)
            g.handle = -1

    def _oneshot(self, p: Profile, actions: tuple) -> tuple[int, list[int]]:
        name = self._name(p)
        grp = self.e.act_prof_create_group(name)
        members = []
        for spec, w, watch in actions:
            for _ in range(max(w, 1)):
                h = self._copy(p, spec)
                members.append(h)
                self._add(name, h, grp, _watch_port(watch))
        return grp, members

    def add_entry(self, p, tm, ek, eprio, ref):
        kind, val = ref
        if kind == "member":
            return self.e.table_indirect_add(tm.name, ek, p.members[val].copies[0], eprio), None
        if kind == "group":
            return self.e.table_indirect_add_with_group(tm.name, ek, p.groups[val].handle,
                                                        eprio), None
        grp, members = self._oneshot(p, val)
        return self.e.table_indirect_add_with_group(tm.name, ek, grp, eprio), (grp, members)

    def modify_entry(self, p, tm, handle, ref):
        kind, val = ref
        if kind == "member":
            self.e.table_indirect_modify(tm.name, handle, p.members[val].copies[0])
            return None
        if kind == "group":
            self.e.table_indirect_modify_with_group(tm.name, handle, p.groups[val].handle)
            return None
        grp, members = self._oneshot(p, val)
        self.e.table_indirect_modify_with_group(tm.name, handle, grp)
        return grp, members

    def release(self, p, private):
        if not private:
            return
        grp, members = private
        name = self._name(p)
        for h in members:
            self.e.act_prof_remove_member_from_group(name, h, grp)
            self.e.act_prof_delete_member(name, h)
        self.e.act_prof_delete_group(name, grp)
