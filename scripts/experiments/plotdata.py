"""What the report's plots show, prepared from the tidy tables.

The PNG (matplotlib) and HTML (plotly) plots draw the same data; this
module picks the cases, the time grids and the labels once, so the two
renderings cannot disagree. Times are in microseconds since a case's
first queued frame, occupancy in MB of 2^20 bytes (as seed 000 counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
import pandas as pd

from . import figures as fg

MB = fg.MIB
PROFILE_COLORS = {"fair": "#1f6fb4", "unfair": "#d1495b"}
_EXTRA_COLORS = ["#2a9d8f", "#e9a23b", "#6c5b7b", "#8d6e63", "#00838f"]


def profile_color(profile: str, order: Sequence[str] = ()) -> str:
    if profile in PROFILE_COLORS:
        return PROFILE_COLORS[profile]
    i = list(order).index(profile) if profile in order else abs(hash(profile))
    return _EXTRA_COLORS[i % len(_EXTRA_COLORS)]


def ordered(col: pd.Series) -> list:
    return list(dict.fromkeys(col.tolist()))


def combo_short(combination: str, width: int = 14) -> str:
    """A port combination cut to `width` characters ('2,3,10,11,12,…')."""
    c = str(combination)
    return c if len(c) <= width else c[:width - 1].rstrip(",") + ",…"


def short_case(row: pd.Series) -> str:
    """'2:1 Test 1 · 64 B · fair' for a microburst row, 'N=6 9-14 · fair' for fairness."""
    if "frame_size" in row and not pd.isna(row.get("frame_size")):
        return f"{row['scenario']} {row['combination']} · {int(row['frame_size'])} B · {row['profile']}"
    return f"N={int(row['n'])} {combo_short(row['combination'])} · {row['profile']}"


def case_group(row: pd.Series) -> str:
    """What a heatmap row belongs to: its case without the frame size."""
    if "frame_size" in row and not pd.isna(row.get("frame_size")):
        return f"{row['scenario']} {row['combination']} · {row['profile']}"
    return f"N={int(row['n'])} · {row['profile']}"


def case_short(case_id: str, width: int = 18) -> str:
    """'2to1-test1 64B fair' from 'microburst/2to1-test1/64B/fair'; long port
    lists cut."""
    parts = case_id.split("/")
    if len(parts) >= 4:
        mid = parts[1] if len(parts[1]) <= width else parts[1][:width - 1] + "…"
        extra = "" if parts[2] == "imix" else f" {parts[2]}"
        return f"{mid}{extra} {parts[3]}"
    return case_id


CaseRows = Callable[[str], pd.DataFrame]
"""A table's rows of one case (see `by_case`)."""


def by_case(df: pd.DataFrame) -> CaseRows:
    """`rows(case_id)`: what df[df["case_id"] == case_id] gives (index labels
    too), the cases found in one pass. The report asks for every case of
    tables of hundreds of thousands to millions of rows, and filtering the
    whole table each time was a third of its time; a table is written case
    by case, so a case's rows are one slice."""
    empty = df.iloc[0:0]
    if df.empty:
        return lambda case_id: empty
    at = df.groupby("case_id", sort=False).indices

    def rows(case_id: str) -> pd.DataFrame:
        pos = at.get(case_id)
        if pos is None:
            return empty
        if pos[-1] - pos[0] + 1 == len(pos):
            return df.iloc[pos[0]:pos[-1] + 1]
        return df.iloc[pos]
    return rows


# ----- occupancy over time ----------------------------------------------------------

@dataclass
class Series:
    case_id: str
    label: str
    t_us: np.ndarray
    mb: np.ndarray
    t0_ns: float


def case_series(truth: CaseRows, case_id: str, t0_ns: Optional[float] = None,
                max_points: int = 3000) -> Optional[Series]:
    """The true occupancy of a case's congested queue (the one with the
    highest peak), reduced for drawing."""
    d = truth(case_id)
    if d.empty:
        return None
    q = d.groupby(["egress_port", "queue"])["occupancy_bytes"].max().idxmax()
    d = d[(d["egress_port"] == q[0]) & (d["queue"] == q[1])].sort_values("t_ns", kind="stable")
    t0 = float(d["t_ns"].iloc[0]) if t0_ns is None else t0_ns
    t, v = fg.reduce_series(d["t_ns"].to_numpy(float), d["occupancy_bytes"].to_numpy(float),
                            max_points)
    return Series(case_id, case_id, (t - t0) / 1e3, v / MB, t0)


@dataclass
class Panel:
    title: str
    lines: list[tuple[Series, float]] = field(default_factory=list)  # (series, frame size)


