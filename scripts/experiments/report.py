"""`p4scope report RUN_DIR`: one self-contained HTML page and PNG plots.

Reads only what a run stored (run.json and the Parquet tables) and writes

    RUN_DIR/report.html        plotly.js inlined from the plotly wheel:
                               opens offline, no network fetches
    RUN_DIR/figures/*.png      the same plots drawn with matplotlib

Sections appear when their tables exist, so a partial run (or a run of one
experiment) renders what it has and says what is missing.
"""

from __future__ import annotations

import html
import math
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pandas as pd

from . import plotdata as pdt
from . import seedtables as st
from .rundir import atomic_write_text, list_tables, load_meta, load_table

# Acceptance bars: what the reference DUT must show (the checks section).
FAIR_JAIN = 0.99
FAIR_SHARE_DEV = 0.02
ABSORPTION_TOL = 0.02
PEAK_TOL = 0.05
SHARE_TOL_PP = 1.0


@dataclass
class Run:
    path: Path
    meta: dict[str, Any]
    t: dict[str, pd.DataFrame]
    _by_case: dict[str, "pdt.CaseRows"] = field(default_factory=dict, repr=False)

    def has(self, name: str) -> bool:
        return name in self.t and not self.t[name].empty

    def rows(self, name: str) -> "pdt.CaseRows":
        """Table `name`'s rows of one case (plotdata.by_case), split once for
        every section that asks."""
        if name not in self._by_case:
            self._by_case[name] = pdt.by_case(self.t[name])
        return self._by_case[name]


def load_run(path: Path, tables: Optional[dict[str, pd.DataFrame]] = None) -> Run:
    """A stored run; `tables` are some of its tables already in memory (as
    RunDir.tables holds them), the others are read."""
    path = Path(path)
    meta = load_meta(path)
    have = tables or {}
    t = {n: _for_filtering(df) for n in list_tables(path)
         if (df := have[n] if n in have else load_table(path, n)) is not None}
    return Run(path, meta, t)


SMALL_TABLE_ROWS = 100_000


def _for_filtering(df: pd.DataFrame) -> pd.DataFrame:
    """A small table with its text columns as Python strings: the sections
    select rows of the per-case tables hundreds of times, and a selection
    of an Arrow-backed frame pays pyarrow's fixed cost once per column
    (a second of the report's time); a big table (the instrument's series)
    keeps its Arrow strings, selected once."""
    if len(df) > SMALL_TABLE_ROWS:
        return df
    text = [c for c, dt in df.dtypes.items() if isinstance(dt, pd.StringDtype)]
    return df.astype({c: object for c in text}) if text else df


@dataclass
class Section:
    anchor: str
    title: str
    parts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Drawing:
    """A PNG plot still to draw: `draw(*args)` returns the matplotlib
    figure; `draw` is a function or the name of one in plots_png (so the
    report's own process need not import matplotlib for the drawing
    processes). Given to Page.plot instead of a figure, it is drawn and
    saved by the page's drawing processes while the page goes on (see
    drawing.py)."""

    draw: "Callable[..., Any] | str"
    args: tuple = ()


class Page:
    """Collects sections; saves PNGs as plots are added (Drawings in
    `pool`, a drawing.py pool, when there is one; `finish` waits for them)."""

    def __init__(self, run: Run, png_dir: Path, pool: Any = None):
        self.run = run
        self.png_dir = png_dir
        self.pool = pool
        self.sections: list[Section] = []
        self.pngs: list[Path] = []
        self._first_plot = True
        self._drawing: list[Any] = []  # futures of the pool's PNGs

    def section(self, anchor: str, title: str) -> Section:
        s = Section(anchor, title)
        self.sections.append(s)
        return s

    def plot(self, sec: Section, name: str, web_fig, png_fig) -> None:
        """`png_fig`: a matplotlib figure, a Drawing of one, or None."""
        from . import drawing

        if png_fig is not None:
            self.png_dir.mkdir(parents=True, exist_ok=True)
            p = self.png_dir / f"{name}.png"
            if not isinstance(png_fig, Drawing):
                drawing.save_figure(png_fig, p)
            elif self.pool is not None:
                self._drawing.append(self.pool.submit(drawing.draw_png, png_fig, p))
            else:
                drawing.draw_png(png_fig, p)
            self.pngs.append(p)
        if web_fig is not None:
            div = web_fig.to_html(full_html=False, include_plotlyjs=False,
                                  config={"displaylogo": False, "responsive": True})
            link = f'<p class="png">PNG: <a href="figures/{name}.png">figures/{name}.png</a></p>' \
                if png_fig is not None else ""
            sec.parts.append(f'<div class="plot">{div}{link}</div>')

    def finish(self) -> None:
        """Waits for the PNGs being drawn elsewhere (their errors raised here)."""
        for f in self._drawing:
            f.result()
        self._drawing.clear()


