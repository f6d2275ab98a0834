"""The ports' Ethernet MACs through the Python module: the tester's sources
send runts, oversize frames, bad-FCS frames and frames with an inter-frame
gap below 96 bits; the receiving port's MAC counts and drops the errored
ones unless it is configured to pass them; the sinks measure the smallest
gap between the frames a port sent."""

import pytest

import p4scope_dataplane as dp
from tests.dataplane.test_link_events import to_port

# Ethernet + IPv4 of the default UDP template: leaves room for a 60-byte runt
ETH_IPV4 = bytes.fromhex("020000000002" "020000000001" "0800"
                         "4500001c00004000fd000000" "0a000001" "0a000002")


def engine(**tm):
    e = dp.Engine(to_port(31))
    e.tm_configure({"defaults": {"rate_bps": "100G"}, **tm})
    return e


def rx(e):
    return {s["name"]: s["rx_frames"] for s in e.stream_stats()}


def test_errored_frames_are_counted_and_dropped_before_the_pipeline():
    e = engine()
    e.set_port_mac(1, mtu=1500)
    assert e.port_mac(1) == {"mtu": 1500, "pass_errored": False, "max_frame": 1518}
    e.add_stream(1, name="valid", size=1518, frames=5)
    e.add_stream(1, name="runt", size=60, frames=6, template=ETH_IPV4)
    e.add_stream(1, name="oversize", size=1519, frames=7)
    e.add_stream(1, name="bad_fcs", size=512, frames=8, bad_fcs=True)
    e.run(until_ns=100_000)
    assert rx(e) == {"valid": 5, "runt": 0, "oversize": 0, "bad_fcs": 0}
    assert e.port_mac_stats() == {1: {"frames_ok": 5, "undersize": 6, "fragments": 0,
                                      "oversize": 7, "jabbers": 0, "fcs_errors": 8,
                                      "passed_errored": 0, "dropped": 21}}
    assert e.stats()["received"] == 5


def test_a_port_configured_to_pass_errored_frames_forwards_them():
    e = engine()
    e.set_port_mac(1, mtu=1500, pass_errored=True)
    e.add_stream(1, name="runt", size=60, frames=6, template=ETH_IPV4, bad_fcs=True)
    e.add_stream(1, name="oversize", size=1600, frames=7)
    e.run(until_ns=100_000)
    assert rx(e) == {"runt": 6, "oversize": 7}
    s = e.port_mac_stats()[1]
    assert (s["fragments"], s["oversize"], s["passed_errored"], s["dropped"]) == (6, 7, 13, 0)


def test_the_default_mtu_takes_jumbo_frames_and_vlan_tags_add_four_bytes():
    e = engine()
    assert e.port_mac(2)["max_frame"] == 9216
    e.set_port_mac(1, mtu=1500)
    tagged = bytes.fromhex("020000000002" "020000000001" "8100" "0005" "0800") + ETH_IPV4[14:]
    e.add_stream(1, name="tagged", size=1522, frames=3, template=tagged)
    e.add_stream(2, name="jumbo", size=9216, frames=3)
    e.run(until_ns=100_000)
    assert rx(e) == {"tagged": 3, "jumbo": 3}
    assert {p: s["dropped"] for p, s in e.port_mac_stats().items()} == {1: 0, 2: 0}


def test_forward_pressure_the_switch_keeps_96_bits_and_the_sink_measures_it():
    e = engine()
    e.add_stream(1, name="fp", size=64, rate_pct=100, duration_ns=20_000, ifg_bits=88)
    e.run(until_ns=30_000)
    (s,) = e.stream_stats()
    # 83 bytes of wire per frame instead of 84: 1 % more frames than line rate
    assert s["tx_frames"] == pytest.approx(20_000 / 6.64, abs=1)
    (port,) = [p for p in e.port_rx_stats() if p["port"] == 31]
    assert port["min_gap_bits"] == pytest.approx(96.0, abs=0.01)


def test_a_switch_sending_with_a_short_gap_shows_in_the_sink():
    e = engine(wire_overhead_bytes=23)  # the switch's own gap: 88 bits
    e.add_stream(1, size=64, rate_pct=100, duration_ns=5_000, ifg_bits=88)
    e.run(until_ns=10_000)
    (port,) = [p for p in e.port_rx_stats() if p["port"] == 31]
    assert port["min_gap_bits"] == pytest.approx(88.0, abs=0.01)


def test_no_line_rate_no_gap():
    e = dp.Engine(to_port(31))
    e.add_stream(1, size=64, frames=10, rate_pct=100, line_rate_bps=100e9)
    e.run(until_ns=10_000)
    (port,) = e.port_rx_stats()
    assert port["rx_frames"] == 10 and port["min_gap_bits"] is None


@pytest.mark.parametrize("call, message", [
    (lambda e: e.set_port_mac(1, mtu=45), "mtu 45 is out of range 46..65535"),
    (lambda e: e.add_stream(1, frames=1, ifg_bits=-1), "ifg_bits -1 is not a whole number"),
    (lambda e: e.add_stream(1, frames=1, ifg_bits=2_000_000), "ifg_bits 2000000 is out of range"),
    (lambda e: e.add_stream(1, frames=1, bad_fcs="yes"), "bad_fcs yes is not True or False"),
])
def test_bad_settings_are_refused_naming_them(call, message):
    with pytest.raises(dp.ConfigError, match=message):
        call(engine())
