"""RFC 2889 s. 5.4, forward pressure: port 1 sends to port 2 at 100 % of
line rate with an inter-frame gap below 96 bits (--ifg-bits, 88 by
default: 1.2 % over line rate at 64 B, as the seed's tester); the DUT may
queue and lose the excess, but must not send frames closer than 96 bits
(a receive utilisation above 100 %). The tester's sink measures the
smallest gap between the frames the DUT sent on port 2, exactly (the
egress's picosecond times) at the port's line rate.
--dut-ifg-bits gives the reference DUT a shorter transmit gap of its own:
a DUT that sends too fast, so the test fails."""

from __future__ import annotations

import numpy as np

from ..tester import search
from ..tester.streams import MIN_IFG_BITS, Rate, Stream
from . import dut_mac
from . import verdicts
from .context import Context

PREAMBLE_BITS = 64


def utilisation_pct(size: int, gap_bits: float) -> float:
    """A port's utilisation when frames of `size` bytes (FCS included) come
    `gap_bits` apart: their standard wire share (96-bit gap) over the time
    they take."""
    return 100.0 * (size * 8 + PREAMBLE_BITS + MIN_IFG_BITS) / (size * 8 + PREAMBLE_BITS + gap_bits)


def pressure_stream(src: int, dst: int, size: int, ifg_bits: int) -> Stream:
    return Stream(src, dst, Rate.pct(100.0), size, name="forward pressure", ifg_bits=ifg_bits)


def forward_pressure(c: Context) -> dict:
    src, dst = c.p.port_list[:2]
    st = pressure_stream(src, dst, c.size, c.p.ifg_bits)
    if c.p.dut_ifg_bits != MIN_IFG_BITS:
        with dut_mac.also(c.bed, dut_mac.transmit_gap(c.p.dut_ifg_bits)):
            t = c.bed.trial([st], c.duration_ns())
    else:
        t = c.bed.trial([st], c.duration_ns())
    gap = t.info.get("min_gap_bits", {}).get(dst)
    result = verdicts.forward_pressure_result(gap, c.p.rate_bps)
    s = t.summary()
    rx_util = utilisation_pct(c.size, gap) if gap is not None else np.nan
    extra = {"topology": "forward_pressure", "ifg_bits": c.p.ifg_bits,
             "min_gap_bits": np.nan if gap is None else gap}
    c.keep(search.Step("forward_pressure", 0, 100.0, t, result == verdicts.PASS), extra)
    c.tick(1.0)
    return c.result(
        topology="forward_pressure", tx_pct=100.0, ifg_bits=c.p.ifg_bits,
        dut_ifg_bits=c.p.dut_ifg_bits, tx_frames=t.tx_frames, rx_frames=t.rx_frames,
        loss_pct=s["loss_pct"], tx_util_pct=utilisation_pct(c.size, c.p.ifg_bits),
        rx_util_pct=rx_util, min_gap_bits=np.nan if gap is None else gap, result=result,
        note="" if gap is not None else "fewer than two frames received: no gap to measure")
