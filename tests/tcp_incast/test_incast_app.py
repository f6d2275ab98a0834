"""The incast application on loopback (no root): every flow's bytes,
completion times and the receiver's time bins; the parameters' checks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from p4scope.experiments.mininet import shape
from p4scope.experiments.tcp_incast import job as tcp_incast_job

APP = [sys.executable, "-m", "p4scope.experiments.tcp_incast.app"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_senders_two_flows_each_on_loopback():
    port = _free_port()
    recv = subprocess.Popen(APP + ["recv", "--bind", "127.0.0.1", "--port", str(port),
                                   "--flows", "4", "--idle", "10", "--bin-ms", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "ready" in recv.stderr.readline()
    start = time.time_ns() + 300_000_000
    senders = [subprocess.Popen(APP + ["send", "--dst", "127.0.0.1", "--port", str(port),
                                       "--sender", str(k), "--flows", "2", "--bytes", "500000",
                                       "--start-at", str(start), "--sndbuf", "65536"],
                                stdout=subprocess.PIPE, text=True) for k in (1, 2)]
    sent = [json.loads(s.communicate(timeout=30)[0]) for s in senders]
    got = json.loads(recv.communicate(timeout=30)[0])
    flows = {(f["sender"], f["flow"]): f for f in got["flows"]}
    assert set(flows) == {(1, 0), (1, 1), (2, 0), (2, 1)}
    for f in flows.values():
        assert f["complete"] and f["bytes"] == f["expected"] == 500000
        assert f["first_ns"] >= start and f["end_ns"] >= f["last_ns"] >= f["first_ns"]
    assert sum(got["bins"]) == 4 * 500000 and got["bin_ns"] == 5_000_000
    for s in sent:
        assert s["start_at"] == start and s["t0_ns"] >= start
        assert all(f["bytes"] == 500000 and f["done_ns"] >= f["sent_ns"] > 0 for f in s["flows"])


def test_sizes_and_parameters_are_checked():
    assert shape.parse_size("256K") == 262144 and shape.parse_size("1M") == 1 << 20
    assert shape.parse_size("1500") == 1500 and shape.size_label(262144) == "256K"
    with pytest.raises(tcp_incast_job.ParamError):
        shape.parse_size("lots")
    with pytest.raises(tcp_incast_job.ParamError, match="senders"):
        tcp_incast_job.IncastParams(senders=0).check()
    with pytest.raises(tcp_incast_job.ParamError, match="kinds"):
        tcp_incast_job.IncastParams(kinds=("ovs",)).check()
    with pytest.raises(tcp_incast_job.ParamError, match="not a rate"):
        tcp_incast_job.IncastParams(link_bw="fast").check()
    p = tcp_incast_job.IncastParams(senders=3, flows=2, flow_bytes=(1024, 2048), kinds=("p4scope", "bmv2"))
    cases = tcp_incast_job.plan(p)
    assert [c.case_id for c in cases] == [
        "tcp-incast/3x2/1K/p4scope", "tcp-incast/3x2/2K/p4scope",
        "tcp-incast/3x2/1K/bmv2", "tcp-incast/3x2/2K/bmv2"]
    topo = p.topology()
    assert topo.links[-1].queue == 200 and topo.links[-1].b.port == 4
    assert p.receiver == "h4" and p.bottleneck_bps == 100_000_000
