"""Counters, registers (read AND write: a p4scope extension over PI),
meters, and the PRE (multicast groups, clone sessions)."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4d, p4r

from tests.switch.sw_client import update
from tests.switch.sw_entities import eth, table_entry


def counter(schema, index=None, b=None, p=None):
    ce = p4r.CounterEntry(counter_id=schema.counters.find("port_packets").id)
    if index is not None:
        ce.index.index = index
    if b is not None:
        ce.data.byte_count = b
        ce.data.packet_count = p
    return ce


def test_counter_write_and_read(ctl, schema):
    ctl.write(update("modify", counter_entry=counter(schema, 3, 100, 7)))
    (r,) = ctl.read(p4r.Entity(counter_entry=counter(schema, 3)))
    assert (r.counter_entry.data.byte_count, r.counter_entry.data.packet_count) == (100, 7)
    assert r.counter_entry.index.index == 3
    every = ctl.read(p4r.Entity(counter_entry=counter(schema)))
    assert [e.counter_entry.index.index for e in every] == list(range(8))
    # all counters of all arrays
    assert len(ctl.read(p4r.Entity(counter_entry=p4r.CounterEntry()))) == 8
    # an unset index writes every cell
    ctl.write(update("modify", counter_entry=counter(schema, None, 1, 1)))
    assert {e.counter_entry.data.packet_count for e in ctl.read(
        p4r.Entity(counter_entry=counter(schema)))} == {1}


def register(schema, index=None, value: bytes | None = None):
    re = p4r.RegisterEntry(register_id=schema.registers.find("scratch").id)
    if index is not None:
        re.index.index = index
    if value is not None:
        re.data.CopyFrom(p4d.P4Data(bitstring=value))
    return re


def test_register_read_and_write(ctl, schema):
    (r,) = ctl.read(p4r.Entity(register_entry=register(schema, 2)))
    assert r.register_entry.data.bitstring == b"\x00"
    ctl.write(update("modify", register_entry=register(schema, 2, b"\x00\xde\xad\xbe\xef")))
    (r,) = ctl.read(p4r.Entity(register_entry=register(schema, 2)))
    assert r.register_entry.data.bitstring == b"\xde\xad\xbe\xef"
    cells = ctl.read(p4r.Entity(register_entry=register(schema)))
    assert len(cells) == 16 and cells[2].register_entry.data.bitstring == b"\xde\xad\xbe\xef"
    # wildcard write
    ctl.write(update("modify", register_entry=register(schema, None, b"\x07")))
    assert {c.register_entry.data.bitstring for c in
            ctl.read(p4r.Entity(register_entry=register(schema)))} == {b"\x07"}
    with pytest.raises(grpc.RpcError):
        ctl.read(p4r.Entity(register_entry=register(schema, 16)))


def test_meter_config(ctl, schema):
    mid = schema.meters.find("rate_meter").id
    cfg = p4r.MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200)
    ctl.write(update("modify", meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1),
                                                          config=cfg)))
    (r,) = ctl.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    assert r.meter_entry.config == cfg
    (r0,) = ctl.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=0))))
    assert not r0.meter_entry.HasField("config")  # default: all GREEN
    # reset to default
    ctl.write(update("modify", meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    (r,) = ctl.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid, index=p4r.Index(index=1))))
    assert not r.meter_entry.HasField("config")
    assert len(ctl.read(p4r.Entity(meter_entry=p4r.MeterEntry(meter_id=mid)))) == 4


def mcast(gid, *replicas, metadata=b""):
    pre = p4r.PacketReplicationEngineEntry()
    g = pre.multicast_group_entry
    g.multicast_group_id = gid
    g.metadata = metadata
    for port, inst in replicas:
        g.replicas.add(port=port.to_bytes(2, "big"), instance=inst)
    return pre


def test_multicast_group(ctl, schema, switch):
    ctl.write(update("insert", packet_replication_engine_entry=mcast(7, (2, 1), (3, 1), (4, 2),
                                                                     metadata=b"g")))
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                       "flood", {"group": 7})))
    switch.inject(1, eth(5))
    assert sorted(p for p, _ in switch.sent) == [2, 3, 4]
    switch.sent.clear()
    (r,) = ctl.read(p4r.Entity(packet_replication_engine_entry=mcast(7)))
    g = r.packet_replication_engine_entry.multicast_group_entry
    assert sorted((int.from_bytes(x.port, "big"), x.instance) for x in g.replicas) == [
        (2, 1), (3, 1), (4, 2)]
    assert g.metadata == b"g"
    ctl.write(update("modify", packet_replication_engine_entry=mcast(7, (6, 0))))
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [6]
    switch.sent.clear()
    with pytest.raises(grpc.RpcError):
        ctl.write(update("insert", packet_replication_engine_entry=mcast(7)))
    with pytest.raises(grpc.RpcError):  # duplicate replica
        ctl.write(update("insert", packet_replication_engine_entry=mcast(8, (2, 1), (2, 1))))
    ctl.write(update("delete", packet_replication_engine_entry=mcast(7)))
    switch.inject(1, eth(5))
    assert switch.sent == []
    assert ctl.read(p4r.Entity(packet_replication_engine_entry=mcast(0))) == []


def test_clone_sessions(ctl):
    pre = p4r.PacketReplicationEngineEntry()
    cs = pre.clone_session_entry
    cs.session_id = 5
    cs.replicas.add(port=b"\x03", instance=1)
    ctl.write(update("insert", packet_replication_engine_entry=pre))
    q = p4r.PacketReplicationEngineEntry(clone_session_entry=p4r.CloneSessionEntry(session_id=5))
    (r,) = ctl.read(p4r.Entity(packet_replication_engine_entry=q))
    got = r.packet_replication_engine_entry.clone_session_entry
    assert got.session_id == 5 and got.replicas[0].port == b"\x03"
    # the session's group (32768 + 5) is not a visible multicast group
    assert ctl.read(p4r.Entity(packet_replication_engine_entry=mcast(0))) == []
    cs.replicas[0].port = b"\x04"
    ctl.write(update("modify", packet_replication_engine_entry=pre))
    ctl.write(update("delete", packet_replication_engine_entry=pre))
    assert ctl.read(p4r.Entity(packet_replication_engine_entry=q)) == []
    with pytest.raises(grpc.RpcError):
        ctl.write(update("delete", packet_replication_engine_entry=pre))


@pytest.mark.parametrize("p4c_style", [False, True])
def test_clone_session_copies_packets(client_factory, schema, switch, p4c_style):
    from tests.switch import sw_program as program
    c = client_factory(1)
    text = program.p4c_style_json_text() if p4c_style else program.json_text()
    c.set_pipeline(program.p4info(), text.encode())
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 11},
                                                     "mirror", {"port": 2})))
    switch.inject(1, eth(11))
    assert [p for p, _ in switch.sent] == [2]  # no session 5 yet: no clone
    switch.sent.clear()
    pre = p4r.PacketReplicationEngineEntry()
    pre.clone_session_entry.session_id = 5
    pre.clone_session_entry.replicas.add(port=b"\x06", instance=1)
    pre.clone_session_entry.replicas.add(port=b"\x07", instance=1)
    c.write(update("insert", packet_replication_engine_entry=pre))
    switch.inject(1, eth(11))
    assert sorted(p for p, _ in switch.sent) == [2, 6, 7]
    assert all(d == eth(11) for _, d in switch.sent)
