"""The trunk section of a run's report: throughput with 2 and 3 clients per
policy (seed 004's Figure 1), outage and recovery per link event with
failover by the controller and in the data plane (its Figure 2), and the
trunk's throughput over time with the events marked."""

from __future__ import annotations

import pandas as pd

from .. import report
from ..plots_web import subplot_lines
from . import tables as lag_failover_tables
from .policies import POLICIES, ROUND_ROBIN_WHY

COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")


def _over_time(series: pd.DataFrame, outage: pd.DataFrame, mininet: bool = False):
    """One panel per (policy, clients, failover): each member's layer-1
    Gbit/s and their sum over time, the link events as vertical lines
    (virtual us; in Mininet ms of wall clock from the load's start)."""
    import matplotlib.pyplot as plt
    from plotly.subplots import make_subplots

    scale, axis = ((1e6, "time from the load's start (ms)") if mininet
                   else (1e3, "virtual time (us)"))
    keys = list(series.groupby(["policy", "clients", "failover"], sort=False).groups)
    modes = list(dict.fromkeys(k[2] for k in keys))
    rows_k = list(dict.fromkeys((k[0], k[1]) for k in keys))
    cols, rows = len(modes), len(rows_k)
    titles = [f"{POLICIES[p].name}, {n} clients, {m} failover" for p, n in rows_k for m in modes]
    web = make_subplots(rows=rows, cols=cols, subplot_titles=titles, shared_xaxes=True)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.1 * rows), squeeze=False,
                             sharex=True)
    events: list = []  # the link events' lines and labels, added to `web` at once
    labels: list = []
    for i, (policy, n) in enumerate(rows_k):
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            s = series[(series["policy"] == policy) & (series["clients"] == n)
                       & (series["failover"] == mode)]
            if s.empty:
                ax.axis("off")
                continue
            wide = s.pivot_table(index="t_ns", columns="port", values="gbps", aggfunc="sum")
            t_us = wide.index.to_numpy() / scale
            for k, port in enumerate(wide.columns):
                c = COLORS[k % len(COLORS)]
                ax.plot(t_us, wide[port], lw=0.9, color=c, label=f"member {port}")
                web.add_scatter(x=t_us, y=wide[port], mode="lines", line=dict(color=c),
                                name=f"member {port}", legendgroup=str(port),
                                showlegend=(i, j) == (0, 0), row=i + 1, col=j + 1)
            total = wide.sum(axis=1)
            ax.plot(t_us, total, lw=1.2, color="black", label="trunk")
            web.add_scatter(x=t_us, y=total, mode="lines", line=dict(color="black"),
                            name="trunk", legendgroup="trunk", showlegend=(i, j) == (0, 0),
                            row=i + 1, col=j + 1)
            ev = outage[(outage["policy"] == policy) & (outage["clients"] == n)
                        & (outage["failover"] == mode)]
            for e in ev.itertuples():
                x = float(e.event_ns) / scale
                ax.axvline(x, color="#888", ls="--", lw=0.8)
                ax.text(x, ax.get_ylim()[1] * 0.95, f" {e.event}", fontsize=6, va="top")
                events.append(("x", x, i + 1, j + 1, dict(dash="dash", color="#888")))
                labels.append((x, i + 1, j + 1, e.event))
            ax.set_title(titles[i * cols + j], fontsize=8)
            ax.set_ylabel("Gbit/s", fontsize=7)
            ax.tick_params(labelsize=6)
            ax.set_ylim(bottom=0)
        axes[rows - 1][0].set_xlabel(axis, fontsize=7)
    axes[0][0].legend(fontsize=6, loc="lower left")
    fig.tight_layout()
    subplot_lines(web, events, labels)
    web.update_layout(template="plotly_white", height=230 * rows + 60,
                      margin=dict(l=60, r=20, t=60, b=40),
                      title="Trunk throughput over time, link events marked (seed 004)")
    web.update_xaxes(title_text=axis, row=rows)
    web.update_yaxes(title_text="Gbit/s")
    return web, fig


