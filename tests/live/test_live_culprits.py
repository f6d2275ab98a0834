"""What the dashboard adds to a stored case: its queues in packets as well
as bytes, on the same pixel columns (the time x port heatmap's), each
burst's peak in packets and the ingress ports and flows that built it,
and the frames lost per (ingress, egress)."""

import math

import pandas as pd

from p4scope.experiments.live.model import digest

CID = "c"


def _tables():
    # port 31: ingress 1 fills it first, ingress 2 joins; a burst from 10 to 40 ns
    return {
        "ground_truth": pd.DataFrame({
            "case_id": CID, "t_ns": [0, 10, 20, 30, 40, 0, 25], "egress_port": [31] * 5 + [32] * 2,
            "queue": 0, "occupancy_bytes": [0, 1000, 3000, 4000, 0, 0, 500],
            "occupancy_frames": [0, 1, 3, 4, 0, 0, 1]}),
        "ground_truth_ingress": pd.DataFrame({
            "case_id": CID, "t_ns": [0, 10, 20, 30, 40, 0, 20, 30, 40], "egress_port": 31,
            "ingress_port": [1] * 5 + [2] * 4,
            "occupancy_bytes": [0, 1000, 2000, 3000, 0, 0, 1000, 1000, 0]}),
        "instrument_series": pd.DataFrame({
            "case_id": CID, "t_ns": [12, 22, 26, 33, 50], "egress_port": 31, "queue": 0,
            "kind": ["burst_pkt"] * 4 + ["interval_max"],
            "depth_bytes": [1000, 3000, 3000, 4000, 4000],
            "depth_frames": [1, 3, 3, 4, 4], "ingress_port": [1, 1, 2, 1, -1]}),
        "burst_events": pd.DataFrame({
            "case_id": CID, "source": ["truth", "instrument"], "egress_port": 31, "queue": 0,
            "burst_id": 1, "start_ns": [10.0, 12.0], "end_ns": [40.0, 35.0],
            "peak": [4000.0, 4000.0], "unit": "bytes", "peak_ns": [30.0, math.nan],
            "frames": [math.nan, 4.0]}),
        "streams": pd.DataFrame({
            "case_id": CID, "stream": [0, 1, 2], "ingress_port": [1, 2, 3],
            "egress_port": [31, 31, 32], "tx_frames": [10, 10, 5], "rx_frames": [10, 7, 5]}),
    }


def test_each_burst_names_the_ingress_ports_and_flows_that_built_it():
    s = digest(CID, "case", 0, _tables()).summary()
    inst, truth = s["bursts"]  # the instrument's first
    # the instrument: the packets it reported during the burst, per ingress port
    assert [(c["port"], c["amount"]) for c in inst["ingress"]] == [(1, 3.0), (2, 1.0)]
    assert inst["ingress"][0]["share"] == 0.75 and inst["ingress"][0]["unit"] == "packets reported"
    assert inst["flows"] == ["stream 0: port 1 \u2192 31", "stream 1: port 2 \u2192 31"]
    # the ground truth: what each ingress port held at the peak (30 ns)
    assert [(c["port"], c["amount"]) for c in truth["ingress"]] == [(1, 3000.0), (2, 1000.0)]
    assert truth["flows"][0] == "stream 0: port 1 \u2192 31"  # not stream 2: it goes to 32
    assert (truth["peak_pkts"], inst["peak_pkts"]) == (4.0, 4.0)


def test_an_instrument_burst_without_reported_packets_falls_back_to_the_ground_truth():
    t = _tables()
    t["instrument_series"] = t["instrument_series"][t["instrument_series"]["kind"] != "burst_pkt"]
    inst = digest(CID, "case", 0, t).summary()["bursts"][0]
    assert inst["source"] == "instrument"
    assert [c["port"] for c in inst["ingress"]] == [1, 2]  # held at the fullest moment, 30 ns
    assert inst["ingress"][0]["unit"] == "bytes held at the peak"
    assert inst["peak_pkts"] is None


def test_queues_in_packets_share_the_columns_of_bytes_and_drops_go_per_pair():
    c = digest(CID, "case", 0, _tables())
    d = c.series(px=20)
    q31, q32 = d["queues"]
    assert q31["t"] == q32["t"] and len(q31["p"]) == len(q31["v"]) == 20  # one heatmap grid
    assert max(q31["p"]) == 4 and max(q31["v"]) == 4000 and max(q32["p"]) == 1
    assert max(d["reports"][0]["p"]) == 4
    s = c.summary()
    assert (s["peak_truth_pkts"], s["peak_instrument_pkts"]) == (4.0, 4.0)
    assert s["pairs"] == [{"ingress": 1, "egress": 31, "sent": 10, "lost": 0},
                          {"ingress": 2, "egress": 31, "sent": 10, "lost": 3},
                          {"ingress": 3, "egress": 32, "sent": 5, "lost": 0}]
    assert s["drops"] == 3


def test_the_case_in_flight_keeps_every_queue_on_the_same_columns_in_bytes_and_packets():
    import numpy as np

    from p4scope.experiments.live.inflight import InFlight

    f = InFlight("c", "case c", 0)

    def piece(t, port, qp, qb):
        n = len(t)
        return {"time_ns": np.array(t), "port": np.full(n, port), "queue": np.zeros(n, int),
                "ingress": np.ones(n, int), "kind": np.zeros(n, int), "q_pkts": np.array(qp),
                "q_bytes": np.array(qb), "in_bytes": np.array(qb)}

    f.add(None, piece([10, 20], 31, [1, 2], [100, 200]))
    f.add(None, piece([90_000], 32, [5], [500]))  # port 32 only late: 31's columns widen too
    d = f.series()
    q31, q32 = d["queues"]
    assert q31["t"] == q32["t"]
    assert max(q31["p"]) == 2 and max(q31["v"]) == 200 and max(q32["p"]) == 5