def burst_panels(micro: pd.DataFrame, truth: CaseRows) -> list[Panel]:
    """One panel per (scenario, combination, profile); one line per frame size."""
    panels = []
    for scen in ordered(micro["scenario"]):
        ds = micro[micro["scenario"] == scen]
        for comb in ordered(ds["combination"]):
            dc = ds[ds["combination"] == comb]
            for prof in ordered(micro["profile"]):
                if not (dc["profile"] == prof).any():
                    continue
                dp = dc[dc["profile"] == prof].sort_values("frame_size")
                ports = dp["ingress_ports"].iloc[0]
                p = Panel(f"{scen} {comb} (ports {ports.replace(' ', ',')} → "
                          f"{dp['egress_port'].iloc[0]}) · {prof}")
                for _, r in dp.iterrows():
                    s = case_series(truth, r["case_id"])
                    if s is not None:
                        s.label = f"{int(r['frame_size'])} B"
                        p.lines.append((s, float(r["frame_size"])))
                if p.lines:
                    panels.append(p)
    return panels


def absorption_theory(micro: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Per scenario, its rows by frame size (one per size): the configured
    buffer (expected_mb) the measured points are set against."""
    return [(scen, g.drop_duplicates("frame_size").sort_values("frame_size"))
            for scen, g in micro.groupby("scenario", sort=False)]


@dataclass
class AbsorptionGroup:
    """One profile's cases of one scenario and port combination."""
    profile_index: int
    """Among the profiles in order: 0 is drawn filled, the others as rings."""
    color: str
    combo_index: int
    """Among all (scenario, combination) pairs: picks the marker."""
    label: str
    rows: pd.DataFrame
    """By frame size."""


def absorption_groups(micro: pd.DataFrame) -> tuple[list[AbsorptionGroup], int]:
    """The measured points of the absorption plot, and how many
    (scenario, combination) pairs there are."""
    profiles = ordered(micro["profile"])
    combos = ordered(micro["scenario"] + " " + micro["combination"])
    out = []
    for pi, prof in enumerate(profiles):
        col = profile_color(prof, profiles)
        for key, g in micro[micro["profile"] == prof].groupby(["scenario", "combination"],
                                                              sort=False):
            out.append(AbsorptionGroup(pi, col, combos.index(f"{key[0]} {key[1]}"),
                                       f"{prof} · {key[0]} {key[1]}", g.sort_values("frame_size")))
    return out, len(combos)


def representative_cases(micro: pd.DataFrame, sizes: Sequence[int] = (64, 1518, 9216)) -> list[str]:
    """A few microburst cases to show in detail: for each profile, the first
    combination of the 2:1 scenario at the sizes present (nearest)."""
    out = []
    d = micro[micro["scenario"] == ordered(micro["scenario"])[0]] if not micro.empty else micro
    for prof in ordered(d["profile"]):
        dp = d[(d["profile"] == prof) & (d["combination"] == ordered(d["combination"])[0])]
        avail = sorted(dp["frame_size"].unique())
        picked = []
        for s in sizes:
            if not avail:
                break
            best = min(avail, key=lambda a: abs(a - s))
            if best not in picked:
                picked.append(best)
        for s in picked:
            out.append(dp[dp["frame_size"] == s]["case_id"].iloc[0])
    return out


@dataclass
class InstrumentView:
    truth: Series
    t_us: np.ndarray  # per-packet samples (held just before each left) while a burst lasts
    mb: np.ndarray
    bursts: pd.DataFrame  # burst_events of the case, times in us since t0
    iv_us: np.ndarray = field(default_factory=lambda: np.array([]))  # interval starts
    iv_mb: np.ndarray = field(default_factory=lambda: np.array([]))  # interval maxima
    case_max_mb: Optional[float] = None  # the maximum read from a register at the end


def instrument_view(truth: CaseRows, instr: Optional[CaseRows], events: Optional[CaseRows],
                    case_id: str, label: str) -> Optional[InstrumentView]:
    """The instrument's view of a case against the truth; `instr` and
    `events` are None when their tables are missing or empty."""
    s = case_series(truth, case_id)
    if s is None:
        return None
    s.label = label
    ti = vi = ii = iv = np.array([])
    case_max = None
    d = instr(case_id) if instr is not None else None
    if d is not None and not d.empty:
        d = d.sort_values("t_ns", kind="stable")
        kind = d["kind"] if "kind" in d else pd.Series("burst_pkt", index=d.index)
        cm = d[kind == "case_max"]
        if not cm.empty:
            case_max = float(cm["depth_bytes"].max()) / MB
        pk = d[~kind.isin(["interval_max", "case_max"])]
        if not pk.empty:
            ti = (pk["t_ns"].to_numpy(float) - s.t0_ns) / 1e3
            vi = pk["depth_bytes"].to_numpy(float) / MB
            if ti.size > 4000:
                ti, vi = fg.reduce_series(ti, vi, 4000)
        it = d[kind == "interval_max"]
        if not it.empty:
            ii = (it["t_ns"].to_numpy(float) - s.t0_ns) / 1e3
            iv = it["depth_bytes"].to_numpy(float) / MB
    ev = pd.DataFrame()
    if events is not None:
        ev = events(case_id).copy()
        for c in ("start_ns", "end_ns", "peak_ns"):
            if c in ev:
                ev[c.replace("_ns", "_us")] = (ev[c] - s.t0_ns) / 1e3
    return InstrumentView(s, ti, vi, ev, ii, iv, case_max)


@dataclass
class Heatmap:
    edges_us: np.ndarray
    rows: list[str]
    mb: np.ndarray  # rows x bins
    breaks: list[int] = field(default_factory=list)  # rows where a new group starts


def queue_heatmap(truth: CaseRows, labels: dict[str, str], nbins: int = 200,
                  groups: Optional[dict[str, str]] = None) -> Optional[Heatmap]:
    """Time x egress queue: one row per (case, egress port, queue) in the
    order of `labels`, per time bin the highest occupancy, time since each
    case's first queued frame on a shared axis; `groups` (case -> group)
    marks where a new group of rows starts."""
    rows: list[str] = []
    series: list[tuple[np.ndarray, np.ndarray]] = []
    breaks: list[int] = []
    last_group = None
    for cid, lab in labels.items():
        g_of = (groups or {}).get(cid)
        if groups is not None and g_of != last_group and rows:
            breaks.append(len(rows))
        last_group = g_of
        d = truth(cid)
        if d.empty:
            continue
        t0 = float(d["t_ns"].min())
        for (port, q), g in d.groupby(["egress_port", "queue"], sort=True):
            g = g.sort_values("t_ns", kind="stable")
            rows.append(f"{lab} · port {port} q{q}")
            series.append(((g["t_ns"].to_numpy(float) - t0) / 1e3, g["occupancy_bytes"].to_numpy(float)))
    if not rows:
        return None
    t_end = max(float(t[-1]) for t, _ in series)
    edges = np.linspace(0.0, max(t_end, 1e-3), nbins + 1)
    mat = np.vstack([fg.bin_max_step(t, v, edges) for t, v in series]) / MB
    return Heatmap(edges, rows, mat, breaks)


@dataclass
class Stack:
    case_id: str
    label: str
    t_us: np.ndarray
    ports: list[int]
    mb: np.ndarray  # ports x times


def stacked_by_ingress(truth_in: CaseRows, case_id: str, label: str,
                       npoints: int = 600) -> Optional[Stack]:
    """Occupancy of the congested queue split by ingress port, sampled on
    one time grid (each port's step series read at the grid times)."""
    d = truth_in(case_id)
    if d.empty:
        return None
    port_eg = d.groupby("egress_port")["occupancy_bytes"].max().idxmax()
    d = d[d["egress_port"] == port_eg]
    t0, t1 = float(d["t_ns"].min()), float(d["t_ns"].max())
    grid = np.linspace(t0, t1 if t1 > t0 else t0 + 1, npoints)
    ports = sorted(int(p) for p in d["ingress_port"].unique())
    mat = []
    for p in ports:
        g = d[d["ingress_port"] == p].sort_values("t_ns", kind="stable")
        mat.append(fg.step_at(g["t_ns"].to_numpy(float), g["occupancy_bytes"].to_numpy(float), grid))
    return Stack(case_id, label, (grid - t0) / 1e3, ports, np.vstack(mat) / MB)


def peak_scale(errors: pd.DataFrame) -> tuple[float, str]:
    """How to show the instrument's peaks: MB when measured in bytes, else frames."""
    unit = errors["peak_unit"].iloc[0] if "peak_unit" in errors and not errors.empty else "bytes"
    return (MB, "MB") if unit == "bytes" else (1.0, "frames")


# ----- fairness ------------------------------------------------------------------

@dataclass
class ShareCase:
    label: str
    profile: str
    n: int
    ports: list[int]
    bw: np.ndarray
    pkt: np.ndarray
    instr_bw: Optional[np.ndarray]
    jain: float


def share_cases(streams: pd.DataFrame, instr: Optional[pd.DataFrame]) -> list[ShareCase]:
    d = streams[streams["experiment"] == "fairness"] if "experiment" in streams else streams
    rows = by_case(d)
    instr_rows = by_case(instr) if instr is not None and not instr.empty else None
    out = []
    for cid in ordered(d["case_id"]):
        g = rows(cid).sort_values("ingress_port")
        r = g.iloc[0]
        ib = None
        if instr_rows is not None:
            gi = instr_rows(cid).set_index("ingress_port")
            if not gi.empty:
                ib = np.array([gi["bw_share"].get(p, np.nan) for p in g["ingress_port"]], float)
        out.append(ShareCase(f"N={int(r['n'])} {r['combination']}", r["profile"], int(r["n"]),
                             [int(p) for p in g["ingress_port"]], g["bw_share"].to_numpy(float),
                             g["pkt_share"].to_numpy(float), ib,
                             fg.jain_index(g["gbps_l1"].to_numpy(float))))
    return out
