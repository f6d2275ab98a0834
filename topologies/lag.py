"""A host bonded over 2..4 links, without the bonding driver.

This kernel has neither bonding nor team (ENVIRONMENT.md), so the bond is
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
except under l2 and random. set_active() rewrites the filters for the
members that remain, which is the failover a bond does when a link goes
down.
"""

from __future__ import annotations

from typing import Any, Sequence

from .tc import offloads_off_cmd
from .shell import run_checked

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

    def jeq(self, k: int, jt: str, jf: str) -> None:
        self.ins.append([JEQ_K, jt, jf, _u32(k)])

    def jset(self, k: int, jt: str, jf: str) -> None:
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


class Bond:
    """The tc bond of one host (a Mininet node) over its member interfaces."""

    def __init__(self, host: Any, members: Sequence[str], policy: str, name: str = "bond0") -> None:
        if not 1 <= len(members) <= 4:
            raise ValueError(f"{host.name}: a bond takes 1..4 members, not {len(members)}")
        if policy not in POLICIES:
            raise ValueError(f"{host.name}: bond hash {policy!r} is not one of {', '.join(POLICIES)}")
        self.host, self.members, self.policy = host, list(members), policy
        self.name, self.peer = name, f"{name}p"
        self.active: list[str] = []

    def create(self, mac: str, ip: str, mtu: int | None = None) -> None:
        h, b, p = self.host, self.name, self.peer
        run_checked(h, f"ip link add {b} type veth peer name {p}")
        run_checked(h, f"ip link set dev {b} address {mac}")
        for dev in (b, p):
            run_checked(h, offloads_off_cmd(dev))
            if mtu is not None:
                run_checked(h, f"ip link set dev {dev} mtu {mtu}")
        run_checked(h, f"tc qdisc add dev {p} ingress")
        for m in self.members:
            run_checked(h, f"ip link set dev {m} up")
            run_checked(h, f"tc qdisc add dev {m} ingress")
            run_checked(h, f"tc filter add dev {m} parent ffff: protocol all prio 1 u32 match u32 0 0 "
                           f"action mirred egress redirect dev {p}")
        run_checked(h, f"ip link set dev {p} up")
        run_checked(h, f"ip addr add {ip} dev {b}")
        run_checked(h, f"ip link set dev {b} up")
        self.set_active(self.members)

    def set_active(self, members: Sequence[str]) -> None:
        """Spreads traffic over `members` only (in the given order)."""
        unknown = [m for m in members if m not in self.members]
        if unknown:
            raise ValueError(f"{self.host.name}: {unknown} are not members of {self.name}")
        h, p = self.host, self.peer
        h.cmd(f"tc filter del dev {p} parent ffff: 2>/dev/null")
        for i, m in enumerate(members):
            prog = bytecode(hash_program(self.policy, i, len(members)))
            run_checked(h, f"tc filter add dev {p} parent ffff: protocol all prio {10 + i} "
                           f"bpf bytecode \"{prog}\" action mirred egress redirect dev {m}")
        self.active = list(members)
