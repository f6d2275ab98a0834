"""Topologies in Mininet (root): traffic through Linux bridges and through
`p4scope switch`, a bonded host, htb rates, and clean-up that leaves
nothing behind, also after the building process is killed."""

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from p4scope.topologies import builders, procs
from p4scope.topologies import traffic
from p4scope.topologies.clean import clean_stale, ifindex
from p4scope.topologies.manifest import Manifest
from p4scope.topologies.run import Network, NetworkError, root_names
from p4scope.topologies.spec import Topology, from_dict, rename_switches, with_switch_defaults

WIRE_P4 = Path(__file__).parents[2] / "topologies" / "p4" / "wire.p4"
pytestmark = pytest.mark.usefixtures("mininet_ok")


def unique(topo: Topology, kind: str, **switch) -> Topology:
    """The topology with switch names no other run on this machine uses
    (root-namespace interface names are shared) and the given switch kind."""
    tag = uuid.uuid4().hex[:3]
    topo = rename_switches(topo, {s.name: f"{s.name}{tag}" for s in topo.switches})
    return with_switch_defaults(topo, kind=kind, **switch)


def leftovers(topo: Topology, m: Manifest) -> list[str]:
    """What of the run still exists: namespaces, root interfaces, processes."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    out = [n for n in m.namespaces if n in ns]
    out += [i for i in root_names(topo) if ifindex(i) is not None]
    out += [p["what"] for p in m.processes
            if procs.is_same(p["pid"], p["start"]) and not procs.is_zombie_or_gone(p["pid"])]
    return out


@pytest.fixture(scope="module")
def wire_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("p4") / "wire.json"
    r = subprocess.run([str(Path(sys.executable).parent / "p4scope"), "compile",
                        str(WIRE_P4), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return str(out)


def test_bridge_pingall_and_nothing_left_behind(tmp_path):
    topo = unique(builders.single_switch(3), "bridge")
    assert not leftovers(topo, Manifest(tmp_path, "none", "", {}))
    with Network(topo, tmp_path / "run") as net:
        assert net.net.pingAll(timeout=1) == 0.0
        h1 = net.host("h1")
        out = h1.cmd("ethtool -k h1-eth0")
        for feature in ("tcp-segmentation-offload: off", "generic-segmentation-offload: off",
                        "generic-receive-offload: off", "tx-checksumming: off"):
            assert feature in out
        # a program started in a host is the run's too
        h1.popen(["sleep", "300"])
        m = net.manifest
        assert set(leftovers(topo, m)) >= set(m.namespaces)
        doc = json.loads((tmp_path / "run" / "topology.json").read_text())
        assert doc["netns"]["h1"] == net.netns("h1")
    assert leftovers(topo, m) == []
    assert Manifest.load(tmp_path / "run").state == "cleaned"


def test_p4scope_switch_forwards_pings_and_streams(tmp_path, wire_json):
    topo = unique(builders.port_pairs(1), "p4scope", program=wire_json, log="warn", pcap=True)
    sw = topo.switches[0].name
    with Network(topo, tmp_path / "run") as net:
        h1, h2 = net.host("h1"), net.host("h2")
        assert " 0% packet loss" in h1.cmd(f"ping -c 3 -i 0.2 -W 1 {h2.IP()}")
        rx = traffic.start_receiver(h2, "h2-eth0", idle=0.5)
        sent = traffic.send(h1, "h1-eth0", [traffic.Stream(1, dst=h2.MAC(), ip_dst=h2.IP(), rate="5kpps",
                                               size=[64, 512, 1518])], duration=0.5)
        (r,) = traffic.combine(sent, rx.result())
        assert r.tx_packets > 2000 and r.reordered == 0, r
        assert r.lost <= 0.005 * r.tx_packets, r  # a busy machine may drop a few
        argv = net.switch(sw).argv()
        assert argv[1:4] == ["switch", "-i", f"1@{sw}-eth1"]
        assert net.grpc_addr(sw).startswith("127.0.0.1:")
        m = net.manifest
    log = (tmp_path / "run" / "logs" / f"{sw}.log").read_text()
    assert log.startswith("# ") and "--grpc-server-addr" in log
    pcaps = sorted(p.name for p in (tmp_path / "run" / "pcaps" / sw).iterdir())
    assert pcaps and all(p.endswith(".pcap") for p in pcaps), pcaps
    assert any((tmp_path / "run" / "pcaps" / sw / p).stat().st_size > 24 for p in pcaps)
    assert leftovers(topo, m) == []


def test_host_settings_gateway_arp_mtu(tmp_path):
    doc = builders.single_switch(2).to_dict()
    doc["hosts"][0].update(gw="10.0.0.254", gw_mac="02:00:00:00:00:fe", mtu=9000,
                           arp={"10.0.0.9": "02:00:00:00:00:09"})
    doc["links"][0]["mtu"] = 9000
    topo = unique(from_dict(doc), "bridge")
    with Network(topo, tmp_path / "run") as net:
        h1 = net.host("h1")
        assert "default via 10.0.0.254 dev h1-eth0" in h1.cmd("ip route")
        neigh = h1.cmd("ip neigh")
        assert "10.0.0.254 dev h1-eth0 lladdr 02:00:00:00:00:fe PERMANENT" in neigh
        assert "10.0.0.9 dev h1-eth0 lladdr 02:00:00:00:00:09 PERMANENT" in neigh
        assert "mtu 9000" in h1.cmd("ip link show h1-eth0")
        assert "inet6" not in h1.cmd("ip addr")


def test_htb_limits_the_link_rate(tmp_path):
    topo = unique(builders.single_switch(2, bw="20M"), "bridge")
    with Network(topo, tmp_path / "run") as net:
        h1, h2 = net.host("h1"), net.host("h2")
        assert "htb" in h1.cmd("tc qdisc show dev h1-eth0")
        rx = traffic.start_receiver(h2, "h2-eth0", idle=0.3)
        sent = traffic.send(h1, "h1-eth0", [traffic.Stream(1, dst=h2.MAC(), ip_dst=h2.IP(), size=1518)],
                      duration=1.0)
        (r,) = traffic.combine(sent, rx.result())
        l2_bps = r.rx_pps * 1514 * 8  # htb counts frames as the kernel sees them: no FCS
        assert 0.8 * 20e6 < l2_bps < 1.15 * 20e6, l2_bps
        assert sent["backpressure_waits"] > 0  # the sender was held back, not dropped


def test_bonded_host_spreads_flows_and_fails_over(tmp_path):
    topo = unique(builders.lag(2, 1), "bridge")
    with Network(topo, tmp_path / "run") as net:
        h1, h2 = net.host("h1"), net.host("h2")
        assert h1.bond is not None and h1.bond.active == ["h1-eth0", "h1-eth1"]
        assert " 0% packet loss" in h1.cmd(f"ping -c 2 -i 0.2 -W 1 {h2.IP()}")

        def tx_counts():
            return [int(h1.cmd(f"cat /sys/class/net/h1-eth{i}/statistics/tx_packets"))
                    for i in (0, 1)]

        def blast():
            before = tx_counts()
            traffic.send(h1, "bond0", [traffic.Stream(1, dst=h2.MAC(), ip_dst=h2.IP(), ip_src=h1.IP(),
                                          sport_span=64, count=2000, rate="20kpps")])
            return [a - b for a, b in zip(tx_counts(), before)]

        def wait_active(members):
            deadline = time.monotonic() + 3
            while h1.bond.active != members and time.monotonic() < deadline:
                time.sleep(0.02)
            assert h1.bond.active == members

        d = blast()
        assert min(d) > 400 and sum(d) >= 2000, d
        # the switch side of member 0 goes down: the bond's watcher fails over
        sw = topo.switches[0].name
        subprocess.run(["ip", "link", "set", "dev", f"{sw}-eth1", "down"], check=True)
        wait_active(["h1-eth1"])
        d = blast()
        assert d[0] < 10 and d[1] >= 2000, d
        assert " 0% packet loss" in h1.cmd(f"ping -c 2 -i 0.2 -W 1 {h2.IP()}")
        subprocess.run(["ip", "link", "set", "dev", f"{sw}-eth1", "up"], check=True)
        wait_active(["h1-eth0", "h1-eth1"])
        assert len(h1.bond.failovers) == 2
        h1.bond.set_active(["h1-eth0"])  # by hand
        assert min(blast()) < 10


def test_bridge_loops_are_refused(tmp_path):
    topo = unique(builders.leaf_spine(2, 2, 1), "bridge")
    with pytest.raises(NetworkError, match="loop"):
        Network(topo, tmp_path / "run").start()
    assert not (tmp_path / "run").exists()


def test_existing_interface_names_are_refused(tmp_path):
    topo = unique(builders.single_switch(1), "bridge")
    taken = root_names(topo)[0]
    subprocess.run(["ip", "link", "add", taken, "type", "veth", "peer", "name", f"{taken[:-1]}x"],
                   check=True)
    try:
        with pytest.raises(NetworkError, match=taken):
            Network(topo, tmp_path / "run").start()
        assert not (tmp_path / "run" / "manifest.json").exists()
    finally:
        subprocess.run(["ip", "link", "delete", taken], check=True)


def wait_ready(p: subprocess.Popen, timeout: float = 60.0) -> str:
    """Reads the child's stdout until its "ready" line, returned (other
    lines, e.g. clean-up notes, may come first); fails with its stderr if
    it ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        line = p.stdout.readline()
        if not line:
            pytest.fail(f"child ended before it was ready: {p.stderr.read()}")
        if "ready" in line:
            return line
    p.kill()
    pytest.fail(f"child not ready after {timeout} s")


