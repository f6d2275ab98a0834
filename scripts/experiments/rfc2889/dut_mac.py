"""What the errored-frames and forward-pressure tests set on the DUT for
their trials only, on top of the run's own set-up (the ports' rates): the
receiving MAC's MTU and whether it passes errored frames, and the gap the
DUT keeps between the frames it sends. Virtual time only: the engine's
ports are Ethernet MACs there; veth links carry no FCS, preamble or gap."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

Setup = Callable[[Any], object]

WIRE_OVERHEAD_BYTES = 12
"""Preamble, start delimiter and FCS: the DUT's wire overhead less its gap."""


@contextmanager
def also(bed: Any, extra: Setup) -> Iterator[None]:
    """Runs `extra(engine)` after the testbed's own set-up in every trial of
    the block (bed.setup: after each reset, before any frame)."""
    base = bed.setup

    def both(e: Any) -> None:
        if base is not None:
            base(e)
        extra(e)

    bed.setup = both
    try:
        yield
    finally:
        bed.setup = base


def macs(ports: Sequence[int], mtu: int, pass_errored: bool) -> Setup:
    """The DUT's receive MACs on `ports`: `mtu`, and whether they pass
    errored frames to the pipeline."""
    return lambda e: [e.set_port_mac(p, mtu=mtu, pass_errored=pass_errored) for p in ports]


def transmit_gap(ifg_bits: int) -> Setup:
    """The DUT's transmit gap (a multiple of 8 bits): its traffic manager's
    wire overhead, 12 bytes plus the gap."""
    return lambda e: e.tm_configure({"wire_overhead_bytes": WIRE_OVERHEAD_BYTES + ifg_bits // 8})