# ----- helpers ---------------------------------------------------------------------

def esc(v: Any) -> str:
    return html.escape(str(v))


def para(text: str) -> str:
    return f"<p>{text}</p>"


def html_table(df: pd.DataFrame, header: bool = True, cls: str = "data") -> str:
    html_ = df.to_html(index=False, header=header, classes=cls, na_rep="", border=0,
                       float_format=lambda x: f"{x:,.4g}")
    return f'<div class="scroll">{html_}</div>'



def seed_table(rows: st.Rows) -> str:
    """A seed-shaped block table: header rows (first cell 'Stream...' or
    'Frame Size...') in bold, notes spanning the row."""
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    out = ['<div class="scroll"><table class="seed">']
    for r in rows:
        if len(r) == 1:
            cls = "note" if str(r[0]).startswith("Note") else "block"
            out.append(f'<tr class="{cls}"><td colspan="{width}">{esc(r[0])}</td></tr>')
            continue
        head = str(r[0]).startswith(("Stream", "Frame Size", "Packet Size"))
        tag = "th" if head else "td"
        cells = "".join(f"<{tag}>{'' if v is None else esc(v)}</{tag}>" for v in r)
        cells += f"<{tag}></{tag}>" * (width - len(r))
        out.append(f"<tr>{cells}</tr>")
    out.append("</table></div>")
    return "\n".join(out)


def verdict(v: Optional[bool]) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return '<span class="na">n/a</span>'
    return '<span class="pass">pass</span>' if v else '<span class="fail">fail</span>'


# ----- plots the experiments' sections share -----------------------------------------

def plot_stacked_by_ingress(page: Page, sec: Section, rows: Sequence[pd.Series], name: str,
                            heading: str) -> None:
    """The congested queue of each case in `rows`, stacked by ingress port."""
    from . import plots_web as pw

    if "ground_truth_ingress" not in page.run.t:
        return
    ti = page.run.rows("ground_truth_ingress")
    stacks = [sk for r in rows
              if (sk := pdt.stacked_by_ingress(ti, r["case_id"], pdt.short_case(r))) is not None]
    if stacks:
        sec.parts.append(f"<h3>{esc(heading)}</h3>")
        page.plot(sec, name, pw.stacked_by_ingress(stacks),
                  Drawing("stacked_by_ingress", (stacks,)))


def plot_instrument_views(page: Page, sec: Section, rows: Sequence[pd.Series], name: str,
                          heading: str) -> None:
    """What the instrument saw of each case in `rows`, against the truth."""
    from . import plots_web as pw

    run = page.run
    series = run.rows("instrument_series") if run.has("instrument_series") else None
    events = run.rows("burst_events") if run.has("burst_events") else None
    views = [v for r in rows
             if (v := pdt.instrument_view(run.rows("ground_truth"), series, events, r["case_id"],
                                          pdt.short_case(r))) is not None]
    if views:
        sec.parts.append(f"<h3>{esc(heading)}</h3>")
        page.plot(sec, name, pw.instrument_vs_truth(views),
                  Drawing("instrument_vs_truth", (views,)))


# ----- sections ------------------------------------------------------------------

def overview(page: Page) -> None:
    m = page.run.meta
    s = page.section("overview", "Run")
    status = m.get("status", "?")
    badge = "pass" if status == "complete" else "fail"
    reason = f" — {esc(m.get('partial_reason'))}" if m.get("partial_reason") else ""
    cases = m.get("cases", {})
    prog = m.get("program", {})
    vers = m.get("versions", {})
    rows = [
        ("run", m.get("run_id", page.run.path.name)),
        ("experiment", m.get("experiment", "")),
        ("status", f'<span class="{badge}">{esc(status)}</span>{reason}'),
        ("cases measured", f"{cases.get('done', '?')} of {cases.get('planned', '?')}"),
        ("started / ended (UTC)", f"{esc(m.get('started'))} / {esc(m.get('ended'))}"),
        ("seed", m.get("seed", "")),
        ("program", " ".join(f"{k}={v}" for k, v in prog.items() if k != "json_sha256")
         + (f" (JSON sha256 {prog['json_sha256'][:16]}…)" if "json_sha256" in prog else "")),
        ("versions", ", ".join(f"{k} {v}" for k, v in vers.items())),
        ("clock", m.get("clock", "virtual time (simulation)")),
    ]
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v if k == 'status' else esc(v)}</td></tr>"
                   for k, v in rows)
    s.parts.append(f'<table class="kv">{body}</table>')
    params = m.get("parameters", {})
    if params:
        s.parts.append("<details><summary>all parameters (run.json)</summary><pre>"
                       + esc(_pretty(params)) + "</pre></details>")
    missing = [n for n in ("microburst", "streams", "ground_truth") if not page.run.has(n)]
    if missing:
        s.parts.append(para("Not in this run: " + ", ".join(missing)
                          + " (sections that need them are left out)."))


