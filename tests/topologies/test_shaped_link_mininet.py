"""A shaped link behind `p4scope switch` in Mininet (root): as on BMv2, the
switch's own egress queue fills when the htb-shaped link backs up, so a
program sees the queue (the p4lang tutorials' ecn and mri exercises), and
every packet is either delivered or counted as dropped by the switch."""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from p4scope.topologies import builders
from p4scope.topologies.run import Network
from p4scope.topologies.spec import from_dict
from tests.topologies.test_mininet import leftovers, unique

PROGRAM = Path(__file__).parent / "ecn_qdepth.p4"
P4SCOPE = str(Path(sys.executable).parent / "p4scope")
pytestmark = pytest.mark.usefixtures("mininet_ok")

# ECT(1) UDP frames of 1000 bytes, as fast as the host sends them
SENDER = textwrap.dedent("""
    import socket, struct, sys, time
    ifname, dst_mac, src_ip, dst_ip, n = sys.argv[1:6]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    src_mac = s.getsockname()[4]
    def csum(b):
        t = sum(struct.unpack("!10H", b))
        t = (t & 0xFFFF) + (t >> 16)
        return ~((t & 0xFFFF) + (t >> 16)) & 0xFFFF
    for i in range(int(n)):
        payload = i.to_bytes(4, "big") + bytes(958)
        udp = struct.pack("!HHHH", 5000, 5001, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 1, 20 + len(udp), 0, 0, 64, 17, 0,
                         socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        s.send(bytes.fromhex(dst_mac.replace(":", "")) + src_mac + b"\\x08\\x00" + ip + udp)
        if i % 50 == 49:
            time.sleep(0.001)
""")

# the UDP frames that arrive: (sequence, ECN bits, stamped enq_qdepth and deq_qdepth)
RECEIVER = textwrap.dedent("""
    import json, socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((sys.argv[1], 0))
    print("ready", flush=True)
    s.settimeout(10)
    got = []
    while True:
        try:
            f = s.recv(2048)
        except socket.timeout:
            break
        s.settimeout(2)
        if f[23] == 17 and f[36:38] == (5001).to_bytes(2, "big"):
            got.append((int.from_bytes(f[42:46], "big"), f[15] & 3, int.from_bytes(f[18:20], "big"),
                        f[15] >> 2))
    print(json.dumps(got), flush=True)
""")


def counter(thrift_port: int, name: str) -> int:
    r = subprocess.run([P4SCOPE, "switch-cli", "--thrift-port", str(thrift_port), "--fail-on-error"],
                       input=f"counter_read {name} 0\n", capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"\[0\]= \((\d+) bytes, (\d+) packets\)", r.stdout)
    assert m, r.stdout
    return int(m.group(2))


def test_a_shaped_link_fills_the_switch_queue_marks_ecn_and_drops_nothing_silently(tmp_path):
    """h1 -> s1 -> h2 with the s1-h2 link shaped to 512 kbit/s (htb, as
    Mininet's TCLink in the tutorials): a burst of 400 ECT(1) frames
    backs up into the switch's 64-packet queue. The program sees it rising
    (enq_qdepth and deq_qdepth, stamped in each packet), marks CE at 10
    and more, and
    the frames the queue could not hold are the switch's drops (packets
    into ingress - packets out of egress), none lost elsewhere."""
    out = tmp_path / "ecn.json"
    r = subprocess.run([P4SCOPE, "compile", str(PROGRAM), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = builders.single_switch(2).to_dict()
    doc["links"][1]["bw"] = "512k"
    topo = unique(from_dict(doc), "p4scope", program=str(out), log="warn")
    sw = topo.switches[0].name
    n = 400
    with Network(topo, tmp_path / "run") as net:
        h1, h2 = net.host("h1"), net.host("h2")
        tc = subprocess.run(["tc", "class", "show", "dev", f"{sw}-eth2"], capture_output=True, text=True)
        assert "rate 512Kbit" in tc.stdout, tc.stdout
        rx = h2.popen([sys.executable, "-c", RECEIVER, "h2-eth0"], stdout=subprocess.PIPE, text=True)
        assert rx.stdout.readline().strip() == "ready"
        h1.cmd(f"{sys.executable} -c '{SENDER}' h1-eth0 {h2.MAC()} {h1.IP()} {h2.IP()} {n}")
        got = json.loads(rx.stdout.readline())
        rx.wait(timeout=30)
        thrift = net.manifest.ports[sw]["thrift"]
        into, out_of = counter(thrift, "MyIngress.udp_in"), counter(thrift, "MyEgress.udp_out")
        m = net.manifest
    assert into == n, "the switch took every frame the host sent"
    assert len(got) == out_of, "every frame the switch sent arrived"
    assert 0 < out_of < n, "the rest: tail drops in the switch's queue"
    seqs = [g[0] for g in got]
    assert seqs == sorted(seqs), "in order"
    depth = [g[2] for g in got]
    assert max(depth) >= 60, "the switch's queue filled (64 packets)"
    assert max(g[3] for g in got) >= 50, "and packets left it behind a long queue (mri's qdepth)"
    marked = [g for g in got if g[1] == 3]
    assert marked and all(g[2] >= 10 for g in marked), "CE at enq_qdepth >= 10"
    assert all(g[1] == 1 for g in got if g[2] < 10), "below the threshold: left ECT(1)"
    assert leftovers(topo, m) == []
