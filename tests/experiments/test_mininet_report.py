"""`p4scope report RUN_DIR` re-renders a stored Mininet run with the
renderer its run.json names. The run folders are made by the real run
drivers with Mininet left out: the testbed is a stand-in and each case's
measurement is made-up numbers put through the real table functions (so
the tables have the schema a real run writes). No root needed."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest
from typer.testing import CliRunner

from p4scope.cli import app
from p4scope.experiments import report as experiments_report
from p4scope.experiments.fairness import mininet as F
from p4scope.experiments.fairness import plan as fx
from p4scope.experiments.tcp_incast import job as I
from p4scope.experiments.tcp_incast import mininet as incast_run

runner = CliRunner()
SEC = 1_000_000_000


class StandInTestbed:
    def start(self):
        return self

    def stop(self):
        pass


def fake_job(p: I.IncastParams, size: int) -> I.JobRecord:
    """A job whose flows all end, the last one late (an incast's RTO)."""
    start = 1_000 * SEC
    flows, sent = [], []
    for s in range(1, p.senders + 1):
        sf = []
        for f in range(p.flows):
            end = start + int((0.5 + 0.1 * f + (2.0 if (s, f) == (1, 0) else 0)) * SEC)
            flows.append({"sender": f"h{s}", "flow": f, "expected": size, "bytes": size,
                          "complete": True, "first_ns": start + SEC // 100,
                          "last_ns": end - 1000, "end_ns": end})
            sf.append({"flow": f, "sent_ns": end - SEC // 10, "done_ns": end})
        sent.append({"sender": f"h{s}", "flows": sf, "retransmits": 3})
    total = p.senders * p.flows * size
    nbins = 250
    bins = [total // nbins] * nbins
    bins[-1] += total - sum(bins)
    receiver = {"flows": flows, "bin_ns": 10_000_000, "first_bin_ns": start, "bins": bins}
    col = I.new_collector()
    col.intervals += [SimpleNamespace(node_id=1, interval=k, port=p.receiver_port,
                                      max_bytes=1500 * min(k, 64), max_pkts=min(k, 64))
                      for k in range(100)]
    col.counters += [SimpleNamespace(counter="tel_delivered", index=(p.receiver_port << 6) | s,
                                     time_ns=start + k * SEC // 10, packets=k * 100,
                                     bytes=k * 150_000) for s in range(1, p.senders + 1)
                     for k in range(20)]
    qdisc = [SimpleNamespace(time_ns=start + k * SEC // 100, ifname="s1-eth4",
                             backlog_bytes=1500 * (k % 100), qlen=k % 100, drops=k // 10,
                             sent_packets=k * 80) for k in range(250)]
    return I.JobRecord(start, receiver, sent, [(start / 1e9 + k / 10, 95e6) for k in range(25)],
                       qdisc, col, {1: start})


def stored_incast_run(tmp_path, monkeypatch):
    monkeypatch.setattr(incast_run, "make_testbed", lambda *a: StandInTestbed())
    monkeypatch.setattr(I, "warm_up", lambda tb, p: None)
    monkeypatch.setattr(I, "run_job", lambda tb, p, size, col, tick: fake_job(p, size))
    p = I.IncastParams(senders=3, flows=2, flow_bytes=(64 << 10,), link_bw="50M")
    res = incast_run.execute_incast(p, tmp_path, "incast", progress=False, report=False,
                                    echo=lambda s: None)
    assert res.outcome.complete and res.report is None
    return res.path


def fake_fairness(p, case, tick, tb) -> dict:
    """The tail of fairness.measure on made-up receiver counts: port 1 gets
    twice what each other port gets."""
    ip = fx.plan_of(case)
    win = pd.DataFrame([{"ingress_port": port, "rx_frames": 1000 * (2 if port == 1 else 1),
                         "rx_bytes": 500_000 * (2 if port == 1 else 1),
                         "rx_frames_total": 2000, "tx_frames": 3000} for port in ip.ingress])
    streams = fx.stream_rows(case, ip, win)
    inst = fx.instrument_rows(case, ip, {port: (600_000, 1200) for port in ip.ingress}, streams)
    row = fx.case_row(case, ip, streams, inst)
    row["mode"] = "mininet"
    row["link_mbps"] = p.rate_bps / 1e6
    return {"fairness": pd.DataFrame([row]), "streams": streams, "instrument_shares": inst}


def stored_fairness_run(tmp_path, monkeypatch):
    monkeypatch.setattr(F, "Testbed", lambda *a, **k: StandInTestbed())
    monkeypatch.setattr(F, "warm_up", lambda tb, p: None)
    monkeypatch.setattr(F, "measure", fake_fairness)
    p = F.MnFairnessParams(n=(3,), duration_s=2.0, warmup_s=0.8)
    res = F.execute_fairness(p, tmp_path, "fair", progress=False, report=False,
                                        echo=lambda s: None)
    assert res.outcome.complete and res.report is None
    return res.path


def report(run) -> str:
    r = runner.invoke(app, ["report", str(run)])
    assert r.exit_code == 0, r.output
    assert f"report: {run / 'report.html'}" in r.output
    return (run / "report.html").read_text()


def test_report_renders_a_stored_incast_run_as_mininet(tmp_path, monkeypatch):
    run = stored_incast_run(tmp_path, monkeypatch)
    meta = json.loads((run / "run.json").read_text())
    assert meta["mode"] == "mininet" and meta["renderer"] == experiments_report.RENDERER
    html = report(run)
    assert "TCP incast in Mininet" in html and "Queue telemetry alongside" in html
    assert "Theory" not in html  # the virtual-time renderer's section
    for png in ("incast_aggregate_rate", "incast_fct_cdf"):
        assert (run / "figures" / f"{png}.png").stat().st_size > 1000
    assert "figures/incast_aggregate_rate.png" in html


def test_report_renders_a_stored_fairness_mininet_run_in_mbps(tmp_path, monkeypatch):
    run = stored_fairness_run(tmp_path, monkeypatch)
    assert json.loads((run / "run.json").read_text())["experiment"] == "fairness-mininet"
    html = report(run)
    assert "Fairness: N:1 incast with iMIX, in Mininet" in html
    assert "throughput of each stream (Mbit/s)" in html and "(Gbps)" not in html
    assert (run / "figures" / "fairness_shares_3to1.png").exists()


@pytest.mark.parametrize("renderer", [None, *experiments_report.FORMER_RENDERERS])
def test_runs_stored_by_earlier_versions_render(tmp_path, monkeypatch, renderer):
    """Before the experiments were plug-ins a run named its mode's renderer
    (or none); every such run renders with the one report."""
    run = stored_fairness_run(tmp_path, monkeypatch)
    meta = json.loads((run / "run.json").read_text())
    meta.pop("renderer")
    (run / "run.json").write_text(json.dumps({**meta, **({"renderer": renderer} if renderer else {})}))
    assert "Fairness: N:1 incast with iMIX, in Mininet" in report(run)


def test_an_unknown_renderer_is_refused(tmp_path, monkeypatch):
    run = stored_fairness_run(tmp_path, monkeypatch)
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "renderer": "elsewhere.render"}))
    r = runner.invoke(app, ["report", str(run)])
    assert r.exit_code == 2 and "'elsewhere.render'" in r.output