def _pretty(obj: Any) -> str:
    import json

    return json.dumps(obj, indent=2, default=str)


def _theory(page: Page) -> None:
    """The shared buffer's theory, for runs on the reference DUT's traffic
    manager profiles (their run.json states the theory lines)."""
    if not page.run.meta.get("theory"):
        return
    s = page.section("theory", "Theory: what the configuration predicts")
    s.parts.append(para(
        "The traffic manager admits a frame into an egress queue while the queue's occupancy "
        "<i>q</i> stays under its dynamic threshold <i>α·(B − Q)</i>, where <i>B</i> is the "
        "shared pool (the buffer less the space ports reserve for themselves: here the "
        "telemetry collector port's reserve, see the table) and <i>Q</i> what all queues hold "
        "together. With one congested queue the "
        "queue settles where <i>q = α·(B − q)</i>, i.e. <b><i>q* = α·B / (1 + α)</i></b>; with "
        "<i>n</i> queues congested at once each gets <i>α·B / (1 + n·α)</i>; space reserved for "
        "a queue outside the shared pool adds to this. A queue with a static limit keeps that "
        "limit. When the queue arbitrates between ingress ports (both profiles here) it keeps one "
        "virtual output queue (VOQ) per ingress port and the threshold applies to each VOQ: "
        "<i>k</i> ingress ports bursting into one egress queue hold <b><i>k·α·B / (1 + k·α)</i></b> "
        "together — two thirds of the buffer for 2:1 with α = 1, four fifths for 4:1."))
    s.parts.append(para(
        "A microburst of <i>N</i> frames from each of <i>k</i> ingress ports at line rate fills "
        "the egress queue at (k − 1) × line rate while the egress port drains at line rate. When "
        "the bursts end, the egress port has sent about <i>N</i> frames and the queue holds the "
        "rest of what it admitted, which it sends afterwards; so by the Tolly formula "
        "<b>buffered = forwarded − N = min((k − 1)·N, queue limit in frames)</b>. Each burst is "
        "made longer than the buffer (N is chosen from the configured limit with a margin), so "
        "buffered measures the buffer. A frame of tester size S occupies S − 4 bytes in the "
        "switch (no FCS), rounded up to whole cells when the buffer counts cells."))
    s.parts.append(para(
        "In an N:1 incast at 100% line rate the egress port sends 100 Gbit/s (layer 1); a fair "
        "arbiter gives each source 1/N of it (Jain's index 1), whatever the frame sizes, and the "
        "bandwidth share equals the packet-rate share when every source sends the same mix. An "
        "arbiter that favours some ports, or drops large frames more than small ones, shows up "
        "as unequal shares, or as packet-rate shares above bandwidth shares. The unfair profile "
        "serves groups of eight ingress ports (1-8, 9-16, 17-24, 25-32) in turn first and the "
        "ports of a group after: each active group gets 1/G of the port, each of its n ports "
        "1/(G·n) — ports 8-13, for instance, get 50% (port 8) and 10% each (9-13)."))
    th = page.run.meta.get("theory") or []
    if th:
        df = pd.DataFrame(th)
        s.parts.append(html_table(df))


