"""INT-MD v2.1 on the reference DUT (p4src/include/int_md.p4): source,
transit and sink of embedded per-hop metadata, switched on per flow.

    md = IntMd(sw)
    md.node(3)                                   # INT-MD on: this switch adds node id 3
    md.source(dst="10.0.2.0/24", dport=(5000, 5999), max_hops=8)   # flows entering here
    md.sink_port(4)                              # packets leaving by port 4 leave the domain
    md.malformed()                               # {"bad_length": n, ...} forwarded as they came

A switch with `node()` set is a transit hop for every INT-MD packet it
forwards; its watchlist makes it the source of matching UDP flows, and its
sink ports strip INT-MD from packets leaving by them. A sink reports each
packet through the telemetry instrument's collector (Telemetry.collector,
clone session 500): the stack of the hops before it, and its own hop as a
postcard; `Collector.int_md_paths()` joins them. Give each switch the same
node id here and in Telemetry.collector.

INT-MD rides on UDP (the spec's destination-port convention): the source
moves the flow's destination port into the shim and sends to
INT_MD_UDP_PORT (the P4 program's -DINT_MD_UDP_PORT), the sink restores it.
"""

from __future__ import annotations

import ipaddress
from typing import Iterable, Optional

from ..device import Switch
from ..entities import TableEntry
from ..int_md_headers import (INS_BUFFER, INS_EGRESS_TS, INS_HOP_LATENCY, INS_INGRESS_TS,
                              INS_L1_PORTS, INS_L2_PORTS, INS_NODE_ID, INS_QUEUE, INS_RESERVED,
                              INS_TX_UTIL, INT_MD_UDP_PORT, instruction_words)

__all__ = ["ALL_INSTRUCTIONS", "INT_MD_UDP_PORT", "IntMd", "MALFORMED"]

ALL_INSTRUCTIONS = (INS_NODE_ID | INS_L1_PORTS | INS_HOP_LATENCY | INS_QUEUE | INS_INGRESS_TS
                    | INS_EGRESS_TS | INS_L2_PORTS | INS_TX_UTIL | INS_BUFFER)
"""Every metadata the reference DUT adds (12 words per hop)."""

MALFORMED = {1: "bad_length", 2: "bad_version", 3: "hops_exhausted", 4: "bad_instructions",
             5: "not_int_md"}
"""int_md_malformed's indexes (int_md_headers.p4 INT_BAD_*)."""

DEFAULT_UTIL_WINDOW_LOG2_NS = 20
"""Tx utilisation over windows of 2^20 ns (about 1 ms)."""


class IntMd:
    def __init__(self, sw: Switch):
        self.sw = sw
        self._prio = 1

    def node(self, node_id: int, util_window_log2_ns: int = DEFAULT_UTIL_WINDOW_LOG2_NS) -> None:
        """Switches INT-MD on with this switch's node id; transmit
        utilisation is averaged over windows of 2^util_window_log2_ns ns."""
        if not 0 <= node_id < 1 << 32:
            raise ValueError(f"node id {node_id}: 32 bits")
        if not 0 <= util_window_log2_ns <= 40:
            raise ValueError(f"util_window_log2_ns {util_window_log2_ns}: 0..40")
        self.sw.table("int_md_config").set_default("int_md_node", node_id=node_id,
                                                   util_window_log2_ns=util_window_log2_ns)

    def off(self) -> None:
        """INT-MD off: INT-MD packets pass unchanged, as through a non-INT switch."""
        self.sw.table("int_md_config").set_default("int_md_off")

    def source(self, src: Optional[str] = None, dst: Optional[str] = None,
               sport: Optional[tuple[int, int]] = None, dport: Optional[tuple[int, int]] = None,
               ingress_port: Optional[int] = None, instructions: int = ALL_INSTRUCTIONS,
               max_hops: int = 8, priority: Optional[int] = None) -> TableEntry:
        """Starts INT-MD on the UDP flows that match (prefixes, L4 port
        ranges, ingress port), asking every hop for `instructions` (bitmap,
        bit 0 = MSB) and letting at most `max_hops` hops (this one
        included) add metadata."""
        if instructions & ~0xFFFF or instructions & INS_RESERVED:
            raise ValueError(f"instructions {instructions:#06x}: bits 9..14 are reserved")
        if not 0 <= max_hops <= 255:
            raise ValueError(f"max_hops {max_hops}: 0..255")
        m: dict = {}
        if ingress_port is not None:
            m["ingress_port"] = (ingress_port, 0x1FF)
        for key, val in (("src_addr", src), ("dst_addr", dst)):
            if val is not None:
                net = ipaddress.ip_network(val, strict=False)
                m[key] = (int(net.network_address), int(net.netmask))
        if sport is not None:
            m["l4_src_port"] = sport
        if dport is not None:
            m["l4_dst_port"] = dport
        if priority is None:
            priority, self._prio = self._prio, self._prio + 1
        e = TableEntry("int_md_watchlist", m, "int_md_source",
                       {"max_hops": max_hops, "instructions": instructions}, priority=priority)
        self.sw.insert(e)
        return e

    def sink_port(self, port: int) -> None:
        """Packets leaving by `port` leave the INT domain: INT-MD is
        stripped and reported."""
        self.sw.insert_or_modify(TableEntry("int_md_sink_ports", {"egress_port": port},
                                            "int_md_sink"))

    def sink_ports(self, ports: Iterable[int]) -> None:
        for p in ports:
            self.sink_port(p)

    def sink_port_off(self, port: int) -> None:
        self.sw.delete(TableEntry("int_md_sink_ports", {"egress_port": port}))

    def malformed(self) -> dict[str, int]:
        """INT-MD packets forwarded without this hop's metadata, by reason."""
        vals = self.sw.counter("int_md_malformed").read_many(MALFORMED)
        return {name: vals[i].packets if i in vals else 0 for i, name in MALFORMED.items()}


def hop_bytes(instructions: int) -> int:
    """Bytes each hop adds for `instructions`."""
    return 4 * instruction_words(instructions)
