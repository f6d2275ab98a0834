"""The tap around a DUT in Mininet, running (root): the network of
placement.py, the tap configured over P4Runtime, its reports captured.

    with TapTestbed(topo, run_dir, "bridge", tap_build) as tb:
        with tb.reports() as rep:          # reports of what happens inside
            ...                            # traffic through the DUT
        rep.frames                         # [(kernel wall-clock ns, report frame)]

The tap (p4src/tap.p4 in `p4scope switch`) is told over P4Runtime, as
control.apps.telemetry does it: tap_ports (each host-side port to the
DUT-side one, counted towards the DUT, and back, counted from it), the
report collector (the collector port, its addresses, snap length 64 so a
report carries each frame's headers and the tester's sequence number) and
clone session TAP_REPORT_SESSION to that port, and tap_config (every
frame sampled). A p4scope DUT runs the reference DUT, configured by the
fabric controller as on the plain Mininet testbed (L2 learning), planned
on the topology without the tap. Switch names get a random suffix, as on
the other Mininet testbeds (root-namespace names are shared); `name()`
gives the one in use.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ...control import Switch
from ...control.apps.telemetry import REPORT_SESSION, Tap, configure_collector
from ...topologies.capture import OutgoingCapture
from ...topologies.run import Network
from ...topologies.spec import Topology, rename_switches
from ..mininet.testbed import DutBuild
from . import placement as pl

SNAP_BYTES = 64
NODE_ID = 0x7A


@dataclass
class Captured:
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    drops: int = 0
    """Reports the capture socket's buffer could not hold (found as lost)."""


class _Session:
    def __init__(self, cap: OutgoingCapture) -> None:
        self.cap = cap
        self.got = Captured()

    def __enter__(self) -> Captured:
        self.cap.take()  # what came before is not this session's
        self._drops = self.cap.drops
        return self.got

    def __exit__(self, *exc: Any) -> None:
        self.got.frames = self.cap.take()
        self.got.drops = self.cap.drops - self._drops


class TapTestbed:
    __test__ = False

    def __init__(self, topo: Topology, run_dir: Path, dut_kind: str, tap_build: DutBuild,
                 dut_build: Optional[DutBuild] = None, ready_timeout: float = 60.0) -> None:
        if dut_kind not in pl.DUT_KINDS:
            raise ValueError(f"DUT {dut_kind!r}: the tap runs around {' or '.join(pl.DUT_KINDS)}")
        if dut_kind != "bridge" and dut_build is None:
            raise ValueError(f"a {dut_kind} DUT needs the reference DUT's build")
        tag = secrets.token_hex(2)[:3]
        self.names = {s.name: f"{s.name}{tag}" for s in topo.switches}
        self.plan = topo
        self.topo = rename_switches(topo, self.names)
        self.run_dir = Path(run_dir)
        self.dut_kind, self.tap_build, self.dut_build = dut_kind, tap_build, dut_build
        self.ready_timeout = ready_timeout
        self.net: Any = None
        self.tap_sw: Optional[Switch] = None
        self.fabric: Any = None
        self.capture: Optional[OutgoingCapture] = None

    def name(self, switch: str) -> str:
        return self.names.get(switch, switch)

    def host(self, name: str) -> Any:
        return self.net.host(name)

    @property
    def collector_ifname(self) -> str:
        return f"{self.name(pl.TAP)}-eth{pl.COLLECTOR_PORT}"

    def dut_ifname(self, port: int) -> str:
        """The DUT's interface of one of its ports (its egress qdisc)."""
        return f"{self.name(pl.DUT)}-eth{port}"

    def start(self) -> "TapTestbed":
        self.net = Network(self.topo, self.run_dir, ready_timeout=self.ready_timeout)
        self.net.start()
        try:
            self.capture = OutgoingCapture(self.collector_ifname).start()
            self.tap_sw = Switch.connect(self.net.grpc_addr(self.name(pl.TAP)),
                                         pipeline=self.tap_build.pipeline)
            configure_tap(self.tap_sw, pl.dut_ports(self.plan))
            if self.dut_kind != "bridge":
                self._configure_dut()
        except BaseException:
            self.stop()
            raise
        return self

    def _configure_dut(self) -> None:
        from ...control.fabric import configure

        assert self.dut_build is not None
        plain = rename_switches(pl.untapped(self.plan), {pl.DUT: self.name(pl.DUT)})
        self.fabric = configure(plain, {self.name(pl.DUT): self.net.grpc_addr(self.name(pl.DUT))},
                                pipeline=self.dut_build.pipeline)

    def reports(self) -> _Session:
        """A block whose reports are kept (the ones before it are dropped)."""
        assert self.capture is not None, "start() first"
        return _Session(self.capture)

    def stop(self) -> None:
        if self.capture is not None:
            self.capture.stop()
            self.capture = None
        if self.fabric is not None:
            self.fabric.close()
            self.fabric = None
        if self.tap_sw is not None:
            self.tap_sw.close()
            self.tap_sw = None
        if self.net is not None:
            self.net.stop()
            self.net = None

    def __enter__(self) -> "TapTestbed":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def configure_tap(sw: Switch, ports: list[int], node_id: int = NODE_ID,
                  sample_log2_us: Optional[int] = None) -> None:
    """tap.p4 on `ports`' links (placement.py's numbering), reporting every
    frame (or with `sample_log2_us` n the first of every 2^n us in each
    direction) to the collector port (as node `node_id`: one per tap switch)."""
    tap = Tap(sw)
    for p in ports:
        tap.wire(p, p + pl.DUT_SIDE, 0)
        tap.wire(p + pl.DUT_SIDE, p, 1)
    configure_collector(sw, pl.COLLECTOR_PORT, switch_ip=pl.TAP_IP, collector_ip=pl.COLLECTOR_IP,
                        collector_mac=pl.COLLECTOR_MAC, udp_port=pl.REPORT_UDP_PORT,
                        node_id=node_id, snaplen=SNAP_BYTES, session=REPORT_SESSION)
    if sample_log2_us is None:
        tap.sampling(every_frame=True)
    else:
        tap.sampling(every_frame=False, interval_log2_us=int(sample_log2_us))
