"""Virtual time through the Python module: streams, sinks, bursts, rates,
latency, determinism, and argument errors."""

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


def engine(seed=0, **tm):
    e = dp.Engine(to_port(31), seed=seed)
    e.tm_configure({"defaults": {"rate_bps": "100G"}, **tm})
    return e


def test_line_rate_stream_is_forwarded_whole_with_store_and_forward_latency():
    e = engine()
    sid = e.add_stream(1, size=1518, rate_pct=100, duration_ns=100_000, name="a")
    e.run(until_ns=200_000)
    (s,) = e.stream_stats()
    assert s["stream"] == sid and s["name"] == "a" and (s["tx_port"], s["rx_port"]) == (1, 31)
    # 1538 bytes of wire at 100 Gb/s: 123.04 ns per frame
    assert s["tx_frames"] == 813 and s["rx_frames"] == 813 and s["lost"] == 0
    assert s["out_of_order"] == 0 and s["seq_gaps"] == 0
    # FIFO latency of a store-and-forward switch: the frame's 1526 bytes
    assert 121 <= s["lat_min_ns"] <= s["lat_max_ns"] <= 123
    assert abs(s["rx_l1_bps"] / 100e9 - 1) < 0.01
    edges, counts = e.latency_histogram(sid)
    assert sum(counts) == 813 and counts[edges.index(100)] == 813


def test_two_to_one_halves_each_stream_and_counts_loss():
    e = engine(buffer={"size_bytes": 100_000, "alpha": 1},
               **{})
    e.tm_configure({"defaults": {"arbitration": "fair"}})
    for p in (1, 2):
        e.add_stream(p, size=512, duration_ns=200_000)
    e.run(until_ns=300_000, drain=True)
    st = e.stream_stats()
    for s in st:
        assert 0.45 < s["rx_frames"] / s["tx_frames"] < 0.6
        assert s["lost"] == s["tx_frames"] - s["rx_frames"]
    q = next(q for q in e.tm_queue_stats() if q["port"] == 31)
    assert q["drops"].get("queue_threshold", 0) == sum(s["lost"] for s in st)
    # each ingress port's share of the queue is held to the dynamic threshold
    assert 60_000 < q["peak_bytes"] <= 67_000  # two VOQs at alpha/(1+2 alpha) each


def test_microburst_absorption_buffered_frames():
    # Tolly's method: a burst of N frames from each of two ports; buffered =
    # forwarded - N
    e = engine(buffer={"size_bytes": 200_000})
    n = 300
    for p in (1, 2):
        e.add_stream(p, size=1024, burst=n)
    e.run(until_ns=1_000_000, drain=True)
    fwd = sum(s["rx_frames"] for s in e.stream_stats())
    buffered = fwd - n
    assert 180 <= buffered <= 200, fwd  # ~200 KB of 1024-byte frames


def test_same_seed_is_byte_identical():
    def run(seed):
        e = engine(seed=seed, buffer={"size_bytes": 50_000, "alpha": 2})
        for p in range(1, 5):
            e.add_stream(p, imix=True, macs=100, duration_ns=50_000)
        e.run(until_ns=60_000)
        return e.sim_digest(), e.stream_stats(), e.tm_queue_stats()
    a, b, c = run(3), run(3), run(4)
    assert a == b
    assert a[0] != c[0]


def test_records_and_rates_and_bursts_with_gaps():
    e = engine()
    e.record_rx()
    e.add_stream(1, size=64, rate_fps=1e6, frames=5)
    e.add_stream(2, sizes=[100, 200], burst=2, burst_gap_ns=10_000, bursts=2)
    e.run(until_ns=100_000)
    r = e.rx_records()
    assert list(r["stream"]).count(0) == 5 and list(r["stream"]).count(1) == 4
    tx0 = [t for s, t in zip(r["stream"], r["tx_ns"]) if s == 0]
    assert tx0 == [0, 1000, 2000, 3000, 4000]
    sizes1 = [z for s, z in zip(r["stream"], r["size"]) if s == 1]
    assert sizes1 == [100, 200, 100, 200]
    ports = {p["port"]: p for p in e.port_rx_stats()}
    assert ports[31]["rx_frames"] == 9 and ports[31]["untagged"] == 0


def test_argument_errors():
    e = dp.Engine(to_port(31))
    with pytest.raises(dp.ConfigError, match="no line rate"):
        e.add_stream(1)
    e.set_port_rate(1, 10_000_000_000)
    with pytest.raises(dp.ConfigError, match="unknown argument 'rate'"):
        e.add_stream(1, rate=5)
    with pytest.raises(dp.ConfigError, match="one of rate_pct"):
        e.add_stream(1, rate_pct=5, rate_fps=3)
    with pytest.raises(dp.ConfigError, match="cannot hold"):
        e.add_stream(1, size=60)
    e.add_stream(1)
    with pytest.raises(dp.EngineError, match="without end"):
        e.run()
