"""SetForwardingPipelineConfig / GetForwardingPipelineConfig / Capabilities."""

from __future__ import annotations

import json

import grpc
import pytest
from finsy.proto import p4i, p4r

from tests.switch import sw_program as program
from tests.switch.sw_client import SFP, update
from tests.dataplane.programs import assign, eth, ethernet_program, field, hexv, table
from tests.switch.sw_entities import table_entry

from p4scope.switch.p4runtime.devconfig import decode_device_config, encode_legacy

GFP = p4r.GetForwardingPipelineConfigRequest


def test_capabilities(switch, client_factory):
    c = client_factory(arbitrate=False)
    assert c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == "1.3.0"


def test_raw_json_config_as_p4c_ptf(client_factory, schema):
    # p4c's PTF base test: device 0, election id 1, VERIFY_AND_COMMIT, raw JSON
    c = client_factory(1)
    c.set_pipeline(program.p4info(), program.json_text().encode())
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1


def test_legacy_p4deviceconfig_as_tutorials(client_factory, schema):
    # p4lang tutorials' p4runtime_lib: p4.tmp.P4DeviceConfig{reassign, device_data}
    c = client_factory(1)
    cfg = encode_legacy(program.json_text().encode(), reassign=True, extras={"k": "v"})
    c.set_pipeline(program.p4info(), cfg)
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    got = c.stub.GetForwardingPipelineConfig(GFP(device_id=0))
    assert got.config.p4_device_config == cfg  # read-write symmetry


def test_legacy_decoder():
    cfg = decode_device_config(encode_legacy(b'{"a": 1}', True, {"x": "y", "z": ""}))
    assert cfg.legacy and cfg.reassign and cfg.device_data == b'{"a": 1}'
    assert cfg.extras == {"x": "y", "z": ""}
    raw = decode_device_config(b'  \n{"a": 1}')
    assert not raw.legacy and raw.device_data == b'  \n{"a": 1}'
    assert decode_device_config(b"").device_data == b""
    with pytest.raises(Exception, match="neither BMv2 JSON"):
        decode_device_config(b"\xff\xff\xff")


def test_p4c_style_json_with_copied_actions(client_factory, schema, switch):
    c = client_factory(1)
    c.set_pipeline(program.p4info(), program.p4c_style_json_text().encode())
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    from tests.switch.sw_entities import eth
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [2]


def test_get_response_types(ctl):
    full = ctl.stub.GetForwardingPipelineConfig(GFP(device_id=0))
    assert full.config.p4info == program.p4info()
    assert full.config.p4_device_config == program.json_text().encode()
    ctl.set_pipeline(program.p4info(), program.json_text().encode(), cookie=42)
    only = ctl.stub.GetForwardingPipelineConfig(GFP(device_id=0, response_type=GFP.COOKIE_ONLY))
    assert only.config.cookie.cookie == 42 and not only.config.HasField("p4info")
    p4 = ctl.stub.GetForwardingPipelineConfig(GFP(device_id=0, response_type=GFP.P4INFO_AND_COOKIE))
    assert p4.config.HasField("p4info") and not p4.config.p4_device_config
    dc = ctl.stub.GetForwardingPipelineConfig(
        GFP(device_id=0, response_type=GFP.DEVICE_CONFIG_AND_COOKIE))
    assert dc.config.p4_device_config and not dc.config.HasField("p4info")


def test_get_before_set_is_empty(client_factory):
    c = client_factory(1)
    assert not c.stub.GetForwardingPipelineConfig(GFP(device_id=0)).HasField("config")


def test_verify_changes_nothing(client_factory):
    c = client_factory(1)
    c.set_pipeline(program.p4info(), program.json_text().encode(), action=SFP.VERIFY)
    assert not c.stub.GetForwardingPipelineConfig(GFP(device_id=0)).HasField("config")


def test_save_then_commit(client_factory, schema, switch):
    from tests.switch.sw_entities import eth
    c = client_factory(1)
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(None, b"", action=SFP.COMMIT)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    c.set_pipeline(program.p4info(), program.json_text().encode(), action=SFP.VERIFY_AND_SAVE)
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    switch.inject(1, eth(5))
    assert switch.sent == []  # not committed: the old (empty) dataplane forwards
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), program.json_text().encode(), action=SFP.COMMIT)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    c.set_pipeline(None, b"", action=SFP.COMMIT)
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [2]


