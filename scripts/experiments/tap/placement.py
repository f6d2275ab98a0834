"""Where the tap goes: one p4scope switch running p4src/tap.p4 on every
link of the DUT, in Mininet.

    h1 --(1) TAP (257)-- (1) DUT (3) --(259) TAP (3)-- h3
    h2 --(2)     (258)-- (2)
                 (250)-- hc          the collector port (reports out)

The tap's port N faces host hN and its port N + 256 faces the DUT's port
N: frames coming in on N go out on N + 256 counted towards the DUT, and
the other way round from it. One switch taps every link, so every frame
is timed by one clock. The links keep the shaping of the N:1 topology
without a tap where it matters: each sender's own link (its host shapes
it to the line rate), and the DUT's port towards the receiver (htb at the
line rate over a pfifo of `queue_packets`: the queue that builds and the
one the tap infers); the tap's other ports are unshaped, so the tap holds
no queue of its own. The collector port leads to a host that only
terminates the link: reports are addressed to a MAC it ignores and are
read off the tap's interface (topologies.capture).
"""

from __future__ import annotations

from typing import Any, Optional

from ...topologies.spec import Topology, from_dict
from .inference import Wiring

TAP = "t1"
DUT = "s1"
COLLECTOR_HOST = "hc"
DUT_SIDE = 256
"""The tap port facing the DUT's port N is N + DUT_SIDE."""
COLLECTOR_PORT = 250
COLLECTOR_MAC = "02:00:00:00:fe:64"
COLLECTOR_IP = "10.255.0.100"
TAP_IP = "10.255.0.2"
REPORT_UDP_PORT = 32766
MAX_SAMPLE_LOG2_US = 20
"""The longest interval a tap samples in (tap_config interval_log2_us):
2^20 us, about a second."""
MAX_HOST_PORT = DUT_SIDE - 8
DUT_KINDS = ("bridge", "p4scope")


def tapped_incast(senders: int, link_bw: str, queue_packets: Optional[int], dut_kind: str,
                  tap_program: str, dut_program: Optional[str] = None) -> Topology:
    """N:1 (senders h1..hN, the receiver h(N+1)) through the DUT `s1` with
    the tap `t1` on every link; see the module docstring."""
    if dut_kind not in DUT_KINDS:
        raise ValueError(f"DUT {dut_kind!r}: the tap runs around {' or '.join(DUT_KINDS)}")
    if not 1 <= senders < MAX_HOST_PORT:
        raise ValueError(f"senders: 1..{MAX_HOST_PORT - 1}")
    r = senders + 1
    hosts: list[dict[str, Any]] = [{"name": f"h{i}"} for i in range(1, r + 1)]
    hosts.append({"name": COLLECTOR_HOST, "ip": "10.255.0.99/16", "mac": "02:00:00:00:fe:63"})
    links: list[dict[str, Any]] = []
    for i in range(1, senders + 1):
        links.append({"a": f"h{i}", "b": f"{TAP}:{i}", "bw": link_bw})
        links.append({"a": f"{TAP}:{i + DUT_SIDE}", "b": f"{DUT}:{i}"})
    egress: dict[str, Any] = {"a": f"{DUT}:{r}", "b": f"{TAP}:{r + DUT_SIDE}", "bw": link_bw}
    if queue_packets is not None:
        egress["queue"] = queue_packets
    links += [egress, {"a": f"{TAP}:{r}", "b": f"h{r}"},
              {"a": f"{TAP}:{COLLECTOR_PORT}", "b": COLLECTOR_HOST}]
    dut: dict[str, Any] = {"name": DUT, "kind": dut_kind}
    if dut_kind != "bridge":
        dut.update(program=dut_program, cpu_port=255, log="warn")
    doc = {"name": f"tap-incast-{senders}",
           "hosts": hosts,
           "switches": [{"name": TAP, "kind": "p4scope", "program": tap_program, "log": "warn"},
                        dut],
           "links": links,
           "control": {"senders": [f"h{i}" for i in range(1, r)], "receiver": f"h{r}",
                       "tap": TAP, "dut": DUT}}
    return from_dict(doc, doc["name"])


def dut_ports(topo: Topology) -> list[int]:
    """The DUT's ports (each has a tapped link)."""
    return sorted(topo.ports(DUT))


def wiring(topo: Topology) -> Wiring:
    """The inference's view of the placement: tap port -> DUT port, and the
    DUT port behind each host's MAC."""
    ports = dut_ports(topo)
    m = {p: p for p in ports}
    m.update({p + DUT_SIDE: p for p in ports})
    macs = {}
    for p in ports:
        ep = topo.ports(TAP)[p]
        h = topo.node(ep.node)
        macs[int(h.mac.replace(":", ""), 16)] = p
    return Wiring(m, macs)


def untapped(topo: Topology) -> Topology:
    """The same DUT with its hosts on its ports directly: what its
    controller plans for (the tap is a wire to it)."""
    doc = topo.to_dict()
    tap = doc["control"]["tap"]
    host_of = {p: ep.node for p, ep in topo.ports(tap).items() if p < DUT_SIDE
               and ep.node != COLLECTOR_HOST}
    doc["hosts"] = [h for h in doc["hosts"] if h["name"] != COLLECTOR_HOST]
    doc["switches"] = [s for s in doc["switches"] if s["name"] != tap]
    doc["links"] = [{"a": host_of[p], "b": f"{DUT}:{p}"} for p in dut_ports(topo)]
    doc["control"] = {k: v for k, v in doc["control"].items() if k not in ("tap", "dut")}
    return from_dict(doc, doc["name"])