def _mininet_text(meta: dict) -> str:
    """What a Mininet run measured, and how that differs from virtual time."""
    par = meta.get("parameters", {}).get("lag_failover", {})
    rate = float(par.get("rate_bps", 0.0))
    dut = meta.get("dut", {}).get("label", "the reference DUT")
    return (
        f"Mininet, real time, against {report.esc(dut)}: "
        + report.esc(par.get("set_up", "")) + f". Every DUT link is shaped to {rate / 1e6:g} "
        f"Mbit/s (a port), so a member carries one port's worth. Link events: "
        + report.esc(par.get("link_state", "")) + f". The seed's 30 s between events is "
        f"{float(par.get('interval_s') or 0):g} s here; an event's time is when the kernel "
        "announced the change (rtnetlink), as `ip` may return much later on a busy machine. "
        "Frames lost to an event come from the analyzer's runs of missing sequence numbers, "
        "put against the event by the send times of the frames around them; recovery is "
        "from the event to the first frame received after its last loss, so it is at least "
        "a client's frame interval. The first frame a port sends after it comes back meets "
        "the socket's pending network-down error and is lost (one frame per up event, as "
        "BMv2's send would). A trial whose generator sent less than asked is marked short "
        "(the tester's limit, not the DUT's), and the notes say how many there were; "
        "outage is lost frames over the rate actually offered.")


def _first_events(page: report.Page, outage: pd.DataFrame) -> pd.DataFrame:
    """The link events of the first iteration (the one the series shows):
    in Mininet each iteration's events are where the wall clock put them."""
    ev = page.run.t.get("lag_failover_events")
    if ev is None or ev.empty or "iteration" not in ev:
        return outage
    return ev[ev["iteration"] == ev["iteration"].min()]


def section(page: report.Page) -> None:
    thr = page.run.t.get("lag_failover_throughput")
    out = page.run.t.get("lag_failover_outage")
    if (thr is None or thr.empty) and (out is None or out.empty):
        return
    mininet = page.run.meta.get("mode") == "mininet"
    s = page.section("lag-failover", "Link aggregation: trunk throughput and failover "
                                     "(seed 004)" + (" — Mininet" if mininet else ""))
    s.parts.append(report.para(
        "Clients 1..N send UDP (destination port 5001, as TTCP) at 100GbE to one server behind "
        "a LAG of the DUT's member ports, written by the controller as a lag_select group over "
        "P4Runtime. The DUT is compiled once per policy: its LAG selector hashes the policy's "
        "fields (a v1model selector's fields are fixed when the program is compiled). "
        + report.esc(f"Round robin cannot be done by the reference DUT: {ROUND_ROBIN_WHY}.")))
    if mininet:
        s.parts.append(report.para(_mininet_text(page.run.meta)))
    if thr is not None and not thr.empty:
        s.parts.append("<h3>Trunk throughput (seed 004 Figure 1)</h3>" + report.para(
            "Every client offers its load for the trial; the trunk's throughput is what left "
            "the member ports after the warm-up (layer 1). A policy that puts every client on "
            "one member leaves the other idle."))
        s.parts.append(report.html_table(lag_failover_tables.throughput(thr)))
    if out is not None and not out.empty:
        s.parts.append("<h3>Failover and recovery (seed 004 Figure 2)</h3>" + report.para(
            "Under a load one member can carry, each member is pulled and restored in turn "
            "(the seed's 30 s schedule, scaled). Outage = frames lost to the event / the offered "
            "frame rate; recovery = time from the event until the trunk carries the full load "
            "again (the send time of its last lost frame). Controller failover: the controller "
            "hears the port-status event and rewrites the LAG group after its reaction delay. "
            "Data-plane failover: each member watches its own port (P4Runtime watch_port), so "
            "the selector skips a down member at once."))
        table = lag_failover_tables.recovery(out)
        if table is not None:
            s.parts.append(report.html_table(table))
        cmp_ = lag_failover_tables.failover_compare(out)
        if cmp_ is not None:
            s.parts.append("<h4>Frames lost per iteration to the pulls, controller vs data "
                           "plane</h4>" + report.html_table(cmp_))
    series = page.run.t.get("lag_failover_series")
    if series is not None and not series.empty and out is not None:
        page.plot(s, "lag_failover_over_time", *_over_time(series, _first_events(page, out),
                                                            mininet))
