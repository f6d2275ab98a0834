"""The traffic manager through the Python module: BMv2's queue metadata
under a rate limit, p4scope's byte-level aliases, line rates, the shared
buffer, arbitration, configuration errors and the ground-truth trace."""

import struct

import pytest

import p4scope_dataplane as dp
from tests.dataplane.programs import FWD, assign, eth, ethernet_program, field, key, program, table

REPORT = ["enq_qdepth", "deq_qdepth", "deq_timedelta", "enq_qbytes", "deq_qbytes", "buffer_bytes",
          "deq_timedelta_ns", "ingress_timestamp_ns", "egress_timestamp_ns"]


def queue_program(out_port=2):
    """Forwards everything to `out_port`; egress appends a `rep` header with
    the queue metadata (BMv2's fields and p4scope's aliases)."""
    sm = "standard_metadata"
    ingress_action = {"name": "fwd", "id": 0, "runtime_data": [],
                      "primitives": [assign(field(sm, "egress_spec"),
                                            {"type": "hexstr", "value": hex(out_port)})]}
    prims = [{"op": "add_header", "parameters": [{"type": "header", "value": "rep"}]}]
    for f in REPORT[:3]:
        prims.append(assign(field("rep", f), field(sm, f)))
    for f in REPORT[3:]:
        prims.append(assign(field("rep", f), field("meta", f)))
    egress_action = {"name": "report", "id": 1, "runtime_data": [], "primitives": prims}

    def keyless(name, tid, aid, aname):
        return {"name": name, "id": tid, "key": [], "match_type": "exact", "type": "simple",
                "max_size": 1, "with_counters": False, "support_timeout": False,
                "direct_meters": None, "action_ids": [aid], "actions": [aname],
                "base_default_next": None, "next_tables": {aname: None},
                "default_entry": {"action_id": aid, "action_const": True, "action_data": [],
                                  "action_entry_const": True}}

    return program(
        header_types=[("ethernet_t", [["dst", 48, False], ["src", 48, False], ["type", 16, False]]),
                      ("rep_t", [[f, 32, False] for f in REPORT]),
                      ("meta_t", [[f, 32, False] for f in REPORT[3:]])],
        headers=[("ethernet", "ethernet_t", False), ("rep", "rep_t", False),
                 ("meta", "meta_t", True)],
        states=[{"name": "start", "id": 0,
                 "parser_ops": [{"op": "extract",
                                 "parameters": [{"type": "regular", "value": "ethernet"}]}],
                 "transition_key": [], "transitions": [{"type": "default", "value": None,
                                                        "mask": None, "next_state": None}]}],
        deparse=["ethernet", "rep"],
        actions=[ingress_action, egress_action],
        ingress={"name": "ingress", "id": 0, "init_table": "t_in",
                 "tables": [keyless("t_in", 0, 0, "fwd")], "conditionals": []},
        egress={"name": "egress", "id": 1, "init_table": "t_eg",
                "tables": [keyless("t_eg", 1, 1, "report")], "conditionals": []},
        field_aliases=[[f"p4scope.{f}", ["meta", f]] for f in REPORT[3:]],
    )


def report(data):
    return dict(zip(REPORT, struct.unpack(f"!{len(REPORT)}I", data[14:14 + 4 * len(REPORT)])))


