"""The error-code matrix: each malformed request gets the code the
P4Runtime spec prescribes, with a message naming the offending field, and
the server keeps serving."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import p4d, p4r

from tests.switch import sw_program as program
from tests.switch.sw_client import errors_of, update
from tests.switch.sw_entities import table_entry


def fwd(schema, dst=5, **kw):
    return table_entry(schema, "fwd", {"hdr.ethernet.dst": dst}, "forward", {"port": 2}, **kw)


def one_error(ctl, upd):
    """(code name, message) of a single-update Write that must fail."""
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(upd)
    assert e.value.code() == grpc.StatusCode.UNKNOWN
    (err,) = errors_of(e.value)
    return grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == err.canonical_code)
                           ).name, err.message


def t(schema, name):
    return schema.tables.find(name).id


CASES = {
    # malformed ids
    "unknown table id": (lambda s: update("insert", table_entry=p4r.TableEntry(
        table_id=0x02FFFFFF)), "INVALID_ARGUMENT", "table_id"),
    "table id of a counter": (lambda s: update("insert", table_entry=p4r.TableEntry(
        table_id=s.counters.find("port_packets").id)), "INVALID_ARGUMENT", "counter"),
    "unknown match field id": (lambda s: _with(fwd(s), lambda te: setattr(
        te.match[0], "field_id", 9)), "INVALID_ARGUMENT", "match[0].field_id"),
    "unknown action id": (lambda s: _with(fwd(s), lambda te: setattr(
        te.action.action, "action_id", 0x01ABCDEF)), "INVALID_ARGUMENT", "action_id"),
    "action not in table": (lambda s: update("insert", table_entry=table_entry(
        s, "routes", {"hdr.probe.addr": ("lpm", 1, 32)}, "drop")), "INVALID_ARGUMENT",
        "not an action of table"),
    "unknown param id": (lambda s: _with(fwd(s), lambda te: setattr(
        te.action.action.params[0], "param_id", 7)), "INVALID_ARGUMENT", "param_id"),
    "missing param": (lambda s: _with(fwd(s), lambda te: te.action.action.ClearField("params")),
                      "INVALID_ARGUMENT", "missing"),
    # wrong bit widths
    "key too wide": (lambda s: update("insert", table_entry=fwd(s, dst=1 << 48)),
                     "OUT_OF_RANGE", "48 bits"),
    "param too wide": (lambda s: update("insert", table_entry=table_entry(
        s, "fwd", {"hdr.ethernet.dst": 1}, "forward", {"port": 512})), "OUT_OF_RANGE",
        "params[0].value"),
    "empty bytestring": (lambda s: update("insert", table_entry=fwd(s, dst=b"")),
                         "OUT_OF_RANGE", "empty"),
    "lpm prefix too long": (lambda s: update("insert", table_entry=table_entry(
        s, "routes", {"hdr.probe.addr": ("lpm", 0, 33)}, "NoAction")), "INVALID_ARGUMENT",
        "prefix_len"),
    "lpm zero prefix": (lambda s: update("insert", table_entry=table_entry(
        s, "routes", {"hdr.probe.addr": ("lpm", 0, 0)}, "NoAction")), "INVALID_ARGUMENT",
        "don't care"),
    "lpm bits past prefix": (lambda s: update("insert", table_entry=table_entry(
        s, "routes", {"hdr.probe.addr": ("lpm", 0x0A000001, 8)}, "NoAction")),
        "INVALID_ARGUMENT", "beyond the prefix"),
    "ternary value outside mask": (lambda s: update("insert", table_entry=table_entry(
        s, "acl", {"hdr.probe.flags": ("ternary", 3, 1)}, "drop", priority=1)),
        "INVALID_ARGUMENT", "outside mask"),
    "ternary zero mask": (lambda s: update("insert", table_entry=table_entry(
        s, "acl", {"hdr.probe.flags": ("ternary", 0, 0)}, "drop", priority=1)),
        "INVALID_ARGUMENT", "zero mask"),
    "range low > high": (lambda s: update("insert", table_entry=table_entry(
        s, "acl", {"hdr.probe.level": ("range", 5, 4)}, "drop", priority=1)),
        "INVALID_ARGUMENT", "greater than high"),
    "range full": (lambda s: update("insert", table_entry=table_entry(
        s, "acl", {"hdr.probe.level": ("range", 0, 255)}, "drop", priority=1)),
        "INVALID_ARGUMENT", "don't care"),
    "wrong match kind": (lambda s: _with(fwd(s), lambda te: (
        te.match[0].ClearField("exact"), setattr(te.match[0].lpm, "prefix_len", 8))),
        "INVALID_ARGUMENT", "matched exact"),
    "missing exact field": (lambda s: _with(fwd(s), lambda te: te.ClearField("match")),
                            "INVALID_ARGUMENT", "missing"),
    "zero priority for ternary": (lambda s: update("insert", table_entry=table_entry(
        s, "acl", {"hdr.probe.flags": ("ternary", 1, 1)}, "drop")), "INVALID_ARGUMENT",
        "priority"),
    "priority for exact": (lambda s: update("insert", table_entry=fwd(s, priority=3)),
                           "INVALID_ARGUMENT", "priority"),
    "is_const in a write": (lambda s: update("insert", table_entry=fwd(s, is_const=True)),
                            "INVALID_ARGUMENT", "is_const"),
    "no action on insert": (lambda s: update("insert", table_entry=_with_te(
        fwd(s), lambda te: te.ClearField("action"))), "INVALID_ARGUMENT", "action"),
    "insert default entry": (lambda s: update("insert", table_entry=p4r.TableEntry(
        table_id=t(s, "fwd"), is_default_action=True)), "INVALID_ARGUMENT", "default entry"),
    "member id for a direct table": (lambda s: _with(fwd(s), lambda te: setattr(
        te.action, "action_profile_member_id", 1)), "INVALID_ARGUMENT", "direct table"),
    "unknown member": (lambda s: update("insert", table_entry=_with_te(
        table_entry(s, "nexthop", {"hdr.probe.level": 1}),
        lambda te: setattr(te.action, "action_profile_member_id", 77))), "NOT_FOUND", "member 77"),
    "update type unset": (lambda s: update("unspecified", table_entry=fwd(s)),
                          "INVALID_ARGUMENT", "update type"),
    "no entity": (lambda s: p4r.Update(type=p4r.Update.INSERT), "INVALID_ARGUMENT", "entity"),
    # missing entries
    "modify missing": (lambda s: update("modify", table_entry=fwd(s, dst=77)),
                       "NOT_FOUND", "no entry"),
    "delete missing": (lambda s: update("delete", table_entry=fwd(s, dst=77)),
                       "NOT_FOUND", "no entry"),
    "delete missing member": (lambda s: update("delete", action_profile_member=p4r.ActionProfileMember(
        action_profile_id=s.action_profiles.find("nh_profile").id, member_id=4)),
        "NOT_FOUND", "member 4"),
    "delete missing group": (lambda s: update("delete", packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=3))), "NOT_FOUND",
        "group 3"),
    # externs
    "counter insert": (lambda s: update("insert", counter_entry=p4r.CounterEntry(
        counter_id=s.counters.find("port_packets").id)), "INVALID_ARGUMENT", "MODIFY"),
    "counter index too big": (lambda s: update("modify", counter_entry=p4r.CounterEntry(
        counter_id=s.counters.find("port_packets").id, index=p4r.Index(index=8))),
        "OUT_OF_RANGE", "index"),
    "counter negative index": (lambda s: update("modify", counter_entry=p4r.CounterEntry(
        counter_id=s.counters.find("port_packets").id, index=p4r.Index(index=-1))),
        "INVALID_ARGUMENT", "negative"),
    "register too wide": (lambda s: update("modify", register_entry=p4r.RegisterEntry(
        register_id=s.registers.find("scratch").id, index=p4r.Index(index=0),
        data=p4d.P4Data(bitstring=b"\x01\x00\x00\x00\x00"))), "OUT_OF_RANGE", "32 bits"),
    "meter trTCM with eburst": (lambda s: update("modify", meter_entry=p4r.MeterEntry(
        meter_id=s.meters.find("rate_meter").id, index=p4r.Index(index=0),
        config=p4r.MeterConfig(cir=1, cburst=1, pir=2, pburst=2, eburst=3))),
        "INVALID_ARGUMENT", "eburst"),
    "direct counter on table without one": (lambda s: update("insert", table_entry=_with_te(
        table_entry(s, "routes", {"hdr.probe.addr": ("lpm", 1, 32)}, "NoAction"),
        lambda te: te.counter_data.SetInParent())), "INVALID_ARGUMENT", "no direct counter"),
    "multicast group 0": (lambda s: update("insert", packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=0))),
        "INVALID_ARGUMENT", "0 is not"),
    "multicast group too high": (lambda s: update("insert", packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=40000))),
        "OUT_OF_RANGE", "too high"),
    "digest unknown": (lambda s: update("insert", digest_entry=p4r.DigestEntry(digest_id=5)),
                       "INVALID_ARGUMENT", "digest"),
    "extern entry": (lambda s: update("insert", extern_entry=p4r.ExternEntry(extern_id=1)),
                     "UNIMPLEMENTED", "extern"),
    "clone truncation": (lambda s: update("insert", packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        clone_session_entry=p4r.CloneSessionEntry(session_id=1, packet_length_bytes=64))),
        "UNIMPLEMENTED", "packet_length_bytes"),
}


def _with(te, f):
    f(te)
    return update("insert", table_entry=te)


def _with_te(te, f):
    f(te)
    return te


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_matrix(ctl, schema, case):
    build, code, text = CASES[case]
    got_code, msg = one_error(ctl, build(schema))
    assert got_code == code, msg
    assert text in msg


def test_duplicate_insert_in_one_batch(ctl, schema):
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(update("insert", table_entry=fwd(schema)),
                  update("insert", table_entry=fwd(schema, dst=6)),
                  update("insert", table_entry=fwd(schema)))
    errs = errors_of(e.value)
    assert [x.canonical_code for x in errs] == [0, 0, grpc.StatusCode.ALREADY_EXISTS.value[0]]
    assert "already has an entry" in errs[2].message and errs[2].space == "p4scope"
    assert "1 of 3" in e.value.details()
    # CONTINUE_ON_ERROR: the good ones are in
    assert len(ctl.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 2


def test_write_before_pipeline(client_factory, schema):
    c = client_factory(1)
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("insert", table_entry=fwd(schema)))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as e:
        c.read(p4r.Entity(table_entry=p4r.TableEntry()))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_non_primary_write(ctl, client_factory, schema):
    backup = client_factory(0)
    with pytest.raises(grpc.RpcError) as e:
        backup.write(update("insert", table_entry=fwd(schema)))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "not primary" in e.value.details()


def test_wrong_device_id(ctl, schema):
    ctl.device_id = 3
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(update("insert", table_entry=fwd(schema)))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as e:
        ctl.read(p4r.Entity(table_entry=p4r.TableEntry()))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_atomic_modes_unimplemented(ctl, schema):
    with pytest.raises(grpc.RpcError) as e:
        ctl.write(update("insert", table_entry=fwd(schema)), atomicity=1)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_bad_read_entity(ctl, schema):
    with pytest.raises(grpc.RpcError) as e:
        ctl.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02000001)))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as e:
        ctl.read(p4r.Entity())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_server_survives_garbage(ctl, schema, switch):
    # raw bytes that are not a WriteRequest: refused as grpcio refuses what its
    # deserializer cannot read (INTERNAL), and the server lives on
    call = ctl.channel.unary_unary("/p4.v1.P4Runtime/Write")
    with pytest.raises(grpc.RpcError) as e:
        call(b"\xff\xff\xff\xff", timeout=5)
    assert e.value.code() == grpc.StatusCode.INTERNAL
    ctl.write(update("insert", table_entry=fwd(schema)))
    assert len(ctl.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1
    assert program.CPU_PORT == 255
