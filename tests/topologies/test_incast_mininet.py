"""`p4scope run tcp-incast --mode mininet` end to end, small (root): the run
folder, its tables and report, BMv2 skipped with the reason where it is
missing, and nothing of the run left behind, also when the run is killed
(SIGKILL) halfway and `p4scope clean` removes what it made."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

from p4scope.experiments.mininet.testbed import bmv2_missing
from p4scope.experiments.tcp_incast import job as tcp_incast_job
from p4scope.experiments.tcp_incast.mininet import execute_incast
from p4scope.topologies import procs

from tests.topologies.mn_namespaces import netns as _netns
from tests.topologies.mn_namespaces import run_namespaces as _run_namespaces

pytestmark = pytest.mark.usefixtures("mininet_ok")


def test_small_incast_writes_results_and_a_report(tmp_path):
    p = tcp_incast_job.IncastParams(senders=3, flows=2, flow_bytes=(64 << 10,), link_bw="50M",
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


def _netns_pids(ns: str) -> list[int]:
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _sentinels():
    """A namespace, a root interface and a process that are not the run's:
    clean-up must leave them alone."""
    tag = uuid.uuid4().hex[:6]
    ns, link = f"p4s-keep-{tag}", f"keep{tag}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    subprocess.run(["ip", "link", "add", link, "type", "veth", "peer", "name", f"{link}p"],
                   check=True)
    sleeper = subprocess.Popen(["sleep", "600"])
    return ns, link, sleeper


def test_incast_killed_halfway_is_removed_by_clean_and_nothing_else(tmp_path):
    ns_keep, link_keep, sleeper = _sentinels()
    p = None
    try:
        p = subprocess.Popen(
            [str(Path(sys.executable).parent / "p4scope"), "run", "tcp-incast", "--mode", "mininet",
             "--senders", "3", "--flows", "2", "--flow-bytes", "4M", "--link-bw", "10M",
             "--results", str(tmp_path), "--run-id", "killed", "--no-progress", "--no-report"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        testbed = tmp_path / "killed" / "mininet" / "p4scope"
        # halfway: the incast app runs in the hosts (a 24 MiB job at 10 Mbit/s takes ~20 s)
        apps: list[int] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(apps) < 4 and p.poll() is None:
            time.sleep(0.5)
            if (testbed / "manifest.json").exists():
                nss = json.loads((testbed / "manifest.json").read_text())["namespaces"]
                apps = [pid for ns in nss for pid in _netns_pids(ns)
                        if "tcp_incast.app" in _cmdline(pid)]
        assert len(apps) == 4, (p.poll(), p.stderr.read() if p.poll() is not None else "")
        p.send_signal(signal.SIGKILL)
        p.wait()
        m = json.loads((testbed / "manifest.json").read_text())
        topo = json.loads((testbed / "topology.json").read_text())
        switch_ifs = [i for i in os.listdir("/sys/class/net")
                      if i.split("-")[0] in {s["name"] for s in topo["switches"]}]
        inside = {pid for ns in m["namespaces"] for pid in _netns_pids(ns)}
        # the run is left behind: its namespaces, switch ports and daemon
        assert set(m["namespaces"]) <= _netns() and switch_ifs
        assert any(procs.is_same(x["pid"], x["start"]) for x in m["processes"])
        assert json.loads((tmp_path / "killed" / "run.json").read_text())["status"] == "partial"

        r = subprocess.run([str(Path(sys.executable).parent / "p4scope"), "clean", str(testbed)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert not set(m["namespaces"]) & _netns()
        assert not [i for i in switch_ifs if os.path.exists(f"/sys/class/net/{i}")]
        assert all(procs.is_zombie_or_gone(x["pid"]) or not procs.is_same(x["pid"], x["start"])
                   for x in m["processes"])
        assert all(procs.is_zombie_or_gone(pid) for pid in inside | set(apps))
        assert json.loads((testbed / "manifest.json").read_text())["state"] == "cleaned"
        # and nothing else
        assert ns_keep in _netns() and os.path.exists(f"/sys/class/net/{link_keep}")
        assert sleeper.poll() is None
    finally:
        if p is not None and p.poll() is None:
            p.kill()
        sleeper.kill()
        subprocess.run(["ip", "link", "delete", link_keep], capture_output=True)
        subprocess.run(["ip", "netns", "delete", ns_keep], capture_output=True)