def test_reconcile_keeps_state(ctl, schema, switch):
    from tests.switch.sw_entities import eth
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                       "forward", {"port": 2})))
    mc = p4r.PacketReplicationEngineEntry()
    mc.multicast_group_entry.multicast_group_id = 7
    mc.multicast_group_entry.replicas.add(port=b"\x03", instance=1)
    ctl.write(update("insert", packet_replication_engine_entry=mc))
    ctl.set_pipeline(program.p4info(), program.json_text().encode(),
                     action=SFP.RECONCILE_AND_COMMIT)
    assert len(ctl.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1
    assert len(ctl.read(p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
        multicast_group_entry=p4r.MulticastGroupEntry())))) == 1
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [2]


def test_commit_clears_state(ctl, schema):
    ctl.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                       "forward", {"port": 2})))
    ctl.set_pipeline(program.p4info(), program.json_text().encode())
    assert ctl.read(p4r.Entity(table_entry=p4r.TableEntry())) == []


@pytest.mark.parametrize("mutate, code, text", [
    (lambda r: setattr(r, "action", SFP.UNSPECIFIED), "INVALID_ARGUMENT", "action"),
    (lambda r: r.ClearField("config"), "INVALID_ARGUMENT", "config"),
    (lambda r: r.config.ClearField("p4info"), "INVALID_ARGUMENT", "p4info"),
    (lambda r: setattr(r.config, "p4_device_config", b"{ not json"), "INVALID_ARGUMENT", "JSON"),
    (lambda r: setattr(r.config, "p4_device_config", b'{"pipelines": 3}'), "INVALID_ARGUMENT",
     "BMv2 JSON"),
    (lambda r: setattr(r, "device_id", 9), "NOT_FOUND", "device"),
    (lambda r: r.config.p4info.tables.add().preamble.name, "INVALID_ARGUMENT", "id 0"),
])
def test_bad_configs(client_factory, mutate, code, text):
    c = client_factory(1)
    req = SFP(device_id=0, action=SFP.VERIFY_AND_COMMIT)
    req.election_id.low = 1
    req.config.p4info.CopyFrom(program.p4info())
    req.config.p4_device_config = program.json_text().encode()
    mutate(req)
    with pytest.raises(grpc.RpcError) as e:
        c.stub.SetForwardingPipelineConfig(req)
    assert e.value.code().name == code
    assert text in e.value.details()


def test_a_config_set_again_is_read_again_when_it_failed(client_factory, schema):
    # the switch remembers the programs it read (a testbed sets the same one
    # before every case), never a failure: a bad JSON is refused each time,
    # and the good one set after it works
    c = client_factory(1)
    for _ in range(2):
        with pytest.raises(grpc.RpcError) as e:
            c.set_pipeline(program.p4info(), b'{"pipelines": 3}')
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        c.set_pipeline(program.p4info(), program.json_text().encode())
        c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                         "forward", {"port": 2})))
        assert len(c.read(p4r.Entity(table_entry=p4r.TableEntry()))) == 1


def test_p4info_not_matching_json(client_factory, schema):
    c = client_factory(1)
    # a table p4c left out of the JSON: accepted, refused when used
    info = program.p4info()
    info.tables[0].preamble.name = "IngressImpl.nope"
    c.set_pipeline(info, program.json_text().encode())
    te = table_entry(schema, "fwd", {"hdr.ethernet.dst": 5}, "forward", {"port": 2})
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("insert", table_entry=te))
    from tests.switch.sw_client import errors_of
    (err,) = errors_of(e.value)
    assert err.canonical_code == 3 and "IngressImpl.nope" in err.message
    # a match kind that differs: the wrong JSON
    info = program.p4info()
    info.tables[0].match_fields[0].match_type = p4i.MatchField.TERNARY
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(info, program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "ternary" in e.value.details()
    # another program's JSON altogether
    from p4scope.bench.p4runtime import _compile
    _, other = _compile()
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), other)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no table of the P4Info" in e.value.details()


@pytest.mark.parametrize("p4info", [p4i.P4Info(), p4i.P4Info(pkg_info=p4i.PkgInfo(arch="v1model"))])
def test_empty_p4info_is_refused(client_factory, switch, p4info):
    c = client_factory(1)
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(p4info, program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "p4info: empty" in e.value.details() and "table(s)" in e.value.details()
    assert switch.device.pipeline is None


def test_empty_p4info_is_accepted_for_a_program_without_control_plane_objects(client_factory,
                                                                             switch):
    """p4c gives a program whose only tables are the hidden ones of apply-block
    statements an empty P4Info: the switch takes that pair and runs it."""
    to_port_2 = {"name": "to_port_2", "id": 0, "runtime_data": [],
                 "primitives": [assign(field("standard_metadata", "egress_spec"), hexv(2))]}
    hidden = table("tbl_to_port_2", 0, [], [0], ["to_port_2"], default=0)
    device_config = ethernet_program([to_port_2], [hidden], "tbl_to_port_2").encode()
    c = client_factory(1)
    c.set_pipeline(p4i.P4Info(), device_config)
    got = c.stub.GetForwardingPipelineConfig(GFP(device_id=0))
    assert got.config.p4info == p4i.P4Info() and got.config.p4_device_config == device_config
    switch.inject(1, eth())
    assert switch.sent == [(2, eth())]


def test_deeply_nested_device_config_is_refused(client_factory):
    c = client_factory(1)
    depth = 100_000
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), b'{"a":' * depth + b"1" + b"}" * depth)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nested too deeply" in e.value.details()


