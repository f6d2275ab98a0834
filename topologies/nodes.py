"""Mininet node classes: hosts, P4 switches (p4scope or BMv2), a Linux
bridge (a baseline, and a switch for tests that need none of P4) and any
Mininet switch class of the user's (user_switch).

Every node records what it creates in the run's manifest (manifest.py)
as it creates it; see run.py for the order of a whole run.

P4 switches run in the root namespace, like BMv2 in the p4lang tutorials,
so their gRPC servers are reachable on 127.0.0.1. The daemon is started
with subprocess (not through the node's shell) in a session of its own, so
its pid is known exactly and its process group holds all it spawns; it is
stopped by that identity, never by name.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from mininet.node import Host, Switch

from . import cmdline, procs
from .clean import ifindex
from .lag import Bond
from .manifest import Manifest
from .shell import run_checked
from .spec import HostSpec, SwitchSpec


class SwitchStartError(RuntimeError):
    pass


class P4Host(Host):
    """A host in a named network namespace (p4s-<run>-<name>, visible to
    `ip netns`), pinned so that clean-up can find all that runs in it."""

    def __init__(self, name: str, spec: HostSpec, manifest: Manifest, **params: Any) -> None:
        self.spec, self.manifest = spec, manifest
        self.bond: Optional[Bond] = None
        self.netns = manifest.netns_name(name)
        manifest.add_namespace(self.netns)  # before it exists: the name is the run's alone
        super().__init__(name, inNamespace=True, **params)
        manifest.add_process(self.pid, f"shell of host {name}", group=True)
        r = subprocess.run(["ip", "netns", "attach", self.netns, str(self.pid)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ip netns attach {self.netns} {self.pid}: {r.stderr.strip()}")

    def configure(self, member_ifnames: Sequence[str]) -> None:
        """Addresses, routes and ARP from the spec; a bond over all the
        host's interfaces if the spec asks for one. IPv6 is off, so the
        only frames a host sends are the ones it is asked to."""
        s = self.spec
        run_checked(self, "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
                          "net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.lo.disable_ipv6=1")
        run_checked(self, "ip link set dev lo up")
        if s.bond is not None:
            self.bond = Bond(self.name, self.netns, member_ifnames, s.bond)
            self.bond.create(s.mac, s.ip, s.mtu)
            self.bond.watch()
            dev = self.bond.name
        else:
            (dev,) = member_ifnames
            run_checked(self, f"ip link set dev {dev} address {s.mac}")
            if s.mtu is not None:
                run_checked(self, f"ip link set dev {dev} mtu {s.mtu}")
            run_checked(self, f"ip addr add {s.ip} dev {dev}")
            run_checked(self, f"ip link set dev {dev} up")
            intf = self.intf(dev)
            intf.ip, intf.prefixLen, intf.mac = s.ip.split("/")[0], int(s.ip.split("/")[1]), s.mac
        self.dev = dev
        if s.gw is not None:
            run_checked(self, f"ip route replace default via {s.gw} dev {dev}")
        arp = dict(s.arp)
        if s.gw is not None and s.gw_mac is not None:
            arp[s.gw] = s.gw_mac
        for ip, mac in arp.items():
            run_checked(self, f"ip neigh replace {ip} lladdr {mac} dev {dev} nud permanent")

    def terminate(self) -> None:
        if self.bond is not None:
            self.bond.unwatch()
        super().terminate()

    def IP(self, intf: Any = None) -> str:  # noqa: N802 (Mininet's name)
        return self.spec.ip.split("/")[0] if intf is None else super().IP(intf)

    def MAC(self, intf: Any = None) -> str:  # noqa: N802
        return self.spec.mac if intf is None else super().MAC(intf)

    def configDefault(self, **_: Any) -> None:  # noqa: N802
        """Mininet's default configuration is replaced by configure()."""


class _RunSwitch(Switch):
    """Common part: a Mininet switch node in the root namespace whose shell
    is recorded in the manifest."""

    def __init__(self, name: str, spec: SwitchSpec, manifest: Manifest, index: int,
                 **params: Any) -> None:
        self.spec, self.manifest = spec, manifest
        params.pop("inNamespace", None)  # Mininet's addSwitch passes its default
        super().__init__(name, dpid=f"{index + 1:016x}", inNamespace=False, **params)
        manifest.add_process(self.pid, f"shell of switch {name}", group=True)

    def port_ifnames(self) -> list[tuple[int, str]]:
        return sorted((p, i.name) for p, i in self.intfs.items() if i.name != "lo")


class LinuxBridge(_RunSwitch):
    """A kernel bridge named <switch>-br (learning, flooding, no STP)."""

    @property
    def bridge(self) -> str:
        return f"{self.name}-br"

    def start(self, controllers: Any = None) -> None:
        br = self.bridge
        run_checked(self, f"ip link add name {br} type bridge stp_state 0")
        self.manifest.add_interface(br, ifindex(br) or -1)
        for _, ifn in self.port_ifnames():
            run_checked(self, f"ip link set dev {ifn} master {br}")
            run_checked(self, f"ip link set dev {ifn} up")
        run_checked(self, f"ip link set dev {br} up")

    def wait_ready(self, deadline: float) -> None:
        pass

    def stop_daemon(self) -> None:
        pass

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's name)
        self.cmd(f"ip link delete dev {self.bridge} 2>/dev/null")
        super().stop(deleteIntfs)


