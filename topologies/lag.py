"""A host bonded over 2..4 links, without the bonding driver.

This kernel has neither bonding nor team (no loadable modules), so the bond is
made of what it has: a veth pair inside the host, ``bond0`` (the host's
address) and ``bond0p``, and tc:

* transmit: frames leaving bond0 arrive on bond0p's ingress; one cls_bpf
  filter per active member (classic BPF: hash the frame, compare hash mod N
  with the member's index) redirects each frame with mirred to its member.
* receive: each member's ingress redirects everything to bond0p's egress,
  so it arrives on bond0.

Hash policies follow Linux bonding's xmit_hash_policy: ``l2`` (MAC
addresses), ``l3`` (IPv4 addresses), ``l34`` (addresses and TCP/UDP ports
of unfragmented IPv4), ``ipdst``, and ``random`` (spreads frames, as round
robin would, and reorders as much). Non-IPv4 frames (ARP) use member 0
except under l2 and random.

Failover: a watcher reads each member's state every 10 ms (ioctls on a
socket made in the host's namespace), as the bonding driver's MII monitor
does, and calls set_active() with the members it may send on: a member
leaves as soon as its carrier is lost, and comes back once the kernel has
it running again (IFF_RUNNING: its transmit queue is back, which the
kernel does at linkwatch's next run, up to a second after the carrier).
rtnetlink's link notifications come from that same run, so the watcher
does not wait for them: under load they came ~1 s late, an outage as long.
Commands go through ``ip netns exec`` rather than Mininet's node shell,
so the watcher thread never shares that shell with the caller.
"""

from __future__ import annotations

import array
import fcntl
import socket
import struct
import subprocess
import threading
import time
from typing import Any, Optional, Sequence

from .netns import run_in_netns
from .tc import offloads_off_cmd

MIIMON_S = 0.01
SIOCETHTOOL, ETHTOOL_GLINK = 0x8946, 0x0000000A
SIOCGIFFLAGS, IFF_RUNNING = 0x8913, 0x40

# classic BPF opcodes (linux/filter.h)
LD_W_ABS, LD_H_ABS, LD_B_ABS = 0x20, 0x28, 0x30
LD_W_IND = 0x40
LDX_B_MSH = 0xB1
TAX, TXA = 0x07, 0x87
ALU_XOR_X, ALU_RSH_K, ALU_AND_K, ALU_MOD_K = 0xAC, 0x74, 0x54, 0x94
JEQ_K, JSET_K = 0x15, 0x45
RET_K = 0x06
ST, LD_MEM = 0x02, 0x60

SKF_AD_OFF = -0x1000
SKF_AD_PROTOCOL = 0
SKF_AD_RANDOM = 56
SKF_NET_OFF = -0x100000
SKF_LL_OFF = -0x200000

MATCH = 0xFFFFFFFF  # cls_bpf: -1 = match, with the filter's default class
POLICIES = ("l2", "l3", "l34", "ipdst", "random")


def _u32(k: int) -> int:
    return k & 0xFFFFFFFF


class _Prog:
    """A tiny classic-BPF assembler with forward labels."""

    def __init__(self) -> None:
        self.ins: list[list[Any]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0) -> None:
        self.ins.append([code, 0, 0, _u32(k)])

    def jeq(self, k: int, jt: str | int, jf: str | int) -> None:
        self.ins.append([JEQ_K, jt, jf, _u32(k)])

    def jset(self, k: int, jt: str | int, jf: str | int) -> None:
        self.ins.append([JSET_K, jt, jf, _u32(k)])

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def assemble(self) -> list[tuple[int, int, int, int]]:
        out = []
        for i, (code, jt, jf, k) in enumerate(self.ins):
            def rel(t: Any) -> int:
                if isinstance(t, int):
                    return t
                d = self.labels[t] - i - 1
                if not 0 <= d <= 255:
                    raise ValueError(f"jump to {t} out of range")
                return d
            out.append((code, rel(jt), rel(jf), k))
        return out


def _hash_l2(p: _Prog) -> None:
    p.op(LD_W_ABS, SKF_LL_OFF + 2)   # last 4 bytes of the destination MAC
    p.op(TAX)
    p.op(LD_W_ABS, SKF_LL_OFF + 8)   # last 4 bytes of the source MAC
    p.op(ALU_XOR_X)


