"""The microburst section of a run's report: seed 000's Table 4 and seed
001's Figure 10 in MB and frames, absorption against what the configured
buffer predicts, the queue during bursts (ground truth and the
instrument), the occupancy heatmap."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import plotdata as pdt
from .. import report
from . import tables as tb


def section(page: report.Page) -> None:
    run = page.run
    if not run.has("microburst"):
        return
    from .. import plots_web as pw

    micro = run.t["microburst"]
    duts = micro["dut_title"].dropna().unique() if "dut_title" in micro else []
    s = page.section("microburst", "Microburst absorption"
                     + (f" of {', '.join(map(str, duts))}" if len(duts) else ""))
    s.parts.append(report.para(
        "Two ingress ports (four for 4:1) each send a burst of N frames at line rate to one "
        "egress port; buffered = forwarded − N, capacity in frames and in MB (bytes / 2^20), "
        "per frame size and port combination, as in seed 000's Table 4 and seed 001's "
        "Figure 10. Grey: what the configured buffer predicts."))
    page.plot(s, "microburst_absorption", pw.absorption_vs_size(micro),
              report.Drawing("absorption_vs_size", (micro,)))
    rows = tb.table4_microburst(micro)
    if rows:
        s.parts.append("<h3>Table 4 shape: buffer in use (MBytes)</h3>" + report.seed_table(rows))
        s.parts.append("<h3>The same in frames</h3>"
                       + report.seed_table(tb.table4_microburst(micro, "buffered_frames", digits=0)))
    rows4 = tb.burst_4to1(micro)
    if rows4:
        s.parts.append("<h3>4:1 burst absorption (seed 001, Figure 10 shape), MB</h3>"
                       + report.seed_table(rows4))
    cols = [c for c in ("scenario", "combination", "profile", "frame_size", "burst_frames",
                        "forwarded_total", "buffered_frames", "expected_frames", "error_rel",
                        "buffered_mb", "peak_truth_bytes") if c in micro]
    chk = micro[cols].copy()
    if "error_rel" in chk:
        chk["within_2pct"] = chk["error_rel"].abs() <= report.ABSORPTION_TOL
    s.parts.append("<details><summary>every burst: forwarded, buffered, expected</summary>"
                   + report.html_table(chk) + "</details>")

    if run.has("ground_truth"):
        truth = run.rows("ground_truth")
        panels = pdt.burst_panels(micro, truth)
        if panels:
            s.parts.append("<h3>Queue occupancy over time during each burst</h3>")
            s.parts.append(report.para("Ground truth from the traffic manager's occupancy trace; one "
                                  "line per frame size (PNG: all panels; HTML: pick a panel)."))
            page.plot(s, "microburst_occupancy", pw.burst_occupancy(panels),
                      report.Drawing("burst_occupancy_grid", (panels,)))
        labels = {r["case_id"]: pdt.short_case(r) for _, r in micro.iterrows()}
        groups = {r["case_id"]: pdt.case_group(r) for _, r in micro.iterrows()}
        h = pdt.queue_heatmap(truth, labels, groups=groups)
        if h is not None:
            s.parts.append("<h3>Time × egress queue</h3>")
            page.plot(s, "microburst_heatmap", pw.queue_heatmap(h, "Occupancy per egress queue"),
                      report.Drawing("queue_heatmap", (h, "Microburst: occupancy per egress "
                                                        "queue (each row one queue of one case)")))
        rows = micro.set_index("case_id", drop=False)
        report.plot_stacked_by_ingress(page, s, [rows.loc[c] for c in _stack_cases(micro)],
                                  "microburst_by_ingress", "Occupancy stacked by ingress port")
        if not run.has("tap_series"):  # with the tap, its own section shows what it saw
            report.plot_instrument_views(page, s,
                                    [rows.loc[c] for c in pdt.representative_cases(micro)],
                                    "microburst_instrument", "What the instrument saw")


def _stack_cases(micro: pd.DataFrame, size: int = 1518) -> list[str]:
    """One case per (scenario, combination, profile) at the size nearest
    `size`, the profiles of one combination side by side."""
    out = []
    for _, gc in micro.groupby(["scenario", "combination"], sort=False):
        for prof in pdt.ordered(gc["profile"]):
            g = gc[gc["profile"] == prof]
            sizes = g["frame_size"].to_numpy()
            best = sizes[np.argmin(np.abs(sizes - size))]
            out.append(g[g["frame_size"] == best]["case_id"].iloc[0])
    return out
