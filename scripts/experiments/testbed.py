"""The embedded switch: the reference DUT in virtual time, driven over P4Runtime.

A run starts p4scope's P4Runtime server in this process, on loopback and a
free port, and configures it the way it would configure any switch: the
controller (p4scope.control) connects as primary, sends the compiled DUT
(BMv2 JSON + P4Info) with SetForwardingPipelineConfig, and writes table
entries, the clone session and the collector. Only the traffic — the
engine's sources and sinks in virtual time — and the ground-truth trace go
to the engine directly, since a tester's ports and a simulator's clock are
no part of P4Runtime.

Each case starts from an empty switch at virtual time 0: `reset(profile)`
sends the pipeline again, which gives a fresh engine with that traffic-
manager profile, and replays the configuration.

Addressing: the host behind port p has MAC 02:00:00:00:00:pp and IPv4
10.0.0.p; frames are UDP from the host of their ingress port to the host of
their egress port. Source MACs are installed as static smac entries, so no
learning digests are generated while measuring.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from .collector_port import COLLECTOR_PORT, SNAP_BYTES  # noqa: F401 (re-exported)
from .params import Profile

CPU_PORT = 255
REPORT_SESSION = 500  # telemetry.p4 TEL_REPORT_SESSION
SWITCH_MAC = 0x02_00_00_00_00_FE
SWITCH_IP_STR = "10.0.0.254"
COLLECTOR_IP_STR = "10.0.0.253"
COLLECTOR_UDP = 32766
NODE_ID = 1  # the DUT's INT node id in its reports


def host_mac(port: int) -> int:
    return 0x02_00_00_00_00_00 | (port & 0xFF)


def host_ip(port: int) -> int:
    return 0x0A_00_00_00 | (port & 0xFF)


def _ip_str(ip: int) -> str:
    return ".".join(str(b) for b in ip.to_bytes(4, "big"))


def _mac_str(mac: int) -> str:
    return ":".join(f"{b:02x}" for b in mac.to_bytes(6, "big"))


@dataclass
class DutProgram:
    """The compiled reference DUT and what identifies it in run.json."""

    pipeline: Any  # p4scope.control.Pipeline
    source: str
    defines: dict[str, str] = field(default_factory=dict)
    """The -D macros it was compiled with (e.g. the DUT's LAG hash)."""

    @cached_property
    def _aliases(self) -> frozenset[str]:
        """The field aliases of the DUT's JSON (read once: every case asks)."""
        import json

        doc = json.loads(self.pipeline.device_config)
        return frozenset(a[0] for a in doc.get("field_aliases", []))

    @property
    def byte_depths(self) -> bool:
        """Whether the DUT's queue depths in bytes reach the program: its JSON
        aliases p4scope.enq_qbytes (include/p4scope_tm.p4). Without, the
        instrument measures in packets."""
        return "p4scope.enq_qbytes" in self._aliases

    @property
    def ns_clock(self) -> bool:
        """Whether the DUT's instrument times come from the engine's
        nanosecond clock: its JSON aliases p4scope.egress_timestamp_ns.
        Without (or on BMv2, which leaves it 0), v1model's microsecond
        egress clock times 1000."""
        return "p4scope.egress_timestamp_ns" in self._aliases

    @property
    def info(self) -> dict[str, Any]:
        return {"name": self.pipeline.name, "source": self.source,
                "compiler": "p4scope compile (in process)",
                "json_sha256": hashlib.sha256(self.pipeline.device_config).hexdigest(),
                "p4info_sha256": hashlib.sha256(
                    self.pipeline.p4info.SerializeToString(deterministic=True)).hexdigest(),
                "queue_depth_unit": "bytes" if self.byte_depths else "packets",
                "instrument_clock_ns": 1 if self.ns_clock else 1000,
                **({"defines": dict(self.defines)} if self.defines else {})}


def compile_dut(source: Path = Path("p4src/dut.p4"),
                defines: Optional[dict[str, str]] = None) -> DutProgram:
    """Compiles the reference DUT with p4scope's compiler (in process),
    with the -D macros `defines`."""
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"{source}: the reference DUT is not there (run from the "
                                "repository's top folder, or pass --program)")
    return DutProgram(compile_pipeline(source, defines), str(source), dict(defines or {}))


def compile_pipeline(source: Path, defines: Optional[dict[str, str]] = None) -> Any:
    """A P4 program compiled in process by p4scope's compiler (its include/
    folder beside it) as the controller's Pipeline; a program this process
    compiled already (the main job's compile step) is not compiled again."""
    from p4scope.compiler.cache import compile_cached
    from p4scope.control import Pipeline

    source = Path(source)
    return Pipeline.from_compiled(source.stem, compile_cached(
        source, [str(source.parent / "include")], dict(defines) if defines else None))


@dataclass
class TelemetryConfig:
    """What the instrument is told to do on a measured egress port; the
    burst thresholds are in bytes with `bytes_mode`, else in packets."""

    burst_on: int
    burst_off: int
    interval_log2_us: int = 0
    histogram_shift: int = 18  # bytes >> 18: 256 KiB bins
    report_intervals: bool = True
    report_burst_packets: bool = False
    bytes_mode: bool = True


@dataclass
class Flow:
    """Frames from the host behind `ingress` to the host behind `egress`:
    bridged on their MAC addresses, or with `routed` sent to the switch's
    router MAC and routed on their IPv4 destination (next-hop rewrite, TTL)."""

    ingress: int
    egress: int
    routed: bool = False