def test_backup_cannot_set_pipeline(client_factory):
    client_factory(5)
    backup = client_factory(2)
    with pytest.raises(grpc.RpcError) as e:
        backup.set_pipeline(program.p4info(), program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize("bits", [2**31, 2**32 - 1])
def test_header_wider_than_64_kib_is_refused(client_factory, switch, bits):
    # BMv2 has no bound of its own; p4scope refuses headers over 64 KiB before laying them out
    c = client_factory(1)
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(program.p4info(), program.huge_field_json(bits).encode())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 65536 bytes" in e.value.details()
    assert switch.device.pipeline is None



def _fwd_field(info):
    t = next(t for t in info.tables if t.preamble.name == "IngressImpl.fwd")
    return t.match_fields[0]  # hdr.ethernet.dst, 48 bits in the JSON


@pytest.mark.parametrize("bits", [2**31 - 1, 49, 47])
def test_match_field_wider_or_narrower_than_json_is_refused(client_factory, switch, bits):
    # the P4Info must describe the device's keys: BMv2 takes keys of its fields' sizes only
    c = client_factory(1)
    info = program.p4info()
    _fwd_field(info).bitwidth = bits
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(info, program.json_text().encode())
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    d = e.value.details()
    assert "'IngressImpl.fwd'" in d and "'hdr.ethernet.dst'" in d
    assert f"{bits} bits wide in the P4Info and 48 in the BMv2 JSON" in d
    assert switch.device.pipeline is None


def test_masked_key_may_be_narrower_than_its_field(client_factory):
    # p4c keys a slice as its field with a mask: the P4Info has the slice's width
    c = client_factory(1)
    doc = program.p4c_style_json()
    fwd = next(t for p in doc["pipelines"] for t in p["tables"] if t["name"] == "IngressImpl.fwd")
    fwd["key"][0]["mask"] = "0x00000000ffff"
    info = program.p4info()
    _fwd_field(info).bitwidth = 16
    c.set_pipeline(info, json.dumps(doc).encode())
    _fwd_field(info).bitwidth = 64  # but never wider
    with pytest.raises(grpc.RpcError) as e:
        c.set_pipeline(info, json.dumps(doc).encode())
    assert "64 bits wide in the P4Info and 48 in the BMv2 JSON" in e.value.details()


def test_translated_key_is_checked_against_the_device_width(client_factory, schema, switch):
    # @p4runtime_translation: the P4Info has the SDN width (p4c's layout), which may differ
    # from the JSON's; the switch does not translate, so a value the device's 48-bit field
    # cannot hold is OUT_OF_RANGE (BMv2 refuses a key of the wrong size) rather than cut
    c = client_factory(1)
    info = program.p4info()
    info.type_info.new_types["Mac_t"].translated_type.uri = "example.org/Mac_t"
    info.type_info.new_types["Mac_t"].translated_type.sdn_bitwidth = 64
    f = _fwd_field(info)
    f.bitwidth = 64
    f.type_name.name = "Mac_t"
    c.set_pipeline(info, program.json_text().encode())
    wide = table_entry(schema, "fwd", {"hdr.ethernet.dst": (1 << 56) | 5}, "forward", {"port": 3})
    with pytest.raises(grpc.RpcError) as e:
        c.write(update("insert", table_entry=wide))
    from tests.switch.sw_client import errors_of
    (err,) = errors_of(e.value)
    assert err.canonical_code == grpc.StatusCode.OUT_OF_RANGE.value[0]
    assert "device's 48-bit field" in err.message and "hdr.ethernet.dst" in err.message
    assert c.read(p4r.Entity(table_entry=p4r.TableEntry())) == []
    c.write(update("insert", table_entry=table_entry(schema, "fwd", {"hdr.ethernet.dst": 5},
                                                     "forward", {"port": 2})))
    from tests.switch.sw_entities import eth
    switch.inject(1, eth(5))
    assert [p for p, _ in switch.sent] == [2]
