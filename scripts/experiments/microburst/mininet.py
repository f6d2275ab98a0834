"""Microburst absorption in Mininet (seed 000's 2:1 method, seed 001's
4:1), at rates the software switch sustains, into the virtual-time runs'
`microburst` and `streams` tables.

Per case: k senders each send a burst of N frames of one size at their
link's line rate (htb), started together, to one receiver; every link has
the same rate, so the receiver's link drains at 1/k of the arrival rate.
Tolly's formula gives what the path buffered: forwarded - N. Here the
frames wait in the receiver link's qdisc (`queue_packets`, a FIFO, plus the
frames htb lets through at once after an idle spell: its burst
allowance); the expected capacity is min((k - 1) N, that), and N is chosen so the burst overflows it
(1.5 x, as the virtual-time runs do) plus what a sender sends in `skew_s`:
the senders are separate processes, started within tens of milliseconds
of each other, and Tolly's figure holds as long as the bursts overlap by
more than the queue. The qdisc's backlog, sampled every 5 ms during the
burst, stands in for the ground-truth peak. Measured here: with 1518-byte
frames the figure is within ~10 % of the configured capacity, small
frames buffer more (the software switch's socket queues), and the DUT's
own queue depth does not change it (set_queue_depth 8..200: the p4scope
switch forwards to the link as fast as frames come).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional

import pandas as pd

from . import plan as mbx
from ..params import combination_name
from ..mininet.driver import EmuResult, TestbedPool, available_kinds, execute
from ..mininet.testbed import Testbed
from ..runner import Case
from ..seedcsv import derive_csvs
from ...topologies import traffic
from ...topologies.qdisc import QdiscSampler
from ...topologies.tc import htb_burst_bytes
from ..mininet.shape import NTo1Shape, check_kinds, check_rate
from ..params import ParamError


@dataclass(frozen=True)
class MnBurstParams(NTo1Shape):
    sizes_2to1: tuple[int, ...] = (256, 512, 1518)
    sizes_4to1: tuple[int, ...] = (512, 1518)
    link_bw: str = "10M"
    queue_packets: int = 100
    burst_frames: Optional[int] = None
    margin: float = 1.5
    skew_s: float = 0.1
    kinds: tuple[str, ...] = ("p4scope",)

    def check(self) -> "MnBurstParams":
        if not self.sizes_2to1 and not self.sizes_4to1:
            raise ParamError("no frame sizes")
        for s in (*self.sizes_2to1, *self.sizes_4to1):
            if not 64 <= s <= 1518:
                raise ParamError(f"frame size {s}: 64..1518 (host links carry MTU 1500)")
        check_rate(self.link_bw, "--link-bw")
        if not 4 <= self.queue_packets <= 10_000:
            raise ParamError(f"--queue-packets {self.queue_packets}: 4..10000")
        if self.burst_frames is not None and not 1 <= self.burst_frames <= 1_000_000:
            raise ParamError(f"--burst-frames {self.burst_frames}: 1..1000000")
        if not 0 <= self.skew_s <= 5:
            raise ParamError("skew_s: 0..5 s")
        if not 1.0 < self.margin <= 10:
            raise ParamError("--margin: above 1 (bursts must overflow the queue)")
        check_kinds(self.kinds)
        return self

    @property
    def senders(self) -> int:
        return 4 if self.sizes_4to1 else 2


    def capacity_frames(self, size: int) -> int:
        """What the path is configured to hold: the receiver link's queue
        plus its htb burst allowance (tc.htb_burst_bytes) in frames."""
        return self.queue_packets + math.ceil(htb_burst_bytes(self.rate_bps) / (size - 4))

    def frames(self, k: int, size: int) -> int:
        """N: each of k bursts long enough to overflow the queue, also when
        the senders start `skew_s` apart."""
        if self.burst_frames is not None:
            return self.burst_frames
        fps = line_fps(self.rate_bps, size)
        return math.ceil(self.margin * self.queue_packets / (k - 1) + self.skew_s * fps)


def line_fps(rate_bps: float, size: int) -> float:
    """Frames/s that fill a link shaped with htb: htb counts the frame as
    the kernel sends it (no FCS, no preamble or gap), so the senders send
    at exactly the rate the receiver's link drains, as Tolly's formula
    assumes (at layer 1 they would be slower than the drain)."""
    return rate_bps / ((size - 4) * 8)


def plan(p: MnBurstParams, kinds: Optional[tuple[str, ...]] = None,
         how: str = "Mininet") -> list[Case]:
    """The cases, per switch kind (`kinds`: the DUTs measured, default the
    parameters' reference-DUT kinds), scenario and size; `how` ends each label."""
    p.check()
    cases = []
    for kind in kinds or p.kinds:
        for scenario, k, sizes in (("2:1", 2, p.sizes_2to1), ("4:1", 4, p.sizes_4to1)):
            ports = tuple(range(1, k + 1))
            name = combination_name(ports)
            for size in sizes:
                n = p.frames(k, size)
                cap = p.capacity_frames(size)
                bp = mbx.BurstPlan(scenario, name, ports, p.egress, size, kind, n, size - 4,
                                   min((k - 1) * n, cap), float(cap * (size - 4)),
                                   float(p.rate_bps))
                label = f"microburst {scenario} {size} B via {kind} ({k}x{n} frames, {how})"
                cases.append(Case(mbx.case_id(scenario, name, size, kind), mbx.EXPERIMENT, label,
                                  mbx.case_params(bp), weight=float(k * n * size)))
    return cases


def params_dict(p: MnBurstParams) -> dict[str, Any]:
    d = asdict(p)
    d["rate_bps"] = p.rate_bps
    return d


def burst_through(tb: Any, bp: mbx.BurstPlan, qdisc_ifs: list[str],
                  tick: Callable[[float], None] = lambda f: None,
                  period_s: float = 0.005) -> tuple[pd.DataFrame, list]:
    """One burst case's traffic on a started testbed (`tb.host(name)`):
    the senders' bursts, all at once, what the receiver got per sender
    (the sinks), and the qdiscs of `qdisc_ifs` sampled every `period_s`
    meanwhile."""
    rcv = tb.host(f"h{bp.egress}")
    fps = line_fps(bp.rate_bps, bp.frame_size)
    burst_s = bp.burst_frames / fps
    rx = traffic.start_receiver(rcv, f"h{bp.egress}-eth0", idle=max(0.5, 3 * burst_s),
                          interval_ms=10)
    sent: dict[int, dict] = {}
    errors: list[str] = []

    def burst(port: int) -> None:
        try:
            sent[port] = traffic.send(tb.host(f"h{port}"), f"h{port}-eth0", [traffic.Stream(
                port, dst=rcv.MAC(), ip_dst=rcv.IP(), size=bp.frame_size, rate=fps,
                count=bp.burst_frames)], timeout=30 + 3 * burst_s, batch=16)
        except Exception as e:  # reported with the case
            errors.append(f"h{port}: {e}")

    threads = [threading.Thread(target=burst, args=(port,)) for port in bp.ingress]
    with QdiscSampler(qdisc_ifs, period_s) as qs:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60 + 3 * burst_s)
        tick(0.7)
        got = rx.result(timeout=30 + 3 * burst_s)
    if errors:
        raise RuntimeError("; ".join(errors))
    by_id = {s["id"]: s for s in got.get("streams", [])}
    sinks = pd.DataFrame([{
        "ingress_port": port, "tx_frames": sent[port]["streams"][0]["tx_packets"],
        "rx_frames": by_id.get(port, {}).get("unique", 0),
        "rx_bytes": by_id.get(port, {}).get("rx_bytes", 0)} for port in bp.ingress])
    mbx.sent_check(bp, sinks)
    return sinks, list(qs.samples)


