"""The controller library without a switch: name lookup, values, P4Info
loading, entity encoding, INT report parsing, topology-derived routes."""

from __future__ import annotations

import struct

import pytest

from p4scope.control import Schema, TableEntry, UnknownName
from p4scope.control.entities import EntityError, encode_match
from p4scope.control.schema import NameIndex
from p4scope.control.reports import ReportError, parse_report
from p4scope.control.apps.routing import (HostAttachment, NextHop, RoutingTopology,
                                          topology_routes)
from p4scope.control import values


@pytest.fixture(scope="module")
def schema(dut_pipeline) -> Schema:
    return dut_pipeline.schema


# ----- names -------------------------------------------------------------------------

def test_names_full_alias_and_unique_suffix():
    ix: NameIndex[int] = NameIndex("table")
    ix.add("Ingress.acl", 1, ("acl_alias",))
    ix.add("Ingress.telemetry.tel_port", 2)
    ix.add("Egress.telemetry.tel_port2", 3)
    assert ix.find("Ingress.acl") == 1 and ix.find("acl_alias") == 1 and ix.find("acl") == 1
    assert ix.find("tel_port") == 2 and ix.find("telemetry.tel_port") == 2


def test_names_ambiguous_suffix_lists_candidates():
    ix: NameIndex[int] = NameIndex("match field", "table 't'")
    ix.add("hdr.ipv4.src_addr", 1)
    ix.add("hdr.inner.src_addr", 2)
    with pytest.raises(UnknownName) as e:
        ix.find("src_addr")
    assert "ambiguous" in str(e.value) and "hdr.inner.src_addr" in str(e.value)
    assert ix.find("ipv4.src_addr") == 1


def test_names_did_you_mean(schema):
    with pytest.raises(UnknownName) as e:
        schema.table("ipv4")
    assert "did you mean 'DutIngress.ipv4_lpm'" in str(e.value)
    with pytest.raises(UnknownName) as e:
        schema.table("dmac").action("fwd")
    assert "DutIngress.forward" in str(e.value)
    with pytest.raises(UnknownName) as e:
        schema.counter("drop_countr")
    assert "DutIngress.drop_counter" in str(e.value)


def test_every_object_kind_by_name(schema):
    assert schema.table("smac").idle_timeout
    assert schema.table("acl").needs_priority
    assert schema.table("dmac").field("dst_addr").bitwidth == 48
    assert schema.action("set_next_hop").param("dst_mac").bitwidth == 48
    assert schema.counter("drop_counter").size == 8192
    assert schema.direct_counter("acl").table_id == schema.table("acl").id
    assert schema.register("tel_burst_id").bitwidth == 32
    assert schema.digest("mac_learn_t").members == (("src_addr", 48), ("ingress_port", 9))
    assert schema.profile_of(schema.table("ipv4_lpm")).with_selector
    assert [f.name for f in schema.controller_header("packet_out").fields][0] == "egress_port"


def test_p4info_loads_from_text_json_and_binary(tmp_path, dut_pipeline):
    from google.protobuf import json_format, text_format

    info = dut_pipeline.p4info
    (tmp_path / "a.p4info.txtpb").write_text(text_format.MessageToString(info))
    (tmp_path / "a.p4info.json").write_text(json_format.MessageToJson(info))
    (tmp_path / "a.p4info.bin").write_bytes(info.SerializeToString())
    for name in ("a.p4info.txtpb", "a.p4info.json", "a.p4info.bin"):
        assert Schema(tmp_path / name).table("smac").id == Schema(info).table("smac").id


# ----- values ------------------------------------------------------------------------

def test_values():
    assert values.encode("10.0.0.1", 32) == b"\x0a\x00\x00\x01"
    assert values.encode("00:00:00:00:00:01", 48) == b"\x01"
    assert values.encode(0, 9) == b"\x00"
    assert values.encode("0x1ff", 9) == b"\x01\xff"
    assert values.to_int("2001:db8::1") == 0x20010DB8000000000000000000000001
    with pytest.raises(values.BadValue, match="does not fit in 9 bits"):
        values.encode(512, 9)
    with pytest.raises(values.BadValue, match="not a number"):
        values.encode("ten", 8)


# ----- entities -----------------------------------------------------------------------