def _instrument(page: Page) -> None:
    run = page.run
    if not run.has("instrument_errors"):
        return
    from . import plots_web as pw

    err = run.t["instrument_errors"]
    s = page.section("instrument", "The instrument against ground truth")
    im = run.meta.get("instrument", {})
    step = clock_step_ns(im, run.t.get("burst_events"))
    how = (f" In this run the instrument was read as follows: {esc(im.get('mode'))}; intervals "
           f"of {esc(im.get('interval_us'))} µs; depth in {esc(im.get('depth_unit'))}.") if im else ""
    s.parts.append(para(
        "The telemetry instrument (the DUT's own P4 mechanisms: per-(egress, ingress) counters, "
        "occupancy maxima per interval and burst detection in registers) against the traffic "
        "manager's ground truth: peak occupancy (relative error), burst start and end (ns), "
        f"per-ingress bandwidth shares (percentage points). Bars: peak within {PEAK_TOL:.0%}, "
        f"shares within {SHARE_TOL_PP:g} pp." + how))
    s.parts.append(para(
        "How the instrument measures: egress runs when a frame leaves its queue, so the DUT "
        "measures the queue at dequeue — what the frame leaves behind. A burst starts at the "
        "first dequeue that leaves at least the threshold behind and ends at the first that "
        "leaves less than the end threshold; the ground truth uses the same thresholds on the "
        "traffic manager's own record, so a burst's end is the very dequeue the truth ends it "
        "at, and its start follows the true start by the frame or two the queue takes to "
        "cross the threshold net of a dequeue. Interval maxima (and burst peaks) take what the "
        "queue held just before a dequeue: occupancy only grows between two dequeues, so these "
        "are the true maxima, at the true time. " + _clock_text(step)
        + " Reports leave by a collector port with its own reserve and rate, so they take none "
        "of the buffer being measured."))
    shares = run.t.get("instrument_shares")
    page.plot(s, "instrument_errors", pw.instrument_errors(err, shares),
              Drawing("instrument_errors", (err, shares, step)))
    s.parts.append("<h3>Summary</h3>" + html_table(_error_summary(err)))
    s.parts.append("<details><summary>every case</summary>" + html_table(_error_cases(err))
                   + "</details>")


def clock_step_ns(instrument_meta: dict, events: Optional[pd.DataFrame]) -> int:
    """The step of the clock the instrument's times came from: as run.json
    says, or (runs that predate saying it) 1000 when every burst start and
    end the instrument gave is a whole microsecond, else 1."""
    if "clock_step_ns" in instrument_meta:
        return int(instrument_meta["clock_step_ns"])
    if events is None or events.empty or "source" not in events:
        return 1000
    e = events[events["source"] == "instrument"]
    t = pd.concat([e["start_ns"], e["end_ns"]]).dropna()
    return 1000 if t.empty or bool((t % 1000 == 0).all()) else 1


def _clock_text(step_ns: int) -> str:
    if step_ns <= 1:
        return ("Times come from the engine's nanosecond clock (p4scope.egress_timestamp_ns: "
                "when egress began for the frame), so a burst's start and end are the times "
                "of those dequeues: errors lie within 0 and a frame time or two.")
    return (f"Times come from v1model's egress clock, which counts steps of {step_ns:,} ns: "
            "instrument times are rounded down to the step, so errors lie within about "
            f"−{step_ns:,} ns and +1 frame time.")


def _scale(err: pd.DataFrame) -> tuple[float, str]:
    unit = err["peak_unit"].iloc[0] if "peak_unit" in err and not err.empty else "bytes"
    return (pdt.MB, "MB") if unit == "bytes" else (1.0, "frames")


def _error_summary(err: pd.DataFrame) -> pd.DataFrame:
    """Per experiment and profile: the worst peak error, burst timing, splits."""
    rows = []
    for (ex, prof), g in err.groupby(["experiment", "profile"], sort=False):
        ended = g["end_truth_ns"].notna() if "end_truth_ns" in g else pd.Series(False, g.index)
        rows.append({
            "experiment": ex, "profile": prof, "cases": len(g),
            "worst |peak error| (%)": round(float(g["peak_error_rel"].abs().max()) * 100, 3),
            "burst start error (ns), median / worst": _median_worst(g["start_error_ns"]),
            "burst end error (ns), median / worst": _median_worst(g["end_error_ns"]),
            "bursts that ended / instrument saw end":
                f"{int(ended.sum())} / {int((ended & g['end_error_ns'].notna()).sum())}",
            "cases with a burst split": int((g["bursts_instrument"] > g["bursts_truth"]).sum()),
            "worst share error (pp)": None if g["share_error_pp"].isna().all()
            else round(float(g["share_error_pp"].abs().max()), 3),
        })
    return pd.DataFrame(rows)


def _median_worst(ns: pd.Series) -> str:
    """'median / worst' of timing errors in ns (worst: the largest magnitude)."""
    v = ns.dropna()
    if v.empty:
        return "—"
    return f"{v.median():,.0f} / {v.loc[v.abs().idxmax()]:,.0f}"


