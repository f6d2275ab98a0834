"""The table writes' fast decoders (table_codec.py, and WriteCodec reading
a Write's bytes) against the full checks.

The same Write requests, good and bad ones mixed in each batch, go to two
pipelines of basic.p4: one with the fast decoders (given the messages, or
the request's bytes as the gRPC server gives them), one with them switched
off (every update through match.check_key, engine_key and
actions.check_action). Each update must end the same way (status and
message), the engine must see the same calls (handles, keys as bytes) and
the tables must read back the same.
"""

from __future__ import annotations

import random
import re

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program
from tests.switch.sw_entities import action, table_entry
from p4scope.switch.device import Device, DeviceOptions
from p4scope.switch.p4runtime.arbitration import Connection
from p4scope.switch.p4runtime.fast_writes import FastWrites
from p4scope.switch.p4runtime.schema import P4Schema

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


class _Off:
    """A TableCodec that always sends the request to the full checks."""

    wire_spec = None

    def key(self, matches):
        return None

    def action(self, msg):
        return None


class _Recorder:
    """Wraps the engine adapter's table calls, keeping their arguments."""

    def __init__(self, engine):
        self.calls: list = []
        for name in ("table_add", "table_modify", "table_delete"):
            setattr(self, name, self._wrap(name, getattr(engine, name)))
        self._engine = engine

        add_many = engine.table_add_many

        def table_add_many(table, entries):  # kept as the table_adds it stands for
            self.calls += [("table_add", (table, action, list(key), args, priority))
                           for action, key, args, priority in entries]
            return add_many(table, entries)
        self.table_add_many = table_add_many

    def _wrap(self, name, f):
        def call(*args):
            self.calls.append((name, args))
            return f(*args)
        return call

    def __getattr__(self, name):
        return getattr(self._engine, name)


def _device(fast: bool) -> tuple[Device, _Recorder]:
    """A device of basic.p4; `fast` False: every update to the full checks."""
    dev = Device(DeviceOptions())
    conn = Connection(lambda msg: None, "test")
    dev.stream_request(conn, p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=0, election_id=p4r.Uint128(low=1))))
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=0, election_id=p4r.Uint128(low=1),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(program.p4info())
    req.config.p4_device_config = program.json_text().encode()
    dev.set_pipeline(req)
    tables = dev.pipeline.tables
    rec = _Recorder(tables.engine)
    tables.engine = rec
    if not fast:
        for st in tables.tables.values():
            st.codec = _Off()
        dev.pipeline.fast_writes = FastWrites(tables)
    return dev, rec


def _request(updates) -> p4r.WriteRequest:
    w = p4r.WriteRequest(device_id=0, election_id=p4r.Uint128(low=1))
    for utype, te in updates:
        w.updates.add(type=utype).entity.table_entry.CopyFrom(te)
    return w


def _errors(errors, n: int) -> list:
    if errors is None:
        return [None] * n
    return [None if e is None else (e.code, e.message) for e in errors]


def _outcome(dev: Device, updates, wire: bool = False) -> list:
    """Each update's (status, message) or None; `wire`: the Write given with its bytes."""
    w = _request(updates)
    return _errors(dev.write(w, w.SerializeToString() if wire else None), len(updates))


def _unnumbered(outcome):
    """An outcome without the update's place in its batch ("updates[7].")."""
    return None if outcome is None else (outcome[0], re.sub(r"^updates\[\d+\]\.", "",
                                                            outcome[1]))


def _read_all(dev: Device) -> list:
    ents = []
    for resp in dev.read(p4r.ReadRequest(device_id=0, entities=[
            p4r.Entity(table_entry=p4r.TableEntry())])):
        ents += list(resp.entities)
    return ents


