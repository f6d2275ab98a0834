"""Packet-out / packet-in through the CPU port, and digests."""

from __future__ import annotations

import time

import pytest
from finsy.proto import p4r, rpc_code

from tests.switch.sw_client import update
from tests.switch.sw_entities import eth, table_entry

from p4scope.switch.p4runtime.errors import P4RuntimeError
from p4scope.switch.p4runtime.packetio import build_packet_out, pack_header, parse_packet_in
from p4scope.switch.p4runtime.schema import PacketMetadataInfo, ParamInfo


def test_header_packing():
    info = PacketMetadataInfo(1, "packet_out", (ParamInfo(1, "egress_port", 9),
                                                ParamInfo(2, "_pad", 7)))
    assert pack_header(info, [3, 0]) == b"\x01\x80"
    msg = p4r.PacketIn()
    assert parse_packet_in(info, b"\x01\x80payload", msg)
    assert [m.value for m in msg.metadata] == [b"\x03", b"\x00"] and msg.payload == b"payload"
    assert not parse_packet_in(info, b"\x01", p4r.PacketIn())
    out = p4r.PacketOut(payload=b"x")
    out.metadata.add(metadata_id=1, value=b"\x00\x03")
    out.metadata.add(metadata_id=2, value=b"\x00")
    assert build_packet_out(info, out) == b"\x01\x80x"


def test_every_packet_out_field_is_required():
    # spec: as many metadata values as the P4Info's packet_out header has (PI zeroes them)
    info = PacketMetadataInfo(1, "packet_out", (ParamInfo(1, "egress_port", 9),
                                                ParamInfo(2, "_pad", 7)))
    out = p4r.PacketOut(payload=b"x")
    out.metadata.add(metadata_id=2, value=b"\x00")
    with pytest.raises(P4RuntimeError, match="'egress_port'") as e:
        build_packet_out(info, out)
    assert e.value.code == rpc_code.Code.INVALID_ARGUMENT
    with pytest.raises(P4RuntimeError, match="'egress_port', '_pad'"):
        build_packet_out(info, p4r.PacketOut(payload=b"x"))


def packet_out(schema, port: int, payload: bytes) -> p4r.StreamMessageRequest:
    req = p4r.StreamMessageRequest()
    req.packet.payload = payload
    (f_port, f_pad) = [m for m in schema.p4info.controller_packet_metadata
                       if m.preamble.name == "packet_out"][0].metadata
    req.packet.metadata.add(metadata_id=f_port.id, value=port.to_bytes(2, "big"))
    req.packet.metadata.add(metadata_id=f_pad.id, value=b"\x00")
    return req


def test_packet_out_is_sent_on_its_port(ctl, schema, switch):
    frame = eth(0x0A0B0C0D0E0F)
    ctl.send(packet_out(schema, 3, frame))
    deadline = time.monotonic() + 3
    while not switch.sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert switch.sent == [(3, frame)]  # the packet_out header is gone


def test_round_trip_packet_in(ctl, schema, switch):
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 7},
                                                       "to_cpu")))
    frame = eth(7, payload=b"hello" + b"\x00" * 41)
    switch.inject(4, frame)
    msg = ctl.expect("packet").packet
    assert msg.payload == frame
    md = {m.metadata_id: m.value for m in msg.metadata}
    info = [m for m in schema.p4info.controller_packet_metadata
            if m.preamble.name == "packet_in"][0]
    assert md[info.metadata[0].id] == b"\x04"  # ingress_port
    # and back out: a packet-out to port 4 carries it again
    ctl.send(packet_out(schema, 5, msg.payload))
    deadline = time.monotonic() + 3
    while not switch.sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert switch.sent == [(5, frame)]


def test_bad_packet_out_reports_stream_error(ctl, schema, switch):
    req = packet_out(schema, 3, b"x")
    req.packet.metadata[0].metadata_id = 99
    ctl.send(req)
    err = ctl.expect("error").error
    assert err.canonical_code == 3 and "metadata_id" in err.message  # INVALID_ARGUMENT
    assert err.packet_out.packet_out.payload == b"x"
    assert switch.sent == []


