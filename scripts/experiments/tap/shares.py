"""Who gets a congested egress port of the DUT over a window, as the taps
see it, against the DUT's own ground truth (virtual time; `p4scope run
fairness --instrument tap`):

* delivered shares: each ingress port's part of what the port sent in
  the window, in layer-1 bytes (bandwidth share: frame + FCS, preamble and
  gap, as fairness counts its streams) and in frames (packet-rate share).
  With a report of every frame the tap counts the frames it saw leave the
  DUT by that port, each attributed to the port it came in by (the frame
  it matched going in); sampled, it has the first frame of every 2^n us
  leaving the DUT, whose source MAC names its ingress port. A frame is
  picked when it is the first to end after an interval's start, so with
  the port busy a frame's chance is its time on the wire: the fraction of
  samples from a port estimates its bandwidth share (standard error
  sqrt(p(1 − p) / k) for k samples), weighting each sample by 1 / its
  wire bytes its packet-rate share;
* queue shares: each ingress port's part of the time-weighted occupancy
  over the window (every frame only: sampled reports do not give the
  occupancy);
* the drops of each ingress port in the window, and the queue's peak and
  time-weighted mean.

The truth: the DUT's traffic-manager trace of the port (dequeues for the
delivered shares, every record for the occupancy, drops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .. import figures as fg
from . import truth as tt
from .inference import FROM, Inference, TapFrame, Wiring

SHARE_TOL_PP = tt.SHARE_TOL_PP
L1_EXTRA = 24
"""Bytes per frame on the wire besides what a switch counts: FCS 4,
preamble 8, gap 12 (shares in layer-1 bytes, as fairness's streams)."""
CHECKS = ("delivered_shares_within_tolerance", "queue_shares_within_tolerance",
          "peak_within_tolerance", "mean_within_tolerance", "drops_equal")


@dataclass
class Delivered:
    """Per ingress port: bytes (as a switch counts them: no FCS) and frames
    sent by the egress port in the window; for a sampled estimate also the
    samples per port (`samples`) and their total (`k`)."""

    bytes: dict[int, float] = field(default_factory=dict)
    frames: dict[int, float] = field(default_factory=dict)
    samples: dict[int, int] = field(default_factory=dict)
    k: int = 0

    def shares(self, ports: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(bandwidth, packet-rate) shares of `ports`, 0..1 (NaN: none)."""
        b = np.array([self.bytes.get(p, 0.0) for p in ports], float)
        f = np.array([self.frames.get(p, 0.0) for p in ports], float)
        s = fg.share_split(b + L1_EXTRA * f, f)
        return np.asarray(s.bandwidth, float), np.asarray(s.packet_rate, float)


def in_window(t: np.ndarray, window: tuple[float, float]) -> np.ndarray:
    return (t >= window[0]) & (t < window[1])


def truth_delivered(cols: Mapping[str, Any], port: int, window: tuple[float, float]) -> Delivered:
    """What the DUT's trace says `port` dequeued in the window, per ingress."""
    t = np.asarray(cols["time_ns"])
    sel = (np.asarray(cols["port"]) == port) & (np.asarray(cols["kind"]) == tt.DEQ) & in_window(t, window)
    ing = np.asarray(cols["ingress"])[sel]
    ln = np.asarray(cols["len"]).astype(np.int64)[sel]
    d = Delivered()
    for p in np.unique(ing):
        d.bytes[int(p)] = float(ln[ing == p].sum())
        d.frames[int(p)] = float((ing == p).sum())
    return d


def truth_drops(cols: Mapping[str, Any], port: int, window: tuple[float, float]) -> dict[int, int]:
    t = np.asarray(cols["time_ns"])
    sel = (np.asarray(cols["port"]) == port) & (np.asarray(cols["kind"]) == tt.DROP) & in_window(t, window)
    ing, n = np.unique(np.asarray(cols["ingress"])[sel], return_counts=True)
    return {int(p): int(c) for p, c in zip(ing, n)}


def tap_delivered(inf: Inference, port: int, window: tuple[float, float]) -> Delivered:
    """The frames the tap saw leave by `port` in the window, per the port
    each came in by (every frame reported; times on the DUT's clock)."""
    f = inf.frames
    f = f[(f["fate"] == "left") & (f["egress_port"] == port)]
    f = f[in_window(f["left_ns"].to_numpy(float), window)]
    d = Delivered()
    for p, g in f.groupby("ingress_port"):
        d.bytes[int(p)] = float(g["frame_bytes"].sum())
        d.frames[int(p)] = float(len(g))
    return d


def tap_drops(inf: Inference, port: int, window: tuple[float, float]) -> dict[int, int]:
    f = inf.drops
    f = f[(f["egress_port"] == port) & in_window(f["t_ns"].to_numpy(float), window)]
    return {int(p): int(n) for p, n in f.groupby("ingress_port").size().items()}


def source_port(key: bytes, wiring: Wiring) -> int:
    """The DUT port behind a frame's source MAC (-1 unknown)."""
    if len(key) < 12:
        return -1
    return int(wiring.egress_of_mac.get(int.from_bytes(key[6:12], "big"), -1))


def sampled_delivered(frames: Sequence[TapFrame], wiring: Wiring, port: int,
                      window: tuple[float, float]) -> Delivered:
    """The estimate from sampled reports (times on the DUT's clock) of
    frames leaving the DUT by `port` (see the module docstring): shares
    from the samples, scaled to the frames and bytes the tap's cumulative
    counts say left in the window (between its first and last sample)."""
    out = [f for f in frames if f.direction == FROM and wiring.port_of(f.tap_port) == port
           and window[0] <= f.time_ns < window[1]]
    d = Delivered()
    if not out:
        return d
    k: dict[int, int] = {}
    inv: dict[int, float] = {}
    for f in out:
        p = source_port(f.key, wiring)
        k[p] = k.get(p, 0) + 1
        inv[p] = inv.get(p, 0.0) + 1.0 / (f.frame_bytes + L1_EXTRA)
    first, last = min(out, key=lambda f: f.time_ns), max(out, key=lambda f: f.time_ns)
    n_frames = float(((last.pkts_from_dut - first.pkts_from_dut) & 0xFFFFFFFF) + 1)
    n_l1 = float(last.bytes_from_dut - first.bytes_from_dut + first.frame_bytes
                 + L1_EXTRA * n_frames)
    total_k, total_inv = sum(k.values()), sum(inv.values())
    for p in k:
        frames_p = n_frames * inv[p] / total_inv
        d.frames[p] = frames_p
        d.bytes[p] = n_l1 * k[p] / total_k - L1_EXTRA * frames_p
        d.samples[p] = k[p]
    d.k = total_k
    return d


def standard_error_pp(share: float, k: int) -> float:
    """A sampled share's standard error in points: sqrt(p (1 − p) / k)."""
    if k <= 0 or math.isnan(share):
        return math.nan
    return math.sqrt(max(share * (1 - share), 0.0) / k) * 100


def share_rows(case_id: str, port: int, ports: Sequence[int], tap: Delivered, truth: Delivered,
               tap_queue: Mapping[int, float], truth_queue: Mapping[int, float],
               tap_drop: Optional[Mapping[int, int]],
               truth_drop: Mapping[int, int]) -> pd.DataFrame:
    """One row per ingress port: the tap's figures against the truth's."""
    tb, tp = tap.shares(ports)
    rb, rp = truth.shares(ports)
    rows = []
    for i, p in enumerate(ports):
        tq = tap_queue.get(p, 0.0) if tap_queue else math.nan
        rq = truth_queue.get(p, 0.0) if truth_queue else math.nan
        rows.append({
            "case_id": case_id, "egress_port": port, "ingress_port": p,
            "tap_bytes": tap.bytes.get(p, 0.0), "tap_frames": tap.frames.get(p, 0.0),
            "truth_bytes": truth.bytes.get(p, 0.0), "truth_frames": truth.frames.get(p, 0.0),
            "tap_bw_share": tb[i], "truth_bw_share": rb[i], "bw_error_pp": (tb[i] - rb[i]) * 100,
            "tap_pkt_share": tp[i], "truth_pkt_share": rp[i],
            "pkt_error_pp": (tp[i] - rp[i]) * 100,
            "tap_queue_share": tq, "truth_queue_share": rq, "queue_error_pp": (tq - rq) * 100,
            "tap_drops": tap_drop.get(p, 0) if tap_drop is not None else math.nan,
            "truth_drops": truth_drop.get(p, 0),
            "samples": tap.samples.get(p, 0) if tap.k else math.nan,
            "bw_standard_error_pp": standard_error_pp(tb[i], tap.k) if tap.k else math.nan,
        })
    return pd.DataFrame(rows)


def case_checks(rows: pd.DataFrame, peak: tuple[float, float], mean: tuple[float, float],
                frame_bytes: float, sampled: bool) -> dict[str, Any]:
    """The bars over the window: delivered shares (bandwidth and packet
    rate) within SHARE_TOL_PP; with every frame also the queue shares
    within SHARE_TOL_PP, the peak and the time-weighted mean (tap, truth)
    within 1 % or one frame, the drops of each port equal; sampled, those
    have no verdict (None: the samples do not give them)."""
    worst = float(np.nanmax(np.abs(rows[["bw_error_pp", "pkt_error_pp"]].to_numpy(float)))) \
        if not rows.empty else math.nan
    out: dict[str, Any] = {"delivered_share_error_pp": worst,
                           "delivered_shares_within_tolerance":
                               bool(worst <= SHARE_TOL_PP) if not math.isnan(worst) else False}
    if sampled:
        out.update({c: None for c in CHECKS[1:]})
        out.update({"queue_share_error_pp": math.nan})
    else:
        q = rows["queue_error_pp"].to_numpy(float)
        qerr = float(np.nanmax(np.abs(q))) if q.size and not np.isnan(q).all() else math.nan
        out["queue_share_error_pp"] = qerr
        out["queue_shares_within_tolerance"] = bool(qerr <= SHARE_TOL_PP) if not math.isnan(qerr) \
            else False
        for name, (tap, ref) in (("peak", peak), ("mean", mean)):
            ok = abs(tap - ref) <= tt.peak_tolerance(ref, frame_bytes)
            out[f"{name}_within_tolerance"] = bool(ok) if not math.isnan(tap - ref) else False
        out["drops_equal"] = bool((rows["tap_drops"] == rows["truth_drops"]).all())
    out["all_pass"] = tt.combine([out[c] for c in (CHECKS[:1] if sampled else CHECKS)])
    return out
