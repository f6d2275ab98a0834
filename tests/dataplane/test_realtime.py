"""The real-time loop on Linux interfaces: veth pairs in a network namespace
the test creates (and removes), the engine inside it. Needs root and `ip`;
skipped otherwise."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import DROP, FWD, ethernet_program, key, table

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="needs root and iproute2 (network namespace)")

CHILD = textwrap.dedent("""
    import json, os, socket, subprocess, sys, time
    import p4scope_dataplane as dp

    def sh(*a):
        subprocess.run(a, check=True, capture_output=True)

    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
    for a, b in (("a0", "a1"), ("b0", "b1")):
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "up")
        sh("ip", "link", "set", b, "up")
    prog, pcap = sys.argv[1], sys.argv[2]
    e = dp.Engine(open(prog).read())
    e.table_add("ingress.mac", "fwd", [0x0000000000BB], [2])
    e.table_add("ingress.mac", "fwd", [0x0000000000CC], [255])
    e.rt_add_port(1, "a1", pcap_in=pcap)
    e.rt_add_port(2, "b1")
    e.rt_start(cpu_port=255)

    def sock(ifname):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
        s.bind((ifname, 0))
        s.settimeout(2)
        return s

    tx, rx = sock("a0"), sock("b0")
    frames = [bytes.fromhex("0000000000bb0000000000aa88b5") + bytes([i]) * 50 for i in range(20)]
    for f in frames:
        tx.send(f)
    got = []
    try:
        while len(got) < len(frames):
            got.append(rx.recv(2048))
    except socket.timeout:
        pass
    # a frame for the CPU port becomes a packet-in event
    tx.send(bytes.fromhex("0000000000cc0000000000aa88b5") + b"cpu" * 20)
    evs = e.rt_take_events(timeout=2.0)
    # a packet-out injected on the CPU port is forwarded by the program
    e.rt_inject(255, frames[0])
    out = rx.recv(2048)
    stats = e.rt_stats()
    e.rt_stop()
    print(json.dumps({
        "forwarded": [g.hex() for g in got],
        "sent": [f.hex() for f in frames],
        "events": [(ev[0], ev[1], ev[2].hex()) for ev in evs],
        "packet_out": out.hex(),
        "rx1": stats["ports"]["1"]["rx_frames"] if "1" in stats["ports"] else stats["ports"][1]["rx_frames"],
        "running": e.rt_running,
    }))
""")


def test_forwarding_packet_in_and_out_between_veth_ports(tmp_path):
    t = table("ingress.mac", 0, [key("ethernet", "dst")], [0, 1], ["fwd", "drop"], default=1)
    prog = tmp_path / "l2.json"
    prog.write_text(ethernet_program([FWD, DROP], [t], "ingress.mac"))
    pcap = tmp_path / "in.pcap"
    ns = f"p4dp-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", CHILD, str(prog), str(pcap)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert res["forwarded"] == res["sent"], "all frames, in order"
    assert res["events"] and res["events"][0][:2] == ["packet_in", 255]
    assert res["events"][0][2].startswith("0000000000cc")
    assert res["packet_out"] == res["sent"][0]
    assert res["rx1"] >= 21
    assert res["running"] is False
    import p4scope_dataplane as dp
    pk = dp.pcap_read(str(pcap))
    assert len(pk) >= 21 and pk[0][1].hex() == res["sent"][0]
