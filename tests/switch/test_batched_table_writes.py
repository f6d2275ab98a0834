"""Batched table writes (p4runtime/fast_writes.py): a Write's INSERTs reach
the engine in one call per run of INSERTs into a table, and every update
still ends on its own, as P4Runtime's CONTINUE_ON_ERROR says (the only
atomicity the server implements, as PI; ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC
are refused whole): a bad update's error keeps its place and code in the
status details, and the others are written, each seeing the ones before it.
"""

from __future__ import annotations

import gc

import grpc
import pytest
from finsy.proto import p4r, rpc_code

from p4scope.switch.p4runtime.errors import exhausted
from tests.switch.sw_client import errors_of

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
OK = rpc_code.Code.OK
FWD_SIZE = 1024  # basic.p4's table fwd


def fwd(schema, dst: int, port: int = 1, dst_bytes: int = 6) -> p4r.TableEntry:
    """An entry of basic.p4's fwd (exact dst MAC) running forward(port)."""
    t = schema.table("fwd")
    te = p4r.TableEntry(table_id=t.id)
    te.match.add(field_id=t.field("hdr.ethernet.dst").id).exact.value = dst.to_bytes(
        dst_bytes, "big")
    a = schema.action("forward")
    te.action.action.action_id = a.id
    te.action.action.params.add(param_id=a.param("port").id, value=port.to_bytes(2, "big"))
    return te


def route(schema, addr: int, plen: int, port: int = 1) -> p4r.TableEntry:
    """An entry of basic.p4's routes (lpm on a 32-bit address) running forward(port)."""
    t = schema.table("routes")
    te = p4r.TableEntry(table_id=t.id)
    lpm = te.match.add(field_id=t.field("hdr.probe.addr").id).lpm
    lpm.value = addr.to_bytes(4, "big")
    lpm.prefix_len = plen
    a = schema.action("forward")
    te.action.action.action_id = a.id
    te.action.action.params.add(param_id=a.param("port").id, value=port.to_bytes(2, "big"))
    return te


def write(ctl, *updates: tuple[int, p4r.TableEntry], atomicity: int = 0) -> list[int]:
    """Sends one Write; the canonical code of each update (all OK if it succeeded)."""
    try:
        ctl.write(*(p4r.Update(type=t, entity=p4r.Entity(table_entry=te)) for t, te in updates),
                  atomicity=atomicity)
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.UNKNOWN, e.details()
        return [err.canonical_code for err in errors_of(e)]
    return [OK] * len(updates)


def ports_of(ctl, table_id: int) -> dict[int, int]:
    """Each entry of a table read back: its first match value -> its action's first argument."""
    out = {}
    for ent in ctl.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id))):
        te = ent.table_entry
        fm = te.match[0]
        value = fm.exact.value if fm.HasField("exact") else fm.lpm.value
        out[int.from_bytes(value, "big")] = int.from_bytes(te.action.action.params[0].value, "big")
    return out


def test_each_bad_update_of_a_batch_keeps_its_place_and_code(ctl, schema):
    fwd_id, routes_id = schema.table("fwd").id, schema.table("routes").id
    assert write(ctl, (INSERT, fwd(schema, 1))) == [OK]
    too_wide = fwd(schema, 4)
    too_wide.match[0].exact.value = b"\x01" + bytes(6)  # 49 bits
    codes = write(ctl,
                  (INSERT, fwd(schema, 2, port=2)),       # 0 ok
                  (INSERT, fwd(schema, 1)),               # 1 there before the batch
                  (INSERT, fwd(schema, 2, dst_bytes=8)),  # 2 the same key as 0, padded
                  (INSERT, too_wide),                     # 3
                  (MODIFY, fwd(schema, 2, port=7)),       # 4 ok: the entry of 0
                  (MODIFY, fwd(schema, 9)),               # 5 no such entry
                  (INSERT, route(schema, 10 << 24, 8)),   # 6 ok: another table
                  (INSERT, route(schema, 10 << 24 | 1, 8)),  # 7 bits beyond the prefix
                  (INSERT, fwd(schema, 3, port=3)),       # 8 ok
                  (DELETE, fwd(schema, 1)),               # 9 ok
                  (DELETE, fwd(schema, 1)),               # 10 deleted by 9
                  (INSERT, fwd(schema, 5, port=5)),       # 11 ok
                  (DELETE, fwd(schema, 5)))               # 12 ok: the entry of 11
    C = rpc_code.Code
    assert codes == [OK, C.ALREADY_EXISTS, C.ALREADY_EXISTS, C.OUT_OF_RANGE, OK, C.NOT_FOUND,
                     OK, C.INVALID_ARGUMENT, OK, OK, C.NOT_FOUND, OK, OK]
    assert ports_of(ctl, fwd_id) == {2: 7, 3: 3}
    assert ports_of(ctl, routes_id) == {10 << 24: 1}


