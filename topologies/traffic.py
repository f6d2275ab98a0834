"""The real-time traffic generator and analyzer (p4scope-trafgen) from Python.

    rx = start_receiver(place_b, "h2-eth0", idle=1.0)
    tx = send(place_a, "h1-eth0", [Stream(1, dst=mac_b, ip_dst="10.0.0.2", rate="100Mbps",
                                          size={64: 7, 570: 4, 1518: 1})], duration=2)
    results = combine(tx, rx.result())
    results[0].loss_ratio, results[0].latency_ns["avg"]

A *place* says where a program runs: a Mininet host (``MininetHost``), a
named network namespace (``Netns``) or this one (``HERE``). The JSON
reports of the sender and the receiver are returned as dicts; combine()
joins them per stream into what a tester shows: offered and received
frames, loss (sent minus received, so tail loss counts), duplicates,
reordering, latency and its histogram, rates and a time series.

Conventions are the generator's (topologies/trafgen): frame sizes include
the 4-byte FCS; bit rates count 20 bytes of preamble and inter-frame gap
per frame.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

L1_OVERHEAD = 20
"""Bytes a frame takes on the wire beyond its own: preamble and start
delimiter (8) and the minimum inter-frame gap (12)."""
SizeLaw = Union[int, Sequence[int], dict[int, int], str]
IMIX_TOLLY = {64: 55, 78: 5, 576: 17, 1518: 23}
"""The iMIX of the Tolly fairness tests (seed 000): size -> weight."""


class TrafficError(RuntimeError):
    pass


def trafgen_path() -> str:
    """The p4scope-trafgen binary: $P4SCOPE_TRAFGEN, next to this Python
    (setup.sh installs it into .venv/bin), the Cargo workspace's build (in
    target/ at the repo root: setup.sh's profile, then `cargo build
    --release`), or PATH."""
    env = os.environ.get("P4SCOPE_TRAFGEN")
    cands = [env] if env else []
    cands.append(str(Path(sys.executable).parent / "p4scope-trafgen"))
    workspace_target = Path(__file__).resolve().parent.parent / "target"
    for profile in ("release-trafgen", "release"):
        cands.append(str(workspace_target / profile / "p4scope-trafgen"))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    found = shutil.which("p4scope-trafgen")
    if found:
        return found
    raise TrafficError("p4scope-trafgen is not built (scripts/setup.sh builds it)")


def size_arg(size: SizeLaw) -> str:
    """64 -> "64"; [64, 128] -> "list:64/128"; {64: 7, 1518: 1} -> "imix:64:7/1518:1"."""
    if isinstance(size, str):
        return size
    if isinstance(size, int):
        return str(size)
    if isinstance(size, dict):
        return "imix:" + "/".join(f"{s}:{w}" for s, w in size.items())
    return "list:" + "/".join(str(s) for s in size)


@dataclass
class Stream:
    """One stream of probe frames (see topologies/trafgen/src/stream.rs)."""
    id: int
    dst: str = "ff:ff:ff:ff:ff:ff"
    ip_dst: str = "10.0.0.2"
    ip_src: Optional[str] = None
    src: Optional[str] = None
    """Source MAC; None: the sending interface's."""
    size: SizeLaw = 64
    rate: Union[str, float] = "max"
    """"max", "100Mbps", "1.5Mpps", "50%" (with line), or a number of frames/s."""
    line: Optional[str] = None
    burst: int = 1
    count: Optional[int] = None
    start: float = 0.0
    duration: Optional[float] = None
    sport: int = 49152
    sport_span: int = 1
    src_span: Optional[int] = None
    """Source MACs used in turn from `src` (address learning tests)."""
    ip_src_span: Optional[int] = None
    ip_dst_span: Optional[int] = None
    dport: int = 7053
    dscp: int = 0
    ttl: int = 64
    proto: str = "udp"

    def spec(self) -> str:
        rate = self.rate if isinstance(self.rate, str) else f"{float(self.rate):g}pps"
        kv: list[tuple[str, Any]] = [
            ("id", self.id), ("dst", self.dst), ("ip_dst", self.ip_dst), ("ip_src", self.ip_src),
            ("src", self.src), ("size", size_arg(self.size)), ("rate", rate), ("line", self.line),
            ("burst", self.burst), ("count", self.count), ("start", self.start),
            ("duration", self.duration), ("sport", self.sport), ("sport_span", self.sport_span),
            ("dport", self.dport), ("dscp", self.dscp), ("ttl", self.ttl), ("proto", self.proto),
            ("src_span", self.src_span), ("ip_src_span", self.ip_src_span),
            ("ip_dst_span", self.ip_dst_span),
        ]
        return ",".join(f"{k}={v}" for k, v in kv if v is not None)


# ---------------------------------------------------------------- places

class Place:
    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen:
        raise NotImplementedError


class _Here(Place):
    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen:
        return subprocess.Popen(argv, **kw)


HERE = _Here()


@dataclass
class Netns(Place):
    """A named network namespace (`ip netns`)."""
    name: str

    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.name, *argv], **kw)


@dataclass
class MininetHost(Place):
    """A Mininet host: its popen() runs the program in the host's namespace."""
    host: Any

    def popen(self, argv: list[str], **kw: Any) -> subprocess.Popen:
        return self.host.popen(argv, **kw)


def place_of(x: Any) -> Place:
    if isinstance(x, Place):
        return x
    if hasattr(x, "popen") and hasattr(x, "cmd"):
        return MininetHost(x)
    if isinstance(x, str):
        return Netns(x)
    raise TypeError(f"not a place to run traffic from: {x!r}")


# ---------------------------------------------------------------- runs

def _parse(out: bytes, err: bytes, argv: list[str], code: int) -> dict:
    text = out.decode(errors="replace").strip()
    if code == 0 and text:
        try:
            return json.loads(text.splitlines()[-1])
        except json.JSONDecodeError:
            pass
    raise TrafficError(f"p4scope-trafgen failed (status {code}): {err.decode(errors='replace').strip()}"
                       f"\n  command: {' '.join(argv)}")


class Receiver:
    """A running analyzer; result() ends it (SIGTERM if it is still going)
    and returns its report."""

    def __init__(self, proc: subprocess.Popen, argv: list[str]) -> None:
        self.proc, self.argv = proc, argv
        self._err = b""

    def wait_ready(self, timeout: float) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        while b"ready" not in self._err:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise TrafficError(f"receiver not ready after {timeout} s: {self._err.decode()!r}")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 4096)
                if not chunk:
                    out, err = self.proc.communicate()
                    raise TrafficError(f"receiver failed: {(self._err + err).decode(errors='replace')}")
                self._err += chunk

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def result(self, timeout: float = 30.0) -> dict:
        """Waits up to `timeout` for the receiver to end by itself (duration,
        idle or count), then stops it, and returns its report."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            out, err = self.proc.communicate(timeout=10)
        return _parse(out, self._err + err, self.argv, self.proc.returncode)


def start_receiver(place: Any, iface: str, *, duration: Optional[float] = None,
                   idle: Optional[float] = None, count: Optional[int] = None,
                   interval_ms: float = 100.0, hist_us: Optional[Sequence[float]] = None,
                   ring_mb: int = 32, ready_timeout: float = 10.0) -> Receiver:
    """Starts the analyzer on `iface` and returns once it listens."""
    argv = [trafgen_path(), "recv", "--iface", iface, "--interval-ms", f"{interval_ms:g}",
            "--ring-mb", str(ring_mb)]
    for k, v in (("duration", duration), ("idle", idle), ("count", count)):
        if v is not None:
            argv += [f"--{k}", f"{v:g}" if isinstance(v, float) else str(v)]
    if hist_us:
        argv += ["--hist-us", ",".join(f"{e:g}" for e in hist_us)]
    p = place_of(place).popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r = Receiver(p, argv)
    r.wait_ready(ready_timeout)
    return r


def sender_argv(iface: str, streams: Sequence[Stream], duration: Optional[float] = None,
                batch: int = 64, seed: int = 1, qdisc_bypass: bool = False,
                max_lag_us: Optional[float] = None, spin_us: Optional[float] = None) -> list[str]:
    if not streams:
        raise ValueError("no streams")
    argv = [trafgen_path(), "send", "--iface", iface, "--batch", str(batch), "--seed", str(seed)]
    for s in streams:
        argv += ["--stream", s.spec()]
    if duration is not None:
        argv += ["--duration", f"{duration:g}"]
    if max_lag_us is not None:
        argv += ["--max-lag-us", f"{max_lag_us:g}"]
    if spin_us is not None:
        argv += ["--spin-us", f"{spin_us:g}"]
    if qdisc_bypass:
        argv.append("--qdisc-bypass")
    return argv


def send(place: Any, iface: str, streams: Sequence[Stream], duration: Optional[float] = None,
         timeout: Optional[float] = None, **kw: Any) -> dict:
    """Runs the generator to the end and returns its report."""
    argv = sender_argv(iface, streams, duration, **kw)
    p = place_of(place).popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    limit = timeout if timeout is not None else (duration or 60.0) + 30.0
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=10)
    return _parse(out, err, argv, p.returncode)


# ---------------------------------------------------------------- results

@dataclass
class StreamResult:
    id: int
    tx_packets: int
    tx_bytes: int
    rx_packets: int
    rx_bytes: int
    lost: int
    loss_ratio: float
    duplicates: int
    reordered: int
    late: int
    max_reorder_distance: int
    latency_ns: Optional[dict]
    """min, avg, max, stddev, jitter (mean |difference| of consecutive
    latencies), rfc3550_jitter, count; None without a received frame."""
    histogram: list[int]
    hist_edges_ns: list[int]
    """Bucket k counts latencies in [edges[k-1], edges[k]); the first
    bucket is below edges[0], the last at or above edges[-1]."""
    tx_pps: float
    rx_pps: float
    rx_bps_l1: float
    """Received rate in bit/s as a tester counts it ((size + 20) * 8)."""
    interval_ns: int
    series_packets: list[int] = field(repr=False)
    series_bytes: list[int] = field(repr=False)
    loss_runs: list[list[int]] = field(default_factory=list, repr=False)
    """Runs of frames still missing: [first sequence number, length,
    missing, send time (ns) of the frame received before the run, of the
    one after it] (0 before: the run starts the stream); frames lost after
    the last one received are not in a run (tx_packets tells them)."""

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _span_rate(n: int, first: int, last: int) -> float:
    return (n - 1) / ((last - first) / 1e9) if n > 1 and last > first else 0.0


def combine(sent: dict, received: dict) -> list[StreamResult]:
    """Joins a sender's and a receiver's reports per stream id."""
    rx = {s["id"]: s for s in received.get("streams", [])}
    out = []
    for t in sent.get("streams", []):
        r = rx.get(t["id"], {})
        unique = r.get("unique", 0)
        n_rx = r.get("rx_packets", 0)
        lost = max(t["tx_packets"] - unique, 0)
        rx_pps = _span_rate(n_rx, r.get("first_rx_ns", 0), r.get("last_rx_ns", 0))
        avg_frame = r.get("rx_bytes", 0) / n_rx if n_rx else 0.0
        out.append(StreamResult(
            id=t["id"], tx_packets=t["tx_packets"], tx_bytes=t["tx_bytes"],
            rx_packets=n_rx, rx_bytes=r.get("rx_bytes", 0), lost=lost,
            loss_ratio=lost / t["tx_packets"] if t["tx_packets"] else 0.0,
            duplicates=r.get("duplicates", 0), reordered=r.get("reordered", 0),
            late=r.get("late", 0), max_reorder_distance=r.get("max_reorder_distance", 0),
            latency_ns=r.get("latency_ns"), histogram=r.get("histogram", []),
            hist_edges_ns=received.get("hist_edges_ns", []),
            tx_pps=t.get("rate_pps", 0.0), rx_pps=rx_pps,
            rx_bps_l1=rx_pps * (avg_frame + L1_OVERHEAD) * 8,
            interval_ns=received.get("interval_ns", 0),
            series_packets=r.get("series_packets", []), series_bytes=r.get("series_bytes", []),
            loss_runs=r.get("loss_runs", [])))
    return out


def histogram_quantile(edges: Sequence[int], counts: Sequence[int], q: float) -> Optional[int]:
    """Upper bound (ns) of the bucket holding the q-quantile; None if empty
    or in the open last bucket."""
    total = sum(counts)
    if total == 0:
        return None
    need = q * total
    acc = 0
    for k, c in enumerate(counts):
        acc += c
        if acc >= need and c:
            return edges[k] if k < len(edges) else None
    return None