@dataclass
class VirtualSwitch:
    """See the module docstring. Use as a context manager."""

    program: DutProgram
    profile: Profile
    seed: int = 0
    apply_profile: Optional[Callable[[Any, Profile], None]] = None
    address: str = ""
    device: Any = None
    server: Any = None
    sw: Any = None  # p4scope.control.Switch
    setup_switch: Optional[Callable[[Any], None]] = None
    """Called with the controller's Switch (p4scope.control.Switch) after
    the switch is configured, at start and after every reset: extra table
    entries an experiment needs (an ACL, say) on top of the forwarding."""
    _flows: list[Flow] = field(default_factory=list)
    _telemetry: dict[int, TelemetryConfig] = field(default_factory=dict)

    # ----- life cycle ------------------------------------------------------------

    def __enter__(self) -> "VirtualSwitch":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        from p4scope.control import Switch
        from p4scope.switch.device import Device, DeviceOptions
        from p4scope.switch.engine import default_engine_factory
        from p4scope.switch.p4runtime.server import make_server

        def factory(json_text, opts):
            eng = default_engine_factory(json_text, opts)
            if self.apply_profile is not None:
                self.apply_profile(eng.raw, self.profile)
            return eng

        try:
            self.device = Device(DeviceOptions(cpu_port=CPU_PORT, seed=self.seed),
                                 engine_factory=factory)
            self.server, port = make_server(self.device, "127.0.0.1:0", max_workers=8)
            self.address = f"127.0.0.1:{port}"
            self.sw = Switch.connect(self.address, pipeline=self.program.pipeline)
            self._configure()
        except BaseException:
            # a started server whose stream RPC stays open keeps a worker of
            # its thread pool busy, and Python waits for it at exit: stop it
            self.close()
            raise

    def close(self) -> None:
        """Stops the client, the server and the device, each even when an
        earlier one fails to stop."""
        sw, server, device = self.sw, self.server, self.device
        self.sw = self.server = self.device = None
        try:
            if sw is not None:
                sw.close()
        finally:
            try:
                if server is not None:
                    server.stop(grace=0).wait(2)
            finally:
                if device is not None:
                    device.stop()

    def reset(self, profile: Optional[Profile] = None, flows: Optional[Sequence[Flow]] = None,
              watch: Optional[dict[int, TelemetryConfig]] = None) -> None:
        """A fresh engine (empty buffers, time 0) with `profile`, configured
        with `flows` and the instrument on the egress ports of `watch`
        (each kept from before when not given)."""
        if profile is not None:
            self.profile = profile
        if flows is not None:
            self._flows = list(flows)
        if watch is not None:
            self._telemetry = dict(watch)
        self.sw.set_pipeline(self.program.pipeline)
        self._configure()

    def _configure(self) -> None:
        from p4scope.control.apps.telemetry import Telemetry

        self.tel = Telemetry(self.sw)
        self.tel.collector(COLLECTOR_PORT, SWITCH_IP_STR, COLLECTOR_IP_STR,
                           collector_mac=_mac_str(host_mac(COLLECTOR_PORT)),
                           switch_mac=_mac_str(SWITCH_MAC), udp_port=COLLECTOR_UDP, node_id=NODE_ID,
                           snaplen=SNAP_BYTES, session=REPORT_SESSION)
        if self._flows:
            self._write_forwarding()
        for eg, cfg in self._telemetry.items():
            self._write_telemetry(eg, cfg)
        if self.setup_switch is not None:
            self.setup_switch(self.sw)

    def _write_forwarding(self) -> None:
        smac = self.sw.table("smac")
        dmac = self.sw.table("dmac")
        ins = sorted({f.ingress for f in self._flows})
        egs = sorted({f.egress for f in self._flows if not f.routed})
        entries = [smac.entry({"hdr.ethernet.src_addr": host_mac(p)}, "smac_hit", port=p)
                   for p in ins]
        entries += [dmac.entry({"hdr.ethernet.dst_addr": host_mac(p)}, "forward", port=p)
                    for p in egs]
        self.sw.insert(entries)
        routed = sorted({f.egress for f in self._flows if f.routed})
        if routed:
            from p4scope.control.apps.routing import NextHop, Router

            router = Router(self.sw, SWITCH_MAC)
            router.add_router_mac()
            for p in routed:
                router.route(f"{_ip_str(host_ip(p))}/32", [NextHop(host_mac(p), port=p)])

    def _write_telemetry(self, egress: int, cfg: TelemetryConfig) -> None:
        self.tel.port(egress, burst_threshold=cfg.burst_on, burst_end=cfg.burst_off,
                      histogram_shift=cfg.histogram_shift if cfg.bytes_mode else 4,
                      interval_log2_us=cfg.interval_log2_us,
                      report_intervals=cfg.report_intervals,
                      report_burst_packets=cfg.report_burst_packets, bytes_mode=cfg.bytes_mode)

    # ----- reading the instrument over P4Runtime ------------------------------------

    def pair_counters(self, egress: int, ingresses: Sequence[int],
                      counter: str = "tel_delivered") -> dict[int, tuple[int, int]]:
        """What each ingress port sent through `egress` (tel_delivered, or
        tel_offered before the queue): ingress -> (bytes, packets)."""
        vals = self.tel.pairs([egress], ingresses, counter)
        return {i: (v.bytes, v.packets) for (_, i), v in vals.items()}

    # ----- the engine --------------------------------------------------------------

    @property
    def engine(self) -> Any:
        """The running engine (p4scope_dataplane.Engine); use under `locked()`."""
        dp = self.device.dataplane
        if dp is None:
            raise RuntimeError("no pipeline committed")
        return getattr(dp, "raw", dp)

    @contextmanager
    def locked(self) -> Iterator[Any]:
        """The engine, with the device's lock held (P4Runtime requests wait)."""
        with self.device.lock:
            yield self.engine


def engine_version() -> str:
    try:
        import p4scope_dataplane

        return str(getattr(p4scope_dataplane, "__version__", "?"))
    except ImportError:
        return "not installed"


