"""One trial's results, as a hardware tester reports them.

Per stream: frames and bytes sent and received, the rates offered and
achieved, loss, latency (min/avg/max, jitter, percentiles 50/90/99/99.9,
a histogram) and sequence errors (lost, duplicated, reordered). Latency is
FIFO (first bit in to first bit out, what the engine's sinks stamp); LIFO
(last bit in to first bit out, RFC 1242's figure for store-and-forward
devices) is FIFO less the frame's own time on the ingress link.

Percentiles and the duplicated/reordered split need one record per
received frame (`records`); without them the percentiles are NaN and
`reordered` counts every frame that came after a higher sequence number
(duplicates included), `duplicated` is NA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..linerate import l1_bits
from .streams import Stream

PERCENTILES = (50.0, 90.0, 99.0, 99.9)
SHORT_GENERATOR = 0.995
"""A generator that sent less than this share of what it was asked to
fell short: the trial says nothing about the DUT at the offered rate."""


def _pct_name(p: float) -> str:
    return "p" + f"{p:g}".replace(".", "")


@dataclass
class Trial:
    """What one trial measured. `streams` has a row per stream (see the
    module doc for the columns); `histogram` a row per (stream, latency
    bin)."""

    streams: pd.DataFrame
    duration_ns: int
    settle_ns: int
    line_rate_bps: float
    queued_at_end: int = 0
    """Frames still in the DUT's queues when counting stopped: counted as
    not forwarded (a buffer must not hide an overload)."""
    histogram: pd.DataFrame = field(default_factory=pd.DataFrame)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def tx_frames(self) -> int:
        return int(self.streams["tx_frames"].sum())

    @property
    def rx_frames(self) -> int:
        return int(self.streams["rx_frames"].sum())

    @property
    def loss_frames(self) -> int:
        return int(self.streams["lost"].sum())

    @property
    def loss_pct(self) -> float:
        tx = self.tx_frames
        return 100.0 * self.loss_frames / tx if tx else 0.0

    @property
    def generator_short(self) -> bool:
        """Whether any stream's generator sent less than it was asked to."""
        return bool(self.streams["generator_short"].any())

    def passed(self, tolerance_pct: float = 0.0) -> bool:
        """Loss within `tolerance_pct` and no frame delivered where it should
        not have been."""
        return self.loss_pct <= tolerance_pct + 1e-12 and int(self.streams["misdelivered"].sum()) == 0

    def summary(self) -> dict[str, Any]:
        s = self.streams
        rx = s[s["rx_frames"] > 0]
        out: dict[str, Any] = {
            "tx_frames": self.tx_frames, "rx_frames": self.rx_frames, "lost": self.loss_frames,
            "loss_pct": self.loss_pct, "queued_at_end": self.queued_at_end,
            "misdelivered": int(s["misdelivered"].sum()),
            "offered_pct": float(s["offered_pct"].mean()) if len(s) else 0.0,
            "tx_fps": float(s["tx_fps"].sum()), "rx_fps": float(s["rx_fps"].sum()),
            "rx_l1_bps": float(s["rx_l1_bps"].sum()),
            "generator_short": self.generator_short,
            "lat_min_ns": float(rx["lat_min_ns"].min()) if len(rx) else np.nan,
            "lat_max_ns": float(rx["lat_max_ns"].max()) if len(rx) else np.nan,
            "lat_avg_ns": float(np.average(rx["lat_avg_ns"], weights=rx["rx_frames"]))
            if len(rx) else np.nan,
            "duration_ns": self.duration_ns,
        }
        return out


def stream_rows(streams: Sequence[Stream], engine_rows: Sequence[Mapping[str, Any]],
                ids: Sequence[int], line_rate_bps: float, window_ns: int,
                records: Optional[Mapping[str, np.ndarray]] = None) -> pd.DataFrame:
    """The per-stream table of a trial from the engine's `stream_stats`
    rows (one per stream and egress port) and, optionally, its per-frame
    records (columns stream, seq, port, size, tx_ns, rx_ns)."""
    rows = []
    for st, sid in zip(streams, ids):
        mine = [r for r in engine_rows if r["stream"] == sid]
        tx_frames = int(mine[0]["tx_frames"]) if mine else 0
        tx_bytes = int(mine[0]["tx_bytes"]) if mine else 0
        good = [r for r in mine if r.get("rx_port") is not None
                and (st.rx_port is None or r["rx_port"] == st.rx_port)]
        wrong = [r for r in mine if r.get("rx_port") is not None and r not in good]
        rx_frames = sum(int(r["rx_frames"]) for r in good)
        rx_bytes = sum(int(r["rx_bytes"]) for r in good)
        secs = window_ns / 1e9
        mean = st.mean_size
        offered_fps = st.rate.fps(line_rate_bps, mean)
        if st.frames is not None:  # a burst: as many frames as asked, at the rate
            offered_fps = min(offered_fps, st.frames / secs) if secs > 0 else offered_fps
        tx_fps = tx_frames / secs if secs > 0 else 0.0
        row: dict[str, Any] = {
            "stream": sid, "name": st.label, "tx_port": st.tx_port,
            "rx_port": st.rx_port if st.rx_port is not None else -1,
            "frame_size": mean, "offered_pct": st.rate.pct_of(line_rate_bps, mean),
            "offered_fps": offered_fps, "tx_frames": tx_frames, "tx_bytes": tx_bytes,
            "tx_fps": tx_fps, "rx_frames": rx_frames, "rx_bytes": rx_bytes,
            "rx_fps": rx_frames / secs if secs > 0 else 0.0,
            "rx_l1_bps": l1_bits(rx_bytes, rx_frames) / secs if secs > 0 else 0.0,
            "lost": max(tx_frames - rx_frames, 0),
            "loss_pct": 100.0 * max(tx_frames - rx_frames, 0) / tx_frames if tx_frames else 0.0,
            "misdelivered": sum(int(r["rx_frames"]) for r in wrong),
            "generator_short": _short(st, tx_frames, offered_fps, window_ns),
        }
        row.update(_latency(good, records, sid, st, line_rate_bps))
        rows.append(row)
    return pd.DataFrame(rows)