def _b(v: int, n: int | None = None) -> bytes:
    return v.to_bytes(n if n is not None else max(1, (v.bit_length() + 7) // 8), "big")


def _candidates(s: P4Schema, rnd: random.Random) -> list[tuple[int, p4r.TableEntry]]:
    """Updates of the direct tables, most well-formed, many subtly not."""
    fwd, routes, acl = s.tables.find("fwd"), s.tables.find("routes"), s.tables.find("acl")
    out = []
    for _ in range(300):
        mac = rnd.choice([rnd.randrange(1 << 48), rnd.randrange(8)])
        port = rnd.choice([1, 2, 511, 512, 0])
        te = table_entry(s, "fwd", {"hdr.ethernet.dst": _b(mac, rnd.choice([None, 6, 8]))},
                         "forward", {"port": port})
        bad = rnd.randrange(12)
        if bad == 0:
            te.match[0].field_id += 1
        elif bad == 1:
            te.match[0].exact.value = b""
        elif bad == 2:
            te.match[0].exact.value = b"\x01" + bytes(6)  # 49 bits
        elif bad == 3:
            te.action.action.params[0].param_id = 9
        elif bad == 4:
            te.action.action.params.add(param_id=1, value=b"\x01")
        elif bad == 5:
            del te.action.action.params[:]
        elif bad == 6:
            te.action.action.action_id = s.actions.find("drop").id
        elif bad == 7:
            te.priority = 3
        elif bad == 8:
            te.action.action.action_id = 12345
        elif bad == 9:
            te.action.action.params[0].value = b""
        out.append((rnd.choice([INSERT, INSERT, MODIFY, DELETE]), te))

        plen = rnd.choice([1, 8, 24, 32, 33, 0])
        addr = rnd.randrange(1 << 32) & ~((1 << (32 - min(plen, 32))) - 1)
        if rnd.random() < 0.2:
            addr |= 1  # bits beyond the prefix
        te = table_entry(s, "routes", {"hdr.probe.addr": ("lpm", _b(addr, rnd.choice([None, 4])),
                                                           plen)}, "forward", {"port": 3})
        if rnd.random() < 0.1:
            te.match[0].ClearField("lpm")
            te.match[0].exact.value = b"\x01"
        out.append((rnd.choice([INSERT, INSERT, MODIFY, DELETE]), te))

        mask = rnd.choice([0xFF, 0x0F, 0, 0x1FF, 0x10000])
        flags = rnd.randrange(1 << 16) & (mask if rnd.random() < 0.8 else 0xFFFF)
        lo = rnd.randrange(256)
        hi = rnd.choice([lo, min(255, lo + 10), max(0, lo - 1), 255])
        match = {"hdr.probe.flags": ("ternary", flags, mask),
                 "hdr.probe.level": ("range", 0 if rnd.random() < 0.1 else lo, hi),
                 "hdr.probe.kind": ("optional", rnd.randrange(4))}
        if rnd.random() < 0.2:
            del match[rnd.choice(list(match))]
        te = table_entry(s, "acl", match, "drop", {}, priority=rnd.choice([1, 5, 0, 70000]))
        if rnd.random() < 0.1 and len(te.match) > 1:
            te.match[0].field_id, te.match[1].field_id = te.match[1].field_id, te.match[0].field_id
        out.append((rnd.choice([INSERT, INSERT, MODIFY, DELETE]), te))
    assert {fwd.id, routes.id, acl.id} == {te.table_id for _, te in out}
    return out


@pytest.mark.parametrize("wire", [False, True], ids=["messages", "bytes"])
@pytest.mark.parametrize("seed", [1, 2])
def test_fast_and_full_checks_end_every_update_the_same_way(seed, wire):
    s = P4Schema(program.p4info())
    rnd = random.Random(seed)
    updates = _candidates(s, rnd)
    fast, fast_calls = _device(True)
    full, full_calls = _device(False)
    assert full.pipeline.fast_writes.decode(b"") is None  # (its checks off: no codec)
    outcomes = []
    for start in range(0, len(updates), 50):  # batches with good and bad updates mixed
        batch = updates[start:start + 50]
        got = _outcome(fast, batch, wire)
        assert got == _outcome(full, batch), f"batch at {start}"
        outcomes += got
    assert fast_calls.calls == full_calls.calls
    assert _read_all(fast) == _read_all(full)
    # the mix exercised both ends: accepted updates and several kinds of refusal
    assert sum(o is None for o in outcomes) > 100
    assert len({o[0] for o in outcomes if o is not None}) >= 3


def test_a_padded_or_reordered_request_is_the_same_entry():
    """Leading zero bytes and fields in another order name the same entry
    (the fast decoder takes the first, the full checks the second)."""
    s = P4Schema(program.p4info())
    dev, rec = _device(True)
    te = table_entry(s, "acl", {"hdr.probe.flags": ("ternary", 1, 0xF),
                                "hdr.probe.level": ("range", 2, 9),
                                "hdr.probe.kind": ("optional", 1)}, "drop", {}, priority=4)
    assert _outcome(dev, [(INSERT, te)]) == [None]
    padded = p4r.TableEntry()
    padded.CopyFrom(te)
    padded.match[0].ternary.value = b"\x00\x00\x01"
    assert _outcome(dev, [(INSERT, padded)])[0][1].endswith(
        "already has an entry with this match key and priority (use MODIFY to change it)")
    swapped = p4r.TableEntry()
    swapped.CopyFrom(te)
    del swapped.match[:]
    for i in (2, 0, 1):
        swapped.match.add().CopyFrom(te.match[i])
    swapped.action.action.CopyFrom(action(s, "drop"))
    assert _outcome(dev, [(DELETE, swapped)]) == [None]
    assert _read_all(dev) == []
    adds = [args for name, args in rec.calls if name == "table_add"]
    assert adds[0][2] == [("ternary", b"\x00\x01", b"\x00\x0f"), ("range", b"\x02", b"\x09"),
                          ("ternary", b"\x01", b"\xff")]


def test_a_batch_ends_each_update_as_one_write_per_update_does():
    """P4Runtime's per-update semantics: a bad update in the middle of a
    batch fails alone; the others get the handles and tables they get one
    Write at a time."""
    s = P4Schema(program.p4info())
    updates = _candidates(s, random.Random(3))[:240]
    batched, batched_calls = _device(True)
    single, single_calls = _device(True)
    got = []
    for start in range(0, len(updates), 80):
        got += [_unnumbered(o) for o in _outcome(batched, updates[start:start + 80])]
    assert got == [_unnumbered(_outcome(single, [u])[0]) for u in updates]
    assert any(o is not None for o in got[1:-1]) and any(o is None for o in got)
    assert batched_calls.calls == single_calls.calls
    assert _read_all(batched) == _read_all(single)


def test_entries_with_the_same_action_share_one_action_spec():
    """A large table's entries mostly run a few actions: they keep one
    ActionSpec between them, not one each (memory per entry)."""
    s = P4Schema(program.p4info())
    dev, _ = _device(True)
    updates = [(INSERT, table_entry(s, "routes", {"hdr.probe.addr": ("lpm", i << 8, 24)},
                                    "forward", {"port": 1 + i % 2})) for i in range(1, 9)]
    assert _outcome(dev, updates) == [None] * 8
    st = dev.pipeline.tables.tables[s.tables.find("routes").id]
    specs = {id(e.action): e.action for e in st.entries.values()}
    assert sorted(a[1] for a in specs.values()) == [(1,), (2,)]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _merged(*parts) -> bytes:
    """One Update's bytes made of several messages' bytes: on the wire, the
    later ones merge into the first (a oneof keeps the last member given)."""
    return b"".join(p.SerializeToString() for p in parts)


def test_a_writes_bytes_are_read_as_protobuf_reads_them():
    """Updates whose bytes hold what a message built field by field never
    does (a oneof given twice, a field repeated, an empty message field)
    end as the parsed message says: bytes and messages, the same."""
    s = P4Schema(program.p4info())
    te = table_entry(s, "fwd", {"hdr.ethernet.dst": _b(0x0A, 6)}, "forward", {"port": 1})
    upd = p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=te))
    counter = p4r.Update(entity=p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=1)))
    lpm_too = p4r.TableEntry()
    lpm_too.match.add(field_id=te.match[0].field_id).lpm.value = b"\x01"
    other_table = p4r.TableEntry(table_id=s.tables.find("routes").id)
    with_counter_data = p4r.TableEntry()
    with_counter_data.counter_data.SetInParent()
    member = p4r.TableEntry(action=p4r.TableAction(action_profile_member_id=3))
    updates = [
        _merged(upd, counter),  # a counter entry in the end
        _merged(counter, upd),  # the table entry in the end
        _merged(upd, p4r.Update(entity=p4r.Entity(table_entry=lpm_too))),  # a second match
        _merged(upd, p4r.Update(entity=p4r.Entity(table_entry=other_table))),  # table id again
        _merged(upd, p4r.Update(entity=p4r.Entity(table_entry=with_counter_data))),
        _merged(upd, p4r.Update(entity=p4r.Entity(table_entry=member))),  # the action replaced
        _merged(upd, p4r.Update(type=DELETE)),  # the type given again
        upd.SerializeToString() + b"\xa8\x1f\x07",  # an unknown field (1000, varint 7)
    ]
    head = p4r.WriteRequest(device_id=0, election_id=p4r.Uint128(low=1)).SerializeToString()
    for one in updates:
        wire = head + b"\x22" + _varint(len(one)) + one
        w = p4r.WriteRequest.FromString(wire)
        outcomes = []
        for fast, given in ((True, wire), (True, None), (False, None)):
            dev, rec = _device(fast)
            outcomes.append((_errors(dev.write(w, given), 1), rec.calls, _read_all(dev)))
        assert outcomes[0] == outcomes[1] == outcomes[2], w
    # and a request prost does not read (a wrong wire type) goes by the messages
    dev, _ = _device(True)
    assert dev.pipeline.fast_writes.decode(b"\x22\x05\x01") is None
