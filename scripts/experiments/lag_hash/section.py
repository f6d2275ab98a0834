"""The LAG hashing section of a run's report: the uniform hash's figures
beside the measured ones and the verdict, seed 002's summed-rate table,
the per-member load, and two plots (summed rate vs streams; per-stream
rate and per-member load vs streams)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import report
from . import tables as lag_hash_tables
from . import uniform

COLORS = {"port": "#4c72b0", "lag": "#dd8452"}


def _sums_fig(res: pd.DataFrame):
    import matplotlib.pyplot as plt
    import plotly.graph_objects as go

    web = go.Figure()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    r = lag_hash_tables.ordered(res)
    tgt = r.groupby("streams")["target_gbps"].first()
    web.add_scatter(x=tgt.index, y=tgt.values, mode="lines", name="target",
                    line=dict(color="#999"))
    ax.plot(tgt.index, tgt.values, color="#999", label="target")
    for setup, g in r.groupby("setup", sort=False):
        name, c = str(g["setup_label"].iloc[0]), COLORS.get(str(setup))
        err = [(g["sum_avg_gbps"] - g["sum_min_gbps"]).clip(lower=0),
               (g["sum_max_gbps"] - g["sum_avg_gbps"]).clip(lower=0)]
        web.add_scatter(x=g["streams"], y=g["sum_avg_gbps"], mode="markers+lines",
                        name=f"{name}: average (min..max)", line=dict(color=c),
                        error_y=dict(type="data", symmetric=False, array=err[1], arrayminus=err[0]))
        web.add_scatter(x=g["streams"], y=g["uniform_sum_gbps"], mode="lines",
                        name=f"{name}: uniform hash, expected", line=dict(color=c, dash="dot"))
        ax.errorbar(g["streams"], g["sum_avg_gbps"], yerr=err, fmt="o-", color=c, capsize=3,
                    label=f"{name} (min..max)")
        ax.plot(g["streams"], g["uniform_sum_gbps"], ":", color=c,
                label=f"{name}, uniform hash")
    web.update_layout(template="plotly_white", height=380, margin=dict(l=60, r=20, t=50, b=50),
                      title="Summed achieved rate vs streams (seed 002 Tables 1-4)",
                      xaxis_title="concurrent streams", yaxis_title="Gbit/s (layer 1)")
    ax.set_xlabel("concurrent streams")
    ax.set_ylabel("Gbit/s (layer 1)")
    ax.set_title("Summed achieved rate (dotted: uniform hash, expected)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    return web, fig


def _loads_fig(streams: pd.DataFrame, members: pd.DataFrame, res):
    """Left: every stream's achieved rate in every run; right: every
    member's load in every run (the LAG's members, and the single port)."""
    import matplotlib.pyplot as plt
    from plotly.subplots import make_subplots

    titles = ("Per-stream achieved rate", "Per-member load")
    web = make_subplots(rows=1, cols=2, subplot_titles=titles)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    rng = np.random.default_rng(0)  # a fixed jitter: the same picture every time
    setups = [s for s in lag_hash_tables.SETUP_ORDER if s in set(streams["setup"]) | set(members["setup"])]
    for col, (df, field, ax) in enumerate(((streams, "achieved_gbps", axes[0]),
                                           (members, "load_gbps", axes[1])), start=1):
        for i, setup in enumerate(setups):
            g = df[df["setup"] == setup]
            if g.empty:
                continue
            x = g["streams"].to_numpy(float) + (i - (len(setups) - 1) / 2) * 0.25 \
                + rng.uniform(-0.08, 0.08, len(g))
            name = lag_hash_tables.setup_label(res, setup)
            web.add_scatter(x=x, y=g[field], mode="markers", name=name, legendgroup=setup,
                            showlegend=col == 1, marker=dict(color=COLORS.get(setup), size=4,
                                                             opacity=0.5), row=1, col=col)
            ax.scatter(x, g[field], s=6, alpha=0.4, color=COLORS.get(setup), label=name)
            line = (g.groupby("streams")[field].mean() if col == 1 else
                    g.groupby(["streams", "run"])[field].max().groupby("streams").mean())
            ax.plot(line.index, line.values, "-", color=COLORS.get(setup), lw=1)
        ax.set_xlabel("concurrent streams")
        ax.set_ylabel("Gbit/s (layer 1)")
        ax.set_title(titles[col - 1] + (" (line: mean)" if col == 1
                                        else " (line: busiest member, mean)"))
        ax.set_ylim(bottom=0)
        if ax.collections:
            ax.legend(fontsize=7)
    if "capacity_gbps" in members:
        for setup, g in members.groupby("setup"):
            axes[1].axhline(float(g["capacity_gbps"].iloc[0]), color=COLORS.get(str(setup)),
                            ls="--", lw=0.8)
    if len(streams):
        axes[0].axhline(float(streams["target_gbps"].iloc[0]), color="#999", ls="--", lw=0.8)
    fig.tight_layout()
    web.update_layout(template="plotly_white", height=380, margin=dict(l=60, r=20, t=60, b=50),
                      title="Every run's streams and members (dashed: target, member rate)")
    web.update_xaxes(title_text="concurrent streams")
    web.update_yaxes(title_text="Gbit/s (layer 1)")
    return web, fig


def _setup_text(params: dict) -> str:
    lag = f"{params.get('members', 4)}x{params.get('member_gbps', 25):g}G"
    return (
        f"Seed 002's test on the reference DUT: {report.esc(params.get('streams_text', '1-12'))} "
        f"concurrent streams at a fixed "
        f"{params.get('stream_gbps', 10.25):g} Gbit/s each (the seed's Frametest instance at 24 "
        f"frames/s), {params.get('frame_size', 9018)}-byte frames, from one server to one "
        f"client (the same MAC and IPv4 addresses; source port 2049, a destination port "
        f"drawn anew for every run), {params.get('runs', 15)} runs per stream count, out of one "
        f"{params.get('port_gbps', 100):g}G port and out of a {lag} LAG. The controller "
        "writes the LAG as a selector group of the DUT's <code>lag_select</code> table over "
        "P4Runtime; the DUT's action selector hashes "
        f"<b>{report.esc(params.get('hash', 'crc32'))}</b> over "
        f"<b>{report.esc(params.get('fields', 'layer3+4'))}</b> "
        f"({report.esc(params.get('fields_text', ''))}); the member is the hash modulo the "
        "number of members, as in BMv2. A stream's achieved rate is what arrived after "
        f"{params.get('warmup_us', 300):g} us of warm-up until {params.get('duration_us', 2300):g}"
        " us of virtual time (the seed: 3 s of warm-up, 20 s measured), layer 1. The uniform "
        "hash's figures are exact (every placement of the streams on the members counted), not "
        "sampled; z is how many standard errors the measured mean of the busiest member's "
        f"streams lies above the uniform hash's; the verdict combines them over the stream "
        f"counts (Stouffer; worse than chance above {uniform.WORSE_Z}, one-sided 1 %).")


def section(page: report.Page) -> None:
    res = page.run.t.get("lag_hash_results")
    runs = page.run.t.get("lag_hash_runs")
    if (res is None or res.empty) and (runs is None or runs.empty):
        return
    params = page.run.meta.get("parameters", {}).get("lag_hash", {})
    s = page.section("lag-hash", "LAG hashing: one port vs a LAG (seed 002)")
    s.parts.append(report.para(_setup_text(params)))
    if res is not None and not res.empty:
        for setup, (z, said) in lag_hash_tables.verdicts(res).items():
            if setup != "lag":
                continue
            zt = "n/a" if z is None else f"{z:.2f}"
            s.parts.append(report.para(f"<b>The DUT's hash over {report.esc(lag_hash_tables.setup_label(res, setup))}: "
                                  f"{report.esc(said)}</b> (combined z = {zt})."))
        s.parts.append("<h3>Measured vs a uniform hash</h3>" + report.html_table(lag_hash_tables.uniform(res)))
        page.plot(s, "lag_hash_sums", *_sums_fig(res))
    if runs is not None and not runs.empty:
        s.parts.append("<h3>Summed achieved rate per run (Gbit/s; seed 002 Tables 1-4)</h3>"
                       + report.html_table(lag_hash_tables.sums(runs, res)))
    members = page.run.t.get("lag_hash_members")
    streams = page.run.t.get("lag_hash_streams")
    if members is not None and not members.empty:
        s.parts.append("<h3>Per-member load, members ranked in each run, mean over runs</h3>"
                       + report.html_table(lag_hash_tables.member_ranks(members, res)))
    if streams is not None and not streams.empty and members is not None:
        s.parts.append(report.para("Every stream's rate in every run, and every run's stream per "
                              "member: <code>lag_hash_per_stream.csv</code> (seed 002 Tables "
                              "5-28) and <code>lag_hash_member_load.csv</code>."))
        page.plot(s, "lag_hash_loads", *_loads_fig(streams, members, res))
