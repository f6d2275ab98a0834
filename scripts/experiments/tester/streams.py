"""What a tester offers: streams between ports at a rate, with a frame size
or a size mix and the headers of their frames.

Rates are a tester's: a percentage of the port's line rate, layer-1 bits
per second (preamble and gap counted) or frames per second. Frame sizes
include the FCS (64..9216 B), as testers count them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional

from ..linerate import frames_per_second, mix_mean_size, wire_bits

MIN_FRAME, MAX_FRAME = 64, 16_384
MIN_RUNT = 18  # an errored stream's undersize frames: down to a header and an FCS
MIN_IFG_BITS = 96
ERRORED = ("undersize", "oversize", "bad_fcs")
"""What an errored stream's frames have wrong (RFC 2889 s. 5.9): shorter
than 64 B, longer than the DUT's largest frame, or a bad FCS."""


class StreamError(ValueError):
    """A stream that no tester could send."""


@dataclass(frozen=True)
class Rate:
    """A stream's rate: `pct` of line rate, `bps` (layer 1) or `fps`."""

    value: float
    unit: str = "pct"  # pct | bps | fps

    def __post_init__(self) -> None:
        if self.unit not in ("pct", "bps", "fps"):
            raise StreamError(f"rate unit {self.unit!r}: use pct, bps or fps")
        if not (self.value > 0 and self.value < float("inf")):
            raise StreamError(f"rate {self.value!r} {self.unit}: must be positive and finite")
        if self.unit == "pct" and self.value > 100:
            raise StreamError(f"rate {self.value:g} %: a port cannot send above its line rate")

    @classmethod
    def pct(cls, value: float) -> "Rate":
        return cls(float(value), "pct")

    def pct_of(self, line_bps: float, mean_size: float) -> float:
        """This rate as a percentage of `line_bps` for frames of `mean_size`."""
        if self.unit == "pct":
            return self.value
        if self.unit == "bps":
            return 100.0 * self.value / line_bps
        return 100.0 * self.value / frames_per_second(mean_size, line_bps)

    def fps(self, line_bps: float, mean_size: float) -> float:
        """Frames per second this rate offers for frames of `mean_size`."""
        return self.pct_of(line_bps, mean_size) / 100.0 * line_bps / wire_bits(mean_size)

    def engine_args(self) -> dict[str, float]:
        return {{"pct": "rate_pct", "bps": "rate_bps", "fps": "rate_fps"}[self.unit]: self.value}

    def __str__(self) -> str:
        return {"pct": f"{self.value:g} %", "bps": f"{self.value / 1e9:g} Gbit/s",
                "fps": f"{self.value:g} frames/s"}[self.unit]


@dataclass(frozen=True)
class Stream:
    """Frames from `tx_port` meant for `rx_port` (None: any port, e.g. a
    broadcast), `size` bytes each or drawn from `mix` {size: weight}.
    `frames` ends the stream after that many frames (a burst); otherwise it
    lasts the trial. `headers` go to the frame template (dst_mac, src_mac,
    src_ip, dst_ip, sport, dport, dscp as integers); the testbed fills in
    its own addressing for what is not given. `ifg_bits`: the gap after
    each frame (below 96: RFC 2889's forward pressure); `errored`: one of
    ERRORED (undersize allows sizes below 64 B, bad_fcs sends every frame
    with a bad FCS)."""

    tx_port: int
    rx_port: Optional[int]
    rate: Rate = Rate(100.0)
    size: Optional[int] = 64
    mix: Optional[tuple[tuple[int, float], ...]] = None
    frames: Optional[int] = None
    start_ns: int = 0
    name: str = ""
    headers: Mapping[str, Any] = field(default_factory=dict)
    ifg_bits: int = MIN_IFG_BITS
    errored: Optional[str] = None

    def __post_init__(self) -> None:
        sizes = [s for s, _ in self.mix] if self.mix else [self.one_size]
        if self.errored is not None and self.errored not in ERRORED:
            raise StreamError(f"stream {self.label}: errored {self.errored!r}: choose from "
                              f"{', '.join(ERRORED)}")
        low = MIN_RUNT if self.errored == "undersize" else MIN_FRAME
        for s in sizes:
            if not low <= int(s) <= MAX_FRAME:
                raise StreamError(f"stream {self.label}: frame size {s} is outside "
                                  f"{low}..{MAX_FRAME} bytes")
        if not 0 <= self.ifg_bits <= 1_000_000:
            raise StreamError(f"stream {self.label}: inter-frame gap {self.ifg_bits} bit is "
                              "outside 0..1000000")
        if self.mix and (any(w < 0 for _, w in self.mix) or sum(w for _, w in self.mix) <= 0):
            raise StreamError(f"stream {self.label}: mix weights must be >= 0 with a positive total")
        if self.frames is not None and self.frames < 1:
            raise StreamError(f"stream {self.label}: a burst has at least one frame")
        if self.start_ns < 0:
            raise StreamError(f"stream {self.label}: start before time 0")

    @property
    def label(self) -> str:
        return self.name or f"{self.tx_port}->{self.rx_port if self.rx_port is not None else '*'}"

    @property
    def one_size(self) -> int:
        """The frame size of a stream without a mix (StreamError: it has neither)."""
        if self.size is None:
            raise StreamError(f"stream {self.label}: give a frame size or a mix")
        return self.size

    @property
    def mean_size(self) -> float:
        return mix_mean_size(dict(self.mix)) if self.mix else float(self.one_size)

    def at(self, rate: Rate) -> "Stream":
        """The same stream at another rate."""
        return replace(self, rate=rate)