def test_packet_out_without_egress_port_is_dropped_and_counted(ctl, schema, switch):
    req = packet_out(schema, 3, b"x")
    del req.packet.metadata[0]  # egress_port
    ctl.send(req)
    err = ctl.expect("error").error
    assert err.canonical_code == rpc_code.Code.INVALID_ARGUMENT and "egress_port" in err.message
    bare = p4r.StreamMessageRequest()
    bare.packet.payload = eth(1)  # no metadata at all
    ctl.send(bare)
    err = ctl.expect("error").error
    assert err.canonical_code == rpc_code.Code.INVALID_ARGUMENT
    assert err.packet_out.packet_out.payload == eth(1)
    time.sleep(0.1)
    assert switch.sent == []
    assert switch.device.stats.packet_out_drops == 2 and switch.device.stats.packet_outs == 0


def digest_entry(schema, timeout_ns=0, size=0, ack_ns=0):
    return p4r.DigestEntry(digest_id=schema.digests.find("learn_t").id,
                           config=p4r.DigestEntry.Config(max_timeout_ns=timeout_ns,
                                                         max_list_size=size,
                                                         ack_timeout_ns=ack_ns))


def learn_setup(ctl, schema, **cfg):
    ctl.write(update("insert", digest_entry=digest_entry(schema, **cfg)))
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 9},
                                                       "learn")))


def test_digest_each_message(ctl, schema, switch):
    learn_setup(ctl, schema)
    switch.inject(2, eth(9, src=0x112233445566))
    d = ctl.expect("digest").digest
    assert d.digest_id == schema.digests.find("learn_t").id and d.list_id == 1
    (data,) = d.data
    assert [m.bitstring for m in data.struct.members] == [bytes.fromhex("112233445566"), b"\x02"]
    (cfg,) = ctl.read(p4r.Entity(digest_entry=p4r.DigestEntry()))
    assert cfg.digest_entry.digest_id == d.digest_id


def test_digest_list_size_and_dedup(ctl, schema, switch):
    learn_setup(ctl, schema, timeout_ns=10**10, size=3, ack_ns=10**10)
    for src in (1, 2, 1, 3):  # 1 twice: one message
        switch.inject(2, eth(9, src=src))
    d = ctl.expect("digest").digest
    assert [int.from_bytes(x.struct.members[0].bitstring, "big") for x in d.data] == [1, 2, 3]
    # not acknowledged: learned again, nothing sent
    switch.inject(2, eth(9, src=1))
    for src in (4, 5):
        switch.inject(2, eth(9, src=src))
    assert not [m for m in ctl.drain(0.2) if m.WhichOneof("update") == "digest"]
    # acknowledged: 1 may be sent again
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id = d.digest_id
    ack.digest_ack.list_id = d.list_id
    ctl.send(ack)
    time.sleep(0.1)
    switch.inject(2, eth(9, src=1))
    d2 = ctl.expect("digest").digest
    assert d2.list_id == 2 and len(d2.data) == 3


def test_digest_timeout_flushes(ctl, schema, switch):
    learn_setup(ctl, schema, timeout_ns=50_000_000, size=100)
    switch.inject(2, eth(9, src=1))
    t0 = time.monotonic()
    d = ctl.expect("digest", timeout=3).digest
    assert len(d.data) == 1 and time.monotonic() - t0 >= 0.03


def test_no_digest_until_configured(ctl, schema, switch):
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 9},
                                                       "learn")))
    switch.inject(2, eth(9, src=1))
    assert not [m for m in ctl.drain(0.2) if m.WhichOneof("update") == "digest"]
    ctl.write(update("insert", digest_entry=digest_entry(schema)))
    ctl.write(update("modify", digest_entry=digest_entry(schema, size=1)))
    ctl.write(update("delete", digest_entry=digest_entry(schema)))
    switch.inject(2, eth(9, src=1))
    assert not [m for m in ctl.drain(0.2) if m.WhichOneof("update") == "digest"]


def test_loopback_packet_out_to_packet_in(ctl, schema):
    frame = eth(0x0A0B0C0D0E0F)
    ctl.send(packet_out(schema, 255, frame))
    msg = ctl.expect("packet").packet
    assert msg.payload == frame
    assert msg.metadata[0].value == b"\xff"  # it entered on the CPU port


def test_loopback_with_p4c_style_json(client_factory, schema):
    from tests.switch import sw_program as program
    c = client_factory(1)
    c.set_pipeline(program.p4info(), program.p4c_style_json_text().encode())
    c.send(packet_out(schema, 255, eth(1)))
    assert c.expect("packet").packet.payload == eth(1)
