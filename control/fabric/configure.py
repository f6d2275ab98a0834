"""`configure(topology, switches)`: every switch of a topology set up by
the controller from the topology description, with the control/ apps.

    fabric = configure(topo, {"s1": "127.0.0.1:50051"}, pipeline=Pipeline.from_build("dut"))
    ...                                   # L2 learning runs in the background
    fabric.link_down("s1", 1)             # a LAG member (or any link) failed
    fabric.link_up("s1", 1)
    fabric.close()

Per switch, from the plan (plan.py): frame limits and flood groups
(flooding app), LAG groups (lag app), MAC learning by the controller
(fabric learning, L2 mode) or /32 routes with ECMP (routing app, L3
mode), and the telemetry instrument with its collector (telemetry app;
reports to the controller as packet-ins, fed to one `Collector` for the
whole fabric, or to a collector host). A failed link is handled by
re-planning without it and writing only what changed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from ..apps.collector import Collector
from ..apps.flooding import Flooding
from ..apps.lag import Lags
from ..apps.routing import Router
from ..apps.telemetry import Telemetry
from ..device import Switch
from ..pipeline import Pipeline
from .learning import FabricLearning
from .plan import BASE_GROUP, FabricError, FabricOptions, FabricPlan, SwitchPlan, plan

REPORT_NET = "10.255.0.0"
"""Switches' report source addresses are 10.255.0.<index + 1>."""
COLLECTOR_IP = "10.255.255.254"


@dataclass
class SwitchState:
    """What the controller drives on one switch."""
    name: str
    sw: Switch
    index: int
    flooding: Flooding
    lags: Optional[Lags] = None
    learning: Optional[FabricLearning] = None
    router: Optional[Router] = None
    telemetry: Optional[Telemetry] = None
    owned: bool = False
    """The fabric connected it (and closes it)."""


@dataclass
class LinkEvent:
    time: float
    switch: str
    port: int
    up: bool
    applied_s: float
    """Seconds from the call to the last table write."""


@dataclass
class Fabric:
    topology: Any
    plan: FabricPlan
    states: dict[str, SwitchState]
    collector: Optional[Collector] = None
    events: list[LinkEvent] = field(default_factory=list)
    arrivals: list[tuple[int, int, int]] = field(default_factory=list)
    """(wall-clock ns on arrival, node id, egress timestamp ns) of every
    report taken in as a packet-in: what puts the switches' clocks on the
    wall clock (`clock_offsets`). Clear it when swapping collectors."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started = False

    # ----- access ------------------------------------------------------------------

    def switch(self, name: str) -> Switch:
        return self.states[name].sw

    def learnt(self) -> dict[str, dict[int, int]]:
        """switch -> {MAC: port} learnt so far."""
        return {n: dict(s.learning.macs) for n, s in self.states.items() if s.learning}

    # ----- background work ----------------------------------------------------------

    def start(self, poll_s: float = 0.05) -> "Fabric":
        """Starts learning and report collection threads (idempotent)."""
        if self._started:
            return self
        self._started = True
        for st in self.states.values():
            if st.learning is not None:
                st.learning.start_thread(poll_s)
            if self.collector is not None and st.telemetry is not None and \
                    self.plan.options.telemetry is not None and \
                    self.plan.options.telemetry.collector == "cpu":
                t = threading.Thread(target=self._packet_ins, args=(st,), daemon=True,
                                     name=f"reports-{st.name}")
                t.start()
                self._threads.append(t)
        return self

    def _packet_ins(self, st: SwitchState) -> None:
        assert self.collector is not None
        while not self._stop.is_set():
            try:
                for p in st.sw.packet_ins(timeout=0.2):
                    r = self.collector.feed_packet_in(p)
                    if r is not None:
                        self.arrivals.append((time.time_ns(), r.node_id, r.md.egress_ts_ns or 0))
            except Exception as e:  # the switch went away: say so once, stop
                if not self._stop.is_set():
                    self.collector.errors.append(f"{st.name}: packet-ins: {e}")
                return

    def clock_offsets(self) -> dict[int, int]:
        """node id -> wall-clock ns minus the switch's egress timestamp,
        the smallest seen (the report that was delivered fastest): add it
        to a report's timestamps to place them on the wall clock."""
        out: dict[int, int] = {}
        for wall, node, egress in list(self.arrivals):
            d = wall - egress
            if node not in out or d < out[node]:
                out[node] = d
        return out

    def stop(self) -> None:
        """Stops the background threads (the configuration stays)."""
        self._stop.set()
        for st in self.states.values():
            if st.learning is not None:
                st.learning.stop()
        for t in self._threads:
            t.join(timeout=2)
        self._threads = []

    def close(self) -> None:
        """stop(), then closes the connections the fabric opened."""
        self.stop()
        for st in self.states.values():
            if st.owned:
                st.sw.close()

    def __enter__(self) -> "Fabric":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----- failures ---------------------------------------------------------------

    def link_down(self, switch: str, port: int) -> LinkEvent:
        return self._link(switch, port, False)

    def link_up(self, switch: str, port: int) -> LinkEvent:
        return self._link(switch, port, True)

    def _link(self, switch: str, port: int, up: bool) -> LinkEvent:
        t0 = time.monotonic()
        with self._lock:
            down = set(self.plan.down)
            key = (switch, port)
            peer = _peer(self.topology, switch, port)
            keys = {key} | ({peer} if peer is not None else set())
            if up:
                down -= keys
            else:
                down |= keys
            new = plan(self.topology, self.plan.options, down)
            old = self.plan
            for name, st in self.states.items():
                _apply(st, old.switches[name], new.switches[name], self.plan.options)
            self.plan = new
        ev = LinkEvent(time.time(), switch, port, up, time.monotonic() - t0)
        self.events.append(ev)
        return ev


