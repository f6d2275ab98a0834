"""RFC 2889's address tests (s. 5.7 caching capacity, s. 5.8 learning
rate) in Mininet: address.py's procedure with real traffic, against the
DUT's own learning in real time: the Linux bridge learns in the kernel,
frame by frame; the reference DUT (p4scope switch or BMv2) through
digests to its controller (the fabric's L2 learning).

One trial:

 0. RFC 2889's address reset: the DUT forgets what it learnt but the
    tester hosts' addresses (MininetTestbed.forget_addresses), and the
    trial's addresses are a block of their own, never used before in the
    run: nothing an earlier trial taught the DUT can make it pass, and a
    controller that suppresses repeated digests sees none;
 1. the tester's learning frames: the test, learning and monitor ports'
    own addresses are learnt (for the reference DUT the tester waits until
    its controller has them);
 2. the learning port sends `n` frames to the test port from `n` new
    source addresses at `rate_fps` (one stream of one frame per address:
    the generator cycles no destination address);
 3. from the moment the last of them is sent, the test port sends one
    frame to each address at the same rate; the monitor port listens.

It passes when the learning port gets all `n` test frames and the
monitor port none. The generators of steps 2 and 3 run on two hosts,
started together: their schedules agree to the time it takes to start a
process (a few ms), which the DUT gets on top to learn.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from ..tester.streams import Rate, Stream
from ..tester.trial import Trial
from .address import FIRST_ADDRESS, AddressTrial
from .topology import AddressPorts

BLOCK = 1 << 20
"""Addresses per trial's block (more than any --max-addresses)."""
_blocks = count(1)


def address_trial(bed: Any, ports: AddressPorts, n: int, rate_fps: float, size: int,
                  ageing_s: float = 300.0) -> AddressTrial:
    """One trial on `bed` (tester.mininet.MininetTestbed): see the module
    doc. `ageing_s` is the virtual controller's; a Mininet DUT ages with
    its own setting."""
    base = FIRST_ADDRESS + next(_blocks) * BLOCK
    period = 1e9 / rate_fps
    rate = Rate(rate_fps, "fps")
    learn = [Stream(ports.learn, ports.test, rate, size, frames=1, start_ns=round(i * period),
                    name=f"learning {i}", headers={"src_mac": base + i}) for i in range(n)]
    t0 = round(n * period)
    test = [Stream(ports.test, ports.learn, rate, size, frames=1,
                   start_ns=t0 + round(i * period), name=f"test {i}",
                   headers={"dst_mac": base + i}) for i in range(n)]
    bed.forget_addresses()
    t = bed.trial(learn + test, 2 * t0 + 1, listen=[ports.monitor])
    s = t.streams
    # the analyzers listen on the test, learning and monitor ports: a frame
    # anywhere but its stream's port went to the monitor port (flooded)
    monitor_rx = int(s["misdelivered"].sum())
    table = s.iloc[n:].reset_index(drop=True)
    table["misdelivered"] = [monitor_rx] + [0] * (len(table) - 1)
    table["generator_short"] = bool(s["generator_short"].any())
    trial = Trial(table, t.duration_ns, t.settle_ns, t.line_rate_bps, 0, info=t.info)
    return AddressTrial(trial=trial, addresses=n, rate_fps=rate_fps,
                        test_tx=int(table["tx_frames"].sum()),
                        learn_rx=int(table["rx_frames"].sum()), monitor_rx=monitor_rx)
