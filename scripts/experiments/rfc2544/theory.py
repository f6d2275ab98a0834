"""What the reference DUT's configuration predicts for RFC 2544, shown in
the report beside what was measured.

The reference DUT forwards every port pair at line rate unless its egress
ports are shaped (`dut_rate_pct`); it is store-and-forward, so an
unloaded frame's FIFO latency is its own time in (preamble included),
on the engine's 1 ns clock; every frame beyond the shaped rate queues in
the shared buffer until its dynamic threshold stops it.

In Mininet only the configured limits are known: the DUT's shaped ports
and links shaped with htb (which counts a frame as the kernel holds it,
without FCS, preamble or gap); what the software DUT adds is measured, not
predicted.
"""

from __future__ import annotations

import math
from typing import Optional

from .. import theory
from ..linerate import FCS, frame_time_ns, wire_bits
from ..params import Profile
from .params import Rfc2544Params


def throughput_pct(p: Rfc2544Params, size: Optional[int] = None) -> float:
    """The configured limit, % of line rate: the DUT's shaping, and in
    Mininet the links' htb rate for frames of `size`."""
    limit = p.dut_rate_pct
    if p.link_bw_bps is not None and size is not None:
        limit = min(limit, link_limit_pct(p.link_bw_bps, size, p.rate_bps))
    return limit


def link_limit_pct(link_bw_bps: float, size: int, rate_bps: float) -> float:
    """A link shaped to `link_bw_bps` by htb carries (size - 4)-byte frames
    at link_bw / ((size - 4) * 8) frames/s: that share of line rate."""
    fps = link_bw_bps / ((size - FCS) * 8)
    return min(100.0, 100.0 * fps * wire_bits(size) / rate_bps)


def fifo_latency_ns(size: int, rate_bps: float) -> float:
    """An unloaded store-and-forward frame: first bit in to first bit out
    is its time on the wire up to its last bit (preamble + frame)."""
    return float(math.ceil((size + 8) * 8e9 / rate_bps - 1e-9))


def loss_pct(p: Rfc2544Params, offered_pct: float, size: Optional[int] = None) -> float:
    """Frame loss at an offered load: what exceeds the configured limit."""
    return max(0.0, 100.0 * (1.0 - throughput_pct(p, size) / offered_pct))


def back_to_back_frames(p: Rfc2544Params, prof: Profile, size: int) -> Optional[int]:
    """The longest clean burst at line rate: unbounded (None) without
    shaping; else what one congested queue per direction holds under the
    dynamic threshold, over the share of the burst that cannot leave."""
    if p.dut_rate_pct >= 100.0:
        return None
    congested = 2 * len(p.pairs)  # each pair's two directions: two congested queues
    limit = theory.dt_queue_limit(prof.shared_bytes, prof.alpha, congested)
    held = theory.limit_frames(limit, prof.footprint(size))
    return int(held / (1.0 - p.dut_rate_pct / 100.0))


def buffer_time_ns(frames: float, size: int, rate_bps: float) -> float:
    """RFC 2544's buffer time of a back-to-back burst: its length at line
    rate."""
    return frames * frame_time_ns(size, rate_bps)