def user_switch(cls: type) -> type:
    """`cls` (any Mininet switch class of the user's: Mininet's own
    LinuxBridge, a user-space switch, ...) as a run's switch: its shell is
    recorded in the manifest, and so is the root-namespace interface named
    after the switch that Mininet's bridge classes make, so clean-up finds
    both after a crash. It has no daemon ports and nothing to wait for."""
    if not (isinstance(cls, type) and issubclass(cls, Switch)):
        raise TypeError(f"{cls!r} is not a Mininet switch class (mininet.node.Switch)")

    class UserSwitch(cls):  # type: ignore[misc, valid-type]
        def __init__(self, name: str, spec: SwitchSpec, manifest: Manifest, index: int,
                     **params: Any) -> None:
            self.spec, self.manifest = spec, manifest
            super().__init__(name, dpid=f"{index + 1:016x}", **params)
            manifest.add_process(self.pid, f"shell of switch {name} ({cls.__name__})", group=True)

        def start(self, controllers: Any) -> None:
            super().start(controllers)
            idx = ifindex(self.name)
            if idx is not None:
                self.manifest.add_interface(self.name, idx)

        def wait_ready(self, deadline: float) -> None:
            pass

        def stop_daemon(self) -> None:
            pass

    UserSwitch.__name__ = UserSwitch.__qualname__ = f"User{cls.__name__}"
    return UserSwitch


class P4Switch(_RunSwitch):
    """A switch daemon with simple_switch_grpc's command line.

    kind "p4scope" runs `p4scope switch`, kind "bmv2" simple_switch_grpc;
    `program` overrides the executable (a list of words). Logs go to
    RUN_DIR/logs/<name>.log, pcaps (if the spec asks) to RUN_DIR/pcaps/<name>.
    The daemon's working directory is RUN_DIR; the program path is made
    absolute first, other words (extra_args, target_args) are passed as given.
    """

    def __init__(self, name: str, spec: SwitchSpec, manifest: Manifest, index: int,
                 grpc_port: int, thrift_port: int, program: Optional[Sequence[str]] = None,
                 **params: Any) -> None:
        super().__init__(name, spec, manifest, index, **params)
        self.grpc_port, self.thrift_port = grpc_port, thrift_port
        self.program = list(program) if program is not None else cmdline.program_for(spec.kind)
        self.proc: Optional[subprocess.Popen] = None
        self.proc_start: Optional[int] = None
        self.log_path = manifest.run_dir / "logs" / f"{name}.log"

    def command(self) -> cmdline.SwitchCommand:
        s = self.spec
        pcap = None
        if s.pcap:
            pcap = str(self.manifest.run_dir / "pcaps" / self.name)
        return cmdline.SwitchCommand(
            ports=tuple(self.port_ifnames()), device_id=s.device_id, grpc_port=self.grpc_port,
            thrift_port=self.thrift_port,
            # the daemon runs in the run directory: a relative path means the caller's
            program=None if s.program is None else str(Path(s.program).resolve()),
            cpu_port=s.cpu_port,
            log_level=s.log, pcap_dir=pcap, priority_queues=s.priority_queues,
            extra_args=s.extra_args, target_args=s.target_args)

    def argv(self) -> list[str]:
        return [*self.program, *self.command().args()]

    @property
    def grpc_addr(self) -> str:
        return self.command().grpc_addr

    def start(self, controllers: Any = None) -> None:
        """Starts the daemon; wait_ready() waits for its gRPC port."""
        argv = self.argv()
        if self.spec.pcap:
            Path(self.command().pcap_dir or ".").mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        log.write(("# " + " ".join(argv) + "\n").encode())
        log.flush()
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         cwd=str(self.manifest.run_dir))
        except FileNotFoundError:
            raise SwitchStartError(f"{self.name}: cannot run {argv[0]!r}: not installed"
                                   + (" (BMv2's simple_switch_grpc is not on PATH)"
                                      if self.spec.kind == "bmv2" else "")) from None
        finally:
            log.close()
        self.proc_start = procs.start_time(self.proc.pid)
        self.manifest.add_process(self.proc.pid, f"{self.spec.kind} switch {self.name}", group=True)

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_ready(self, deadline: float) -> None:
        """Returns when the gRPC port accepts connections; raises if the
        daemon exits or `deadline` (time.monotonic()) passes first."""
        assert self.proc is not None, "start() first"
        while True:
            if self.proc.poll() is not None:
                raise SwitchStartError(f"{self.name}: the switch exited with status "
                                       f"{self.proc.returncode} before it was ready; log "
                                       f"{self.log_path}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.grpc_port), timeout=0.5):
                    return
            except OSError:
                pass
            if time.monotonic() >= deadline:
                raise SwitchStartError(f"{self.name}: gRPC port {self.grpc_port} not open after "
                                       f"waiting; log {self.log_path}:\n{self.log_tail()}")
            time.sleep(0.05)

    def stop_daemon(self) -> None:
        """SIGTERM to the daemon's process group, SIGKILL after 5 s."""
        if self.proc is not None and self.proc_start is not None:
            procs.terminate([(self.proc.pid, self.proc_start)], group=True, timeout=5.0)
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803
        self.stop_daemon()
        super().stop(deleteIntfs)