def test_match_encoding_and_wildcards(schema):
    t = schema.table("acl")
    fms = encode_match(t, {"ipv4.dst_addr": ("10.1.2.3", "255.255.0.0"),
                           "ipv4.src_addr": (5, 0),                  # mask 0: omitted
                           "l4_dst_port": (0, 65535),                # full range: omitted
                           "l4_src_port": (10, 20)})
    assert len(fms) == 2
    tern = next(f for f in fms if f.WhichOneof("field_match_type") == "ternary")
    assert tern.ternary.value == b"\x0a\x01\x00\x00"      # value masked
    lpm = encode_match(schema.table("ipv4_lpm"), {"dst_addr": "10.1.2.3/16"})[0]
    assert (lpm.lpm.value, lpm.lpm.prefix_len) == (b"\x0a\x01\x00\x00", 16)
    assert encode_match(schema.table("ipv4_lpm"), {"dst_addr": "0.0.0.0/0"}) == []


def test_entry_checks(schema):
    with pytest.raises(EntityError, match="priority"):
        TableEntry("acl", {"protocol": (6, 0xFF)}, "deny").encode(schema)
    with pytest.raises(EntityError, match="needs parameter 'port'"):
        TableEntry("dmac", {"dst_addr": 1}, "forward").encode(schema)
    with pytest.raises(UnknownName, match="parameter"):
        TableEntry("dmac", {"dst_addr": 1}, "forward", {"port": 1, "prot": 2}).encode(schema)
    with pytest.raises(EntityError, match="idle timeouts"):
        TableEntry("dmac", {"dst_addr": 1}, "forward", {"port": 1},
                   idle_timeout_ns=10).encode(schema)
    msg = TableEntry("dmac", {"dst_addr": 1}, "forward", {"port": 3}).encode(schema)
    back = TableEntry.decode(msg, schema)
    assert (back.table, back.match, back.action, back.params) == (
        "DutIngress.dmac", {"hdr.ethernet.dst_addr": 1}, "DutIngress.forward", {"port": 3})


# ----- reports ------------------------------------------------------------------------

def _report(md_words=1, ds=b"", inner=b"", rep_len=None, ver=2):
    md = struct.pack("!HH", 3, 4)                       # bit 1 only
    body = md + ds + inner
    rl = rep_len if rep_len is not None else (8 + len(body)) // 4
    hdr = struct.pack("!II", (ver << 28) | 5, 42)
    ind = struct.pack("!I", (1 << 28) | (2 << 24) | (rl << 16) | (md_words << 8) | 0x4 << 4)
    main = struct.pack("!4H", 0x4000, 0x1234, 0, 0)
    return hdr + ind + main + body


def test_report_parser_follows_the_lengths():
    r = parse_report(_report(inner=b"abcd"))
    assert (r.seq, r.node_id, r.congested, r.domain_id) == (5, 42, True, 0x1234)
    assert (r.md.ingress_port, r.md.egress_port) == (3, 4)
    assert r.inner == b"abcd" and r.queue is None


def test_report_parser_rejects_bad_reports():
    with pytest.raises(ReportError, match="version"):
        parse_report(_report(ver=1))
    with pytest.raises(ReportError, match="Report Length"):
        parse_report(_report(rep_len=40))
    with pytest.raises(ReportError, match="shorter"):
        parse_report(b"\x20" * 8)


# ----- routes from a topology --------------------------------------------------------

def test_topology_routes_use_every_shortest_path():
    # h1 - s1 ={2 links via s2, s3}= s4 - h2
    topo = RoutingTopology(
        hosts=[HostAttachment("h1", "10.0.0.1/24", "00:00:00:00:00:01", "s1", 1),
               HostAttachment("h2", "10.0.0.2/24", "00:00:00:00:00:02", "s4", 1)],
        links=[("s1", 2, "s2", 1), ("s1", 3, "s3", 1), ("s2", 2, "s4", 2), ("s3", 2, "s4", 3)],
        router_macs={"s2": "02:00:00:00:00:02", "s3": "02:00:00:00:00:03"})
    r1 = topology_routes(topo, "s1")
    assert r1["10.0.0.1/32"] == [NextHop("00:00:00:00:00:01", port=1)]
    assert r1["10.0.0.2/32"] == [NextHop(values.to_int("02:00:00:00:00:02"), port=2),
                                 NextHop(values.to_int("02:00:00:00:00:03"), port=3)]
    r2 = topology_routes(topo, "s2")
    assert [h.port for h in r2["10.0.0.2/32"]] == [2]


def test_routes_from_a_topologies_leaf_spine():
    builders = pytest.importorskip("p4scope.topologies.builders")
    from p4scope.control.apps.routing import from_topology

    topo = from_topology(builders.leaf_spine(leaves=2, spines=2, hosts_per_leaf=1))
    leaves = sorted({h.switch for h in topo.hosts})
    assert len(topo.hosts) == 2 and len(leaves) == 2
    far = next(h for h in topo.hosts if h.switch == leaves[1])
    hops = topology_routes(topo, leaves[0])[str(far.ip).split("/")[0] + "/32"]
    assert len(hops) == 2            # one through each spine
