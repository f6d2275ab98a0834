"""Ethernet line-rate arithmetic, as a hardware tester counts it.

A frame's size is what a tester reports (destination MAC through FCS, so
64..9216 B); on the wire each frame also takes 8 B of preamble and start
delimiter and a 12 B inter-frame gap. Line rate, utilisation and "Gbps per
stream" in the seed reports' tables are in these layer-1 bits: three
streams sharing a 100GbE port each show 33.3 Gbps, summing to 100.

A software switch never sees the 4-byte FCS, so the bytes it holds for a
frame of tester size S are S - 4.
"""

from __future__ import annotations

from typing import Mapping, TypeVar

import numpy as np

# the generator's conventions (topologies/traffic.py) are the tester's: one
# definition of the wire overhead and of Tolly's iMIX (size -> weight)
from ..topologies.traffic import IMIX_TOLLY as TOLLY_IMIX  # noqa: F401 (re-exported)
from ..topologies.traffic import L1_OVERHEAD as WIRE_OVERHEAD

PREAMBLE_SFD = 8
IFG = 12
assert WIRE_OVERHEAD == PREAMBLE_SFD + IFG  # 20 bytes per frame
FCS = 4
GBPS_100 = 100_000_000_000


Sizes = TypeVar("Sizes", float, np.ndarray)
"""One frame size, or an array of them (a trial's records)."""


def wire_bits(frame_size: Sizes) -> Sizes:
    """Bits one frame occupies on the wire, preamble and gap included."""
    return (frame_size + WIRE_OVERHEAD) * 8


def frame_time_ns(frame_size: float, rate_bps: float = GBPS_100) -> float:
    """Nanoseconds one frame takes at `rate_bps` (64 B at 100G: 6.72 ns)."""
    return wire_bits(frame_size) * 1e9 / rate_bps


def frames_per_second(frame_size: float, rate_bps: float = GBPS_100) -> float:
    """Frames per second at line rate (64 B at 100G: 148.8 Mfps)."""
    return rate_bps / wire_bits(frame_size)


def l1_bits(nbytes: float, frames: float) -> float:
    """Layer-1 bits of `frames` frames holding `nbytes` bytes in all."""
    return (nbytes + WIRE_OVERHEAD * frames) * 8


def mix_mean_size(mix: Mapping[int, float]) -> float:
    """Mean frame size of a weighted mix (Tolly iMIX: 486.18 B)."""
    total = sum(mix.values())
    if total <= 0:
        raise ValueError("a frame-size mix needs a positive total weight")
    return sum(size * w for size, w in mix.items()) / total


def mix_frames_per_second(mix: Mapping[int, float], rate_bps: float = GBPS_100) -> float:
    """Frames per second of a mix at line rate (the mean wire size decides)."""
    return rate_bps / wire_bits(mix_mean_size(mix))


def buffer_bytes_per_frame(frame_size: int) -> int:
    """Bytes a frame of tester size `frame_size` occupies in a software
    switch's buffer (no FCS)."""
    return frame_size - FCS