def hash_program(policy: str, index: int, members: int) -> list[tuple[int, int, int, int]]:
    """A cBPF program that matches the frames member `index` of `members` sends."""
    if policy not in POLICIES:
        raise ValueError(f"bond hash {policy!r} is not one of {', '.join(POLICIES)}")
    if not 0 <= index < members:
        raise ValueError(f"member index {index} outside 0..{members - 1}")
    p = _Prog()
    if policy == "random":
        p.op(LD_W_ABS, SKF_AD_OFF + SKF_AD_RANDOM)
    elif policy == "l2":
        _hash_l2(p)
    else:
        p.op(LD_H_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL)
        p.jeq(0x0800, "ip", "other")
        p.label("ip")
        if policy == "ipdst":
            p.op(LD_W_ABS, SKF_NET_OFF + 16)
        else:
            p.op(LD_W_ABS, SKF_NET_OFF + 12)
            p.op(TAX)
            p.op(LD_W_ABS, SKF_NET_OFF + 16)
            p.op(ALU_XOR_X)
            if policy == "l34":
                p.op(ST, 0)                       # M[0] = address hash
                p.op(LD_H_ABS, SKF_NET_OFF + 6)
                p.jset(0x1FFF, "noports", 0)      # a later fragment: no ports
                p.op(LD_B_ABS, SKF_NET_OFF + 9)
                p.jeq(6, "ports", 0)
                p.jeq(17, "ports", "noports")
                p.label("ports")
                p.op(LDX_B_MSH, SKF_NET_OFF)      # X = IP header length
                p.op(LD_W_IND, SKF_NET_OFF)       # A = source and destination port
                p.op(TAX)
                p.op(LD_MEM, 0)
                p.op(ALU_XOR_X)
                p.jeq(0, "fold", "fold")          # always: continue at fold
                p.label("noports")
                p.op(LD_MEM, 0)
        p.jeq(0, "fold", "fold")
        p.label("other")
        if index != 0:
            p.op(RET_K, 0)
        else:
            p.op(RET_K, MATCH)
        p.label("fold")
    p.op(TAX)
    p.op(ALU_RSH_K, 16)
    p.op(ALU_XOR_X)
    p.op(TAX)
    p.op(ALU_RSH_K, 8)
    p.op(ALU_XOR_X)
    p.op(ALU_MOD_K, members)
    p.jeq(index, "yes", "no")
    p.label("yes")
    p.op(RET_K, MATCH)
    p.label("no")
    p.op(RET_K, 0)
    return p.assemble()


def bytecode(prog: Sequence[tuple[int, int, int, int]]) -> str:
    """The form `tc filter ... bpf bytecode "..."` takes."""
    return ",".join([str(len(prog))] + [f"{c} {jt} {jf} {k}" for c, jt, jf, k in prog])


class BondError(RuntimeError):
    pass


def _ioctl_socket() -> socket.socket:
    return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)


def carrier_up(sock: socket.socket, ifname: str) -> bool:
    """Whether `ifname` (in `sock`'s namespace) is up with a carrier, read
    with ETHTOOL_GLINK as the bonding driver's MII monitor reads it; an
    interface that is gone or down is not."""
    value = array.array("I", [ETHTOOL_GLINK, 0])
    addr, _ = value.buffer_info()
    ifreq = struct.pack("16sP", ifname.encode()[:15], addr)
    try:
        fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    except OSError:
        return False
    return value[1] != 0


def running(sock: socket.socket, ifname: str) -> bool:
    """Whether `ifname` is operationally up (IFF_RUNNING). The kernel sets
    it with the operstate, in the same step that gives the interface its
    transmit queue back after the carrier returned (linkwatch, which may
    take up to a second): before that, frames sent on it are dropped."""
    try:
        out = fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, struct.pack("16sH14x", ifname.encode()[:15], 0))
    except OSError:
        return False
    return bool(struct.unpack_from("H", out, 16)[0] & IFF_RUNNING)


def usable(sock: socket.socket, ifname: str) -> bool:
    """A member the bond may send on: its carrier is up (a lost carrier
    counts at once) and the kernel has it running again (see running())."""
    return carrier_up(sock, ifname) and running(sock, ifname)


