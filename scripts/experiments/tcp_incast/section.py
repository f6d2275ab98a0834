"""The TCP incast section of a run's report: the jobs, the aggregate rate
into the receiver over time, flow completion times, and the queues
alongside (the DUT instrument, the receiver link's qdisc, each sender's
delivered share)."""

from __future__ import annotations

import html

import pandas as pd

from .. import report
from . import plots


INCAST_TABLES = ("incast_jobs", "incast_flows", "incast_rate", "instrument_series",
                 "instrument_delivered", "link_queue")


def section(page: report.Page) -> None:
    run = page.run
    if not run.has("incast_jobs"):
        return
    t = {n: run.t.get(n) for n in INCAST_TABLES}
    jobs = t["incast_jobs"]
    params = run.meta.get("parameters", {}).get("tcp_incast", {})
    s = page.section("incast", "TCP incast in Mininet")
    s.parts.append(report.para(
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
    s.parts.append("<h3>Jobs</h3>" + report.html_table(jobs[[c for c in show if c in jobs]]))
    rates = t["incast_rate"]
    if rates is not None and not rates.empty:
        page.plot(s, "incast_aggregate_rate", *plots.aggregate_rate(rates, jobs))
    flows = t["incast_flows"]
    if flows is not None and not flows.empty:
        page.plot(s, "incast_fct_cdf", *plots.fct_cdf(flows))
    if jobs["flow_bytes"].nunique() > 1 or jobs["switch"].nunique() > 1:
        page.plot(s, "incast_completion", *plots.completion_by_size(jobs))
    series = t["instrument_series"] if t["instrument_series"] is not None else pd.DataFrame()
    link = t["link_queue"] if t["link_queue"] is not None else pd.DataFrame()
    deliv = t["instrument_delivered"] if t["instrument_delivered"] is not None else pd.DataFrame()
    if not (series.empty and link.empty and deliv.empty):
        port = int(params.get("senders", 16)) + 1
        s.parts.append("<h3>Queue telemetry alongside</h3>")
        s.parts.append(report.para(
            "Red: the DUT instrument's per-interval maximum of the receiver port's queue "
            "(reports to the controller; switch timestamps put on the wall clock by the "
            "fastest report's delay). Blue: the backlog of the receiver link's qdisc, the "
            "queue that builds when the link is slower than the switch. Below: each sender's "
            "share of the receiver port as the instrument's tel_delivered counters grew "
            "(polled over P4Runtime every 100 ms)."))
        for cid in list(dict.fromkeys(jobs["case_id"]))[:6]:
            name = "incast_queues_" + cid.replace("/", "_")
            page.plot(s, name, *plots.queues(cid, series, link, deliv, port))
    skipped = run.meta.get("skipped") or {}
    for kind, why in skipped.items():
        s.parts.append(report.para(f"<b>{html.escape(kind)}</b> cases skipped: {html.escape(why)}"))
