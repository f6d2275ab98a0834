"""The report of a Mininet run: the shared report (experiments.report: its
page, overview, checks, microburst and fairness sections) plus what only
Mininet runs have (TCP incast, fairness in Mbit/s). Reads the stored
tables only.

    render(RUN_DIR) -> RUN_DIR/report.html (+ figures/*.png)
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Optional

import pandas as pd

from ..experiments import report as R
from ..experiments.rundir import load_table
from . import incast_plots as IP

INCAST_TABLES = ("incast_jobs", "incast_flows", "incast_rate", "instrument_series",
                 "instrument_delivered", "link_queue")


def _incast(page: "R.Page") -> None:
    run = page.run
    t = {n: load_table(run.path, n) for n in INCAST_TABLES}
    jobs = t["incast_jobs"]
    if jobs is None or jobs.empty:
        return
    params = run.meta.get("parameters", {}).get("tcp_incast", {})
    s = page.section("incast", "TCP incast in Mininet")
    s.parts.append(R.para(
        f"{params.get('senders', '?')} senders × {params.get('flows', '?')} TCP flows each, every "
        "flow one connection carrying the same number of bytes, all starting at one instant, "
        "to one receiver through the reference DUT (seed 001's method, scaled: host links "
        f"{html.escape(str(params.get('link_bw', '?')))}bit/s with htb, receiver link queue "
        f"{params.get('queue_packets', 'default')} packets, socket buffers "
        f"{params.get('window_bytes', '?')} B). The job completes when the receiver has read "
        "every flow to its end. Rates at the receiving application in 10 ms bins and at the "
        "switch port towards it; flow completion times from the common start."))
    show = ["case_id", "switch", "flows", "flow_bytes", "total_bytes", "flows_complete",
            "job_completion_s", "ideal_s", "fct_min_s", "fct_median_s", "fct_p99_s", "fct_max_s",
            "mean_rate_mbps", "busy_mean_mbps", "busy_min_mbps", "utilization", "retransmits",
            "link_drops", "link_backlog_max_bytes", "reports"]
    s.parts.append("<h3>Jobs</h3>" + R.html_table(jobs[[c for c in show if c in jobs]]))
    rates = t["incast_rate"]
    if rates is not None and not rates.empty:
        page.plot(s, "incast_aggregate_rate", *IP.aggregate_rate(rates, jobs))
    flows = t["incast_flows"]
    if flows is not None and not flows.empty:
        page.plot(s, "incast_fct_cdf", *IP.fct_cdf(flows))
    if jobs["flow_bytes"].nunique() > 1 or jobs["switch"].nunique() > 1:
        page.plot(s, "incast_completion", *IP.completion_by_size(jobs))
    series = t["instrument_series"] if t["instrument_series"] is not None else pd.DataFrame()
    link = t["link_queue"] if t["link_queue"] is not None else pd.DataFrame()
    deliv = t["instrument_delivered"] if t["instrument_delivered"] is not None else pd.DataFrame()
    if not (series.empty and link.empty and deliv.empty):
        port = int(params.get("senders", 16)) + 1
        s.parts.append("<h3>Queue telemetry alongside</h3>")
        s.parts.append(R.para(
            "Red: the DUT instrument's per-interval maximum of the receiver port's queue "
            "(reports to the controller; switch timestamps put on the wall clock by the "
            "fastest report's delay). Blue: the backlog of the receiver link's qdisc, the "
            "queue that builds when the link is slower than the switch. Below: each sender's "
            "share of the receiver port as the instrument's tel_delivered counters grew "
            "(polled over P4Runtime every 100 ms)."))
        for cid in list(dict.fromkeys(jobs["case_id"]))[:6]:
            name = "incast_queues_" + cid.replace("/", "_")
            page.plot(s, name, *IP.queues(cid, series, link, deliv, port))
    skipped = run.meta.get("skipped") or {}
    for kind, why in skipped.items():
        s.parts.append(R.para(f"<b>{html.escape(kind)}</b> cases skipped: {html.escape(why)}"))


def _fairness(page: "R.Page") -> None:
    """The shared fairness section, at Mininet's rates: Table 3's shape in
    Mbit/s and the method as run."""
    from .fairness_run import table3_mbps

    params = page.run.meta.get("parameters", {}).get("fairness_mininet", {})
    R.fairness(page, R.FairnessView(
        "Fairness: N:1 incast with iMIX, in Mininet",
        "N senders each offer line rate of the Tolly iMIX (64:55, 78:5, 576:17, 1518:23) "
        f"on {html.escape(str(params.get('link_bw', '?')))}bit/s links (htb) to one receiver "
        "port through the reference DUT; per-stream layer-1 rate at the receiver over the "
        "steady-state window, in the shape of seed 000's Table 3 (Mbit/s here), "
        "bandwidth share vs packet-rate share, Jain's index; the instrument's per-ingress "
        "shares (tel_delivered) against the receiver's.",
        "Table 3 shape: throughput of each stream (Mbit/s)", table3_mbps))


def render(run_dir: Path, out: Optional[Path] = None) -> Path:
    """Writes report.html (and figures/*.png) for a stored Mininet run."""
    return R.render_page(run_dir, out, (R.overview, R.checks, _incast, R.microburst, _fairness))
