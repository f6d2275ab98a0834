"""The topology format: parsing, derived values, and errors that name the field."""

import json

import pytest

from p4scope.topologies import builders
from p4scope.topologies.spec import (Endpoint, TopologyError, format_rate, from_dict, loads, parse_rate,
                                     rename_switches, with_switch_defaults)


def doc(**over):
    d = {
        "name": "t",
        "hosts": [{"name": "h1"}, {"name": "h2"}],
        "switches": [{"name": "s1"}],
        "links": [{"a": "h1", "b": "s1"}, {"a": "h2", "b": "s1"}],
    }
    d.update(over)
    return d


def error_of(d) -> str:
    with pytest.raises(TopologyError) as e:
        from_dict(d)
    return str(e.value)


def test_defaults_are_filled_in():
    t = from_dict(doc())
    assert [h.ip for h in t.hosts] == ["10.0.0.1/16", "10.0.0.2/16"]
    assert [h.mac for h in t.hosts] == ["02:00:00:00:00:01", "02:00:00:00:00:02"]
    assert [(l.a, l.b) for l in t.links] == [(Endpoint("h1", 0), Endpoint("s1", 1)),
                                            (Endpoint("h2", 0), Endpoint("s1", 2))]
    s = t.switches[0]
    assert (s.kind, s.device_id, s.program, s.grpc_port, s.log, s.pcap) == ("p4scope", 0, None, None, "info", False)
    assert t.ifname(t.links[1].b) == "s1-eth2"
    assert t.ifname(t.links[1].a) == "h2-eth0"


def test_explicit_ports_and_next_free_port():
    t = from_dict(doc(links=[{"a": "h1", "b": "s1:5"}, {"a": "h2", "b": "s1"}],
                      switches=[{"name": "s1", "cpu_port": 1}]))
    assert [l.b.port for l in t.links] == [5, 2]  # 1 is the CPU port


def test_defaults_section_and_rates():
    t = from_dict(doc(defaults={"switch": {"kind": "bmv2", "program": "x.json", "pcap": True},
                                "link": {"bw": "1G", "queue": 100}},
                      links=[{"a": "h1", "b": "s1"}, {"a": "h2", "b": "s1", "bw": 100}]))
    assert t.switches[0].kind == "bmv2" and t.switches[0].pcap
    assert [l.bw for l in t.links] == [1_000_000_000, 100_000_000]
    assert t.links[0].queue == 100


@pytest.mark.parametrize("value,bps", [(100, 100e6), ("100M", 100e6), ("1.5G", 1.5e9), ("800k", 800e3),
                                       ("10Gbps", 10e9), ("100Mbit", 100e6), ("250000", 250e3)])
def test_parse_rate(value, bps):
    assert parse_rate(value, "x") == int(bps)
    assert parse_rate(format_rate(int(bps)), "x") == int(bps)


@pytest.mark.parametrize("mutate,path,words", [
    (lambda d: d["links"][1].update(bw="fast"), "links[1].bw", "not a rate"),
    (lambda d: d["links"][0].update(delay="10ms"), "links[0].delay", "netem"),
    (lambda d: d["links"][0].update(loss=1), "links[0].loss", "netem"),
    (lambda d: d.update(defaults={"link": {"jitter": "1ms"}}), "defaults.link.jitter", "netem"),
    (lambda d: d["links"][0].update(b="s9"), "links[0].b", "no host or switch named 's9'"),
    (lambda d: d["links"][0].update(a="h1:3"), "links[0].a", "is a host"),
    (lambda d: d["links"][1].update(b="s1:1") or d["links"][0].update(b="s1:1"), "links[1].b",
     "already used"),
    (lambda d: d["links"][0].update(b="s1:511"), "links[0].b", "outside 1..510"),
    (lambda d: d["hosts"][1].update(name="h1"), "hosts[1].name", "already used"),
    (lambda d: d["hosts"][0].update(ip="10.0.0.300/24"), "hosts[0].ip", "not an IPv4"),
    (lambda d: d["hosts"][0].update(ip="10.0.0.9"), "hosts[0].ip", "prefix length"),
    (lambda d: d["hosts"][1].update(ip="10.0.0.1/16"), "hosts[1].ip", "already h1's"),
    (lambda d: d["hosts"][0].update(mac="02:00:00:00:00"), "hosts[0].mac", "not a MAC"),
    (lambda d: d["hosts"][0].update(bond="xor"), "hosts[0].bond", "not one of"),
    (lambda d: d["hosts"][0].update(colour="red"), "hosts[0].colour", "unknown key"),
    (lambda d: d["switches"][0].update(kind="ovs"), "switches[0].kind", "not one of"),
    (lambda d: d["switches"][0].update(grpc_port=70000), "switches[0].grpc_port", "outside"),
    (lambda d: d["switches"][0].update(grpc_port="50051"), "switches[0].grpc_port", "integer"),
    (lambda d: d["switches"][0].update(log="loud"), "switches[0].log", "not one of"),
    (lambda d: d["switches"][0].update(extra_args="--x"), "switches[0].extra_args", "list of strings"),
    (lambda d: d["switches"][0].update(name="S1"), "switches[0].name", "lower-case"),
    (lambda d: d["links"][0].pop("b"), "links[0].b", "required"),
    (lambda d: d["links"][0].update(b="h1"), "links[0]", "both ends"),
    (lambda d: d.update(links="x"), "links", "must be a list"),
    (lambda d: d.update(extra=1), "topology.extra", "unknown key"),
])
def test_errors_name_the_field(mutate, path, words):
    d = doc()
    mutate(d)
    msg = error_of(d)
    assert msg.startswith(f"{path}:"), msg
    assert words in msg, msg


