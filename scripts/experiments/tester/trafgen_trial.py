"""A trial's results from p4scope-trafgen's reports (the `mininet`
testbed's generators and analyzers), in the table trial.stream_rows makes
for the virtual testbed: the same columns, so searches, tables and
reports do not know which testbed measured.

What the analyzer cannot see is said, not guessed: frames still queued in
the DUT when counting stops are not observable (`queued_at_end` is 0 and
the trial's info says so; they count as lost), percentiles are the upper
edges of the analyzer's histogram bins (NaN in its open last bin), and
latency is from the generator's software timestamp, taken as the frame is
handed to the kernel, to the analyzer's kernel receive timestamp.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from ...topologies import traffic
from .streams import Stream
from .trial import PERCENTILES, Trial, _pct_name, histogram_rows, stream_rows

NOT_OBSERVABLE = ("frames still in the DUT when counting stopped are not observable in "
                  "Mininet: they count as lost, queued_at_end is 0")


def merged_sent(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The senders' reports as one (streams of all of them)."""
    return {"streams": [s for r in reports for s in r.get("streams", [])]}


def _rows(streams: Sequence[Stream], ids: Sequence[int], sent: Mapping[str, Any],
          received: Mapping[int, Mapping[str, Any]]) -> tuple[list[dict], dict]:
    """Engine-shaped rows (one per stream and receiving port) for
    stream_rows, and the analyzer's StreamResults by (stream, port)."""
    tx = {s["id"]: s for s in sent["streams"]}
    res = {(r.id, port): r for port, rep in received.items()
           for r in traffic.combine(dict(sent), dict(rep))}
    rows: list[dict] = []
    for sid in ids:
        t = tx.get(sid, {"tx_packets": 0, "tx_bytes": 0})
        base = {"stream": sid, "tx_frames": int(t["tx_packets"]), "tx_bytes": int(t["tx_bytes"])}
        mine = []
        for port in received:
            r = res.get((sid, port))
            if r is None or r.rx_packets == 0:
                continue
            lat = r.latency_ns or {}
            mine.append({**base, "rx_port": port, "rx_frames": r.rx_packets,
                         "rx_bytes": r.rx_bytes, "lat_min_ns": lat.get("min", math.nan),
                         "lat_avg_ns": lat.get("avg", math.nan),
                         "lat_max_ns": lat.get("max", math.nan),
                         "jitter_ns": lat.get("jitter"), "out_of_order": r.reordered})
        rows += mine or [{**base, "rx_port": None}]
    return rows, res


def engine_rows(streams: Sequence[Stream], ids: Sequence[int],
                sent: Sequence[Mapping[str, Any]],
                received: Mapping[int, Mapping[str, Any]]) -> list[dict]:
    """The reports as the engine's stream_stats rows (one per stream and
    port it arrived on): for procedures that count per receiving port
    (RFC 2889's broadcast), as they do on the virtual testbed."""
    return _rows(streams, ids, merged_sent(sent), received)[0]


def trial_from_reports(streams: Sequence[Stream], ids: Sequence[int],
                       sent: Sequence[Mapping[str, Any]], received: Mapping[int, Mapping[str, Any]],
                       line_rate_bps: float, duration_ns: int, settle_ns: int,
                       info: Optional[dict[str, Any]] = None) -> Trial:
    """The Trial of `streams` (trafgen ids `ids`) from the senders' reports
    and the analyzers' reports by the port they listened on."""
    all_sent = merged_sent(sent)
    rows, res = _rows(streams, ids, all_sent, received)
    table = stream_rows(streams, rows, ids, line_rate_bps, int(duration_ns))
    edges = next((list(r.get("hist_edges_ns", [])) for r in received.values()), [])
    hist: dict[int, tuple[list[float], list[int]]] = {}
    for i, (st, sid) in enumerate(zip(streams, ids)):
        good = [r for (s, port), r in res.items()
                if s == sid and (st.rx_port is None or port == st.rx_port)]
        unique = sum(r.rx_packets - r.duplicates for r in good)
        tx = int(table.at[i, "tx_frames"])
        lost = max(tx - unique, 0)  # duplicates do not make up for lost frames
        table.at[i, "lost"] = lost
        table.at[i, "loss_pct"] = 100.0 * lost / tx if tx else 0.0
        table.at[i, "duplicated"] = sum(r.duplicates for r in good)
        counts = _sum_counts([r.histogram for r in good], len(edges) + 1)
        for p in PERCENTILES:
            q = traffic.histogram_quantile(edges, counts, p / 100.0) if counts else None
            table.at[i, f"lat_{_pct_name(p)}_ns"] = math.nan if q is None else float(q)
        hist[sid] = ([0.0] + [float(e) for e in edges], counts or [0] * (len(edges) + 1))
    table["duplicated"] = table["duplicated"].astype("Int64")
    extra = {"testbed": "mininet", "queued_at_end": NOT_OBSERVABLE,
             "percentiles": "upper edges of the analyzer's histogram bins",
             **(info or {})}
    return Trial(table, int(duration_ns), int(settle_ns), line_rate_bps, 0,
                 histogram_rows(ids, [s.label for s in streams], hist), extra)


def _sum_counts(hists: Sequence[Sequence[int]], n: int) -> list[int]:
    out = [0] * n
    for h in hists:
        for k, c in enumerate(h[:n]):
            out[k] += int(c)
    return out if any(out) else []


def loss_end_from_series(series: Sequence[int], interval_ns: int, origin_ns: int,
                         first_tx_ns: int, tx_frames: int, fps: float, lost: int,
                         latency_ns: float = 0.0) -> float:
    """RFC 2544 s. 26.5 from an analyzer's per-interval counts, for a stream
    sent at `fps` from `first_tx_ns` (wall clock, as `origin_ns`, the start
    of the analyzer's first interval) that lost `lost` frames in all: the
    time from its first frame to the end of the interval in which its last
    frame was lost. By the end of an interval, the frames sent (less those
    still on their way, `latency_ns`) minus the frames received are at
    least the frames lost so far; the last interval whose deficit falls
    short of `lost` by more than a frame or two (the slack) still had loss
    to come, so the loss ended in the interval after it. Frames that are
    only delayed in the DUT's queue arrive later and do not count. 0 when
    nothing was lost; the resolution is `interval_ns`."""
    if lost <= 0:
        return 0.0
    if fps <= 0 or interval_ns <= 0:
        return math.nan
    got = np.cumsum(np.asarray(series, dtype=np.int64))
    ends = origin_ns + (np.arange(got.size) + 1) * interval_ns
    sent = np.clip(np.floor((ends - latency_ns - first_tx_ns) / 1e9 * fps) + 1, 0, tx_frames)
    slack = max(2.0, 0.01 * fps * interval_ns / 1e9)
    after = ends > first_tx_ns
    if not after.any():
        return math.nan
    short = np.nonzero(((sent - got) < lost - slack) & after)[0]
    last = short[-1] + 1 if short.size else int(np.argmax(after))
    end = origin_ns + (last + 1) * interval_ns
    return float(end - first_tx_ns)
