"""Action profile members and groups (spec "ActionProfileMember & Group").

The engine runs an indirect table like a direct one: each entry holds an
action and its arguments. A member is therefore expanded into every entry
that uses it, and modifying a member rewrites those entries. A selector
group needs the engine to pick a member per packet (hash of the selector
fields % members, weights repeating members, as BMv2): with an engine that
has `table_set_group` the members are handed over; without it the entry runs
the group's first member (forwarding works, load balancing does not) and
the first such entry logs a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from finsy.proto import p4r

from .actions import ActionSpec, action_to_proto, check_action
from .codec import to_port
from .errors import exhausted, exists, invalid, not_found, precondition
from .schema import ActionProfileInfo, TableInfo

if TYPE_CHECKING:
    from .pipeline import Pipeline
    from .tables import Entry, TableState
    from .translate import TableMap

log = logging.getLogger("p4scope.switch")
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass(slots=True)
class Member:
    action: ActionSpec
    groups: int = 0
    entries: list = field(default_factory=list)  # [(TableState, Entry)]


@dataclass(slots=True)
class Group:
    members: list[tuple[int, int, bytes]]  # (member id, weight, watch port)
    max_size: int
    entries: list = field(default_factory=list)


@dataclass(slots=True)
class Profile:
    info: ActionProfileInfo
    actions: Optional[dict[int, int]]
    """Action ids (-> scope) members may use: those of the profile's tables."""
    members: dict[int, Member] = field(default_factory=dict)
    groups: dict[int, Group] = field(default_factory=dict)


class ActionProfileManager:
    def __init__(self, pipe: "Pipeline"):
        self.pipe = pipe
        self.schema = pipe.schema
        self.engine = pipe.engine
        self.profiles: dict[int, Profile] = {}
        self._warned = False
        for ap in pipe.schema.action_profiles:
            actions: Optional[dict[int, int]] = None
            for tid in ap.table_ids:
                t = pipe.schema.tables.get(tid)
                if t is not None:
                    actions = dict(t.action_scopes)
                    break
            self.profiles[ap.id] = Profile(ap, actions)

    def _profile(self, ap_id: int, where: str) -> Profile:
        p = self.profiles.get(ap_id)
        if p is None:
            raise invalid(f"{where}.action_profile_id: {ap_id} is not an action profile of the "
                          "P4Info")
        return p

    def _owner(self, p: Profile) -> str:
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
                raise precondition(f"{where}: member {mid} of {self._owner(p)} is used by "
                                   f"{len(cur.entries)} table entr{'y' if len(cur.entries) == 1 else 'ies'}")
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
            p.members[mid] = Member(spec)
            return
        if cur is None:
            raise not_found(f"{where}: {self._owner(p)} has no member {mid}")
        cur.action = spec
        for st, e in cur.entries:
            self.engine.table_modify(st.map.name, e.handle, st.map.actions[spec[0]], spec[1])
        for g in p.groups.values():
            if any(x[0] == mid for x in g.members):
                for st, e in g.entries:
                    self.modify_group_entry(st.map, e.handle, self._group_actions(p, g))

    def read_member(self, m, out, where: str = "action_profile_member") -> None:
        if m.action_profile_id == 0:
            profiles = list(self.profiles.values())
        else:
            profiles = [self._profile(m.action_profile_id, where)]
        for p in profiles:
            ids = [m.member_id] if m.member_id else sorted(p.members)
            for mid in ids:
                mem = p.members.get(mid)
                if mem is None:
                    continue
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
                raise precondition(f"{where}: group {gid} of {self._owner(p)} is used by "
                                   f"{len(cur.entries)} table entr{'y' if len(cur.entries) == 1 else 'ies'}")
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
            watch = self._watch(gm, at)
            members.append((gm.member_id, w, watch))
            total += max(w, 1)
        if max_size and total > max_size:
            raise exhausted(f"{where}.members: their total weight {total} exceeds max_size "
                            f"{max_size}")
        if cur is None:
            p.groups[gid] = Group(members, max_size)
        else:
            for mid, _, _ in cur.members:
                p.members[mid].groups -= 1
            cur.members = members
        for mid, _, _ in members:
            p.members[mid].groups += 1
        if cur is not None:
            for st, e in cur.entries:
                self.modify_group_entry(st.map, e.handle, self._group_actions(p, cur))

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
        if g.action_profile_id == 0:
            profiles = [p for p in self.profiles.values() if p.info.with_selector]
        else:
            profiles = [self._profile(g.action_profile_id, where)]
        for p in profiles:
            ids = [g.group_id] if g.group_id else sorted(p.groups)
            for gid in ids:
                grp = p.groups.get(gid)
                if grp is None:
                    continue
                msg = out.add().action_profile_group
                msg.action_profile_id = p.info.id
                msg.group_id = gid
                if grp.max_size:
                    msg.max_size = grp.max_size
                for mid, w, watch in grp.members:
                    gm = msg.members.add(member_id=mid, weight=w)
                    if watch:
                        gm.watch_port = watch

    # ----- table entries that use a profile --------------------------------

    def member_action(self, ap_id: int, mid: int, where: str) -> ActionSpec:
        p = self.profiles[ap_id]
        m = p.members.get(mid)
        if m is None:
            raise not_found(f"{where}: {self._owner(p)} has no member {mid}")
        return m.action

    def group_members(self, ap_id: int, gid: int, where: str) -> list[tuple[ActionSpec, int]]:
        p = self.profiles[ap_id]
        if not p.info.with_selector:
            raise invalid(f"{where}: {self._owner(p)} has no selector, so it has no groups")
        g = p.groups.get(gid)
        if g is None:
            raise not_found(f"{where}: {self._owner(p)} has no group {gid}")
        return self._group_actions(p, g)

    @staticmethod
    def _group_actions(p: Profile, g: Group) -> list[tuple[ActionSpec, int]]:
        return [(p.members[mid].action, max(w, 1)) for mid, w, _ in g.members]

    def check_action_set(self, t: TableInfo, aset, where: str) -> tuple:
        p = self.profiles[t.implementation_id]
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

    def add_group_entry(self, tm: "TableMap", ek, members, eprio: int) -> int:
        if self.engine.caps.table_set_group:
            return self.engine.raw.table_add_group(
                tm.name, ek, [(tm.actions[s[0]], list(s[1]), w) for s, w in members], eprio)
        action, args = self._fallback(tm, members)
        return self.engine.table_add(tm.name, action, ek, args, eprio)

    def modify_group_entry(self, tm: "TableMap", handle: int, members) -> None:
        if self.engine.caps.table_set_group:
            self.engine.raw.table_set_group(
                tm.name, handle, [(tm.actions[s[0]], list(s[1]), w) for s, w in members])
            return
        action, args = self._fallback(tm, members)
        self.engine.table_modify(tm.name, handle, action, args)

    def _fallback(self, tm: "TableMap", members) -> tuple[str, list]:
        if not self._warned:
            self._warned = True
            log.warning("the engine has no action selector groups yet: entries of table '%s' "
                        "(and others) run the first member of their group", tm.name)
        if members:
            spec = members[0][0]
            return tm.actions[spec[0]], list(spec[1])
        jt = tm.json
        return jt.default_action or "NoAction", list(jt.default_data)

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