def _peer(topo: Any, switch: str, port: int) -> Optional[tuple[str, int]]:
    """The other end of a switch-to-switch link (it is down as well)."""
    names = {s.name for s in topo.switches}
    for l in topo.links:
        for me, other in ((l.a, l.b), (l.b, l.a)):
            if me.node == switch and me.port == port and other.node in names:
                return (other.node, other.port)
    return None


# ----- writing a plan -------------------------------------------------------------

def _apply(st: SwitchState, old: Optional[SwitchPlan], new: SwitchPlan,
           opts: FabricOptions) -> None:
    """Writes what differs between `old` (None: nothing yet) and `new`."""
    sw = st.sw
    if old is None:
        st.flooding.defaults(flood_group=BASE_GROUP, min_frame=opts.min_frame,
                             max_frame=opts.max_frame)
    for gid, ports in sorted(new.groups.items()):
        if old is None or old.groups.get(gid) != ports:
            sw.multicast_group(gid, ports)
    if old is not None:
        for gid in sorted(set(old.groups) - set(new.groups)):
            sw.delete_multicast_group(gid)
    for port, gid in sorted(new.port_group.items()):
        before = BASE_GROUP if old is None else old.port_group.get(port, BASE_GROUP)
        if gid != before:
            st.flooding.port(port, flood_group=gid, min_frame=opts.min_frame,
                             max_frame=opts.max_frame)
    if st.lags is not None:
        for lag, active in sorted(new.lag_active.items()):
            if old is None:
                st.lags.create(lag, new.lags[lag])
                if active != new.lags[lag]:
                    st.lags.set_ports(lag, active)
            elif old.lag_active.get(lag) != active:
                st.lags.set_ports(lag, active)
    if st.learning is not None:
        st.learning.blocked = set(new.blocked_ports) | set(new.down_ports)
        if old is not None:
            lost = (new.down_ports - old.down_ports) | (new.blocked_ports - old.blocked_ports)
            st.learning.forget_ports(lost)
    if st.router is not None:
        if old is None:
            st.router.add_router_mac()
        for prefix, hops in sorted(new.routes.items()):
            if old is None or old.routes.get(prefix) != hops:
                st.router.route(prefix, hops)
        if old is not None:
            for prefix in sorted(set(old.routes) - set(new.routes)):
                st.router.remove(prefix)