def _short(st: Stream, tx_frames: int, offered_fps: float, window_ns: int) -> bool:
    """Whether a stream's generator sent less than it offered over the time
    it was on (from its start to the end of the window), by more than the
    generator's margin and the one frame that rounding the window takes."""
    if st.frames is not None or offered_fps <= 0:
        return False
    offered = offered_fps * max(window_ns - st.start_ns, 0) / 1e9
    return tx_frames + 1 < SHORT_GENERATOR * offered


def _latency(good: list[Mapping[str, Any]], records: Optional[Mapping[str, np.ndarray]],
             sid: int, st: Stream, line_rate_bps: float) -> dict[str, Any]:
    n = sum(int(r["rx_frames"]) for r in good)
    out: dict[str, Any] = {"lat_min_ns": np.nan, "lat_avg_ns": np.nan, "lat_max_ns": np.nan,
                           "jitter_ns": np.nan}
    out.update({f"lat_{_pct_name(p)}_ns": np.nan for p in PERCENTILES})
    out.update({"lifo_min_ns": np.nan, "lifo_avg_ns": np.nan, "lifo_max_ns": np.nan})
    out["reordered"] = sum(int(r.get("out_of_order", 0)) for r in good)
    out["duplicated"] = pd.NA
    if n:
        out["lat_min_ns"] = float(min(r["lat_min_ns"] for r in good))
        out["lat_max_ns"] = float(max(r["lat_max_ns"] for r in good))
        out["lat_avg_ns"] = sum(float(r["lat_avg_ns"]) * int(r["rx_frames"]) for r in good) / n
        jit = [r for r in good if r.get("jitter_ns") is not None]
        if jit:
            out["jitter_ns"] = float(jit[0]["jitter_ns"]) if len(jit) == 1 else float(
                np.average([r["jitter_ns"] for r in jit], weights=[r["rx_frames"] for r in jit]))
    if records is not None and n:
        sel = records["stream"] == sid
        if st.rx_port is not None:
            sel &= records["port"] == st.rx_port
        fifo = (records["rx_ns"][sel].astype(np.int64) - records["tx_ns"][sel].astype(np.int64))
        size = records["size"][sel].astype(np.float64)
        lifo = fifo - size * 8e9 / line_rate_bps
        for p, v in zip(PERCENTILES, np.percentile(fifo, PERCENTILES)):
            out[f"lat_{_pct_name(p)}_ns"] = float(v)
        out["lifo_min_ns"], out["lifo_avg_ns"], out["lifo_max_ns"] = (
            float(lifo.min()), float(lifo.mean()), float(lifo.max()))
        seq = records["seq"][sel].astype(np.int64)
        uniq = np.unique(seq).size
        out["duplicated"] = int(seq.size - uniq)
        first = seq[np.sort(np.unique(seq, return_index=True)[1])]
        out["reordered"] = int((first < np.maximum.accumulate(first)).sum())
    elif n and st.mix is None:  # one size: LIFO is FIFO less that size's time in
        t_in = st.one_size * 8e9 / line_rate_bps
        out["lifo_min_ns"] = out["lat_min_ns"] - t_in
        out["lifo_avg_ns"] = out["lat_avg_ns"] - t_in
        out["lifo_max_ns"] = out["lat_max_ns"] - t_in
    return out


def histogram_rows(ids: Sequence[int], names: Sequence[str],
                   hist: Mapping[int, tuple[Sequence[float], Sequence[int]]]) -> pd.DataFrame:
    """Latency histograms {stream id: (edges, counts)} as rows: stream,
    name, lo_ns, hi_ns (inf for the open last bin), frames."""
    rows = []
    for sid, name in zip(ids, names):
        edges, counts = hist[sid]
        for i, c in enumerate(counts):
            hi = edges[i + 1] if i + 1 < len(edges) else float("inf")
            rows.append({"stream": sid, "name": name, "lo_ns": float(edges[i]), "hi_ns": float(hi),
                         "frames": int(c)})
    return pd.DataFrame(rows)
