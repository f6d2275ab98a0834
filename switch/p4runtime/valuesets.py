"""Parser value sets (ValueSetEntry): MODIFY replaces the set's members.

The engine can add members but not remove them yet, so a MODIFY that drops
a member is UNIMPLEMENTED until it can; reads come from the shadow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finsy.proto import p4r

from .codec import fixed
from .errors import exhausted, exists, invalid, unimplemented
from .match import check_key, key_to_proto

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline


class ValueSetManager:
    def __init__(self, pipe: "ForwardingPipeline"):
        self.pipe = pipe
        self.schema = pipe.schema
        self.members: dict[int, list[tuple]] = {vs.id: [] for vs in pipe.schema.value_sets}

    def write(self, utype: int, ve, where: str = "value_set_entry") -> None:
        info = self.schema.value_sets.get(ve.value_set_id)
        if info is None:
            raise invalid(f"{where}.value_set_id: {ve.value_set_id} is not a value set of the "
                          "P4Info")
        if utype != p4r.Update.MODIFY:
            raise invalid(f"{where}: value sets are only written with MODIFY")
        index = {f.id: i for i, f in enumerate(info.fields)}
        new: list[tuple] = []
        for i, m in enumerate(ve.members):
            key = check_key(info.fields, index, m.match, f"{where}.members[{i}]",
                            f"value set '{info.name}'")
            if key in new:
                raise exists(f"{where}.members[{i}]: duplicate member")
            new.append(key)
        if info.size and len(new) > info.size:
            raise exhausted(f"{where}.members: {len(new)} members exceed the size {info.size}")
        old = self.members[info.id]
        if any(k not in new for k in old):
            raise unimplemented(f"{where}: the engine cannot remove value set members yet")
        name = self.pipe.tr.json_name(self.pipe.tr.value_sets, info.id, where)
        for key in new:
            if key in old:
                continue
            if any(f.match_type != "exact" for f in info.fields):
                raise unimplemented(f"{where}: only exact-match value sets are supported")
            value = b"".join(fixed(k, f.bitwidth) for k, f in zip(key, info.fields))
            self.pipe.engine.raw.vset_add(name, value)
        self.members[info.id] = new

    def read(self, ve, out, where: str = "value_set_entry") -> None:
        ids = [ve.value_set_id] if ve.value_set_id else list(self.members)
        for vid in ids:
            info = self.schema.value_sets.get(vid)
            if info is None:
                raise invalid(f"{where}.value_set_id: {vid} is not a value set of the P4Info")
            msg = out.add().value_set_entry
            msg.value_set_id = vid
            for key in self.members[vid]:
                key_to_proto(info.fields, key, msg.members.add().match)
