"""Each trunk member's rate in Mininet, from the DUT's interface counters
(its veth ends in the root namespace, topologies.counters) sampled while a
trial runs: what a member link carried, in layer-1 bits (a veth counts
frames without their FCS: 4 bytes of FCS and 20 of preamble and gap are
added per frame, as the tester counts).
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np

from ...topologies.counters import Series, read_counters

L1_EXTRA = 24


def l1_bits(sample: Mapping[str, int]) -> float:
    return 8.0 * (sample["tx_bytes"] + L1_EXTRA * sample["tx_packets"])


def bits_at(series: Series, iface: str, t: float) -> float:
    """Layer-1 bits the interface had sent by `t` (s since the sampler
    started), interpolated between samples."""
    bits = [l1_bits(s) for s in series.samples[iface]]
    return float(np.interp(t, series.t, bits))


def window_gbps(series: Series, iface: str, t0: float, t1: float) -> float:
    """Mean layer-1 Gbit/s the interface sent between t0 and t1 (s)."""
    if t1 <= t0:
        return float("nan")
    return (bits_at(series, iface, t1) - bits_at(series, iface, t0)) / (t1 - t0) / 1e9


def series_rows(series: Series, ports: Mapping[str, int], origin_s: float,
                bin_s: float) -> dict[str, np.ndarray]:
    """Per member and `bin_s` bin from `origin_s` (s on the sampler's clock)
    to the last sample: layer-1 Gbit/s (columns t_ns from the origin, port,
    gbps). The counters are read between the bin edges, so a late sample
    does not make a spike."""
    end = series.t[-1] if series.t else origin_s
    edges = origin_s + np.arange(0, max(end - origin_s, 0) + 1e-9, bin_s)
    out: dict[str, list] = {"t_ns": [], "port": [], "gbps": []}
    if len(edges) < 2:
        return {k: np.array([]) for k in out}
    for iface, port in ports.items():
        bits = np.interp(edges, series.t, [l1_bits(s) for s in series.samples[iface]])
        out["t_ns"].append(np.round((edges[:-1] - origin_s) * 1e9).astype(np.int64))
        out["port"].append(np.full(len(edges) - 1, port))
        out["gbps"].append(np.diff(bits) / bin_s / 1e9)
    return {k: np.concatenate(v) for k, v in out.items()}


def wait_quiet(ifaces: Sequence[str], quiet_s: float = 0.1, limit_s: float = 5.0) -> bool:
    """Waits until the interfaces have sent nothing for `quiet_s` (what a
    trial left queued on a shaped link has drained); False at `limit_s`."""
    deadline = time.monotonic() + limit_s
    last = [read_counters(i)["tx_packets"] for i in ifaces]
    still_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(quiet_s / 4)
        now = [read_counters(i)["tx_packets"] for i in ifaces]
        if now != last:
            last, still_since = now, time.monotonic()
        elif time.monotonic() - still_since >= quiet_s:
            return True
    return False