def test_sigterm_stops_and_cleans_the_run(tmp_path):
    topo = unique(builders.single_switch(2), "bridge")
    run_dir = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-c", KILLED, topo.dumps(), str(run_dir)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_ready(p)
        m = Manifest.load(run_dir)
        assert leftovers(topo, m)
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 128 + signal.SIGTERM
    assert leftovers(topo, m) == []
    assert Manifest.load(run_dir).state == "cleaned"


KILLED = textwrap.dedent("""
    import json, sys, time
    from p4scope.topologies.run import Network
    from p4scope.topologies.spec import loads
    topo = loads(sys.argv[1])
    net = Network(topo, sys.argv[2]).start()
    sleeper = net.host("h1").popen(["sleep", "300"])
    print(json.dumps({"ready": True, "sleep": sleeper.pid}), flush=True)
    time.sleep(300)
""")


def test_relative_paths_are_the_callers(tmp_path, wire_json, monkeypatch):
    """A relative program path and run directory mean the caller's cwd,
    though the daemon runs in the run directory."""
    monkeypatch.chdir(Path(wire_json).parent)
    topo = unique(builders.port_pairs(1), "p4scope", program="wire.json", log="off")
    with Network(topo, "rel-run") as net:
        assert net.run_dir == Path(wire_json).parent / "rel-run"
        assert " 0% packet loss" in net.host("h1").cmd(f"ping -c 1 -W 2 {net.host('h2').IP()}")
    assert (Path(wire_json).parent / "rel-run" / "manifest.json").exists()


