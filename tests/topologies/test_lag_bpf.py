"""The bond's classic-BPF hash programs, run by a small interpreter of the
opcodes they use: every frame matches exactly one member, flows keep
their member, and flows spread over all members."""

import random
import struct
import subprocess
import time
import uuid

import pytest

from p4scope.topologies import lag


def run(prog, frame: bytes, rnd: int = 0) -> int:
    """Executes `prog` on an Ethernet frame; returns the program's result."""
    net = 14
    a = x = 0
    mem = [0] * 16
    pc = 0

    def load(k, size):
        k = k - (1 << 32) if k >= 1 << 31 else k
        if k == lag.SKF_AD_OFF + lag.SKF_AD_PROTOCOL:
            return struct.unpack("!H", frame[12:14])[0]
        if k == lag.SKF_AD_OFF + lag.SKF_AD_RANDOM:
            return rnd
        if k >= lag.SKF_LL_OFF and k < lag.SKF_NET_OFF:
            off = k - lag.SKF_LL_OFF
        elif k >= lag.SKF_NET_OFF and k < lag.SKF_AD_OFF:
            off = net + k - lag.SKF_NET_OFF
        else:
            off = net + k  # at tc ingress, data starts at the network header
        return int.from_bytes(frame[off:off + size], "big")

    while True:
        code, jt, jf, k = prog[pc]
        pc += 1
        if code == lag.LD_W_ABS:
            a = load(k, 4)
        elif code == lag.LD_H_ABS:
            a = load(k, 2)
        elif code == lag.LD_B_ABS:
            a = load(k, 1)
        elif code == lag.LD_W_IND:
            a = load((x + k) & 0xFFFFFFFF, 4)
        elif code == lag.LDX_B_MSH:
            x = (load(k, 1) & 0xF) * 4
        elif code == lag.TAX:
            x = a
        elif code == lag.TXA:
            a = x
        elif code == lag.ST:
            mem[k] = a
        elif code == lag.LD_MEM:
            a = mem[k]
        elif code == lag.ALU_XOR_X:
            a ^= x
        elif code == lag.ALU_RSH_K:
            a >>= k
        elif code == lag.ALU_AND_K:
            a &= k
        elif code == lag.ALU_MOD_K:
            a %= k
        elif code == lag.JEQ_K:
            pc += jt if a == k else jf
        elif code == lag.JSET_K:
            pc += jt if a & k else jf
        elif code == lag.RET_K:
            return k
        else:
            raise AssertionError(f"unknown opcode {code:#x}")
        a &= 0xFFFFFFFF


def udp_frame(src_ip, dst_ip, sport, dport, proto=17, frag=0, ihl=5):
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + 8, 0, frag, 64, proto, 0,
                     bytes(src_ip), bytes(dst_ip)) + b"\0" * (4 * (ihl - 5))
    return eth + ip + struct.pack("!HHHH", sport, dport, 8, 0)


def member_of(policy, n, frame, rnd=0):
    hits = [i for i in range(n) if run(lag.hash_program(policy, i, n), frame, rnd) == lag.MATCH]
    assert len(hits) == 1, f"{policy}: frame matched {hits}"
    return hits[0]


@pytest.mark.parametrize("policy", lag.POLICIES)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_each_frame_goes_to_exactly_one_member(policy, n):
    rng = random.Random(n)
    used = set()
    for _ in range(200):
        f = udp_frame([10, 0, 0, rng.randrange(256)], [10, 0, 1, rng.randrange(256)],
                      rng.randrange(65536), rng.randrange(65536))
        used.add(member_of(policy, n, f, rnd=rng.getrandbits(32)))
    if policy not in ("ipdst", "l2"):  # the frames share MACs; destinations vary little
        assert used == set(range(n))


def test_l2_hashes_mac_addresses():
    members = set()
    for i in range(64):
        f = bytearray(udp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1, 2))
        f[5] = i  # destination MAC
        members.add(member_of("l2", 4, bytes(f)))
    assert members == {0, 1, 2, 3}