class Bond:
    """The tc bond of one host over its member interfaces. `netns` is the
    host's named network namespace (nodes.P4Host.netns)."""

    def __init__(self, host_name: str, netns: str, members: Sequence[str], policy: str,
                 name: str = "bond0") -> None:
        if not 1 <= len(members) <= 4:
            raise ValueError(f"{host_name}: a bond takes 1..4 members, not {len(members)}")
        if policy not in POLICIES:
            raise ValueError(f"{host_name}: bond hash {policy!r} is not one of {', '.join(POLICIES)}")
        self.host_name, self.netns = host_name, netns
        self.members, self.policy = list(members), policy
        self.name, self.peer = name, f"{name}p"
        self.active: list[str] = []
        self.failovers: list[tuple[float, list[str]]] = []
        """(time.time(), active members) for each change the watcher made."""
        self._prios: list[int] = []
        """tc priorities of the transmit filters installed."""
        self._lock = threading.RLock()  # set_active() inside the watcher's check
        self._stop = threading.Event()
        self._sock: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None

    def _sh(self, cmd: str, check: bool = True) -> str:
        r = subprocess.run(["ip", "netns", "exec", self.netns, "sh", "-c", cmd],
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise BondError(f"{self.host_name}: `{cmd}` failed: {r.stderr.strip()}")
        return r.stdout

    def create(self, mac: str, ip: str, mtu: Optional[int] = None) -> None:
        b, p = self.name, self.peer
        self._sh(f"ip link add {b} type veth peer name {p}")
        self._sh(f"ip link set dev {b} address {mac}")
        for dev in (b, p):
            self._sh(offloads_off_cmd(dev))
            if mtu is not None:
                self._sh(f"ip link set dev {dev} mtu {mtu}")
        self._sh(f"tc qdisc add dev {p} ingress")
        for m in self.members:
            self._sh(f"ip link set dev {m} up")
            self._sh(f"tc qdisc add dev {m} ingress")
            self._sh(f"tc filter add dev {m} parent ffff: protocol all prio 1 u32 match u32 0 0 "
                     f"action mirred egress redirect dev {p}")
        self._sh(f"ip link set dev {p} up")
        self._sh(f"ip addr add {ip} dev {b}")
        self._sh(f"ip link set dev {b} up")
        self.set_active(self.members)

    def set_active(self, members: Sequence[str]) -> None:
        """Spreads traffic over `members` only (in the given order); with
        none, the bond sends nothing.

        The new filters are added before the old ones are deleted, in one
        `tc -batch`: frames always find a filter (the old set's or the new
        one's, the lower priority number first), where deleting first left
        the bond sending nothing for as long as the tc commands took."""
        unknown = [m for m in members if m not in self.members]
        if unknown:
            raise ValueError(f"{self.host_name}: {unknown} are not members of {self.name}")
        with self._lock:
            p = self.peer
            base = 20 if self._prios and self._prios[0] < 20 else 10
            cmds = [f"filter add dev {p} parent ffff: protocol all prio {base + i} bpf bytecode "
                    f"\"{bytecode(hash_program(self.policy, i, len(members)))}\" "
                    f"action mirred egress redirect dev {m}" for i, m in enumerate(members)]
            cmds += [f"filter del dev {p} parent ffff: prio {prio}" for prio in self._prios]
            r = subprocess.run(["ip", "netns", "exec", self.netns, "tc", "-batch", "-"],
                               input="\n".join(cmds) + "\n", capture_output=True, text=True)
            if r.returncode != 0:
                raise BondError(f"{self.host_name}: tc -batch failed: {r.stderr.strip()}")
            self._prios = [base + i for i in range(len(members))]
            self.active = list(members)

    def watch(self, miimon: float = MIIMON_S) -> None:
        """Follows the members' state until unwatch(), reading it every
        `miimon` seconds."""
        if self._thread is not None:
            return
        self._sock = run_in_netns(self.netns, _ioctl_socket)
        self._stop.clear()
        self._thread = threading.Thread(target=self._follow, args=(miimon,), name=f"bond-{self.host_name}",
                                        daemon=True)
        self._thread.start()

    def _follow(self, miimon: float) -> None:
        """Acts on a change of the usable members (a choice made by hand
        with set_active() stays until the next change)."""
        assert self._sock is not None
        seen: Optional[list[str]] = None
        while True:
            up = [m for m in self.members if usable(self._sock, m)]
            with self._lock:
                changed, seen = up != seen, up
                if changed and up != self.active:
                    try:
                        self.set_active(up)
                    except BondError:
                        return  # the namespace is going away
                    self.failovers.append((time.time(), list(up)))
            if self._stop.wait(miimon):
                return

    def unwatch(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
