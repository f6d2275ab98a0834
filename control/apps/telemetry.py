"""Switching the telemetry instrument on and tuning it (p4src/include/telemetry.p4).

    tel = Telemetry(sw)
    tel.collector(port=9, switch_ip="10.255.0.1", collector_ip="10.255.0.100",
                  collector_mac="02:00:00:00:00:64", udp_port=32766, node_id=1)
    tel.port(2, burst_threshold=8, burst_end=2, interval_log2_us=10)
    tel.watch(dst="10.0.2.0/24", dport=(5000, 5999))     # INT-XD postcards
    tel.pairs([2], [1, 3])       # {(egress, ingress): CounterValue} offered/delivered
    tel.histogram(2)             # [(bin, packets, bytes)]

Reports leave through clone session REPORT_SESSION (the P4 constant
TEL_REPORT_SESSION), pointed at the collector's port: a front-panel port
to a collector host, or the CPU port (reports then arrive as packet-ins).
The same `collector()` call configures the tap program (tap.p4), whose
`Tap` helper below wires its ports and sampling.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable, Optional

from ..device import CounterValue, Switch
from ..entities import TableEntry

REPORT_SESSION = 500
DEFAULT_UDP_PORT = 32766
PORT_BITS = 6            # TEL_PORT_BITS
MAX_PORTS = 1 << PORT_BITS
HIST_BITS = 4            # TEL_HIST_BITS
HIST_BINS = 1 << HIST_BITS


def pair_index(egress_port: int, ingress_port: int) -> int:
    """Index of tel_offered / tel_delivered for a port pair."""
    if egress_port >= MAX_PORTS or ingress_port >= MAX_PORTS:
        raise ValueError(f"ports >= {MAX_PORTS} are not measured")
    return (egress_port << PORT_BITS) | ingress_port


@dataclass
class PortTelemetry:
    burst_threshold: int = 0
    burst_end: int = 0
    histogram_shift: int = 0
    interval_log2_us: int = 10
    report_intervals: bool = False
    report_burst_packets: bool = True
    bytes_mode: bool = False


def configure_collector(sw: Switch, port: int, switch_ip: str, collector_ip: str,
                        collector_mac: str = "ff:ff:ff:ff:ff:ff",
                        switch_mac: str = "02:00:00:00:00:fe", udp_port: int = DEFAULT_UDP_PORT,
                        node_id: int = 1, snaplen: int = 64,
                        session: int = REPORT_SESSION) -> None:
    """Points the report clone session at `port` and sets the report's
    outer headers (report_collector's default action)."""
    sw.clone_session(session, port)
    sw.table("report_collector").set_default(
        "set_collector", switch_mac=switch_mac, collector_mac=collector_mac,
        switch_ip=int(ipaddress.IPv4Address(switch_ip)),
        collector_ip=int(ipaddress.IPv4Address(collector_ip)),
        collector_udp_port=udp_port, node_id=node_id, snap_bytes=snaplen)


class Telemetry:
    def __init__(self, sw: Switch):
        self.sw = sw
        self.ports: dict[int, PortTelemetry] = {}
        self._watch_prio = 1

    def collector(self, port: int, switch_ip: str, collector_ip: str, **kw) -> None:
        configure_collector(self.sw, port, switch_ip, collector_ip, **kw)

    def collector_off(self) -> None:
        self.sw.table("report_collector").set_default("no_collector")

    def port(self, port: int, burst_threshold: int = 0, burst_end: Optional[int] = None,
             histogram_shift: int = 0, interval_log2_us: int = 10,
             report_intervals: bool = False, report_burst_packets: bool = True,
             bytes_mode: bool = False) -> PortTelemetry:
        """Measures egress `port`: histogram bins of 2^histogram_shift
        packets (or bytes with bytes_mode, p4scope only), interval maxima
        over 2^interval_log2_us us, burst detection when burst_threshold >
        0 (depths at dequeue: a burst starts when a packet leaves at least
        the threshold behind and ends when one leaves less than burst_end,
        default the threshold)."""
        if port >= MAX_PORTS:
            raise ValueError(f"port {port}: the instrument measures ports < {MAX_PORTS}")
        cfg = PortTelemetry(burst_threshold, burst_threshold if burst_end is None else burst_end,
                            histogram_shift, interval_log2_us, report_intervals,
                            report_burst_packets, bytes_mode)
        e = TableEntry("tel_port", {"egress_port": port}, "tel_port_config", {
            "depth_in_bytes": int(cfg.bytes_mode), "burst_threshold": cfg.burst_threshold,
            "burst_end_threshold": cfg.burst_end, "histogram_shift": cfg.histogram_shift,
            "interval_log2_us": cfg.interval_log2_us,
            "report_intervals": int(cfg.report_intervals),
            "report_burst_packets": int(cfg.report_burst_packets)})
        if port in self.ports:
            self.sw.modify(e)
        else:
            self.sw.insert_or_modify(e)
        self.ports[port] = cfg
        return cfg

    def port_off(self, port: int) -> None:
        if self.ports.pop(port, None) is not None:
            self.sw.delete(TableEntry("tel_port", {"egress_port": port}))

    def watch(self, src: Optional[str] = None, dst: Optional[str] = None,
              proto: Optional[int] = None, sport: Optional[tuple[int, int]] = None,
              dport: Optional[tuple[int, int]] = None, ingress_port: Optional[int] = None,
              priority: Optional[int] = None) -> TableEntry:
        """Adds a flow to the INT-XD watchlist: its packets send postcards."""
        m: dict = {}
        if ingress_port is not None:
            m["ingress_port"] = (ingress_port, 0x1FF)
        for key, val in (("src_addr", src), ("dst_addr", dst)):
            if val is not None:
                net = ipaddress.ip_network(val, strict=False)
                m[key] = (int(net.network_address), int(net.netmask))
        if proto is not None:
            m["protocol"] = (proto, 0xFF)
        if sport is not None:
            m["l4_src_port"] = sport
        if dport is not None:
            m["l4_dst_port"] = dport
        if priority is None:
            priority = self._watch_prio
            self._watch_prio += 1
        e = TableEntry("tel_watchlist", m, "watch", priority=priority)
        self.sw.insert(e)
        return e

    # ----- reading the counters -------------------------------------------------

    def pairs(self, egress_ports: Iterable[int], ingress_ports: Iterable[int],
              counter: str = "tel_delivered") -> dict[tuple[int, int], CounterValue]:
        """Per (egress, ingress) counts: tel_delivered (left the egress
        port) or tel_offered (sent towards it, before the queue)."""
        keys = [(e, i) for e in egress_ports for i in ingress_ports]
        vals = self.sw.counter(counter).read_many(pair_index(e, i) for e, i in keys)
        return {k: vals.get(pair_index(*k), CounterValue(0, 0)) for k in keys}

    def histogram(self, port: int) -> list[tuple[int, int, int]]:
        """(bin, packets, bytes) of tel_occupancy_hist for `port`."""
        base = port << HIST_BITS
        vals = self.sw.counter("tel_occupancy_hist").read_many(range(base, base + HIST_BINS))
        return [(b, vals[base + b].packets, vals[base + b].bytes) for b in range(HIST_BINS)
                if base + b in vals]

    def bursts(self, port: int) -> int:
        return self.sw.counter("tel_bursts")[port].packets

    def reports_sent(self, port: int) -> int:
        return self.sw.counter("tel_reports")[port].packets


class Tap:
    """The in-path tap (p4src/tap.p4): which port feeds which, sampling."""

    def __init__(self, sw: Switch):
        self.sw = sw

    def wire(self, in_port: int, out_port: int, direction: int) -> None:
        """Frames entering `in_port` leave by `out_port` and count in
        `direction` (0: towards the DUT, 1: from the DUT)."""
        e = TableEntry("tap_ports", {"ingress_port": in_port}, "tap_forward",
                       {"out_port": out_port, "direction": direction})
        self.sw.insert_or_modify(e)

    def in_path(self, tester_tx: int, dut_in: int, dut_out: int, tester_rx: int) -> None:
        """tester -> tester_tx | tap | dut_in -> DUT -> dut_out | tap | tester_rx -> tester."""
        self.wire(tester_tx, dut_in, 0)
        self.wire(dut_out, tester_rx, 1)

    def sampling(self, every_frame: bool = False, interval_log2_us: int = 0) -> None:
        self.sw.table("tap_config").set_default("tap_sampling", all_frames=int(every_frame),
                                                interval_log2_us=interval_log2_us)

    def sampling_off(self) -> None:
        self.sw.table("tap_config").set_default("tap_no_sampling")

    def totals(self) -> tuple[CounterValue, CounterValue]:
        """(towards the DUT, from the DUT) frames and bytes (tap_frames)."""
        c = self.sw.counter("tap_frames")
        return c[0], c[1]
