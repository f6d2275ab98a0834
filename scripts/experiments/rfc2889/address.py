"""RFC 2889's address handling tests (s. 5.7 caching capacity, s. 5.8
learning rate) on the reference DUT in virtual time, through the
controller's learning path (controller.py); in Mininet against the DUT's
own learning (address_mininet.py), with the same searches.

One trial, from a fresh switch (RFC 2889's address reset; no entry but
the flood domain of the three ports and the learning digest):

 1. the test port sends one broadcast frame, so its own address is
    learnt (the controller serves that digest before anything else, its
    time not counted: the warm-up);
 2. the learning port sends `n` frames to the test port, from `n`
    source addresses, at `rate_fps`;
 3. right after, the test port sends `n` frames to those addresses at
    the same rate, and the monitor port listens.

It passes when the learning port gets all `n` test frames and the monitor
port none (an address not learnt in time, or not at all because the MAC
table is full, is flooded to both).

The learnt entries age in virtual time (ageing.py): an address learnt
at the start of step 2 waits about `n / rate_fps` for its test frame, so
an ageing time shorter than that loses it (flooded again), which is why
RFC 2889 asks for an ageing time longer than the test (params.py refuses
a shorter one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ..testbed import host_mac
from ..tester import search
from ..tester.streams import Rate, Stream
from ..tester.trial import Trial, stream_rows
from ..traffic import Traffic
from .ageing import VirtualAgeing
from .controller import VirtualController, Watch
from .topology import BROADCAST_MAC, AddressPorts, address_ports
from .verdicts import address_passed, search_result

FIRST_ADDRESS = 0x02_0A_00_00_00_00
"""The learnt addresses: 02:0a:00:00:00:00 and up (no host's MAC)."""
SETTLE_NS = 10_000


@dataclass
class AddressTrial:
    """What one address trial measured; the learning path's figures are
    the virtual-time controller's (None in Mininet)."""

    trial: Trial
    addresses: int
    rate_fps: float
    test_tx: int
    learn_rx: int
    monitor_rx: int
    learnt: Optional[int] = None
    table_full: Optional[int] = None
    aged: Optional[int] = None
    digests_handled: Optional[int] = None
    digests_waiting: Optional[int] = None
    digests_dropped: Optional[int] = None
    service_ns: Optional[int] = None
    late_ns: Optional[int] = None

    @property
    def passed(self) -> bool:
        return address_passed(self.test_tx, self.learn_rx, self.monitor_rx)

    def row(self) -> dict[str, Any]:
        return {"addresses": self.addresses, "rate_fps": self.rate_fps, "test_tx": self.test_tx,
                "learn_rx": self.learn_rx, "monitor_rx": self.monitor_rx,
                "flooded": self.monitor_rx, "learnt": self.learnt,
                "table_full": self.table_full, "aged": self.aged,
                "digests_handled": self.digests_handled,
                "digests_waiting": self.digests_waiting, "digests_dropped": self.digests_dropped,
                "controller_service_ns": self.service_ns, "controller_late_ns": self.late_ns,
                "passed": self.passed}


def _configure(ports: AddressPorts, ageing_s: float, box: dict[str, Any]):
    from ...control.apps.flooding import Flooding
    from ...control.apps.learning import L2Learning

    def configure(sw: Any) -> None:
        Flooding(sw).domain([ports.test, ports.learn, ports.monitor])
        box["learning"] = L2Learning(sw, ageing_s=ageing_s).start()

    return configure


def address_trial(bed: Any, ports: AddressPorts, n: int, rate_fps: float, size: int,
                  ageing_s: float = 300.0) -> AddressTrial:
    """One trial on `bed` (tester.virtual.VirtualTestbed): see the module doc."""
    vs, line = bed.vs, bed.line_rate_bps
    vs.sw.digests(0)  # a digest list of an earlier switch, late on a busy machine: dropped
    box: dict[str, Any] = {}
    vs.setup_switch = _configure(ports, ageing_s, box)
    try:
        vs.reset(bed.profile, [], {})
    finally:
        vs.setup_switch = None
    if bed.setup is not None:
        with vs.locked() as e:
            bed.setup(e)
    learning = box["learning"]
    ctl = VirtualController(vs, learning, ageing=VirtualAgeing(vs))
    tr = Traffic(vs)
    period = 1e9 / rate_fps
    # 1. the test port's own address
    tr.add(ports.test, ports.test, size=size, frames=1, rate_pct=100.0, line_rate_bps=line,
           dst_mac=BROADCAST_MAC, src_mac=host_mac(ports.test), name="test port learning")
    ctl.run_until(SETTLE_NS, Watch(0, 1.0, 1))
    ctl.warm_up()
    start = ctl.now + SETTLE_NS
    # 2. learning frames, 3. test frames
    learn = Stream(ports.learn, ports.test, Rate(rate_fps, "fps"), size, frames=n,
                   start_ns=start, name="learning")
    test = Stream(ports.test, ports.learn, Rate(rate_fps, "fps"), size, frames=n,
                  start_ns=start + round(n * period), name="test")
    common = dict(size=size, frames=n, rate_fps=rate_fps, line_rate_bps=line)
    sid_learn = tr.add(ports.learn, ports.test, **common, start_ns=learn.start_ns,
                       src_mac=FIRST_ADDRESS, macs=n, dst_mac=host_mac(ports.test),
                       name=learn.name)
    sid_test = tr.add(ports.test, ports.learn, **common, start_ns=test.start_ns,
                      src_mac=host_mac(ports.test), dst_mac=FIRST_ADDRESS,
                      vary=[{"offset": 0, "width": 6, "count": n}], name=test.name)
    end = test.start_ns + round(n * period) + SETTLE_NS
    # the test frames raise digests too once an address aged (the test port's own)
    ctl.run_until(end, Watch(start, period, 2 * n))
    with vs.locked() as e:
        rows = e.stream_stats()
    monitor_rx = sum(int(r["rx_frames"]) for r in rows if r["stream"] in (sid_learn, sid_test)
                     and r.get("rx_port") == ports.monitor)
    # the trial as the searches see it: the test frames, and as misdelivered
    # every frame flooded to the monitor port (so Trial.passed is address_passed)
    table = stream_rows([test], rows, [sid_test], line, end - start)
    table["misdelivered"] = monitor_rx
    return AddressTrial(
        trial=Trial(table, end - start, SETTLE_NS, line, info={"testbed": bed.name}),
        addresses=n, rate_fps=rate_fps, test_tx=int(table["tx_frames"].iloc[0]),
        learn_rx=int(table["rx_frames"].iloc[0]), monitor_rx=monitor_rx,
        learnt=len(learning.macs) - (host_mac(ports.test) in learning.macs),
        table_full=learning.stats.table_full, aged=ctl.aged, digests_handled=ctl.handled,
        digests_waiting=len(ctl.pending), digests_dropped=ctl.dropped,
        service_ns=ctl.service_ns, late_ns=ctl.late_ns)


def mac_table_size(bed: Any) -> Optional[int]:
    """How many addresses the program's MAC table holds (its smac and dmac
    tables' size in the P4Info); None for a DUT that is no P4 program (the
    Linux bridge)."""
    if bed.name == "mininet":
        if not bed.dut.p4:
            return None
        schema = bed.controller_switch().schema
    else:
        schema = bed.vs.sw.schema
    return min(int(schema.table("smac").size), int(schema.table("dmac").size))


def learning_path(bed: Any) -> str:
    """What the learning rate measures on `bed`'s DUT."""
    if bed.name == "mininet" and not bed.dut.p4:
        return f"the learning rate is {bed.dut.name}'s own (the kernel learns frame by frame)"
    when = "in real time" if bed.name == "mininet" else "in virtual time"
    return ("the learning rate is the controller's digest path (digest, P4Runtime stream, "
            f"L2 learning, Write), {when}")


def trial_function(bed: Any) -> Callable[..., AddressTrial]:
    """The address trial of `bed`'s kind (virtual time or Mininet)."""
    if bed.name == "mininet":
        from .address_mininet import address_trial as in_mininet

        return in_mininet
    return address_trial


def _searcher(c: Any, n_of: Any, rate_of: Any, trials: list[AddressTrial]):
    """run(value) -> Trial for tester.search: one address trial, kept."""
    one = trial_function(c.bed)

    def run(value: float) -> Trial:
        a = one(c.bed, address_ports(c.p.port_list), int(n_of(value)), float(rate_of(value)),
                c.size, c.p.ageing_s)
        trials.append(a)
        c.store("rfc2889_address_trials", pd.DataFrame([{
            "case_id": c.case.case_id, "test": c.test, "frame_size": c.size,
            "trial": len(trials) - 1, **a.row()}]))
        return a.trial

    return run


def _shown(trials: list[AddressTrial], value: Any, key: str) -> AddressTrial:
    """The trial at the answer, else the one that asked least (it failed)."""
    at = [a for a in trials if a.passed and getattr(a, key) == value]
    return at[-1] if at else min(trials, key=lambda a: getattr(a, key))


def caching(c: Any) -> dict:
    """RFC 2889 s. 5.7: the most addresses learnt at `learn_fps` with no
    test frame flooded: the largest count tried first (--max-addresses),
    then a binary search below it."""
    trials: list[AddressTrial] = []
    most = c.p.max_addresses
    steps = max(1, int(np.ceil(np.log2(most))) + 1)

    def each(step: search.Step) -> None:
        c.tick(min(1.0, (step.index + 1) / steps))

    r = search.back_to_back(_searcher(c, lambda n: n, lambda n: c.p.learn_fps, trials), most,
                            1, each=each)
    count = int(r.value or 0)
    a = _shown(trials, count, "addresses")
    table = mac_table_size(c.bed)
    holds = (f"the MAC table holds {table}" if table is not None
             else "the DUT's MAC table size is not known")
    note = (f"no flooding at the largest count tried (--max-addresses {most}); {holds}"
            if count == most else "")
    return c.result(topology="address", addresses=count, result=search_result(r.value),
                    test_tx=a.test_tx, learn_rx=a.learn_rx, monitor_rx=a.monitor_rx,
                    learn_fps=c.p.learn_fps, mac_table_size=table, max_addresses=most,
                    controller_service_ns=a.service_ns, trials=len(trials), note=note)


def learning_rate(c: Any) -> dict:
    """RFC 2889 s. 5.8: for `addresses` addresses, the highest learning rate
    (frames/s) with no test frame flooded: first --learn-rate-max-fps, then
    a binary search below it to --learn-rate-resolution-fps."""
    n = int(c.case.params["addresses"])
    top, res = c.p.learn_rate_max_fps, c.p.learn_rate_resolution_fps
    trials: list[AddressTrial] = []
    r = search.throughput(_searcher(c, lambda pct: n, lambda pct: top * pct / 100.0, trials),
                          0.0, 100.0 * res / top, tick=c.tick)
    rate = (r.value or 0.0) * top / 100.0
    a = _shown(trials, rate, "rate_fps")
    return c.result(topology="address", addresses=n, learning_rate_fps=rate,
                    result=search_result(r.value), test_tx=a.test_tx, learn_rx=a.learn_rx,
                    monitor_rx=a.monitor_rx, mac_table_size=mac_table_size(c.bed),
                    controller_service_ns=a.service_ns, rate_max_fps=top, trials=len(trials),
                    note=learning_path(c.bed))
