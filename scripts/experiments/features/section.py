"""The features-on section of a run's report: throughput and latency with
the 24 ACL rules off and on and their difference (ESG's Figure 11), the
rules' hit counts, and each source port's share of the egress in the
fairness scenarios (ESG's Figures 12 and 13)."""

from __future__ import annotations

import pandas as pd

from .. import report
from . import tables as features_tables


def _fig11(res: pd.DataFrame):
    import matplotlib.pyplot as plt
    from plotly.subplots import make_subplots

    web = make_subplots(rows=1, cols=2, subplot_titles=("Throughput (% line rate)",
                                                        "Average latency (ns)"))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
    for rules, mark in (("off", "o-"), ("on", "s--")):
        for test, field, ax, col in (("throughput", "throughput_pct", a1, 1),
                                     ("latency", "lat_avg_ns", a2, 2)):
            g = res[(res["test"] == test) & (res["rules"] == rules)].sort_values("frame_size")
            if g.empty or field not in g:
                continue
            web.add_scatter(x=g["frame_size"], y=g[field], mode="markers+lines",
                            name=f"{test}, rules {rules}", row=1, col=col)
            ax.plot(g["frame_size"], g[field], mark, label=f"rules {rules}")
    web.update_layout(template="plotly_white", height=360, margin=dict(l=60, r=20, t=50, b=50),
                      title="With and without the ACL rules (ESG Figure 11)")
    web.update_xaxes(title_text="packet size (B)")
    for ax, title in ((a1, "Throughput (% line rate)"), (a2, "Average latency (ns)")):
        ax.set_xlabel("packet size (B)")
        ax.set_title(title)
        if ax.lines:
            ax.legend(fontsize=7)
    a1.set_ylim(bottom=0)
    return web, fig


def _shares(fair: pd.DataFrame, shares: pd.DataFrame):
    """One bar chart per scenario: each source port's share, the fair
    share as a line (ESG's Figures 12 and 13)."""
    import matplotlib.pyplot as plt
    from plotly.subplots import make_subplots

    cases = list(fair.itertuples())
    n = len(cases)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    titles = [f"{c.n}-to-1, {c.frame_size} B (Jain {c.jain:.4f})" for c in cases]
    web = make_subplots(rows=rows, cols=cols, subplot_titles=titles)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.8 * rows), squeeze=False)
    for i, c in enumerate(cases):
        s = shares[shares["case_id"] == c.case_id].sort_values("ingress_port")
        r, k = divmod(i, cols)
        labels = [str(p) for p in s["ingress_port"]]
        web.add_bar(x=labels, y=s["share_pct"], name=titles[i], showlegend=False,
                    text=[f"{v:.1f}%" for v in s["share_pct"]], row=r + 1, col=k + 1)
        ax = axes[r][k]
        bars = ax.bar(labels, s["share_pct"], color="#4c72b0")
        ax.bar_label(bars, labels=[f"{v:.0f}%" for v in s["share_pct"]], fontsize=6)
        ax.axhline(c.fair_share_pct, color="#c44e52", lw=1, ls="--")
        ax.set_title(titles[i], fontsize=8)
        ax.set_xlabel("source port", fontsize=7)
        ax.set_ylabel("share of egress (%)", fontsize=7)
        ax.tick_params(labelsize=6)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.tight_layout()
    web.update_layout(template="plotly_white", height=300 * rows,
                      title="Bandwidth share per source port, rules on (ESG Figures 12, 13)",
                      margin=dict(l=60, r=20, t=70, b=40))
    return web, fig


def _mininet_text(meta: dict) -> str:
    """What a Mininet run measured, and how that differs from virtual time."""
    par = meta.get("parameters", {}).get("features", {})
    rate = float(par.get("rate_bps", 0.0))
    pairs = ", ".join(f"{a}&harr;{b}" for a, b in par.get("pairs", []))
    dut = meta.get("dut", {}).get("label", "the reference DUT")
    return (
        f"Mininet, real time, against {report.esc(dut)}: the rules written over P4Runtime before "
        "every trial (and taken out for the rules-off cases), so each trial's hit counts start "
        f"at zero. Port pairs {pairs} (as many of ESG's six as this machine's cores carry, "
        f"unless given) at a line rate of {rate / 1e6:g} Mbit/s per port, what the tester says "
        f"a port is; trials last {float(par.get('trial_s') or 0):g} s. A tester host per port "
        "runs p4scope-trafgen, which cannot vary a field frame by frame, so each direction is "
        "six streams, one per UDP destination port the rules match. A trial whose generator "
        "sent less than asked is marked short (the tester's limit, not the DUT's); the search "
        "counts it as failed and the tables' notes say how many there were. Latency is from "
        "the generator's software timestamp to the analyzer's kernel receive timestamp. "
        "Fairness: N sources at line rate into one port that the DUT sends at line rate (its "
        "queue rate, set over Thrift for the frame size); what shares it is the software "
        "switch's receive loop feeding one tail-drop queue, and strictly periodic sources can "
        "lock in phase with it, so shares may be far from those in virtual time, where the "
        "traffic manager's buffer profile decides them.")


def section(page: report.Page) -> None:
    res = page.run.t.get("features_results")
    fair = page.run.t.get("features_fairness")
    if (res is None or res.empty) and (fair is None or fair.empty):
        return
    meta = page.run.meta
    mininet = meta.get("mode") == "mininet"
    s = page.section("features", "Performance with packet processing features on (seed 001)"
                     + (" — Mininet" if mininet else ""))
    s.parts.append(report.para(
        "ESG's test: 24 ACL rules in the DUT's ternary <code>acl</code> table, 12 on all ports "
        "(6 deny for traffic the test never sends, 6 permit for the test traffic) and 12 DSCP "
        "rewrites, two on each of six ports (the first port of each pair; with fewer pairs, "
        "also ports no pair uses); every test frame is looked up against all 24 and none is "
        "denied. Port pairs send both ways at once; throughput is the tester's binary search, "
        "latency trials run at that throughput. A feature-invariant DUT shows no difference "
        "between the rules off and on."))
    if mininet:
        s.parts.append(report.para(_mininet_text(meta)))
    if res is not None and not res.empty:
        for title, fn in (("Throughput", features_tables.throughput), ("Latency", features_tables.latency),
                          ("Difference (rules on less rules off)", features_tables.difference)):
            table = fn(res)
            if table is not None:
                s.parts.append(f"<h3>{report.esc(title)}</h3>" + report.html_table(table))
        page.plot(s, "features_fig11", *_fig11(res))
    hits = page.run.t.get("features_acl_hits")
    if hits is not None and not hits.empty:
        per_rule = hits.groupby(["rule", "priority", "action", "scope", "match"], sort=True)[
            "packets"].sum().reset_index().rename(columns={"packets": "packets (all rules-on "
                                                                      "cases)"})
        s.parts.append("<h3>ACL rules and their hits</h3>" + report.html_table(per_rule))
    shares = page.run.t.get("features_shares")
    if fair is not None and not fair.empty and shares is not None:
        s.parts.append("<h3>Bandwidth fairness, rules on (ESG Figures 12 and 13)</h3>")
        s.parts.append(report.para(
            "N source ports send at 100 % of line rate to one egress port; each port's share is "
            "its part of what left the egress port in the trial; the dashed line is the fair "
            "share 1/N."))
        s.parts.append(report.html_table(features_tables.fairness_shares(fair, shares)))
        page.plot(s, "features_fairness_shares", *_shares(fair, shares))
