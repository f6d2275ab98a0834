"""`p4scope run tcp-incast --mode mininet` end to end, small (root): the run
folder, its tables and report, BMv2 skipped with the reason where it is
missing, and nothing of the run left behind."""

from __future__ import annotations

import json
import os
import subprocess

import pandas as pd
import pytest

from p4scope.emulation import incast as I
from p4scope.emulation.incast_run import execute_incast
from p4scope.emulation.testbed import bmv2_missing

pytestmark = pytest.mark.usefixtures("mininet_ok")


def _netns() -> set[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {l.split()[0] for l in r.stdout.splitlines() if l.strip()}


def _run_namespaces(run) -> set[str]:
    """The namespaces the run's testbeds made (other runs on the machine
    make their own meanwhile)."""
    return {ns for m in (run / "mininet").glob("*/manifest.json")
            for ns in json.loads(m.read_text())["namespaces"]}


def test_small_incast_writes_results_and_a_report(tmp_path):
    p = I.IncastParams(senders=3, flows=2, flow_bytes=(64 << 10,), link_bw="50M",
                       queue_packets=50, kinds=("p4scope", "bmv2"))
    res = execute_incast(p, tmp_path, "small", progress=False, report=True, echo=lambda s: None)
    assert res.outcome.complete, res.outcome
    run = res.path
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete" and meta["mode"] == "mininet"
    assert meta["experiment"] == "tcp-incast"
    if bmv2_missing():
        assert "bmv2" in meta["skipped"] and "not installed" in meta["skipped"]["bmv2"]
    jobs = pd.read_parquet(run / "incast_jobs.parquet")
    assert list(jobs["switch"]) == ["p4scope"] or set(jobs["switch"]) == {"p4scope", "bmv2"}
    j = jobs.iloc[0]
    assert j["flows"] == 6 and j["flows_complete"] == 6
    assert j["total_bytes"] == 6 * (64 << 10)
    assert 0 < j["fct_min_s"] <= j["job_completion_s"] < 30
    flows = pd.read_parquet(run / "incast_flows.parquet")
    assert len(flows) == 6 and flows["complete"].all()
    rates = pd.read_parquet(run / "incast_rate.parquet")
    assert {"receiver", "switch port"} <= set(rates["source"])
    got = rates[rates["source"] == "receiver"]
    bin_s = p.bin_ms / 1e3
    assert abs((got["bps"] * bin_s / 8).sum() - j["total_bytes"]) < 1 + 16 * 6  # the headers
    assert (run / "link_queue.parquet").exists() and (run / "instrument_series.parquet").exists()
    for csv in ("incast_summary.csv", "incast_rate_mbps.csv", "incast_completion_s.csv"):
        assert (run / csv).stat().st_size > 20
    assert res.report is not None and "Aggregate rate" in res.report.read_text()
    assert (run / "figures" / "incast_aggregate_rate.png").stat().st_size > 1000
    # nothing of the run's Mininet is left
    assert _run_namespaces(run) and not _run_namespaces(run) & _netns()
    for m in (run / "mininet").glob("*/manifest.json"):
        assert json.loads(m.read_text())["state"] == "cleaned"
    names = {s["name"] for t in (run / "mininet").glob("*/topology.json")
             for s in json.loads(t.read_text())["switches"]}
    assert names and not [i for i in os.listdir("/sys/class/net") if i.split("-")[0] in names]
