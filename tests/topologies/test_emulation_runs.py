"""Fairness and microburst in Mininet (root), small: the virtual-time runs'
tables come out of real traffic through the reference DUT, and the runs
leave nothing behind."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from p4scope.experiments.fairness import mininet as fairness_mininet
from p4scope.experiments.fairness.mininet import execute_fairness
from p4scope.experiments.microburst import mininet as microburst_mininet
from p4scope.experiments.microburst.mininet import execute_microburst

from tests.topologies.mn_namespaces import netns as _netns
from tests.topologies.mn_namespaces import run_namespaces as _run_namespaces

pytestmark = pytest.mark.usefixtures("mininet_ok")


def _cleaned(run) -> None:
    for m in (run / "mininet").glob("*/manifest.json"):
        assert json.loads(m.read_text())["state"] == "cleaned"


def test_fairness_in_mininet_fills_the_fairness_tables(tmp_path):
    p = fairness_mininet.MnFairnessParams(n=(2,), duration_s=2.0, warmup_s=0.8, link_bw="10M")
    res = execute_fairness(p, tmp_path, "fair", progress=False, report=True, echo=lambda s: None)
    assert res.outcome.complete, res.outcome
    fair = pd.read_parquet(res.path / "fairness.parquet")
    streams = pd.read_parquet(res.path / "streams.parquet")
    inst = pd.read_parquet(res.path / "instrument_shares.parquet")
    assert list(fair["n"]) == [2] and fair["mode"].iloc[0] == "mininet"
    assert sorted(streams["ingress_port"]) == [1, 2]
    # two senders at line rate into one link: together they fill it (layer 1 > layer 2 rate)
    total = streams["gbps_l1"].sum() * 1e3
    assert 7 < total < 13, total
    assert abs(streams["bw_share"].sum() - 1) < 1e-9 and abs(inst["bw_share"].sum() - 1) < 1e-9
    assert inst["delivered_frames"].min() > 0
    assert "Mbit/s" in (res.path / "table3_fairness_mbps.csv").read_text()
    assert "Fairness" in res.report.read_text()
    assert _run_namespaces(res.path) and not _run_namespaces(res.path) & _netns()
    _cleaned(res.path)


def test_microburst_in_mininet_measures_the_link_queue(tmp_path):
    p = microburst_mininet.MnBurstParams(sizes_2to1=(1518,), sizes_4to1=(), queue_packets=60)
    res = execute_microburst(p, tmp_path, "burst", progress=False, report=True,
                             echo=lambda s: None)
    assert res.outcome.complete, res.outcome
    mb = pd.read_parquet(res.path / "microburst.parquet").iloc[0]
    assert mb["scenario"] == "2:1" and mb["burst_frames"] == p.frames(2, 1518)
    assert mb["sent_total"] == 2 * mb["burst_frames"] and mb["lost_frames"] > 0
    # the queue and htb's burst allowance, give or take what is in flight
    assert mb["expected_frames"] == 60 + 10
    assert abs(mb["buffered_frames"] - mb["expected_frames"]) <= 0.3 * mb["expected_frames"], mb
    assert (res.path / "table4_microburst_frames.csv").exists()
    assert "Microburst" in res.report.read_text()
    assert _run_namespaces(res.path) and not _run_namespaces(res.path) & _netns()
    _cleaned(res.path)
