"""What every testbed offers the procedures (tester.search) and the
suites built on them (experiments.rfc2544): trials, shaping the DUT's
ports, and system recovery from the last trial."""

from __future__ import annotations

from typing import Callable, Optional, Protocol, Sequence

from .streams import Stream
from .trial import Trial


class Testbed(Protocol):
    name: str
    line_rate_bps: float
    recovery_resolution: str
    """How finely recovery_ns() can tell when loss stopped."""

    def trial(self, streams: Sequence[Stream], duration_ns: int, *, records: bool = False,
              tick: Optional[Callable[[float], None]] = None,
              settle_ns: Optional[int] = None) -> Trial:
        """Offers `streams` for `duration_ns`; what was sent and received."""

    def shape_ports(self, ports: Sequence[int], pct: float, size: float) -> None:
        """Limits the DUT's egress `ports` to `pct` of line rate (for frames
        of `size`) in every trial from now on: a DUT whose limit is known."""

    def recovery_ns(self, trial: Trial, reduced: Sequence[Stream], reduce_at_ns: int) -> float:
        """RFC 2544 s. 26.5 from the last trial (`trial`): the longest time
        from the reduction to the last loss over the `reduced` streams."""
