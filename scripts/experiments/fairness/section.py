"""The fairness section of a run's report: seed 000's Table 3 (Gbps in
virtual time, Mbit/s in Mininet), Jain's index and the per-case figures,
bandwidth vs packet-rate shares, the congested queue stacked by ingress
port, what the instrument saw, the occupancy heatmap."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .. import plotdata as pdt
from .. import report
from ..seedtables import Rows
from . import tables as tb


@dataclass(frozen=True)
class FairnessView:
    """What the fairness section says about how the run was made: its title,
    the method paragraph (HTML), and Table 3's heading and rows from the
    fairness streams."""

    title: str
    intro: str
    table3_heading: str
    table3: Callable[[pd.DataFrame], Rows]


VIRTUAL_FAIRNESS = FairnessView(
    "Fairness: N:1 incast with iMIX",
    "N source ports each send 100% line rate of the Tolly iMIX (64:55, 78:5, 576:17, "
    "1518:23) to one egress port. Per-stream Gbps (layer 1) at the sink over the "
    "steady-state window, in the shape of seed 000's Table 3; bandwidth share vs "
    "packet-rate share per stream; Jain's index and max/min share per case.",
    "Table 3 shape: throughput of each stream (Gbps)", tb.table3_fairness)


def fairness(page: report.Page, view: FairnessView = VIRTUAL_FAIRNESS) -> None:
    run = page.run
    if not run.has("streams") or "n" not in run.t["streams"]:
        return
    from .. import plots_web as pw

    streams = run.t["streams"]
    streams = streams[streams["experiment"] == "fairness"]
    if streams.empty:
        return
    fair_rows = run.t.get("fairness", pd.DataFrame())
    duts = fair_rows["dut_title"].dropna().unique() if "dut_title" in fair_rows else []
    s = page.section("fairness", view.title + (f" through {', '.join(map(str, duts))}"
                                               if len(duts) else ""))
    s.parts.append(report.para(view.intro))
    s.parts.append(f"<h3>{report.esc(view.table3_heading)}</h3>" + report.seed_table(view.table3(streams)))
    if run.has("fairness"):
        fair = run.t["fairness"]
        page.plot(s, "fairness_jain", pw.fairness_index(fair),
                  report.Drawing("fairness_index", (fair,)))
        s.parts.append("<h3>Per case</h3>" + report.html_table(tb.fairness_summary(fair)))
    cases = pdt.share_cases(streams, run.t.get("instrument_shares"))
    for n in sorted({c.n for c in cases}):
        cn = [c for c in cases if c.n == n]
        title = f"{n}:1 — bandwidth share vs packet-rate share per source port"
        page.plot(s, f"fairness_shares_{n}to1", pw.share_bars(cn, title),
                  report.Drawing("share_bars", (cn, title)))
    if run.has("ground_truth_ingress") and run.has("fairness"):
        fair = run.t["fairness"]
        groups = [g for _, g in fair.groupby(["n", "profile"], sort=False)]
        report.plot_stacked_by_ingress(page, s, [g.iloc[0] for g in groups], "fairness_by_ingress",
                                  "Occupancy of the congested queue, stacked by ingress port")
        if run.has("ground_truth"):
            if not run.has("tap_shares"):  # with the taps, their own section shows what they saw
                report.plot_instrument_views(page, s, [g.iloc[-1] for g in groups],
                                             "fairness_instrument",
                                             "What the instrument saw during the incasts")
            labels = {r["case_id"]: pdt.short_case(r) for _, r in fair.iterrows()}
            groups = {r["case_id"]: pdt.case_group(r) for _, r in fair.iterrows()}
            h = pdt.queue_heatmap(run.rows("ground_truth"), labels, groups=groups)
            if h is not None:
                page.plot(s, "fairness_heatmap", pw.queue_heatmap(h, "Fairness: occupancy per egress queue"),
                          report.Drawing("queue_heatmap",
                                         (h, "Fairness: occupancy per egress queue")))


def mininet_view(params: dict) -> FairnessView:
    """The same section at Mininet's rates: Table 3's shape in Mbit/s and
    the method as run."""
    return FairnessView(
        "Fairness: N:1 incast with iMIX, in Mininet",
        "N senders each offer line rate of the Tolly iMIX (64:55, 78:5, 576:17, 1518:23) "
        f"on {html.escape(str(params.get('link_bw', '?')))}bit/s links (htb) to one receiver "
        "port through the reference DUT; per-stream layer-1 rate at the receiver over the "
        "steady-state window, in the shape of seed 000's Table 3 (Mbit/s here), "
        "bandwidth share vs packet-rate share, Jain's index; the instrument's per-ingress "
        "shares (tel_delivered) against the receiver's.",
        "Table 3 shape: throughput of each stream (Mbit/s)", tb.table3_mbps)


def section(page: report.Page) -> None:
    meta = page.run.meta
    if meta.get("mode") == "mininet":
        fairness(page, mininet_view(meta.get("parameters", {}).get("fairness_mininet", {})))
    else:
        fairness(page)
