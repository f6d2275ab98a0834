"""TCP incast in Mininet (seed 001): S senders x F flows of one size each to
one receiver through the reference DUT.

A case is one job: every flow is a TCP connection carrying `flow_bytes`
(incast_app.py), all starting at the same instant; the job completes when
the receiver has read every flow to its end. Measured per case:

* per flow: bytes, completion time (receiver's EOF minus the common
  start), first/last byte times, the sender's view;
* the aggregate rate into the receiver over time, as the receiving
  application reads it (bins of `bin_ms`) and as the switch port towards
  it transmits it (interface counters);
* alongside, the queues: the DUT instrument's interval maxima of the
  receiver port's queue (reports to the controller, put on the wall clock
  with the fabric's clock offsets), each sender's delivered bytes to the
  receiver port over time (tel_delivered, polled over P4Runtime), and
  the backlog and drops of the receiver link's qdisc, the queue that
  builds when the link is slower than the switch;
* TCP retransmissions of every sender (per-namespace /proc/net/snmp).

The topology shapes every host link with htb at `link_bw` (the seed's
100GbE scaled to what a software switch on this machine forwards); the
receiver link's queue holds `queue_packets`.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from ...control.apps.collector import Collector
from ...control.apps.telemetry import pair_index
from ..mininet.shape import (check_kinds, check_rate, incast_topology, ping_receiver,
                             size_label)
from ..params import ParamError, check_number
from ..runner import Case
from ...topologies.counters import CounterSampler
from ...topologies.qdisc import QdiscSampler
from ...topologies.spec import Topology, parse_rate

EXPERIMENT = "tcp-incast"
PORT = 5001
TEL_INTERVAL_LOG2_US = 13   # 8.192 ms intervals of the instrument
MAX_FLOW_BYTES = 64 << 30   # seed 001 went up to 10G


@dataclass(frozen=True)
class IncastParams:
    senders: int = 16
    flows: int = 16
    flow_bytes: tuple[int, ...] = (256 << 10,)
    link_bw: str = "100M"
    receiver_bw: Optional[str] = None
    queue_packets: Optional[int] = 200
    window_bytes: int = 256 << 10
    """Socket buffers of every flow (the seed's 256 KB TCP window)."""
    repeats: int = 1
    bin_ms: float = 10.0
    kinds: tuple[str, ...] = ("p4scope",)
    timeout_s: float = 300.0
    start_delay_s: float = 1.5

    def check(self) -> "IncastParams":
        if not 1 <= self.senders <= 64:
            raise ParamError(f"--senders {self.senders}: 1..64")
        if not 1 <= self.flows <= 64:
            raise ParamError(f"--flows {self.flows}: 1..64 per sender")
        if not self.flow_bytes or any(not 1 <= b <= MAX_FLOW_BYTES for b in self.flow_bytes):
            raise ParamError(f"--flow-bytes: one or more sizes of 1 byte..{size_label(MAX_FLOW_BYTES)}")
        for name, v in (("--link-bw", self.link_bw), ("--receiver-bw", self.receiver_bw)):
            if v is not None:
                check_rate(v, name)
        if self.queue_packets is not None and not 1 <= self.queue_packets <= 100_000:
            raise ParamError(f"--queue-packets {self.queue_packets}: 1..100000")
        if not 4096 <= self.window_bytes <= 64 << 20:
            raise ParamError(f"--window {self.window_bytes}: 4K..64M")
        if not 1 <= self.repeats <= 100:
            raise ParamError(f"--repeats {self.repeats}: 1..100")
        check_number(self.bin_ms, 1, 1000, "--bin-ms", unit="ms")
        check_kinds(self.kinds)
        return self

    @property
    def receiver(self) -> str:
        return f"h{self.senders + 1}"

    @property
    def receiver_port(self) -> int:
        return self.senders + 1

    @property
    def bottleneck_bps(self) -> int:
        return parse_rate(self.receiver_bw or self.link_bw, "bw")

    def topology(self) -> Topology:
        return incast_topology(self.senders, self.link_bw, self.queue_packets, self.receiver_bw)


def case_id(p: IncastParams, size: int, kind: str, rep: int) -> str:
    r = f"-r{rep + 1}" if p.repeats > 1 else ""
    return f"{EXPERIMENT}/{p.senders}x{p.flows}/{size_label(size)}{r}/{kind}"


def plan(p: IncastParams) -> list[Case]:
    p.check()
    cases = []
    for kind in p.kinds:
        for size in p.flow_bytes:
            for rep in range(p.repeats):
                total = p.senders * p.flows * size
                label = (f"tcp-incast {p.senders}x{p.flows} flows of {size_label(size)}B "
                         f"({size_label(total)}B) via {kind}")
                cases.append(Case(case_id(p, size, kind, rep), EXPERIMENT, label,
                                  {"kind": kind, "flow_bytes": size, "repeat": rep + 1,
                                   "senders": p.senders, "flows": p.flows},
                                  weight=float(total)))
    return cases


def params_dict(p: IncastParams) -> dict[str, Any]:
    d = asdict(p)
    d["flow_bytes"] = list(p.flow_bytes)
    d["kinds"] = list(p.kinds)
    d["bottleneck_bps"] = p.bottleneck_bps
    return d


# ----- one job ------------------------------------------------------------------------

def _app(*args: str) -> list[str]:
    return [sys.executable, "-m", "p4scope.experiments.tcp_incast.app", *args]


def _json_out(proc: subprocess.Popen, what: str, timeout: float) -> dict:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise RuntimeError(f"{what} did not finish within {timeout:.0f} s") from None
    lines = [l for l in out.decode(errors="replace").splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed (status {proc.returncode}): "
                           f"{err.decode(errors='replace').strip()[-800:]}")
    return json.loads(lines[-1])


def _wait_ready(proc: subprocess.Popen, what: str, timeout: float = 10.0) -> None:
    import os
    import select

    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    while b"ready" not in got:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise RuntimeError(f"{what} not ready: {got.decode(errors='replace')}")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                continue
            got += chunk


def warm_up(tb: Any, p: IncastParams) -> None:
    """One ping from every sender to the receiver: ARP is resolved and the
    controller has learnt every MAC before a job starts."""
    ping_receiver(tb, p.senders, p.receiver)


@dataclass
class JobRecord:
    start_at: int
    receiver: dict
    senders: list[dict]
    port_series: list[tuple[float, float]]
    """(wall-clock s, bit/s) of the switch port towards the receiver."""
    qdisc: list[Any]
    collector: Collector
    offsets: dict[int, int]
    pair_polls: list[Any] = field(default_factory=list)


def new_collector() -> Collector:
    """A collector stamping counter polls with the wall clock, as the
    hosts' applications do."""
    return Collector(clock=time.time_ns)


def run_job(tb: Any, p: IncastParams, size: int, collector: Collector,
            tick: Callable[[float], None] = lambda f: None) -> JobRecord:
    """Runs one incast job on a started testbed and returns what it saw
    (`collector`: from new_collector())."""
    sw = tb.name("s1")
    rcv = tb.host(p.receiver)
    port_if = f"{sw}-eth{p.receiver_port}"
    fabric = tb.fabric
    fabric.collector = collector
    fabric.arrivals.clear()
    n = p.senders * p.flows
    expect_s = n * size * 8 / p.bottleneck_bps
    timeout = min(p.timeout_s, max(60.0, 20 * expect_s))
    recv = rcv.popen(_app("recv", "--port", str(PORT), "--flows", str(n), "--bin-ms",
                          f"{p.bin_ms:g}", "--rcvbuf", str(p.window_bytes), "--idle", "20"),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    senders: list[subprocess.Popen] = []
    try:
        _wait_ready(recv, "incast receiver")
        start_at = time.time_ns() + int((p.start_delay_s + 0.02 * p.senders) * 1e9)
        for i in range(1, p.senders + 1):
            senders.append(tb.host(f"h{i}").popen(
                _app("send", "--dst", rcv.IP(), "--port", str(PORT), "--sender", str(i),
                     "--flows", str(p.flows), "--bytes", str(size), "--start-at", str(start_at),
                     "--sndbuf", str(p.window_bytes), "--timeout", f"{timeout:g}"),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        pairs = [pair_index(p.receiver_port, i) for i in range(1, p.senders + 1)]
        t_wall0 = time.time()
        with CounterSampler([port_if], 0.01) as cs, QdiscSampler([port_if], 0.02) as qs:
            collector.poll_every(fabric.switch(sw), {"tel_delivered": pairs}, 0.1)
            try:
                tick(0.1)
                sent = [_json_out(s, f"incast sender h{i + 1}", timeout + 30)
                        for i, s in enumerate(senders)]
                tick(0.9)
                got = _json_out(recv, "incast receiver", 60)
            finally:
                collector.stop()
        series = [(t_wall0 + t, bps) for t, bps in cs.series.rates(port_if)]
        return JobRecord(start_at, got, sent, series, list(qs.samples), collector,
                         fabric.clock_offsets())
    finally:
        for pr in [recv, *senders]:
            if pr.poll() is None:
                pr.kill()
                pr.wait()


# ----- tables ------------------------------------------------------------------------

def flow_table(case: Case, job: JobRecord) -> pd.DataFrame:
    sent = {(s["sender"], f["flow"]): (s, f) for s in job.senders for f in s["flows"]}
    rows = []
    for f in job.receiver["flows"]:
        s, sf = sent.get((f["sender"], f["flow"]), ({}, {}))
        end = f["end_ns"] if f["complete"] else 0
        rows.append({
            "case_id": case.case_id, "sender": f["sender"], "flow": f["flow"],
            "bytes_expected": f["expected"], "bytes_received": f["bytes"],
            "complete": bool(f["complete"] and f["bytes"] >= f["expected"] > 0),
            "fct_s": (end - job.start_at) / 1e9 if end else math.nan,
            "first_byte_s": (f["first_ns"] - job.start_at) / 1e9 if f["first_ns"] else math.nan,
            "last_byte_s": (f["last_ns"] - job.start_at) / 1e9 if f["last_ns"] else math.nan,
            "sender_sent_s": (sf.get("sent_ns", 0) - job.start_at) / 1e9 if sf.get("sent_ns") else math.nan,
            "sender_done_s": (sf.get("done_ns", 0) - job.start_at) / 1e9 if sf.get("done_ns") else math.nan,
        })
    df = pd.DataFrame(rows)
    df["goodput_mbps"] = df["bytes_received"] * 8 / df["fct_s"] / 1e6
    return df.sort_values(["sender", "flow"]).reset_index(drop=True)


def rate_table(case: Case, job: JobRecord) -> pd.DataFrame:
    """Aggregate rate over time from the job's start: the receiving
    application's bins and the switch port's counters."""
    r = job.receiver
    bin_s = r["bin_ns"] / 1e9
    t0 = (r["first_bin_ns"] - job.start_at) / 1e9
    app = pd.DataFrame({"case_id": case.case_id, "source": "receiver",
                        "t_s": [t0 + (i + 0.5) * bin_s for i in range(len(r["bins"]))],
                        "bps": [b * 8 / bin_s for b in r["bins"]]})
    port = pd.DataFrame({"case_id": case.case_id, "source": "switch port",
                         "t_s": [t - job.start_at / 1e9 for t, _ in job.port_series],
                         "bps": [b for _, b in job.port_series]})
    df = pd.concat([app, port], ignore_index=True)
    return df


def queue_tables(case: Case, job: JobRecord, receiver_port: int) -> dict[str, pd.DataFrame]:
    """The instrument's reports and counters, and the link's qdisc, on the
    job's time axis (seconds from the common start)."""
    col, offs = job.collector, job.offsets
    span_ns = (1 << TEL_INTERVAL_LOG2_US) * 1000
    rows = []
    for iv in col.intervals:
        off = offs.get(iv.node_id)
        if off is None:
            continue
        t_ns = iv.interval * span_ns + off
        rows.append({"case_id": case.case_id, "t_ns": t_ns - job.start_at,
                     "t_s": (t_ns - job.start_at) / 1e9, "egress_port": iv.port, "queue": 0,
                     "kind": "interval_max", "depth_bytes": iv.max_bytes,
                     "depth_frames": iv.max_pkts, "ingress_port": -1})
    for s in col.samples:
        off = offs.get(s.node_id)
        if off is None:
            continue
        t_ns = s.egress_ns + off
        rows.append({"case_id": case.case_id, "t_ns": t_ns - job.start_at,
                     "t_s": (t_ns - job.start_at) / 1e9, "egress_port": s.egress_port,
                     "queue": s.queue_id, "kind": "burst_pkt", "depth_bytes": s.held_bytes,
                     "depth_frames": s.held_pkts, "ingress_port": s.ingress_port})
    series = pd.DataFrame(rows, columns=["case_id", "t_ns", "t_s", "egress_port", "queue", "kind",
                                         "depth_bytes", "depth_frames", "ingress_port"])
    link = pd.DataFrame([{"case_id": case.case_id, "t_s": (q.time_ns - job.start_at) / 1e9,
                          "ifname": q.ifname, "backlog_bytes": q.backlog_bytes, "qlen": q.qlen,
                          "drops": q.drops, "sent_packets": q.sent_packets} for q in job.qdisc])
    pairs = []
    for c in col.counters:
        if c.counter != "tel_delivered":
            continue
        pairs.append({"case_id": case.case_id, "t_s": (c.time_ns - job.start_at) / 1e9,
                      "egress_port": c.index >> 6, "ingress_port": c.index & 63,
                      "packets": c.packets, "bytes": c.bytes})
    delivered = pd.DataFrame(pairs)
    if not delivered.empty:
        delivered = delivered[delivered["egress_port"] == receiver_port]
        delivered = _rates(delivered)
    return {"instrument_series": series, "link_queue": link, "instrument_delivered": delivered}


def _rates(d: pd.DataFrame) -> pd.DataFrame:
    """Adds per-interval bit/s to cumulative counter polls (per ingress port)."""
    out = []
    for _, g in d.sort_values("t_s").groupby("ingress_port"):
        g = g.copy()
        dt = g["t_s"].diff()
        g["bps"] = (g["bytes"].diff() * 8 / dt).where(dt > 0)
        out.append(g)
    return pd.concat(out, ignore_index=True) if out else d


def job_row(case: Case, p: IncastParams, size: int, kind: str, flows: pd.DataFrame,
            rates: pd.DataFrame, job: JobRecord, links: pd.DataFrame) -> dict[str, Any]:
    fct = flows["fct_s"].to_numpy(float)
    done = flows["complete"].to_numpy(bool)
    app = rates[rates["source"] == "receiver"]
    busy = app[app["bps"] > 0]
    total = int(flows["bytes_received"].sum())
    jct = float(np.nanmax(fct)) if done.all() and len(fct) else math.nan
    retrans = sum(max(s.get("retransmits", 0), 0) for s in job.senders)
    drops = int(links["drops"].max() - links["drops"].min()) if not links.empty else 0
    return {
        "case_id": case.case_id, "experiment": EXPERIMENT, "switch": kind,
        "senders": p.senders, "flows_per_sender": p.flows, "flows": len(flows),
        "flow_bytes": size, "total_bytes": total, "flows_complete": int(done.sum()),
        "job_completion_s": jct,
        "fct_min_s": float(np.nanmin(fct)) if len(fct) else math.nan,
        "fct_median_s": float(np.nanmedian(fct)) if len(fct) else math.nan,
        "fct_p99_s": float(np.nanpercentile(fct, 99)) if np.isfinite(fct).any() else math.nan,
        "fct_max_s": float(np.nanmax(fct)) if np.isfinite(fct).any() else math.nan,
        "fct_spread": float(np.nanmax(fct) / np.nanmin(fct)) if np.isfinite(fct).any() else math.nan,
        "mean_rate_mbps": total * 8 / jct / 1e6 if jct and jct == jct else math.nan,
        "busy_mean_mbps": float(busy["bps"].mean() / 1e6) if not busy.empty else math.nan,
        "busy_min_mbps": float(busy["bps"].min() / 1e6) if not busy.empty else math.nan,
        "bottleneck_mbps": p.bottleneck_bps / 1e6,
        "utilization": (total * 8 / jct) / p.bottleneck_bps if jct and jct == jct else math.nan,
        "ideal_s": total * 8 / p.bottleneck_bps,
        "retransmits": retrans, "link_drops": drops,
        "link_backlog_max_bytes": int(links["backlog_bytes"].max()) if not links.empty else 0,
        "reports": len(job.collector.reports),
        "reports_lost": int(sum(job.collector.lost.values())),
    }