def test_bmv2_queue_metadata_under_a_packet_rate_limit():
    e = dp.Engine(queue_program())
    e.set_queue_rate(2, 1000)  # simple_switch_CLI set_queue_rate 1000 2
    out = e.process([(1, eth(payload=bytes(50)), 0) for _ in range(5)])
    assert [t for _, _, t in out] == [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
    reps = [report(d) for _, d, _ in out]
    assert [r["enq_qdepth"] for r in reps] == [0, 1, 2, 3, 4]
    assert [r["deq_qdepth"] for r in reps] == [4, 3, 2, 1, 0]
    assert [r["deq_timedelta"] for r in reps] == [0, 1000, 2000, 3000, 4000]  # microseconds
    # p4scope's byte-level counterparts (64-byte frames)
    assert [r["enq_qbytes"] for r in reps] == [0, 64, 128, 192, 256]
    assert [r["deq_qbytes"] for r in reps] == [256, 192, 128, 64, 0]
    assert [r["deq_timedelta_ns"] for r in reps] == [0, 1_000_000, 2_000_000, 3_000_000,
                                                     4_000_000]
    assert all(r["buffer_bytes"] == 0 for r in reps)  # no shared buffer configured
    assert all(r["ingress_timestamp_ns"] == 0 for r in reps)
    assert [r["egress_timestamp_ns"] for r in reps] == [0, 1_000_000, 2_000_000, 3_000_000,
                                                        4_000_000]


def test_nanosecond_timestamps_where_bmv2_counts_microseconds():
    e = dp.Engine(queue_program())
    e.set_queue_rate(2, 1000)
    out = e.process([(1, eth(payload=bytes(50)), 1_234_567) for _ in range(2)])
    reps = [report(d) for _, d, _ in out]
    assert [r["ingress_timestamp_ns"] for r in reps] == [1_234_567, 1_234_567]
    assert [r["egress_timestamp_ns"] for r in reps] == [1_234_567, 2_234_567]


def test_queue_depth_tail_drop_is_bmv2s():
    e = dp.Engine(queue_program())
    e.set_queue_depth(3, 2)
    e.set_queue_rate(2, 1000)
    out = e.process([(1, eth(), 0) for _ in range(5)])
    assert len(out) == 3
    stats = e.tm_queue_stats()
    q = next(s for s in stats if s["port"] == 2)
    assert q["drops"] == {"queue_packets": 2} and q["deq_pkts"] == 3


def test_line_rate_spaces_frames_by_their_wire_time():
    e = dp.Engine(queue_program())
    e.set_port_rate(2, 10_000_000_000)
    frame = eth(payload=bytes(972))  # 986 bytes; 1022 with the 36-byte report
    out = e.process([(1, frame, 0) for _ in range(4)])
    # (1022 + 24) bytes at 10 Gb/s = 836.8 ns per frame
    assert [t for _, _, t in out] == [0, 836, 1673, 2510]
    ps = next(p for p in e.tm_port_stats() if p["port"] == 2)
    assert ps["tx_pkts"] == 4 and ps["tx_wire_bytes"] == 4 * 1046


def test_configuration_from_dict_json_and_yaml_and_its_errors():
    e = dp.Engine(queue_program())
    e.tm_configure({"defaults": {"rate_bps": "10G"}})
    e.tm_configure('{"ports": {"2": {"rate_bps": 1e9}}}')
    e.tm_configure("buffer:\n  size_bytes: 1M\n  alpha: 2\n")
    assert e.tm_buffer()["size_bytes"] == 1_000_000
    with pytest.raises(dp.ConfigError, match=r"ports\.2\.queues\.9"):
        e.tm_configure({"ports": {"2": {"queues": {"9": {}}}}})
    with pytest.raises(dp.ConfigError, match=r"defaults\.scheduler.*unknown scheduler"):
        e.tm_configure({"defaults": {"scheduler": "fastest"}})
    with pytest.raises(dp.ConfigError, match="unknown key"):
        dp.tm_config_check({"bufer": {}})
    dp.tm_config_check({"queue_depth": 100, "ports": {"1": {"queue_depth": 8, "rate_pps": 10}}})


def test_shared_buffer_and_byte_fields():
    e = dp.Engine(queue_program())
    e.tm_configure({"buffer": {"size_bytes": 1000, "alpha": 1}, "ports": {"2": {"rate_bps": "1G"}}})
    out = e.process([(1, eth(payload=bytes(86)), 0) for _ in range(10)])
    # 100-byte frames, alpha 1: the queue holds at most half of the 1000 bytes
    assert len(out) == 5
    reps = [report(d) for _, d, _ in out]
    assert [r["buffer_bytes"] for r in reps] == [0, 100, 200, 300, 400]
    b = e.tm_buffer()
    assert b["used"] == 0 and b["peak_used"] == 500


def test_group_first_arbitration_reproduces_tomahawk_shares():
    # Tolly: ports 24, 25, 26 into one port; 24 alone in its 8-port group gets half
    e = dp.Engine(queue_program(out_port=31))
    e.tm_configure({"defaults": {"arbitration": {"mode": "groups", "group_size": 8, "first_port": 1},
                                 "queue": {"limit_pkts": None, "ingress_limit_pkts": 16}},
                    "ports": {"31": {"rate_bps": "1G"}}})
    e.tm_trace_start()
    batch = [(p, eth(src=p, payload=bytes(986)), i * 8000) for i in range(300) for p in (24, 25, 26)]
    out = e.process(batch)
    by_src = {}
    for _, d, t in out:
        if t < 2_000_000:  # while all three are backlogged
            src = int.from_bytes(d[6:12], "big")
            by_src[src] = by_src.get(src, 0) + 1
    total = sum(by_src.values())
    assert abs(by_src[24] / total - 0.5) < 0.02
    assert abs(by_src[25] / total - 0.25) < 0.02
    cols = e.tm_trace_take()
    assert set(cols["kind"]) == {0, 1}
    assert len(cols["time_ns"]) == 2 * len(out)
    # the per-ingress occupancy never exceeds the per-ingress limit
    assert max(cols["in_pkts"]) <= 16


def test_fair_arbitration_shares_bytes_equally():
    e = dp.Engine(queue_program(out_port=31))
    e.tm_configure({"defaults": {"arbitration": "fair",
                                 "queue": {"limit_pkts": None, "ingress_limit_bytes": 20000}},
                    "ports": {"31": {"rate_bps": "1G"}}})
    sizes = {1: 50, 2: 500, 3: 1486}
    batch = []
    for p, pay in sizes.items():
        t = 0
        while t < 3_000_000:
            batch.append((p, eth(src=p, payload=bytes(pay)), t))
            t += (14 + pay + 28 + 24) * 8  # each port at its 1 Gb/s line rate
    out = e.process(sorted(batch, key=lambda x: x[2]))
    got = {}
    for _, d, t in out:
        if 200_000 < t < 2_800_000:
            src = int.from_bytes(d[6:12], "big")
            got[src] = got.get(src, 0) + len(d) - 28  # bytes as they came in
    total = sum(got.values())
    for p in sizes:
        assert abs(got[p] / total - 1 / 3) < 0.03, got


def test_occupancy_per_ingress_port():
    e = dp.Engine(queue_program())
    e.set_queue_rate(2, 1)
    for port, frame in [(1, eth()), (5, eth()), (5, eth(payload=bytes(100)))]:
        e.inject(port, frame, 0)
    e.advance(0)  # the first packet leaves at once, the others wait a second each
    assert e.tm_occupancy(2) == {"pkts": 2, "bytes": 16 + 114, "ingress": {5: (2, 130)}}
    assert e.tm_occupancy(2, 0)["pkts"] == 2
    assert e.tm_occupancy(7) == {"pkts": 0, "bytes": 0, "ingress": {}}


def two_port_switch(tm_config):
    """dst 0xAA leaves on port 2 (1 Gb/s), dst 0xCC on port 3."""
    t = table("ingress.mac", 0, [key("ethernet", "dst")], [0], ["fwd"])
    e = dp.Engine(ethernet_program([FWD], [t], "ingress.mac"))
    e.table_add("ingress.mac", "fwd", [0xAA], [2])
    e.table_add("ingress.mac", "fwd", [0xCC], [3])
    e.tm_configure(tm_config)
    return e


def frames_through_congested_port(tm_config, idle_port_saw_a_packet):
    e = two_port_switch(tm_config)
    start = 0
    if idle_port_saw_a_packet:
        assert len(e.process([(1, eth(dst=0xCC, payload=bytes(86)), 0)])) == 1
        start = 1000
    out = e.process([(1, eth(dst=0xAA, payload=bytes(86)), start) for _ in range(100)])
    return len(out), e.tm_buffer()["shared_size"]


def test_a_reserved_port_leaves_the_shared_pool_when_configured():
    # port 3 reserves 2000 of the 10000 bytes from tm_configure on, idle or not
    cfg = {"buffer": {"size_bytes": 10000, "alpha": 1},
           "ports": {"2": {"rate_bps": "1G"}, "3": {"reserved_bytes": 2000}}}
    assert two_port_switch(cfg).tm_buffer()["shared_size"] == 8000
    idle = frames_through_congested_port(cfg, False)
    used = frames_through_congested_port(cfg, True)
    assert idle == used and idle[1] == 8000
    # a reserve given only through the defaults belongs to the ports named under "ports"
    cfg = {"buffer": {"size_bytes": 10000, "alpha": 1, "reserved_bytes": 1000},
           "ports": {"2": {"rate_bps": "1G"}}}
    assert frames_through_congested_port(cfg, True) == frames_through_congested_port(cfg, False)
    assert frames_through_congested_port(cfg, True)[1] == 9000
    # more shared space: port 2's dynamic threshold lets more through
    assert frames_through_congested_port(cfg, True)[0] > used[0]