def test_host_link_rules():
    d = doc(links=[{"a": "h1", "b": "s1"}, {"a": "h1", "b": "s1"}, {"a": "h2", "b": "s1"}])
    assert "give it a bond" in error_of(d)
    d["hosts"][0]["bond"] = "l34"
    assert len(from_dict(d).links_of("h1")) == 2
    d = doc(links=[{"a": "h1", "b": "s1"}])
    assert error_of(d).startswith("hosts[1]: 'h2' has no link")


def test_long_names_are_refused():
    d = doc(switches=[{"name": "switchnumber1"}],
            links=[{"a": "h1", "b": "switchnumber1"}, {"a": "h2", "b": "switchnumber1"}])
    assert "longer than 15" in error_of(d)


def test_loads_reports_json_position():
    with pytest.raises(TopologyError) as e:
        loads('{"name": "x",\n "hosts": [}', "topo.json")
    assert str(e.value).startswith("topo.json:2:")
    with pytest.raises(TopologyError) as e:
        loads(json.dumps(doc(hosts=[{"name": "h1", "ip": 5}])), "topo.json")
    assert str(e.value).startswith("topo.json: hosts[0].ip:")


@pytest.mark.parametrize("topo", [
    builders.single_switch(4), builders.port_pairs(2), builders.incast(16, bw="100M"),
    builders.chain(4), builders.lag(4, 3), builders.leaf_spine(2, 2, 2),
])
def test_builders_round_trip_through_the_format(topo):
    assert loads(topo.dumps()) == topo


def test_builder_shapes():
    t = builders.incast(3, receiver_bw="10M", bw="100M")
    assert t.control == {"senders": ["h1", "h2", "h3"], "receiver": "h4"}
    assert [l.bw for l in t.links] == [100e6, 100e6, 100e6, 10e6]
    c = builders.chain(4)
    assert [(l.a.node, l.a.port, l.b.node, l.b.port) for l in c.links] == [
        ("h1", 0, "s1", 1), ("s1", 2, "s2", 1), ("s2", 2, "s3", 1), ("s3", 2, "s4", 1), ("h2", 0, "s4", 2)]
    g = builders.lag(3, 2)
    assert [l.b.port for l in g.links_of("h1")] == [1, 2, 3]
    assert [l.a.port for l in g.links_of("h1")] == [0, 1, 2]
    assert g.hosts[0].bond == "l34"
    ls = builders.leaf_spine(2, 3, 2)
    assert len(ls.switches) == 5 and len(ls.links) == 2 * 2 + 2 * 3
    assert {(l.a.node, l.a.port, l.b.node, l.b.port) for l in ls.links_of("p3")} == {
        ("l1", 5, "p3", 1), ("l2", 5, "p3", 2)}
    with pytest.raises(ValueError):
        builders.lag(5)


def test_rename_and_change_switches():
    t = rename_switches(builders.chain(2), {"s1": "a1", "s2": "b2"})
    assert [s.name for s in t.switches] == ["a1", "b2"]
    assert [(l.a.node, l.b.node) for l in t.links] == [("h1", "a1"), ("a1", "b2"), ("h2", "b2")]
    t = with_switch_defaults(t, kind="bmv2", program="x.json")
    assert {(s.kind, s.program) for s in t.switches} == {("bmv2", "x.json")}


def test_port_maps_for_controllers():
    t = builders.leaf_spine(2, 2, 1)
    assert t.ports("l1") == {1: Endpoint("h1x1", 0), 2: Endpoint("p1", 1), 3: Endpoint("p2", 1)}
    assert t.attachments("h2x1") == [Endpoint("l2", 1)]
    assert t.peer(Endpoint("p2", 2)) == Endpoint("l2", 3)
    assert builders.lag(2, 1).attachments("h1") == [Endpoint("s1", 1), Endpoint("s1", 2)]


def test_switch_loops():
    assert builders.leaf_spine(2, 2, 1).has_switch_loop()
    assert not builders.leaf_spine(2, 1, 1).has_switch_loop()
    assert not builders.chain(4).has_switch_loop()
    assert not builders.lag(2, 1).has_switch_loop()  # a host's parallel links are no switch loop
    two = from_dict(doc(switches=[{"name": "s1"}, {"name": "s2", "kind": "bridge"}],
                        links=[{"a": "h1", "b": "s1"}, {"a": "h2", "b": "s2"},
                               {"a": "s1", "b": "s2"}, {"a": "s1", "b": "s2"}]))
    assert two.has_switch_loop() and not two.has_switch_loop(("bridge",))
