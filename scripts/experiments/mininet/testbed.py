"""A topology in Mininet with the reference DUT in every switch, configured
by the controller, links watched for failures.

    dut = build_dut(tmp_dir)                       # p4src/dut.p4 -> JSON + P4Info
    with Testbed(builders.single_switch(4), run_dir, dut) as tb:
        tb.net.host("h1").cmd("ping -c1 10.0.0.2")
        tb.fabric.learnt()
        tb.set_queue_rate("s1", 4, 5000)           # pps, through the Thrift API

Switch names get a short random suffix (`s1` becomes e.g. `s1k3f`):
interface names live in the root namespace, which runs on the same
machine share. `tb.name("s1")` gives the name in use. The switch kind
(`p4scope` or `bmv2`) applies to every switch; BMv2 must be on PATH.
Everything the run made is removed on exit (topologies.run.Network),
also after an error.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ...control import Pipeline
from ..testbed import compile_pipeline
from ...control.apps.collector import Collector
from ...control.fabric import Fabric, FabricOptions, configure, router_arp
from ...topologies.linkwatch import LinkWatcher, switch_ports
from ...topologies.run import Network
from ...topologies.spec import Topology, rename_switches, with_switch_defaults

ROOT = Path(__file__).resolve().parents[3]
DUT_SOURCE = ROOT / "p4src" / "dut.p4"
KINDS = ("p4scope", "bmv2")


@dataclass
class DutBuild:
    json_path: Path
    pipeline: Pipeline


def build_dut(out_dir: Path, source: Path = DUT_SOURCE) -> DutBuild:
    """Compiles the reference DUT with p4scope's compiler into out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pipe = compile_pipeline(source)
    jp = out_dir / f"{Path(source).stem}.json"
    jp.write_bytes(pipe.device_config)
    (out_dir / f"{Path(source).stem}.p4info.txtpb").write_text(str(pipe.p4info))
    return DutBuild(jp, pipe)


def bmv2_missing() -> Optional[str]:
    """None if simple_switch_grpc can run here, else why not."""
    if shutil.which("simple_switch_grpc") is None:
        return ("BMv2 (simple_switch_grpc) is not installed: p4c and BMv2 are in no package "
                "registry this machine reaches; build them from source to compare")
    return None


def switch_cli(thrift_port: int, commands: list[str], timeout: float = 20.0) -> str:
    """Runs simple_switch_CLI commands through p4scope switch-cli (works
    against p4scope's switch and BMv2 alike); returns its output."""
    exe = Path(sys.executable).parent / "p4scope"
    argv = [str(exe) if exe.exists() else "p4scope", "switch-cli", "--thrift-port", str(thrift_port)]
    r = subprocess.run(argv, input="\n".join(commands) + "\n", capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0 or "Error" in r.stdout:
        raise RuntimeError(f"switch-cli {commands}: status {r.returncode}: "
                           f"{(r.stdout + r.stderr).strip()}")
    return r.stdout


def with_router_arp(topo: Topology) -> Topology:
    """For L3 mode: every host gets static ARP entries sending every other
    host's address to its own switch's router MAC (plan.router_arp)."""
    from dataclasses import replace

    arp = router_arp(topo)
    return replace(topo, hosts=tuple(replace(h, arp={**h.arp, **arp.get(h.name, {})})
                                     for h in topo.hosts))


class Testbed:
    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, topo: Topology, run_dir: Path, dut: DutBuild, *, kind: str = "p4scope",
                 options: Optional[FabricOptions] = None, cpu_port: Optional[int] = 255,
                 log: str = "warn", watch_links: bool = True,
                 collector: Optional[Collector] = None, ready_timeout: float = 60.0) -> None:
        if kind not in KINDS:
            raise ValueError(f"switch kind {kind!r} is not one of {', '.join(KINDS)}")
        tag = secrets.token_hex(2)[:3]
        self.names = {s.name: f"{s.name}{tag}" for s in topo.switches}
        topo = rename_switches(topo, self.names)
        if options is not None and options.mode == "l3":
            topo = with_router_arp(topo)
        extra: dict[str, Any] = {"kind": kind, "program": str(dut.json_path), "log": log}
        if cpu_port is not None:
            extra["cpu_port"] = cpu_port
        self.topo = with_switch_defaults(topo, **extra)
        self.run_dir = Path(run_dir)
        self.dut, self.kind, self.options = dut, kind, options
        self.watch_links, self.collector = watch_links, collector
        self.ready_timeout = ready_timeout
        self.net: Any = None
        self.fabric: Optional[Fabric] = None
        self.watcher: Optional[LinkWatcher] = None

    def name(self, switch: str) -> str:
        """The name in use of a switch of the original topology."""
        return self.names.get(switch, switch)

    def host(self, name: str) -> Any:
        return self.net.host(name)

    def start(self) -> "Testbed":
        self.net = Network(self.topo, self.run_dir, ready_timeout=self.ready_timeout)
        self.net.start()
        try:
            addrs = {s.name: self.net.grpc_addr(s.name) for s in self.topo.switches}
            self.fabric = configure(self.topo, addrs, self.options, pipeline=self.dut.pipeline,
                                    collector=self.collector)
            if self.watch_links:
                self.watcher = LinkWatcher(switch_ports(self.topo), self._link_changed).start()
        except BaseException:
            self.stop()
            raise
        return self

    def _link_changed(self, key: Any, up: bool) -> None:
        assert self.fabric is not None
        switch, port = key
        if up:
            self.fabric.link_up(switch, port)
        else:
            self.fabric.link_down(switch, port)

    def thrift_port(self, switch: str) -> int:
        return self.net.manifest.ports[self.name(switch)]["thrift"]

    def set_queue_rate(self, switch: str, port: int, pps: int) -> None:
        switch_cli(self.thrift_port(switch), [f"set_queue_rate {int(pps)} {port}"])

    def set_queue_depth(self, switch: str, port: int, packets: int) -> None:
        switch_cli(self.thrift_port(switch), [f"set_queue_depth {int(packets)} {port}"])

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher = None
        if self.fabric is not None:
            self.fabric.close()
            self.fabric = None
        if self.net is not None:
            self.net.stop()
            self.net = None

    def __enter__(self) -> "Testbed":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