def _error_cases(err: pd.DataFrame) -> pd.DataFrame:
    scale, unit = _scale(err)
    return pd.DataFrame({
        "case": err["case_id"], f"true peak ({unit})": (err["peak_truth"] / scale).round(3),
        f"instrument peak ({unit})": (err["peak_instrument"] / scale).round(3),
        "peak error (%)": (err["peak_error_rel"] * 100).round(3),
        "start error (ns)": err["start_error_ns"].round(0),
        "end error (ns)": err["end_error_ns"].round(0),
        "bursts true / instrument": err["bursts_truth"].astype(str) + " / "
        + err["bursts_instrument"].astype(str),
        "share error (pp)": err["share_error_pp"].round(3),
    })


def checks(page: Page) -> None:
    """The acceptance bars, evaluated on what was measured."""
    run = page.run
    rows = []
    if run.has("fairness"):
        f = run.t["fairness"]
        for prof, g in f.groupby("profile", sort=False):
            ok = bool(((g["jain_bw"] >= FAIR_JAIN) & (g["max_dev_bw"] <= FAIR_SHARE_DEV)).all())
            rows.append((f"fairness, {prof}: Jain ≥ {FAIR_JAIN} and every share within "
                         f"{FAIR_SHARE_DEV:.0%} of 1/N in every case",
                         f"min Jain {g['jain_bw'].min():.4f}, max deviation {g['max_dev_bw'].max():.2%}",
                         ok if prof == "fair" else None))
            if "expected_max_err_pp" in g:
                worst = g["expected_max_err_pp"].max()
                rows.append((f"fairness, {prof}: shares as the profile's arbitration predicts "
                             f"(within {SHARE_TOL_PP:g} pp)", f"worst {worst:.2f} pp",
                             bool(worst <= SHARE_TOL_PP)))
            if "instrument_jain_bw" in g:
                unfair_truth = set(g.loc[g["jain_bw"] < FAIR_JAIN, "case_id"])
                unfair_seen = set(g.loc[g["instrument_jain_bw"] < FAIR_JAIN, "case_id"])
                rows.append((f"fairness, {prof}: the instrument finds the imbalanced cases "
                             f"(Jain < {FAIR_JAIN})",
                             f"{len(unfair_seen)} found, {len(unfair_truth)} in truth, "
                             f"{len(unfair_seen ^ unfair_truth)} differ",
                             unfair_seen == unfair_truth))
    if run.has("microburst") and "error_rel" in run.t["microburst"]:
        m = run.t["microburst"]
        for prof, g in m.groupby("profile", sort=False):
            worst = g["error_rel"].abs().max()
            rows.append((f"microburst, {prof}: buffered within {ABSORPTION_TOL:.0%} of the "
                         "configured buffer", f"worst {worst:.2%}", bool(worst <= ABSORPTION_TOL)))
    if run.has("instrument_errors"):
        e = run.t["instrument_errors"]
        worst = e["peak_error_rel"].abs().max()
        rows.append((f"instrument peak occupancy within {PEAK_TOL:.0%} of ground truth",
                     f"worst {worst:.2%}", None if pd.isna(worst) else bool(worst <= PEAK_TOL)))
    if run.has("instrument_shares"):
        sh = run.t["instrument_shares"]
        worst = sh["err_pp_bw"].abs().max()
        rows.append((f"instrument per-ingress shares within {SHARE_TOL_PP:g} pp",
                     f"worst {worst:.3f} pp", None if pd.isna(worst) else bool(worst <= SHARE_TOL_PP)))
    if not rows:
        return
    s = page.section("checks", "Checks")
    body = "".join(f"<tr><td>{esc(a)}</td><td>{esc(b)}</td><td>{verdict(c)}</td></tr>"
                   for a, b, c in rows)
    s.parts.append('<table class="data"><tr><th>bar</th><th>measured</th><th></th></tr>'
                   + body + "</table>")
    s.parts.append(para("n/a: the unfair profile is meant to fail the fairness bar; its imbalance "
                      "is what the instrument has to find (the rows below it)."))


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
     background:#fafafa}
