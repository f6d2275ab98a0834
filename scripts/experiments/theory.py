"""What the traffic manager's configuration predicts, stated once.

Dynamic thresholds (Choudhury and Hahne): a queue may grow while its
occupancy q is below alpha * (B - Q), where B is the shared buffer and Q
what all queues hold together. With n queues congested at once, each
settles where q = alpha * (B - n q):

    q* = alpha * B / (1 + n * alpha)        (one queue: alpha * B / (1 + alpha))

plus any space reserved for that queue outside the shared pool. A static
limit (no dynamic thresholds) is simply the queue's own limit. When the
egress queue arbitrates between ingress ports it holds one virtual output
queue per ingress port and the threshold applies to each: k ingress ports
bursting into one egress queue hold k * alpha * B / (1 + k * alpha)
together (2:1 with alpha 1: two thirds of the buffer).

A microburst of N frames from each of k ingress ports at line rate into
one egress port fills the queue at (k - 1) x line rate while the egress
drains at line rate; once the queue reaches its limit the rest is dropped.
At the end of the bursts the egress port has sent about N frames and the
queue holds the rest of what it took, all of which it sends later, so

    buffered = forwarded - N = min((k - 1) * N, queue limit in frames).

The queue limit in frames is the limit in bytes over the bytes one frame
occupies in the buffer (frame size without FCS, rounded up to whole cells
when the buffer is counted in cells).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional


def dt_queue_limit(buffer_bytes: float, alpha: float, congested: int = 1,
                   reserved_bytes: float = 0.0) -> float:
    """Steady-state limit of each of `congested` equally loaded queues (or
    virtual output queues) under dynamic thresholds:
    reserved + alpha * B / (1 + n * alpha)."""
    if buffer_bytes < 0 or alpha <= 0 or congested < 1:
        raise ValueError("need buffer >= 0, alpha > 0 and at least one congested queue")
    return reserved_bytes + alpha * buffer_bytes / (1 + congested * alpha)


def dt_admitted_frames(buffer_bytes: float, alpha: float, footprint_bytes: int,
                       reserved_bytes: float = 0.0, voqs: int = 1) -> int:
    """Frames a congested queue holds under the engine's rule: a frame of c
    buffer bytes enters while q + c <= alpha * (B - Q), q what its queue
    holds (beyond any reserve) and Q what the shared buffer holds.

    With ingress arbitration the queue is split into virtual output queues,
    one per ingress port, and the threshold applies to each: k congested
    VOQs settle at alpha * B / (1 + k * alpha) each, k * alpha * B /
    (1 + k * alpha) together. One VOQ (k = 1) in closed form:
    floor(alpha * (B + c) / ((1 + alpha) * c)); k > 1 by filling the VOQs
    in turn, frame by frame, as equal arrivals do."""
    c = footprint_bytes
    if c <= 0 or voqs < 1:
        raise ValueError("a frame takes at least one byte and a queue has at least one VOQ")
    in_reserve = int(reserved_bytes // c)
    if voqs == 1:
        return in_reserve + max(0, math.floor(alpha * (buffer_bytes + c) / ((1 + alpha) * c) + 1e-9))
    # whole rounds in which every VOQ takes a frame, skipped in one step:
    # round r + 1 is whole while (r + 1) c <= alpha (B - (voqs (r + 1) - 1) c);
    # two rounds fewer than the closed form, so rounding cannot overshoot
    rounds = max(0, math.floor(alpha * (buffer_bytes + c) / ((1 + voqs * alpha) * c)) - 2)
    q = [rounds * c] * voqs
    used = voqs * rounds * c
    progress = True
    while progress:
        progress = False
        for i in range(voqs):
            if q[i] + c <= alpha * (buffer_bytes - used) + 1e-9:
                q[i] += c
                used += c
                progress = True
    return in_reserve + used // c


def frame_footprint(frame_bytes: int, cell_bytes: Optional[int] = None) -> int:
    """Buffer bytes one frame occupies: its bytes, rounded up to cells if any."""
    if cell_bytes:
        return math.ceil(frame_bytes / cell_bytes) * cell_bytes
    return frame_bytes


def limit_frames(limit_bytes: float, footprint_bytes: int) -> int:
    """Whole frames that fit under a byte limit."""
    return int(limit_bytes // footprint_bytes)


def burst_absorption_frames(limit_frames_: int, ingress_ports: int, burst_frames: int) -> int:
    """Expected buffered frames of a k:1 microburst of N frames per port."""
    if ingress_ports < 2:
        raise ValueError("a microburst needs at least two ingress ports")
    return min((ingress_ports - 1) * burst_frames, limit_frames_)


def burst_frames_needed(limit_frames_: int, ingress_ports: int, margin: float = 1.5) -> int:
    """N per port large enough that the bursts overflow the queue by
    `margin`, so buffered measures the buffer and not the burst."""
    return max(1, math.ceil(margin * limit_frames_ / (ingress_ports - 1)))


def fill_time_ns(limit_bytes: float, ingress_ports: int, rate_bps: float,
                 wire_per_buffer: float = 1.0) -> float:
    """How long an incast of k ports at line rate takes to fill a queue to
    `limit_bytes` (wire_per_buffer: wire bytes per buffered byte)."""
    net = (ingress_ports - 1) * rate_bps / 8 / wire_per_buffer
    return limit_bytes / net * 1e9


@dataclass(frozen=True)
class Statement:
    """A theory line for the report: a formula, its inputs and its value."""

    what: str
    formula: str
    value: float
    unit: str

    def text(self) -> str:
        return f"{self.what}: {self.formula} = {self.value:,.0f} {self.unit}"


def arbitrated_shares(groups: "list[int]") -> list[float]:
    """Long-run shares of saturated ingress ports under two-level round
    robin: the active groups share equally, then the ports within a group.
    `groups[i]` is the group of port i (all ports distinct groups: 1/N each)."""
    if not groups:
        return []
    sizes: dict[int, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    ng = len(sizes)
    return [1.0 / (ng * sizes[g]) for g in groups]