def measure(p: MnBurstParams, case: Case, tick: Callable[[float], None], tb: Any) -> dict:
    bp = mbx.plan_of(case)
    sinks, samples = burst_through(tb, bp, [f"{tb.name('s1')}-eth{bp.egress}"], tick)
    peak = max((q.backlog_bytes for q in samples), default=0)
    row = mbx.result_row(case, bp, sinks, float(peak))
    row["mode"] = "mininet"
    row["link_mbps"] = bp.rate_bps / 1e6
    row["queue_packets"] = p.queue_packets
    row["peak_link_backlog_frames"] = max((q.qlen for q in samples), default=0)
    streams = sinks.assign(case_id=case.case_id, experiment=mbx.EXPERIMENT, profile=bp.profile,
                           scenario=bp.scenario, combination=bp.combination,
                           frame_size=bp.frame_size)
    time.sleep(0.2)  # the queue is empty before the next burst
    return {"microburst": pd.DataFrame([row]), "streams": streams}


# ----- the run --------------------------------------------------------------------

def measure_case(p: MnBurstParams, case: Case, tick: Callable[[float], None],
            pool: TestbedPool) -> dict[str, pd.DataFrame]:
    tb = pool.get(case.params["profile"])
    if pool.fresh:
        rcv = tb.host(f"h{p.egress}")
        for i in range(1, p.senders + 1):
            out = tb.host(f"h{i}").cmd(f"ping -c 2 -i 0.2 -W 2 {rcv.IP()}")
            if " 0% packet loss" not in out and " 50% packet loss" not in out:
                raise RuntimeError(f"h{i} cannot reach the receiver through the DUT: {out}")
    return measure(p, case, tick, tb)


def execute_microburst(p: MnBurstParams, results: Path, run_id: Optional[str],
                       progress: bool, report: bool,
                       echo: Callable[[str], None] = print) -> EmuResult:
    p.check()
    kinds, skipped = available_kinds(p.kinds, echo)
    runnable = MnBurstParams(**{**p.__dict__, "kinds": kinds}) if kinds else p
    cases = plan(runnable) if kinds else []
    meta: dict[str, Any] = {
        "parameters": {"microburst_mininet": params_dict(p)}, "skipped": skipped,
        "topology": p.topology().to_dict(),
        "method": ("seed 000 (2:1) and seed 001 (4:1): k senders each burst N frames at line "
                   "rate to one port; buffered = forwarded - N (Tolly)"),
    }
    return execute("microburst-mininet", cases, meta, results, run_id,
                   lambda kind, d, dut: Testbed(runnable.topology(), d, dut, kind=kind),
                   lambda c, tick, pool: measure_case(runnable, c, tick, pool),
                   derive_csvs, progress, report, echo)
