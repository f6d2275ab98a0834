"""What the Mininet runs of N:1 experiments share: link rates and sizes
checked, the N:1 topology (senders h1..hN, the receiver on port N + 1),
and the warm-up ping through the DUT."""

from __future__ import annotations

import math
import subprocess
from typing import Any, Optional

from ...topologies import builders
from ...topologies.spec import Topology, from_dict, parse_rate
from ..params import ParamError


def check_rate(text: str, flag: str) -> None:
    """A link rate the topology accepts (spec.parse_rate), else ParamError."""
    try:
        parse_rate(text, flag)
    except ValueError as e:
        raise ParamError(str(e)) from None


def check_kinds(kinds: tuple[str, ...]) -> None:
    """One or more switch kinds, each p4scope or bmv2."""
    bad = [k for k in kinds if k not in ("p4scope", "bmv2")]
    if bad or not kinds:
        raise ParamError(f"switch kinds {list(kinds)}: p4scope and/or bmv2")


def parse_size(text: str, option: str = "size") -> int:
    """"256K" -> 262144, "1M" -> 1048576, "1500" -> 1500 (powers of 2);
    errors name `option`."""
    t = str(text).strip().upper().removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    num = t[:-1] if t[-1:] in "KMG" else t
    try:
        v = float(num) * mult
    except ValueError:
        raise ParamError(f"{option} {text!r}: not a size (e.g. 256K, 1M, 65536)") from None
    if not math.isfinite(v) or v < 1 or v != int(v):
        raise ParamError(f"{option} {text!r}: not a whole number of bytes >= 1")
    return int(v)


def size_label(n: int) -> str:
    for unit, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % m == 0:
            return f"{n // m}{unit}"
    return str(n)


def incast_topology(senders: int, link_bw: str, queue_packets: Optional[int],
                    receiver_bw: Optional[str] = None) -> Topology:
    """builders.incast (senders h1..hN, receiver on the last port) with the
    receiver link's queue set to `queue_packets` (None: the kernel's)."""
    doc = builders.incast(senders, bw=link_bw, receiver_bw=receiver_bw).to_dict()
    if queue_packets is not None:
        doc["links"][-1]["queue"] = queue_packets
    return from_dict(doc, doc["name"])


class NTo1Shape:
    """For the parameters of an N:1 run on incast_topology: senders h1..hN
    on ports 1..N (the class's `senders`), the receiver on port N + 1, every
    link at `link_bw`, the receiver link's queue `queue_packets`."""

    @property
    def egress(self) -> int:
        return self.senders + 1

    @property
    def rate_bps(self) -> int:
        return parse_rate(self.link_bw, "bw")

    def topology(self) -> Topology:
        return incast_topology(self.senders, self.link_bw, self.queue_packets)


def ping_receiver(tb: Any, senders: int, receiver: str) -> None:
    """Two pings from each of h1..h`senders` to host `receiver`, all at
    once; RuntimeError naming the senders that got no answer."""
    rcv = tb.host(receiver)
    procs = [tb.host(f"h{i}").popen(["ping", "-c", "2", "-i", "0.2", "-W", "2", rcv.IP()],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for i in range(1, senders + 1)]
    failed = [i + 1 for i, pr in enumerate(procs) if pr.wait(timeout=30) != 0]
    if failed:
        raise RuntimeError(f"senders {failed} cannot reach the receiver through the DUT")