def test_run_killed_halfway_is_cleaned_at_the_next_start(tmp_path, wire_json):
    topo = unique(builders.port_pairs(1), "p4scope", program=wire_json, log="off")
    run_dir = tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-c", KILLED, topo.dumps(), str(run_dir)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sleeper = json.loads(wait_ready(p))["sleep"]
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    m = Manifest.load(run_dir)
    left = leftovers(topo, m)
    assert any("switch" in x for x in left) and m.namespaces[0] in left
    reps = [r for r in clean_stale() if r.run_dir == run_dir]
    assert len(reps) == 1 and not reps[0].problems, reps
    # the host's own process is gone: stopped with its shell's process group,
    # or found in the host's namespace (then named by its pid)
    assert procs.is_zombie_or_gone(sleeper), reps[0].processes
    assert leftovers(topo, m) == []
    assert Manifest.load(run_dir).state == "cleaned"
    assert clean_stale() == [] or all(r.run_dir != run_dir for r in clean_stale())


def test_tcp_incast_with_iperf3_and_port_counters(tmp_path):
    from p4scope.topologies import tcp
    from p4scope.topologies.counters import CounterSampler

    topo = unique(builders.incast(2), "bridge")
    sw = topo.switches[0].name
    with Network(topo, tmp_path / "run") as net:
        rcv = net.host("h3")
        servers = [tcp.Iperf3Server(rcv, 5201 + i) for i in range(2)]
        with CounterSampler([f"{sw}-eth3"], 0.02) as cs:
            clients = [tcp.Iperf3Client(net.host(f"h{i + 1}"), rcv.IP(), 5201 + i,
                                        nbytes=2 << 20, parallel=2) for i in range(2)]
            reports = [c.result(timeout=30) for c in clients]
            for s in servers:  # a server reports once it has read everything
                s.result(timeout=10)
    for r in reports:
        assert len(tcp.flow_completion_times(r)) == 2
        assert tcp.summary(r)["sent_bytes"] >= 2 << 20
        assert tcp.interval_rates(r)
    delivered = cs.series.samples[f"{sw}-eth3"][-1]["tx_bytes"] - cs.series.samples[f"{sw}-eth3"][0]["tx_bytes"]
    # iperf3 stops reading when the sender says it is done, so bytes still in
    # flight (socket buffers: megabytes on a loaded machine) may never cross
    # the port; what the servers read did
    received = sum(tcp.summary(r)["received_bytes"] for r in reports)
    assert received > 1 << 18 and delivered >= received
    assert max(r for _, r in cs.series.rates(f"{sw}-eth3")) > 0
