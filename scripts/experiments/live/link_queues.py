"""The queues of a switch's links in Mininet, read while a run goes: per
switch port the backlog of its tc qdisc (bytes and packets), what it sent
and dropped, and its bursts.

A burst follows the instrument's rule (figures.find_bursts), with the
microburst runs' thresholds: it starts when the queue holds 10 % of what
it can hold (at least 2 packets) and ends when it holds less than half
that. Who built it: the bytes each ingress port had the DUT deliver to
that port meanwhile (the instrument's tel_delivered counters, from the
`dut` model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ...topologies.qdisc import read_qdiscs
from .switch_model import MAX_BURSTS, SwitchModel

KERNEL_QUEUE = 1000  # packets an htb class queues without a pfifo of its own (txqueuelen)
PERIOD_S = 0.02


@dataclass
class Link:
    """One switch port's link towards a host."""
    ifname: str
    port: int
    on: int  # packets: a burst starts
    off: int  # packets: it ends below this
    base: Optional[tuple[int, int]] = None  # (drops, sent) when the watch began
    burst: Optional[dict[str, Any]] = None  # the burst going on
    sent_at_start: int = 0
    bursts: list[dict[str, Any]] = field(default_factory=list)


def thresholds(queue_packets: Optional[int]) -> tuple[int, int]:
    """(start, end) of a burst in packets for a link queue of that size."""
    on = max(2, (queue_packets or KERNEL_QUEUE) // 10)
    return on, max(1, on // 2)


def links_of(topo: Any, switch: str) -> list[Link]:
    """The links of `switch` (its name in `topo`) with a shaped queue."""
    out = []
    for link in topo.links:
        for ep in (link.a, link.b):
            if ep.node == switch and link.bw is not None:
                out.append(Link(topo.ifname(ep), ep.port, *thresholds(link.queue)))
    return sorted(out, key=lambda x: x.port)


class LinkQueues:
    """`sample()` reads every link once (one `tc` call) into `model`."""

    def __init__(self, model: SwitchModel, dut: SwitchModel, links: list[Link]):
        self.model, self.dut, self.links = model, dut, links
        self.count = 0
        self.reads = 0
        for lk in links:
            model.name(lk.port, 0, f"port {lk.port} link ({lk.ifname})")

    def sample(self) -> None:
        got = read_qdiscs([lk.ifname for lk in self.links])
        m = self.model
        t = m.now_ns()
        for lk in self.links:
            if lk.ifname not in got:
                continue
            backlog, qlen, drops, sent = got[lk.ifname]
            if lk.base is None:
                lk.base = (drops, sent)
            m.sample(lk.port, 0, t, backlog, qlen)
            self._burst(lk, t, backlog, qlen, sent)
        self.reads += 1
        m.set_pairs([self._drops(lk, got[lk.ifname]) for lk in self.links
                     if lk.ifname in got and lk.base is not None])
        m.note("links", reads=self.reads, every_s=PERIOD_S,
               interfaces=[lk.ifname for lk in self.links])

    def _burst(self, lk: Link, t: int, backlog: int, qlen: int, sent: int) -> None:
        b = lk.burst
        if b is None:
            if qlen < lk.on:
                return
            self.count += 1
            b = lk.burst = {"source": "link queue", "egress_port": lk.port, "queue": 0,
                            "burst_id": len(lk.bursts) + 1, "start_ns": float(t), "end_ns": None,
                            "peak_ns": float(t), "peak": 0.0, "peak_pkts": 0.0, "unit": "bytes",
                            "frames": 0.0, "ingress": [], "flows": []}
            lk.sent_at_start = sent
            lk.bursts.append(b)
            del lk.bursts[:-MAX_BURSTS]
        if qlen > b["peak_pkts"]:
            b["peak_pkts"], b["peak"], b["peak_ns"] = float(qlen), float(backlog), float(t)
        b["frames"] = float(sent - lk.sent_at_start)
        if qlen < lk.off:
            b["end_ns"] = float(t)
            lk.burst = None

    def refresh(self) -> None:
        """The bursts into the model, with who built them so far."""
        now = self.model.now_ns()
        every = []
        for lk in self.links:
            for b in lk.bursts:
                if b["end_ns"] is None or now - b["end_ns"] < 2e9:  # counters may still come
                    b["ingress"] = culprits(self.dut.delivered(
                        lk.port, int(b["start_ns"]), int(b["end_ns"] or now)))
                every.append(b)
        if every:
            self.model.set_bursts([dict(b) for b in every], self.count)

    def _drops(self, lk: Link, read: tuple[int, int, int, int]) -> dict[str, Any]:
        assert lk.base is not None
        drops, sent = read[2] - lk.base[0], read[3] - lk.base[1]
        return {"ingress": "all", "egress": lk.port, "sent": sent + drops, "lost": drops,
                "what": f"dropped by the link's queue ({lk.ifname}, tc qdisc)"}


def culprits(by_ingress: dict[int, float]) -> list[dict[str, Any]]:
    """Who built a burst: each ingress port's bytes, largest first, and share."""
    total = sum(by_ingress.values())
    if total <= 0:
        return []
    return [{"port": p, "amount": v, "share": v / total, "unit": "bytes delivered"}
            for p, v in sorted(by_ingress.items(), key=lambda kv: -kv[1]) if v > 0]
