"""Several engines joined by links in one virtual-time run (Fabric): exact
arrival times, each switch's own ground truth, results named by (switch,
port), determinism, and what it refuses."""

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


def engine(port, rate="1G", seed=0, **tm):
    e = dp.Engine(to_port(port), seed=seed)
    e.tm_configure({"defaults": {"rate_bps": rate}, **tm})
    return e


def test_chain_of_two_exact_times_and_each_switchs_truth():
    a, b = engine(9), engine(31)
    f = dp.Fabric([a, b])
    assert len(f) == 2
    f.link((0, 9), (1, 1), delay_ns=1000)
    for e in (a, b):
        e.tm_trace_start()
    sid = f.add_stream(0, 1, size=64, rate_pct=10, frames=3, name="s")
    f.record_rx()
    assert f.run(drain=True) > 0
    # frame k: first bit at 6720k; complete at switch 0 after 72 bytes at
    # 1 Gb/s (576 ns), out at once, complete at switch 1 576 + 1000 ns later
    rec = {k: list(v) for k, v in f.rx_records().items()}
    assert rec["tx_ns"] == [0, 6720, 13440]
    assert rec["rx_ns"] == [2152, 8872, 15592]
    assert rec["switch"] == [1, 1, 1] and rec["port"] == [31, 31, 31]
    (s,) = f.stream_stats()
    assert (s["stream"], s["tx_switch"], s["tx_port"], s["rx_switch"], s["rx_port"]) == (sid, 0, 1, 1, 31)
    assert (s["rx_frames"], s["lost"], s["lat_min_ns"], s["lat_max_ns"]) == (3, 0, 2152, 2152)
    (p,) = f.port_rx_stats()
    assert (p["switch"], p["port"], p["rx_frames"]) == (1, 31, 3)
    edges, counts = f.latency_histogram(sid, switch=1, port=31)
    assert sum(counts) == 3 and f.latency_histogram(sid, switch=0)[1] == [0] * len(edges)
    ab, ba = f.links()
    assert (ab["from_switch"], ab["from_port"], ab["to_switch"], ab["to_port"]) == (0, 9, 1, 1)
    assert (ab["rate_bps"], ab["delay_ns"], ab["frames"], ab["bytes"]) == (10**9, 1000, 3, 192)
    assert ba["frames"] == 0
    # each switch's ground truth stays its own: enqueued when complete
    ta, tb = a.tm_trace_take(), b.tm_trace_take()
    assert list(ta["time_ns"]) == [576, 576, 7296, 7296, 14016, 14016]
    assert list(tb["time_ns"]) == [2152, 2152, 8872, 8872, 15592, 15592]
    assert list(tb["port"]) == [31] * 6
    assert f.now_ns() == 15592 and f.in_flight() == 0


def test_link_sets_its_rate_and_captures_name_switch_and_port():
    a, b = dp.Engine(to_port(9)), dp.Engine(to_port(31))
    f = dp.Fabric([a, b])
    with pytest.raises(dp.ConfigError, match="no line rate"):
        f.link((0, 9), (1, 1))
    f.link((0, 9), (1, 1), rate_bps=10**9)
    b.set_port_rate(31, 10**9)
    f.capture_port(1, 31)
    f.add_stream(0, 1, size=100, frames=2, line_rate_bps=1e9)
    f.run(drain=True)
    got = f.take_captured(1, 31)
    # 108 bytes at 1 Gb/s: 864 ns from the tester, 864 more over the link
    assert [t for t, _ in got] == [1728, 1728 + 960]
    assert [len(d) for _, d in got] == [96, 96]
    assert f.take_captured(1, 31) == [] and f.take_captured(0, 5) == []


def run_incast(seed, tester_seed, pieces):
    tm = {"buffer": {"size_bytes": 100_000, "alpha": 1}}
    a, b = engine(9, "100G", seed, **tm), engine(31, "100G", seed, **tm)
    f = dp.Fabric([a, b], seed=tester_seed)
    f.link((0, 9), (1, 1), delay_ns=50)
    for p in (1, 2, 3):
        f.add_stream(0, p, imix=True, duration_ns=20_000)
    for i, d in enumerate(pieces):
        f.run(duration_ns=d, drain=i == len(pieces) - 1)
    rows = f.stream_stats()
    return f.sim_digest(), [(r["rx_frames"], r["lat_max_ns"]) for r in rows], a.tm_queue_stats()


def test_same_seeds_same_run_in_any_steps():
    d, rows, q = run_incast(4, 4, [20_000])
    assert any(x["drop_pkts"] for x in q), "three 100G sources overflow one 100G port"
    assert run_incast(4, 4, [20_000]) == (d, rows, q)
    assert run_incast(4, 4, [1_000, 7_777, 11_223]) == (d, rows, q)
    assert run_incast(4, 8, [20_000])[0] != d


def test_refusals_name_what_is_wrong():
    a, b = engine(9), engine(31)
    with pytest.raises(dp.ConfigError, match="at least one"):
        dp.Fabric([])
    with pytest.raises(dp.ConfigError, match="same engine"):
        dp.Fabric([a, a])
    f = dp.Fabric([a, b])
    f.link((0, 9), (1, 1))
    with pytest.raises(dp.ConfigError, match="linked already"):
        f.link((1, 1), (0, 4))
    with pytest.raises(dp.ConfigError, match="switch 2"):
        f.link((2, 1), (0, 4))
    with pytest.raises(dp.ConfigError, match="is linked"):
        f.add_stream(0, 9, frames=1)
    with pytest.raises(dp.ConfigError, match="switch 5"):
        f.add_stream(5, 1, frames=1)
    with pytest.raises(dp.ConfigError, match="unknown argument"):
        f.add_stream(0, 1, colour="red")
    f.add_stream(0, 1)
    with pytest.raises(dp.EngineError, match="without end"):
        f.run()
    with pytest.raises(dp.EngineError, match="not both"):
        f.run(duration_ns=1, until_ns=2)
    with pytest.raises(dp.ConfigError, match="has a tester stream"):
        f.link((0, 1), (1, 7))
    # the engines still work alone afterwards, with their own tester
    a.add_stream(1, size=64, frames=2)
    a.run(drain=True)
    assert [r["rx_port"] for r in a.stream_stats()] == [9]