def test_a_batch_reaches_the_engine_as_one_write_per_update_would(ctl, schema, switch):
    """The handles the engine gave stay with their entries: packets are
    forwarded by the MODIFY that followed an INSERT in the same batch, and
    a DELETE after a batched INSERT removes that entry only."""
    assert write(ctl, *[(INSERT, fwd(schema, 0x0A0000000000 + i, port=1)) for i in range(50)],
                 (MODIFY, fwd(schema, 0x0A0000000000 + 7, port=9)),
                 (DELETE, fwd(schema, 0x0A0000000000 + 8))) == [OK] * 52
    engine = switch.engine
    assert engine.table_entry_count("IngressImpl.fwd") == 49
    frame = (0x0A0000000007).to_bytes(6, "big") + bytes(6) + b"\x08\x00" + bytes(50)
    assert [p for p, _ in switch.send(3, frame)] == [9]


def test_a_full_table_refuses_its_update_alone(ctl, schema):
    """A table holds FWD_SIZE entries: the INSERT that finds it full fails
    alone (RESOURCE_EXHAUSTED at its place); a DELETE after it makes room
    for the next INSERT of the same batch."""
    for start in range(0, FWD_SIZE - 1, 500):
        stop = min(start + 500, FWD_SIZE - 1)
        assert write(ctl, *[(INSERT, fwd(schema, 0x100 + i)) for i in range(start, stop)]) \
            == [OK] * (stop - start)
    last, extra = 0x100 + FWD_SIZE - 1, 0x100 + FWD_SIZE
    C = rpc_code.Code
    assert write(ctl, (INSERT, fwd(schema, last)), (INSERT, fwd(schema, extra)),
                 (DELETE, fwd(schema, last)), (INSERT, fwd(schema, extra))) \
        == [OK, C.RESOURCE_EXHAUSTED, OK, OK]
    ports = ports_of(ctl, schema.table("fwd").id)
    assert len(ports) == FWD_SIZE and extra in ports and last not in ports


class _Refusing:
    """An engine adapter that refuses the INSERTs of some keys (as an engine
    whose table is full does), passing everything else on."""

    def __init__(self, engine, refused: set[bytes]):
        self._engine = engine
        self.refused = refused
        self.batches: list[int] = []

    def table_add_many(self, table, entries):
        self.batches.append(len(entries))
        out = []
        for action, key, args, priority in entries:
            if key[0][1] in self.refused:
                out.append(exhausted(f"table '{table}' is full"))
            else:
                out.append(self._engine.table_add(table, action, key, args, priority))
        return out

    def table_add(self, table, action, key, args, priority):
        if key[0][1] in self.refused:
            raise exhausted(f"table '{table}' is full")
        return self._engine.table_add(table, action, key, args, priority)

    def __getattr__(self, name):
        return getattr(self._engine, name)


def test_an_entry_the_engine_refuses_fails_its_update_alone(ctl, schema, switch):
    tables = switch.device.pipeline.tables
    refusing = _Refusing(tables.engine, {(0x0B0000000003).to_bytes(6, "big")})
    tables.engine = refusing
    keys = [0x0B0000000000 + i for i in range(6)]
    C = rpc_code.Code
    codes = write(ctl, *[(INSERT, fwd(schema, k, port=2)) for k in keys],
                  (MODIFY, fwd(schema, keys[3], port=4)),   # 6: its INSERT was refused
                  (INSERT, fwd(schema, keys[3])))           # 7: refused again, on its own
    assert codes == [OK, OK, OK, C.RESOURCE_EXHAUSTED, OK, OK, C.NOT_FOUND, C.RESOURCE_EXHAUSTED]
    assert refusing.batches == [6, 1]  # the six INSERTs in one engine call, then update 7
    assert sorted(ports_of(ctl, schema.table("fwd").id)) == [k for k in keys if k != keys[3]]
    refusing.refused.clear()
    assert write(ctl, (INSERT, fwd(schema, keys[3], port=6))) == [OK]
    assert ports_of(ctl, schema.table("fwd").id)[keys[3]] == 6


@pytest.mark.parametrize("atomicity", [p4r.WriteRequest.ROLLBACK_ON_ERROR,
                                       p4r.WriteRequest.DATAPLANE_ATOMIC])
def test_other_atomicities_are_refused_whole(ctl, schema, atomicity):
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=fwd(schema, 1))),
                  atomicity=atomicity)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert ports_of(ctl, schema.table("fwd").id) == {}


class _Watching:
    """An engine adapter noting whether Python's garbage collector runs at
    each batched add."""

    def __init__(self, engine):
        self._engine = engine
        self.collector_on: list[bool] = []

    def table_add_many(self, table, entries):
        self.collector_on.append(gc.isenabled())
        return self._engine.table_add_many(table, entries)

    def __getattr__(self, name):
        return getattr(self._engine, name)


def test_the_collector_waits_for_the_end_of_a_write(ctl, schema, switch):
    """A Write pauses the cyclic garbage collector (its many new entries
    would only be walked again and again) and leaves it as it found it,
    whether updates failed or not."""
    tables = switch.device.pipeline.tables
    watching = _Watching(tables.engine)
    tables.engine = watching
    assert gc.isenabled()
    assert write(ctl, (INSERT, fwd(schema, 1)), (INSERT, fwd(schema, 1))) \
        == [OK, rpc_code.Code.ALREADY_EXISTS]
    assert watching.collector_on == [False] and gc.isenabled()
    gc.disable()
    try:
        assert write(ctl, (INSERT, fwd(schema, 2))) == [OK]
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert watching.collector_on == [False, False]