def _telemetry(st: SwitchState, sp: SwitchPlan, fp: FabricPlan, topo: Any) -> Telemetry:
    t = fp.options.telemetry
    assert t is not None
    tel = Telemetry(st.sw)
    switch_ip = f"10.255.0.{st.index + 1}"
    if t.collector == "cpu":
        assert sp.cpu_port
        tel.collector(port=sp.cpu_port, switch_ip=switch_ip, collector_ip=COLLECTOR_IP,
                      udp_port=t.udp_port, node_id=st.index + 1)
    else:
        port = next((p for p, h in sp.host_ports.items() if h == t.collector), None)
        if port is None:
            raise FabricError(f"{st.name}: the collector host {t.collector} is not attached to it "
                              "(reports need a path: attach the collector or use the CPU port)")
        host = next(h for h in topo.hosts if h.name == t.collector)
        tel.collector(port=port, switch_ip=switch_ip, collector_ip=host.ip.split("/")[0],
                      collector_mac=host.mac, udp_port=t.udp_port, node_id=st.index + 1)
    ports = t.ports if t.ports is not None else sorted(
        p for p in set(sp.host_ports) | {m for ms in sp.lags.values() for m in ms} if p < 64)
    for p in ports:
        tel.port(p, burst_threshold=t.burst_threshold, burst_end=t.burst_end,
                 histogram_shift=t.histogram_shift, interval_log2_us=t.interval_log2_us,
                 report_intervals=t.report_intervals,
                 report_burst_packets=t.report_burst_packets)
    return tel


def configure(topology: Any, switches: Mapping[str, Union[Switch, str]],
              options: Optional[FabricOptions] = None, *, pipeline: Optional[Pipeline] = None,
              collector: Optional[Collector] = None, start: bool = True) -> Fabric:
    """Configures every P4 switch of `topology`.

    switches: name -> a connected `Switch` running the reference DUT, or
    its gRPC address (then `pipeline` is installed on it). options: by
    default the topology's control.fabric section. With telemetry on, the
    reports go to `collector` (a new one if None). start: begin learning
    and report collection at once (else call `fabric.start()`)."""
    if options is None:
        options = FabricOptions.from_dict((getattr(topology, "control", None) or {}).get("fabric"))
    fp = plan(topology, options)
    missing = sorted(set(fp.switches) - set(switches))
    if missing:
        raise FabricError(f"no connection given for switch(es) {', '.join(missing)}")
    devices = {s.name: getattr(s, "device_id", i) for i, s in enumerate(topology.switches)}
    states: dict[str, SwitchState] = {}
    try:
        for index, name in enumerate(sorted(fp.switches)):
            handle = switches[name]
            owned = isinstance(handle, str)
            if isinstance(handle, str):
                if pipeline is None:
                    raise FabricError(f"{name}: an address needs a pipeline to install")
                handle = Switch.connect(handle, pipeline=pipeline, device_id=devices.get(name, 0))
            states[name] = _state(name, handle, index, fp, owned)
        if options.telemetry is not None and collector is None:
            collector = Collector()
        for name, st in states.items():
            sp = fp.switches[name]
            _apply(st, None, sp, options)
            if st.learning is not None:
                st.learning.start()
            if options.telemetry is not None:
                st.telemetry = _telemetry(st, sp, fp, topology)
    except BaseException:
        for st in states.values():
            if st.owned:
                st.sw.close()
        raise
    fabric = Fabric(topology, fp, states, collector if options.telemetry is not None else None)
    if start:
        fabric.start()
    return fabric


def _state(name: str, sw: Switch, index: int, fp: FabricPlan, owned: bool) -> SwitchState:
    sp = fp.switches[name]
    st = SwitchState(name, sw, index, Flooding(sw), owned=owned)
    if sp.lags:
        st.lags = Lags(sw)
    if fp.options.mode == "l2":
        st.learning = FabricLearning(sw, ageing_s=fp.options.ageing_s,
                                     lag_of_port=sp.lag_of_port())
    else:
        assert sp.router_mac is not None
        st.router = Router(sw, sp.router_mac)
    return st
