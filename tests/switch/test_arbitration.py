"""StreamChannel arbitration: primary and backups, as PI handles them."""

from __future__ import annotations

import time

import grpc
import pytest
from finsy.proto import p4r, rpc_code

from tests.switch import sw_program as program
from tests.switch.sw_client import StreamClosed, update
from tests.switch.sw_entities import eth, table_entry

OK, ALREADY_EXISTS, NOT_FOUND = rpc_code.Code.OK, rpc_code.Code.ALREADY_EXISTS, rpc_code.Code.NOT_FOUND


def eid(msg) -> int:
    e = msg.arbitration.election_id
    return (e.high << 64) | e.low


def test_first_controller_is_primary(client_factory):
    c = client_factory(arbitrate=False)
    msg = c.arbitrate(10)
    assert msg.arbitration.status.code == OK
    assert eid(msg) == 10 and msg.arbitration.device_id == 0


def test_backup_is_told_and_refused(client_factory, schema):
    primary = client_factory(10)
    primary.set_pipeline(program.p4info(), program.json_text().encode())
    backup = client_factory(arbitrate=False)
    msg = backup.arbitrate(5)
    assert msg.arbitration.status.code == ALREADY_EXISTS
    assert eid(msg) == 10  # the primary's id
    with pytest.raises(grpc.RpcError) as e:
        backup.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": 1}, "drop")))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # the backup may read
    assert backup.read(p4r.Entity(table_entry=p4r.TableEntry())) == []


def test_higher_id_takes_over_and_everyone_is_told(client_factory):
    a = client_factory(5)
    b = client_factory(arbitrate=False)
    msg = b.arbitrate(7)
    assert msg.arbitration.status.code == OK
    told = a.expect("arbitration")
    assert told.arbitration.status.code == ALREADY_EXISTS and eid(told) == 7


def test_primary_leaves_no_primary_until_one_arbitrates(client_factory, schema, switch):
    # spec (since 1.1): the server does not promote the next highest id
    a = client_factory(9)
    a.set_pipeline(program.p4info(), program.json_text().encode())
    a.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    b = client_factory(4)
    c = client_factory(2)
    b.drain(0.1)
    c.drain(0.1)
    a.close()
    for told in (b.expect("arbitration"), c.expect("arbitration")):
        assert told.arbitration.status.code == NOT_FOUND and eid(told) == 9
    with pytest.raises(grpc.RpcError) as e:
        b.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 6},
                                                         "forward", {"port": 3})))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # forwarding never stopped
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [2]
    # repeating its own (lower) id changes nothing and is not answered
    b.arbitrate(4, wait=False)
    assert not [m for m in b.drain(0.2) if m.WhichOneof("update") == "arbitration"]
    assert switch.device.arb.primary is None
    # an id at least the highest seen makes a primary; everyone is told
    msg = b.arbitrate(10)
    assert msg.arbitration.status.code == OK and eid(msg) == 10
    told = c.expect("arbitration")
    assert told.arbitration.status.code == ALREADY_EXISTS and eid(told) == 10
    b.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 6},
                                                     "forward", {"port": 3})))


def test_primary_reconnects_with_its_id(client_factory):
    a = client_factory(9)
    a.close()
    deadline = time.monotonic() + 3
    while True:  # the old stream may still hold id 9 for a moment
        again = client_factory(arbitrate=False)
        again.arbitrate(9, wait=False)
        try:
            msg = again.expect("arbitration")
            break
        except StreamClosed:  # INVALID_ARGUMENT: id 9 still in use
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert msg.arbitration.status.code == OK and eid(msg) == 9


def test_primary_demotes_itself(client_factory):
    a = client_factory(9)
    b = client_factory(4)
    a.drain()
    a.arbitrate(3, wait=False)
    msgs = [a.expect("arbitration"), b.expect("arbitration")]
    # no primary until an id of at least 9 arbitrates
    assert [m.arbitration.status.code for m in msgs] == [NOT_FOUND, NOT_FOUND]
    assert [eid(m) for m in msgs] == [9, 9]


def test_arbitration_without_election_id_is_never_primary(client_factory):
    a = client_factory(None, arbitrate=False)
    msg = a.arbitrate()
    assert msg.arbitration.status.code == NOT_FOUND
    assert not msg.arbitration.HasField("election_id")  # there never was a primary
    b = client_factory(None, arbitrate=False)  # no id: no clash with a's
    assert b.arbitrate().arbitration.status.code == NOT_FOUND
    c = client_factory(arbitrate=False)
    assert c.arbitrate(1).arbitration.status.code == OK
    told = a.expect("arbitration")
    assert told.arbitration.status.code == ALREADY_EXISTS and eid(told) == 1


def test_same_update_again_is_answered(client_factory):
    a = client_factory(9)
    assert a.arbitrate(9).arbitration.status.code == OK


def test_duplicate_election_id_ends_the_stream(client_factory):
    client_factory(9)
    b = client_factory(arbitrate=False)
    b.arbitrate(9, wait=False)
    with pytest.raises(StreamClosed):
        b.expect("arbitration")
    assert b.stream_error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_unknown_device_ends_the_stream(client_factory):
    b = client_factory(arbitrate=False, device_id=3)
    b.arbitrate(1, wait=False)
    with pytest.raises(StreamClosed):
        b.expect("arbitration")
    assert b.stream_error.code() == grpc.StatusCode.NOT_FOUND


def test_device_change_ends_the_stream(client_factory):
    a = client_factory(1)
    a.arbitrate(1, device_id=4, wait=False)
    with pytest.raises(StreamClosed):
        a.expect("arbitration")
    assert a.stream_error.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_at_most_16_controllers(client_factory):
    for i in range(16):
        client_factory(100 + i)
    extra = client_factory(arbitrate=False)
    extra.arbitrate(1, wait=False)
    with pytest.raises(StreamClosed):
        extra.expect("arbitration")
    assert extra.stream_error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_no_stream_no_election_id_is_denied(switch, client_factory, schema):
    # spec (not PI's grpc_cli convenience): with no primary, nobody may write,
    # and the primary check comes before the missing-pipeline one
    c = client_factory(None, arbitrate=False)
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 1},
                                                         "drop")))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert switch.device.pipeline is None
    # ... and one with an election id too: nobody is primary
    c.election_id = 1
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_request_without_election_id_is_denied_with_a_primary(ctl, client_factory, schema):
    other = client_factory(None, arbitrate=False)
    with pytest.raises(grpc.RpcError) as e:
        other.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": 1}, "drop")))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_packet_in_goes_to_primary_only(client_factory, schema, switch):
    a = client_factory(9)
    a.set_pipeline(program.p4info(), program.json_text().encode())
    b = client_factory(4)
    a.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "to_cpu")))
    a.drain()
    switch.inject(3, eth(5))
    assert a.expect("packet").packet.payload[:6] == (5).to_bytes(6, "big")
    time.sleep(0.1)
    assert not [m for m in b.drain(0.1) if m.WhichOneof("update") == "packet"]
