"""Building a topology in Mininet under a run directory, and removing it.

    from p4scope.topologies import builders, run
    topo = builders.single_switch(3, switch={"kind": "p4scope", "program": "build/x.json"})
    with run.Network(topo, "results/run1") as net:
        print(net.host("h1").cmd("ping -c1", net.host("h2").IP()))
        print(net.grpc_addr("s1"))

RUN_DIR receives manifest.json (what was created, see manifest.py),
topology.json (the topology as built: ports, addresses and gRPC ports
filled in), logs/ and pcaps/. Steps, each recorded as it happens:

1. runs left behind by dead owners are cleaned (clean.clean_stale);
2. root-namespace names the run needs must be free (else a clear error:
   never delete what another run or the user made);
3. hosts (named namespaces), switches, links (offloads off, htb), host
   addresses and bonds;
4. switch daemons started together, then each waited for.

stop() runs Mininet's net.stop() and then clean.clean_run on the manifest,
which removes whatever net.stop() left (processes started in hosts, the
namespaces). Only Mininet's Python API is used: never `mn -c` or
mininet.clean, which kill processes by name machine-wide.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from . import spec as tspec
from .clean import CleanReport, clean_run, clean_stale, ifindex
from .manifest import Manifest, load_registered, registered_runs
from .spec import Topology

GRPC_BASE = 50051
THRIFT_BASE = 9090
TOOLS = ("ip", "tc", "ethtool", "mnexec")


class NetworkError(RuntimeError):
    pass


def check_environment() -> None:
    """Raises NetworkError saying what is missing for a Mininet run."""
    if os.geteuid() != 0:
        raise NetworkError("Mininet runs need root (network namespaces, veth, tc)")
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise NetworkError(f"missing tools: {', '.join(missing)} (run scripts/setup.sh)")
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        raise NetworkError("Mininet is not importable (run scripts/setup.sh: it installs Debian's "
                           "mininet and makes it visible to .venv)") from None


def _port_free(port: int) -> bool:
    for host in ("0.0.0.0", "127.0.0.1"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def _ports_of_live_runs() -> set[int]:
    taken: set[int] = set()
    for entry in registered_runs():
        try:
            m = load_registered(entry)
        except (FileNotFoundError, ValueError):
            continue
        for p in m.ports.values():
            taken.update(v for v in p.values() if isinstance(v, int))
    return taken


def allocate_port(start: int, taken: set[int]) -> int:
    p = start
    while p < 65535:
        if p not in taken and _port_free(p):
            taken.add(p)
            return p
        p += 1
    raise NetworkError(f"no free TCP port from {start}")


def root_names(topo: Topology) -> list[str]:
    """Interfaces the run creates in the root namespace."""
    names = [topo.ifname(ep) for l in topo.links for ep in (l.a, l.b) if topo.is_switch(ep.node)]
    names += [f"{s.name}-br" for s in topo.switches if s.kind == "bridge"]
    return names


class Network:
    """One topology in Mininet. Use as a context manager, or start()/stop()."""

    def __init__(self, topo: Topology, run_dir: str | Path, *, ready_timeout: float = 60.0,
                 programs: Optional[dict[str, Sequence[str]]] = None,
                 switch_classes: Optional[dict[str, type]] = None,
                 log: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> None:
        """programs: executable per switch kind, overriding the defaults
        (e.g. {"bmv2": ["/opt/bmv2/bin/simple_switch_grpc"]}).
        switch_classes: a Mininet switch class per switch name, used for
        that switch instead of its kind's (nodes.user_switch)."""
        self.topo = topo
        self.switch_classes = dict(switch_classes or {})
        unknown = sorted(set(self.switch_classes) - {s.name for s in topo.switches})
        if unknown:
            raise NetworkError(f"switch_classes: no switch named {', '.join(unknown)}")
        self.run_dir = Path(run_dir).resolve()
        self.ready_timeout = ready_timeout
        self.programs = dict(programs or {})
        self.log = log
        self.net: Any = None
        self.manifest: Optional[Manifest] = None
        self.clean_report: Optional[CleanReport] = None
        self._old_sigterm: Any = None

    # ------------------------------------------------------------ access

    def host(self, name: str) -> Any:
        return self.net.get(name)

    def switch(self, name: str) -> Any:
        return self.net.get(name)

    @property
    def hosts(self) -> list[Any]:
        return list(self.net.hosts)

    def grpc_addr(self, switch: str) -> str:
        return self.switch(switch).grpc_addr

    def netns(self, host: str) -> str:
        """The named namespace of a host (`ip netns exec NAME ...`)."""
        return self.host(host).netns

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> "Network":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> "Network":
        check_environment()
        for rep in clean_stale(self.log):
            if rep.problems:
                self.log(f"p4scope: warning: {rep.summary()}")
        self._preflight()
        self._catch_sigterm()
        self.manifest = Manifest.create(self.run_dir)
        atexit.register(self._stop_at_exit)
        try:
            self._build()
            self.manifest.set_state("running")
        except BaseException:
            self.stop()
            raise
        return self

    def _stop_at_exit(self) -> None:
        """A script that ends (or exits on SIGTERM) without stop() still
        removes its run."""
        if self.net is not None or (self.manifest is not None and self.manifest.state != "cleaned"):
            self.stop()

    def _catch_sigterm(self) -> None:
        """`kill PID` (SIGTERM) becomes SystemExit in the main thread, so the
        run is stopped and cleaned like on Ctrl-C. Only where nobody else
        handles SIGTERM; a crash or SIGKILL is left to clean_stale()."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_term(signum: int, frame: Any) -> None:
            raise SystemExit(128 + signum)

        self._old_sigterm = signal.signal(signal.SIGTERM, on_term)

    def _restore_sigterm(self) -> None:
        if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def _preflight(self) -> None:
        if self.topo.has_switch_loop(("bridge",)):
            raise NetworkError("the bridge switches form a loop: without STP, broadcasts would "
                               "circle forever. Use P4 switches (the controller decides how to "
                               "flood) or a topology without loops for bridges")
        for name in root_names(self.topo) + sorted(self.switch_classes):
            if ifindex(name) is not None:
                raise NetworkError(
                    f"interface {name} already exists in the root namespace: another run uses "
                    "these switch names, or something not made by p4scope does. Rename the "
                    "switches, or stop that run (p4scope clean RUN_DIR for a dead one)")
        if self.run_dir.exists() and (self.run_dir / "manifest.json").exists():
            old = Manifest.load(self.run_dir)
            if old.state != "cleaned":
                raise NetworkError(f"{self.run_dir} holds a run that was not cleaned up "
                                   f"(state {old.state}); p4scope clean {self.run_dir}")

    def _ports(self) -> dict[str, dict[str, int]]:
        taken = _ports_of_live_runs()
        for s in self.topo.switches:
            taken.update(p for p in (s.grpc_port, s.thrift_port) if p is not None)
        out = {}
        for s in self.topo.switches:
            if s.kind == "bridge" or s.name in self.switch_classes:
                continue
            out[s.name] = {
                "grpc": s.grpc_port if s.grpc_port is not None else allocate_port(GRPC_BASE, taken),
                "thrift": s.thrift_port if s.thrift_port is not None else allocate_port(THRIFT_BASE, taken),
            }
        return out

    def _build(self) -> None:
        from mininet.link import Link
        from mininet.net import Mininet

        from .intf import P4Intf
        from .nodes import LinuxBridge, P4Host, P4Switch, user_switch

        m = self.manifest
        assert m is not None
        m.ports = self._ports()
        m.save()
        self.net = net = Mininet(topo=None, build=False, controller=None, autoSetMacs=False)
        for h in self.topo.hosts:
            net.addHost(h.name, cls=P4Host, spec=h, manifest=m)
        for i, s in enumerate(self.topo.switches):
            if s.name in self.switch_classes:
                net.addSwitch(s.name, cls=user_switch(self.switch_classes[s.name]), spec=s,
                              manifest=m, index=i)
            elif s.kind == "bridge":
                net.addSwitch(s.name, cls=LinuxBridge, spec=s, manifest=m, index=i)
            else:
                net.addSwitch(s.name, cls=P4Switch, spec=s, manifest=m, index=i,
                              grpc_port=m.ports[s.name]["grpc"], thrift_port=m.ports[s.name]["thrift"],
                              program=self.programs.get(s.kind))
        for l in self.topo.links:
            self._add_link(net, Link, P4Intf, l)
        self._write_topology()
        for h in self.topo.hosts:
            node = net.get(h.name)
            node.configure([self.topo.ifname(l.a if l.a.node == h.name else l.b)
                            for l in self.topo.links_of(h.name)])
        net.built = True  # addresses are ours: skip Mininet's configHosts
        net.start()       # starts every switch daemon
        deadline = time.monotonic() + self.ready_timeout
        for sw in net.switches:
            sw.wait_ready(deadline)

    def _add_link(self, net: Any, link_cls: Any, intf_cls: Any, l: tspec.LinkSpec) -> None:
        params = {k: v for k, v in (("bw", l.bw), ("queue", l.queue), ("mtu", l.mtu)) if v is not None}
        kw: dict[str, Any] = {}
        for side, ep in (("1", l.a), ("2", l.b)):
            kw[f"port{side}"] = ep.port
            kw[f"intfName{side}"] = self.topo.ifname(ep)
            kw[f"params{side}"] = dict(params)
            if not self.topo.is_switch(ep.node):
                hs = self.topo.node(ep.node)
                assert isinstance(hs, tspec.HostSpec)
                if hs.bond is None:
                    kw[f"addr{side}"] = hs.mac
        net.addLink(net.get(l.a.node), net.get(l.b.node), cls=link_cls, intf=intf_cls, **kw)
        assert self.manifest is not None
        for ep in (l.a, l.b):
            if self.topo.is_switch(ep.node):
                name = self.topo.ifname(ep)
                self.manifest.add_interface(name, ifindex(name) or -1)

    def _write_topology(self) -> None:
        assert self.manifest is not None
        doc = self.topo.to_dict()
        for s in doc["switches"]:
            p = self.manifest.ports.get(s["name"])
            if p:
                s["grpc_port"], s["thrift_port"] = p["grpc"], p["thrift"]
            cls = self.switch_classes.get(s["name"])
            if cls is not None:
                s["class"] = f"{cls.__module__}:{cls.__qualname__}"
        doc["run_id"] = self.manifest.run_id
        doc["netns"] = {h.name: self.manifest.netns_name(h.name) for h in self.topo.hosts}
        (self.run_dir / "topology.json").write_text(json.dumps(doc, indent=2) + "\n")

    def stop(self) -> CleanReport:
        """Stops everything and removes what the run created (idempotent)."""
        if self.manifest is None:
            raise NetworkError("not started")
        if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the clean-up finish
        errors = []
        if self.net is not None:
            try:
                # daemons first: Mininet deletes links before it stops switches
                for sw in self.net.switches:
                    sw.stop_daemon()
                self.net.stop()
            except Exception as e:  # keep going: the manifest clean-up below still runs
                errors.append(f"net.stop(): {e}")
            self.net = None
        self.clean_report = rep = clean_run(self.run_dir, force=True)
        self._restore_sigterm()
        atexit.unregister(self._stop_at_exit)
        if errors:
            rep.problems += errors
        if rep.problems:
            self.log(f"p4scope: {rep.summary()}")
        return rep