def test_l34_spreads_flows_of_one_host_pair_and_keeps_each():
    counts = [0, 0, 0, 0]
    for sport in range(49152, 49152 + 400):
        f = udp_frame([10, 0, 0, 1], [10, 0, 0, 2], sport, 5201)
        m = member_of("l34", 4, f)
        assert m == member_of("l34", 4, f)
        counts[m] += 1
    assert min(counts) > 60, counts
    # l3 puts them all on one member
    assert len({member_of("l3", 4, udp_frame([10, 0, 0, 1], [10, 0, 0, 2], s, 5201))
                for s in range(49152, 49200)}) == 1


def test_l34_reads_ports_after_ip_options_and_skips_fragments():
    base = udp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1000, 2000)
    with_opts = udp_frame([10, 0, 0, 1], [10, 0, 0, 2], 1000, 2000, ihl=6)
    assert member_of("l34", 4, base) == member_of("l34", 4, with_opts)
    frags = {member_of("l34", 4, udp_frame([10, 0, 0, 1], [10, 0, 0, 2], s, 2000, frag=100))
             for s in range(100)}
    assert len(frags) == 1  # no ports in a later fragment: address hash only


def test_non_ip_goes_to_member_zero():
    arp = bytes.fromhex("ffffffffffff" "020000000001" "0806") + b"\0" * 28
    for policy in ("l3", "l34", "ipdst"):
        assert member_of(policy, 3, arp) == 0


def test_bytecode_format():
    prog = lag.hash_program("l3", 1, 2)
    text = lag.bytecode(prog)
    n, *ins = text.split(",")
    assert int(n) == len(prog) == len(ins)
    assert all(len(i.split()) == 4 for i in ins)
    with pytest.raises(ValueError):
        lag.hash_program("xor", 0, 2)
    with pytest.raises(ValueError):
        lag.hash_program("l3", 2, 2)


def _wait_until(cond, seconds=2.0):
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.005)
    return cond()


def test_the_bond_follows_its_members_carrier_inside_its_namespace(netns_ok):
    """The watcher reads each member's state (ioctls in the host's
    namespace) and moves the bond's traffic off a member whose far end went
    down, at once, and back when the kernel has it running again."""
    from p4scope.topologies.lag import Bond, _ioctl_socket, carrier_up, running, usable
    from p4scope.topologies.netns import run_in_netns

    ns = f"p4s-bond-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    bond = None
    try:
        def ip(*args):
            subprocess.run(["ip", "-n", ns, "link", *args], check=True)

        for i in (0, 1):
            ip("add", f"mem{i}", "type", "veth", "peer", "name", f"far{i}")
        sock = run_in_netns(ns, _ioctl_socket)
        try:
            assert not carrier_up(sock, "mem0")  # both ends down
            ip("set", "far0", "up")
            ip("set", "far1", "up")
            bond = Bond("h1", ns, ["mem0", "mem1"], "l34")
            bond.create("02:00:00:00:00:01", "10.0.0.1/24")  # sets the members up
            assert carrier_up(sock, "mem0") and not carrier_up(sock, "nosuch0")
            assert _wait_until(lambda: running(sock, "mem0")) and not usable(sock, "nosuch0")
            bond.watch()
            ip("set", "far0", "down")
            assert not carrier_up(sock, "mem0") and not usable(sock, "mem0")  # at once
            assert _wait_until(lambda: bond.active == ["mem1"]), bond.active
            ip("set", "far0", "up")
            assert _wait_until(lambda: bond.active == ["mem0", "mem1"]), bond.active
            assert [members for _, members in bond.failovers] == [["mem1"], ["mem0", "mem1"]]
        finally:
            sock.close()
    finally:
        if bond is not None:
            bond.unwatch()
            assert bond._thread is None
        subprocess.run(["ip", "netns", "delete", ns], check=True)