main{max-width:1200px;margin:0 auto;padding:16px 28px 60px;background:#fff}
h1{font-size:1.5em;margin:.4em 0}h2{border-bottom:2px solid #ddd;padding-bottom:4px;
margin-top:2em}h3{margin-top:1.4em;font-size:1.05em}
nav a{margin-right:14px}table{border-collapse:collapse;margin:8px 0;font-size:12.5px}
table.data td,table.data th,table.seed td,table.seed th,table.kv td,table.kv th{
border:1px solid #ddd;padding:3px 7px;text-align:right}
table.kv th{text-align:left;background:#f3f3f3}table.kv td{text-align:left}
table td:first-child,table th:first-child{text-align:left}
table.seed th{background:#eef3f8}tr.block td{font-weight:600;text-align:left;
background:#f7f7f7}tr.note td{text-align:left;font-style:italic;color:#555}
.pass{color:#fff;background:#2e7d32;padding:1px 6px;border-radius:3px}
.fail{color:#fff;background:#c62828;padding:1px 6px;border-radius:3px}
.na{color:#555;background:#e0e0e0;padding:1px 6px;border-radius:3px}
.plot{margin:10px 0 18px}.png{font-size:11px;color:#666;margin:0}
pre{background:#f5f5f5;padding:8px;overflow:auto;font-size:11px}
details{margin:8px 0}.scroll{overflow-x:auto;max-width:100%}
"""


def render_page(run_dir: Path, out: Optional[Path],
                sections: Sequence[Callable[[Page], None]],
                tables: Optional[dict[str, pd.DataFrame]] = None, jobs: int = 1,
                png_pool: Any = None) -> Path:
    """Writes report.html (and figures/*.png) for a stored run from the
    given sections, in order (`tables`: see load_run); with `jobs` > 1 the
    PNGs are drawn in that many processes meanwhile (`png_pool`: a
    drawing.pool already started, used instead). Returns its path."""
    import plotly.offline

    from . import drawing

    with (nullcontext(png_pool) if png_pool is not None else drawing.pool(jobs)) as png_pool:
        run = load_run(run_dir, tables)
        out = Path(out) if out else run.path / "report.html"
        page = Page(run, out.parent / "figures", png_pool)
        for add in sections:
            add(page)
        page.finish()
    nav = " ".join(f'<a href="#{s.anchor}">{esc(s.title.split(":")[0])}</a>' for s in page.sections)
    body = "\n".join(f'<h2 id="{s.anchor}">{esc(s.title)}</h2>\n' + "\n".join(s.parts)
                     for s in page.sections)
    title = f"p4scope run {run.meta.get('run_id', run.path.name)}"
    doc = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<title>{esc(title)}</title><style>{CSS}</style>"
           f"<script type=\"text/javascript\">{plotly.offline.get_plotlyjs()}</script></head>"
           f"<body><main><h1>{esc(title)}</h1><nav>{nav}</nav>\n{body}\n"
           f"<p class=\"png\">Rendered from the stored tables by <code>p4scope report</code>; "
           f"plots as PNG in figures/.</p></main></body></html>\n")
    atomic_write_text(out, doc)
    return out


def render(run_dir: Path, out: Optional[Path] = None,
           tables: Optional[dict[str, pd.DataFrame]] = None, jobs: int = 1,
           png_pool: Any = None) -> Path:
    """Writes report.html (and figures/*.png) for a stored run, virtual time
    or Mininet: the run, the checks, the theory, every registered
    experiment's sections (each draws what the run has), the instrument's
    error; returns its path. `tables`: those of the run's tables already
    in memory (the run that just stored them), not read again; `jobs`:
    processes drawing the PNGs meanwhile (1: none, all drawn here), or
    `png_pool` the drawing.pool to draw them in."""
    from . import registry

    return render_page(run_dir, out, (overview, checks, _theory, *registry.sections(),
                                      _instrument), tables, jobs, png_pool)


# run.json's "renderer": the function that renders the run's report. Runs
# stored by earlier versions name the renderers that were merged into it.
RENDERER = "p4scope.experiments.report.render"
FORMER_RENDERERS = ("p4scope.emulation.report.render",
                    "p4scope.experiments.rfc2544.section.render")


def render_stored(run_dir: Path, out: Optional[Path] = None, jobs: int = 1) -> Path:
    """`p4scope report`: renders a stored run (`jobs`: processes drawing the
    PNGs, as in `render`). Raises ValueError when its run.json names a
    renderer this p4scope does not have."""
    name = load_meta(Path(run_dir)).get("renderer") or RENDERER
    if name != RENDERER and name not in FORMER_RENDERERS:
        raise ValueError(f"run.json names the report renderer {name!r}, which this p4scope "
                         f"does not have ({RENDERER})")
    return render(run_dir, out, jobs=jobs)
