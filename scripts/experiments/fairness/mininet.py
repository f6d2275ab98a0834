"""Fairness N:1 in Mininet (seed 000's Table 3 method, at rates this
machine sustains), into the same tables as the virtual-time runs.

Per case: N senders (h1..hN on switch ports 1..N) each offer `load` of
their link's line rate of the Tolly iMIX (p4scope-trafgen, UDP with
sequence numbers) to the receiver on port R for `duration_s`; every link
has the same rate, so the receiver's link is oversubscribed N:1. Over the
steady-state window (after `warmup_s`) the receiver's per-interval counts
give each stream's layer-1 rate and share (the same rows as
experiments.fairness: streams, fairness, instrument_shares), and the DUT
instrument's tel_delivered counters, read over P4Runtime at the window's
ends, give each ingress port's share as the switch saw it.

What arbitrates here is the software switch's receive loop and the
receiver link's queue (a FIFO), not a hardware arbiter: the figures say
how fair the whole path is.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional

import pandas as pd

from ...control.apps.telemetry import Telemetry
from . import plan as fx
from ..params import check_mix_weights, check_number, combination_name
from ..mininet.driver import EmuResult, TestbedPool, available_kinds, execute
from ..mininet.shape import ping_receiver
from ..mininet.testbed import Testbed
from ..runner import Case
from ..seedcsv import derive_csvs
from ...topologies import traffic
from ..mininet.shape import NTo1Shape, check_kinds, check_rate
from ..linerate import TOLLY_IMIX
from ..params import ParamError

TOLLY_MIX = tuple((size, float(w)) for size, w in TOLLY_IMIX.items())


@dataclass(frozen=True)
class MnFairnessParams(NTo1Shape):
    n: tuple[int, ...] = (3, 6, 16)
    link_bw: str = "10M"
    load: float = 1.0
    duration_s: float = 4.0
    warmup_s: float = 1.5
    queue_packets: Optional[int] = 200
    mix: tuple[tuple[int, float], ...] = TOLLY_MIX
    kinds: tuple[str, ...] = ("p4scope",)
    interval_ms: float = 100.0

    def check(self) -> "MnFairnessParams":
        if not self.n or any(not 2 <= k <= 32 for k in self.n):
            raise ParamError(f"--n {list(self.n)}: numbers of senders in 2..32")
        check_rate(self.link_bw, "--link-bw")
        check_number(self.load, 0.05, 1.0, "--load", where="a fraction of line rate")
        check_number(self.duration_s, 0, 120, "--duration-s", above=True, unit="s")
        check_number(self.warmup_s, 0, 120, "--warmup-s", above=True, unit="s")
        if self.warmup_s >= self.duration_s:
            raise ParamError("--warmup-s must be below --duration-s")
        if self.queue_packets is not None and not 1 <= self.queue_packets <= 100_000:
            raise ParamError(f"--queue-packets {self.queue_packets}: 0 (the kernel's default) "
                             "or 1..100000")
        if self.duration_s - self.warmup_s < 5 * self.interval_ms / 1e3:
            raise ParamError("the window (duration - warmup) must span 5 intervals or more")
        if any(not 64 <= s <= 9216 for s, _ in self.mix):
            raise ParamError("--mix: frame sizes 64..9216")
        check_mix_weights(self.mix)
        check_kinds(self.kinds)
        return self

    @property
    def senders(self) -> int:
        return max(self.n)



def plan(p: MnFairnessParams) -> list[Case]:
    p.check()
    cases = []
    for kind in p.kinds:
        for n in p.n:
            ports = tuple(range(1, n + 1))
            ip = fx.IncastPlan(ports, p.egress, kind, tuple(p.mix), int(p.duration_s * 1e9),
                               int(p.warmup_s * 1e9), float(p.rate_bps), p.load,
                               tuple([1.0 / n] * n))
            label = f"fairness {n}:1 ports {combination_name(ports)} via {kind} (Mininet)"
            cases.append(Case(fx.case_id(ports, kind), fx.EXPERIMENT, label, fx.case_params(ip),
                              weight=n * p.duration_s))
    return cases


def params_dict(p: MnFairnessParams) -> dict[str, Any]:
    d = asdict(p)
    d["mix"] = {s: w for s, w in p.mix}
    d["rate_bps"] = p.rate_bps
    return d


def _window(rx: dict, streams: list[int], t0_ns: int, p: MnFairnessParams) -> pd.DataFrame:
    """Frames and bytes each stream delivered in [t0 + warmup, t0 + duration)."""
    origin, step = rx["origin_ns"], rx["interval_ns"]
    lo, hi = t0_ns + int(p.warmup_s * 1e9), t0_ns + int(p.duration_s * 1e9)
    by_id = {s["id"]: s for s in rx.get("streams", [])}
    rows = []
    for sid in streams:
        s = by_id.get(sid, {})
        frames = bytes_ = 0
        for k, (n, b) in enumerate(zip(s.get("series_packets", []), s.get("series_bytes", []))):
            start = origin + k * step
            if start >= lo and start + step <= hi:
                frames, bytes_ = frames + n, bytes_ + b
        rows.append({"ingress_port": sid, "rx_frames": frames, "rx_bytes": bytes_,
                     "rx_frames_total": s.get("rx_packets", 0)})
    return pd.DataFrame(rows)


def trafgen_mix(mix: tuple[tuple[int, float], ...]) -> dict[int, int]:
    """The generator takes whole weights: 55.0 -> 55; 0.55 -> 55 (x100)."""
    scale = 1 if all(float(w).is_integer() for _, w in mix) else 100
    return {int(s): max(1, int(round(w * scale))) for s, w in mix}


def window_seconds(p: MnFairnessParams) -> float:
    """The whole intervals inside the window (what _window counts)."""
    step = p.interval_ms / 1e3
    return int((p.duration_s - p.warmup_s) / step) * step


def measure(p: MnFairnessParams, case: Case, tick: Callable[[float], None], tb: Any) -> dict:
    ip = fx.plan_of(case)
    sw = tb.name("s1")
    rcv = tb.host(f"h{p.egress}")
    rx = traffic.start_receiver(rcv, f"h{p.egress}-eth0", duration=p.duration_s + 2.0,
                          interval_ms=p.interval_ms)
    mix = trafgen_mix(p.mix)
    sent: dict[int, dict] = {}
    errors: list[str] = []

    def blast(port: int) -> None:
        h = tb.host(f"h{port}")
        try:
            sent[port] = traffic.send(h, f"h{port}-eth0", [traffic.Stream(
                port, dst=rcv.MAC(), ip_dst=rcv.IP(), size=mix, rate=f"{p.load * 100:g}%",
                line=f"{p.rate_bps}bps")], duration=p.duration_s)
        except Exception as e:  # reported below, with the case
            errors.append(f"h{port}: {e}")

    tel = Telemetry(tb.fabric.switch(sw))
    t0 = time.time_ns()
    threads = [threading.Thread(target=blast, args=(port,)) for port in ip.ingress]
    for t in threads:
        t.start()
    time.sleep(max(0.0, p.warmup_s - (time.time_ns() - t0) / 1e9))
    d0 = tel.pairs([ip.egress], ip.ingress)
    tick(p.warmup_s / p.duration_s)
    time.sleep(max(0.0, p.duration_s - (time.time_ns() - t0) / 1e9))
    d1 = tel.pairs([ip.egress], ip.ingress)
    for t in threads:
        t.join(timeout=p.duration_s + 60)
    got = rx.result(timeout=10)
    if errors:
        raise RuntimeError("; ".join(errors))
    win = _window(got, list(ip.ingress), t0, p)
    win["tx_frames"] = [sent[port]["streams"][0]["tx_packets"] for port in ip.ingress]
    # the plan's window is the configured one; the counted intervals may be a little shorter
    wip = fx.IncastPlan(ip.ingress, ip.egress, ip.profile, ip.mix,
                        int((p.warmup_s + window_seconds(p)) * 1e9), ip.warmup_ns, ip.rate_bps,
                        ip.load, ip.expected_shares)
    streams = fx.stream_rows(case, wip, win)
    delivered = {port: (d1[(ip.egress, port)].bytes - d0[(ip.egress, port)].bytes,
                        d1[(ip.egress, port)].packets - d0[(ip.egress, port)].packets)
                 for port in ip.ingress}
    inst = fx.instrument_rows(case, wip, delivered, streams)
    row = fx.case_row(case, wip, streams, inst)
    row["mode"] = "mininet"
    row["link_mbps"] = p.rate_bps / 1e6
    return {"fairness": pd.DataFrame([row]), "streams": streams, "instrument_shares": inst}


# ----- the run --------------------------------------------------------------------

def measure_case(p: MnFairnessParams, case: Case, tick: Callable[[float], None],
            pool: TestbedPool) -> dict[str, pd.DataFrame]:
    tb = pool.get(case.params["profile"])
    if pool.fresh:
        warm_up(tb, p)
    return measure(p, case, tick, tb)


def warm_up(tb: Testbed, p: MnFairnessParams) -> None:
    """ARP and learning before the first case: a ping from every sender."""
    ping_receiver(tb, p.senders, f"h{p.egress}")


def execute_fairness(p: MnFairnessParams, results: Path, run_id: Optional[str],
                     progress: bool, report: bool,
                     echo: Callable[[str], None] = print) -> EmuResult:
    p.check()
    kinds, skipped = available_kinds(p.kinds, echo)
    runnable = MnFairnessParams(**{**p.__dict__, "kinds": kinds}) if kinds else p
    cases = plan(runnable) if kinds else []
    meta: dict[str, Any] = {
        "parameters": {"fairness_mininet": params_dict(p)}, "skipped": skipped,
        "topology": p.topology().to_dict(),
        "method": ("seed 000 Table 3: N senders each offer line rate of the Tolly iMIX to one "
                   "receiver port; per-stream rate and share over the steady-state window"),
    }
    return execute("fairness-mininet", cases, meta, results, run_id,
                   lambda kind, d, dut: Testbed(runnable.topology(), d, dut, kind=kind),
                   lambda c, tick, pool: measure_case(runnable, c, tick, pool),
                   derive_csvs, progress, report, echo)