def pair(a: int, b: int, size: int, pct: float, *, bidirectional: bool = True) -> list[Stream]:
    """RFC 2544's port pair: a -> b (and b -> a), each at `pct` of line rate."""
    out = [Stream(a, b, Rate.pct(pct), size)]
    if bidirectional:
        out.append(Stream(b, a, Rate.pct(pct), size))
    return out


def full_mesh(ports: list[int], size: int, pct: float,
              line_rate_bps: float = 100e9) -> list[Stream]:
    """Every port to every other, the port's `pct` spread evenly over its
    N-1 destinations (RFC 2889 full mesh). A port's N-1 streams start one
    frame time apart (at `pct` of `line_rate_bps`), so on its wire they
    take turns frame by frame instead of overlapping, as a tester's port
    sends one frame at a time; port i sends to port i+1+k in turn k (a
    Latin square), so every egress port too gets one frame per frame time
    rather than all its sources' frames at once."""
    n = len(ports)
    if n < 2:
        raise StreamError("a mesh needs at least two ports")
    gap_ns = wire_bits(size) * 1e9 / (line_rate_bps * pct / 100.0)
    return [Stream(a, ports[(i + 1 + k) % n], Rate.pct(pct / (n - 1)), size,
                   start_ns=round(k * gap_ns))
            for i, a in enumerate(ports) for k in range(n - 1)]


def partial_mesh(group_a: list[int], group_b: list[int], size: int, pct: float,
                 line_rate_bps: float = 100e9, *, bidirectional: bool = True) -> list[Stream]:
    """RFC 2889's partial mesh: every port of `group_a` sends to every port
    of `group_b` (and, `bidirectional`, every port of B to every port of A),
    each port's `pct` spread evenly over the other group. As in
    `full_mesh`, a port's streams start one frame time apart and port i of
    a group sends to port i+k of the other in turn k, so the frames of one
    turn spread over the other group's ports; where a group is larger than
    the other, the ports that meet at one port in a turn start spread over
    the turn, so what the port receives arrives evenly, not in bursts. One
    port against N is RFC 2889's 1:N (the one port receives N x `pct`);
    two groups are N:N."""
    if not group_a or not group_b:
        raise StreamError("a partial mesh needs two groups of ports")
    if set(group_a) & set(group_b):
        raise StreamError("a port is in both groups of a partial mesh")
    gap_ns = wire_bits(size) * 1e9 / (line_rate_bps * pct / 100.0)

    def one_way(src: list[int], dst: list[int]) -> list[Stream]:
        n = len(dst)
        meet = -(-len(src) // n)  # source ports that send to one port in the same turn
        return [Stream(a, dst[(i + k) % n], Rate.pct(pct / n), size,
                       start_ns=round(k * gap_ns + (i // n) * gap_ns / meet))
                for i, a in enumerate(src) for k in range(n)]

    return one_way(group_a, group_b) + (one_way(group_b, group_a) if bidirectional else [])
