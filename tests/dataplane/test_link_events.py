"""Link events in virtual time through the Python module: a port goes down
and up at scheduled times, frames to and from it are dropped and counted
per port, and the changes come back as port events with their times."""

import pytest

import p4scope_dataplane as dp
from tests.dataplane.programs import assign, field, program


def to_port(port):
    """Every packet to `port` (a keyless table with a const default)."""
    act = {"name": "f", "id": 0, "runtime_data": [],
           "primitives": [assign(field("standard_metadata", "egress_spec"),
                                 {"type": "hexstr", "value": hex(port)})]}
    t = {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
         "with_counters": False, "support_timeout": False, "direct_meters": None,
         "action_ids": [0], "actions": ["f"], "base_default_next": None, "next_tables": {"f": None},
         "default_entry": {"action_id": 0, "action_const": True, "action_data": [],
                           "action_entry_const": True}}
    return program(actions=[act], ingress={"name": "ingress", "id": 0, "init_table": "t",
                                           "tables": [t], "conditionals": []})


def engine():
    e = dp.Engine(to_port(31))
    e.tm_configure({"defaults": {"rate_bps": "100G"}})
    return e


def test_a_scheduled_outage_loses_the_frames_of_its_length_and_reports_both_changes():
    e = engine()
    # 1518 B at 100 % of 100G: a frame every 123.04 ns
    e.add_stream(1, size=1518, rate_pct=100, duration_ns=100_000)
    e.schedule_port_status(31, False, 20_000)
    e.schedule_port_status(31, True, 50_000)
    assert e.next_port_event_at() == 20_000
    e.run(until_ns=30_000)
    assert not e.port_is_up(31)
    assert e.take_port_events() == [(20_000, 31, False)]
    e.run(until_ns=200_000)
    assert e.port_is_up(31) and e.next_port_event_at() is None
    assert e.take_port_events() == [(50_000, 31, True)]
    (s,) = e.stream_stats()
    drops = e.link_drop_stats()
    assert drops[31]["rx_down"] == 0
    assert s["lost"] == drops[31]["tx_down"]
    assert abs(s["lost"] - 30_000 / 123.04) <= 2, "30 us of line-rate frames"


def test_frames_arriving_on_a_down_port_never_reach_the_pipeline():
    e = engine()
    e.set_port_status(1, False)
    assert e.take_port_events() == [(0, 1, False)]
    e.add_stream(1, size=64, frames=10, rate_pct=100)
    e.run(until_ns=10_000)
    assert e.link_drop_stats() == {1: {"rx_down": 10, "tx_down": 0}}
    assert e.stats()["received"] == 0
    e.set_port_status(1, False)
    assert e.take_port_events() == [], "no change, no event"


def test_a_change_in_the_past_is_refused():
    e = engine()
    e.run(until_ns=5_000)
    with pytest.raises(dp.EngineError, match="before the switch's time"):
        e.schedule_port_status(3, False, 4_999)
