"""The real-time loop on Linux interfaces: veth pairs in a network namespace
the test creates (and removes), the engine inside it. Needs root and `ip`;
skipped otherwise."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.dataplane.programs import DROP, FWD, ethernet_program, key, table

pytestmark = pytest.mark.usefixtures("netns_ok")

# two veth pairs a0-a1, b0-b1 (the engine on a1 and b1), the L2 program
# (l2_program: dst ...bb to port 2, ...cc to the CPU port 255), raw sockets
PRELUDE = textwrap.dedent("""
    import json, os, socket, struct, subprocess, sys, time
    import p4scope_dataplane as dp

    def sh(*a):
        subprocess.run(a, check=True, capture_output=True)

    sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
    for a, b in (("a0", "a1"), ("b0", "b1")):
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "up")
        sh("ip", "link", "set", b, "up")
    e = dp.Engine(open(sys.argv[1]).read())
    e.table_add("ingress.mac", "fwd", [0x0000000000BB], [2])
    e.table_add("ingress.mac", "fwd", [0x0000000000CC], [255])

    def sock(ifname, timeout=2):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
        s.bind((ifname, 0))
        s.settimeout(timeout)
        return s
""")

CHILD = PRELUDE + textwrap.dedent("""
    pcap = sys.argv[2]
    e.rt_add_port(1, "a1", pcap_in=pcap)
    e.rt_add_port(2, "b1")
    e.rt_start(cpu_port=255)
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
        "priority": stats["priority"],
        "running": e.rt_running,
    }))
""")


def in_netns(code, *args):
    """Runs `code` in a network namespace of its own (removed after it);
    its last stdout line is JSON."""
    ns = f"p4dp-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code, *map(str, args)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def l2_program(tmp_path):
    t = table("ingress.mac", 0, [key("ethernet", "dst")], [0, 1], ["fwd", "drop"], default=1)
    prog = tmp_path / "l2.json"
    prog.write_text(ethernet_program([FWD, DROP], [t], "ingress.mac"))
    return prog


def test_forwarding_packet_in_and_out_between_veth_ports(tmp_path):
    pcap = tmp_path / "in.pcap"
    res = in_netns(CHILD, l2_program(tmp_path), pcap)
    assert res["forwarded"] == res["sent"], "all frames, in order"
    assert res["events"] and res["events"][0][:2] == ["packet_in", 255]
    assert res["events"][0][2].startswith("0000000000cc")
    assert res["packet_out"] == res["sent"][0]
    assert res["rx1"] >= 21
    assert res["running"] is False
    assert res["priority"] == 1, "root: the loop at real-time priority 1 (the default)"
    import p4scope_dataplane as dp
    pk = dp.pcap_read(str(pcap))
    assert len(pk) >= 21 and pk[0][1].hex() == res["sent"][0]


TRACE_CHILD = PRELUDE + textwrap.dedent("""
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    e.rt_trace(packets=True, log=True, dump_bytes=6)
    e.rt_start(cpu_port=255)
    tx, rx = sock("a0"), sock("b0")
    head = bytes.fromhex("0000000000bb0000000000aa88b5")
    tx.send(head + b"x" * 50)                                  # forwarded to port 2
    rx.recv(2048)
    tx.send(bytes.fromhex("0000000000cc0000000000aa88b5") + b"y" * 50)   # to the CPU port
    tx.send(bytes.fromhex("0000000000dd0000000000aa88b5") + b"z" * 50)   # no entry: dropped
    recs, deadline = [], time.monotonic() + 3
    while len(recs) < 6 and time.monotonic() < deadline:  # 2 records per packet
        recs += e.rt_take_traces()
        time.sleep(0.01)
    e.rt_trace(packets=False, log=False)
    tx.send(head + b"w" * 50)
    rx.recv(2048)
    time.sleep(0.2)
    after = e.rt_take_traces()
    stats = e.rt_stats()
    e.rt_stop()
    print(json.dumps({"recs": [[x.hex() if isinstance(x, bytes) else x for x in r] for r in recs],
                      "after": [r[:3] for r in after], "traces_dropped": stats["traces_dropped"]}))
""")


def test_per_packet_traces_of_the_loop(tmp_path):
    res = in_netns(TRACE_CHILD, l2_program(tmp_path))
    recs = [tuple(r) for r in res["recs"]]
    by_id = {}
    for r in recs:
        by_id.setdefault(r[1], []).append(r)
    fwd, cpu, drop = (by_id[i] for i in sorted(by_id)[:3])
    # ("received", id, t, port, size, first dump_bytes bytes)
    assert fwd[0][0] == "received" and fwd[0][3:] == (1, 64, "0000000000bb")
    assert [r[0] for r in fwd] == ["received", "sent"]
    assert fwd[1][3:] == (0, 2, 64, "0000000000bb"), "copy 0 out of port 2"
    assert fwd[1][2] >= fwd[0][2]
    assert [r[0] for r in cpu] == ["received", "sent"] and cpu[1][4] == 255
    assert [r[0] for r in drop] == ["received", "dropped"] and drop[1][3:] == ("ingress", 1)
    assert res["after"] == [], "traces off: nothing recorded"
    assert res["traces_dropped"] == 0


RATE_CHILD = PRELUDE + textwrap.dedent("""
    kind, rate, depth, n = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    if kind == "bps":
        e.tm_configure({"queue_depth": depth, "ports": {"2": {"rate_bps": rate}}})
    else:  # simple_switch's set_queue_rate / set_queue_depth
        e.set_queue_rate(2, rate)
        e.set_queue_depth(depth, 2)
    # receive timestamps on before the loop runs: the kernel turns them on
    # for everyone from a deferred work item, which a busy real-time loop
    # can delay past the first frames (stamped when read, then)
    tx, rx = sock("a0"), sock("b0", timeout=1)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMPNS", 35), 1)
    time.sleep(0.2)
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1", pcap_out=sys.argv[6])
    e.rt_start()
    t0 = time.time()
    for i in range(n):  # a burst far above the rate
        tx.send(bytes.fromhex("0000000000bb0000000000aa88b5") + i.to_bytes(4, "big") + bytes(980))
    burst_s = time.time() - t0
    got = []
    try:
        while True:
            d, anc, _, _ = rx.recvmsg(2048, 64)
            sec, nsec = struct.unpack("qq", anc[0][2][:16])
            got.append((sec * 10**9 + nsec, int.from_bytes(d[14:18], "big")))
    except socket.timeout:
        pass
    stats = e.stats()
    e.rt_stop()
    print(json.dumps({"got": got, "burst_s": burst_s, "stats": stats}))
""")


@pytest.mark.parametrize("kind,rate,depth", [("bps", 10_000_000, 128), ("pps", 2000, 200)])
def test_rate_limited_port_sends_at_its_rate_and_drops_at_its_depth(tmp_path, kind, rate, depth):
    """A burst on a veth far faster than the port's rate (--tm-config's
    rate_bps, or set_queue_rate's packets/s): frames leave at the TM's
    departure times in wall-clock time, the queue holds `depth`, the rest
    is dropped by the TM. The queue holds about 0.1 s of traffic, so a
    loaded machine's scheduling delays stay small against it."""
    n, size = 400, 998
    pcap = tmp_path / "out.pcap"
    res = in_netns(RATE_CHILD, l2_program(tmp_path), kind, rate, depth, n, pcap)
    got, st = res["got"], res["stats"]
    assert st["received"] == n
    assert len(got) == st["transmitted"], "every frame the switch sent arrived"
    assert st["dropped_queue"] == n - st["transmitted"]
    assert [g[1] for g in got] == sorted(g[1] for g in got), "in order"
    gap_ns = ((size + 24) * 8 * 10**9 // rate) if kind == "bps" else 10**9 // rate
    # what may leave: the queue, the frame on the wire, and what the rate
    # drains while the burst arrives
    assert depth < len(got) <= depth + 2 + res["burst_s"] * 1e9 / gap_ns + 1
    # the receive rate: least-squares slope of arrival time per frame
    xs, ys = range(len(got)), [g[0] - got[0][0] for g in got]
    mx, my = sum(xs) / len(got), sum(ys) / len(got)
    measured = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    assert abs(measured - gap_ns) / gap_ns < 0.03, (measured, gap_ns)
    # the engine's departure times (pcap_out) follow the TM's schedule
    # exactly, and the frames arrive at them in wall-clock time, without drift
    import p4scope_dataplane as dp
    dep = [t for t, _ in dp.pcap_read(str(pcap))]
    assert len(dep) == len(got)
    steps = [b - a for a, b in zip(dep[1:], dep[2:])]
    assert min(steps) >= gap_ns - 1000 and max(steps) <= gap_ns + 1000
    lag = [g[0] - d for g, d in zip(got, dep)]
    assert max(lag) - min(lag) < 5_000_000, "wall-clock arrival tracks the departure time"


VLAN_CHILD = PRELUDE + textwrap.dedent("""
    e.rt_add_port(1, "a1", pcap_in=sys.argv[2])
    e.rt_add_port(2, "b1", pcap_out=sys.argv[3])
    sh("ip", "link", "set", "a1", "mtu", "4000")  # after the port's ring was sized (MTU 1500)
    sh("ip", "link", "set", "a0", "mtu", "4000")
    e.rt_start()
    tx = sock("a0")
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    rx.bind(("b0", 0))
    rx.settimeout(2)
    head = bytes.fromhex("0000000000bb0000000000aa")
    frames = [head + bytes.fromhex("88b5") + b"u" * 50,                  # untagged
              head + bytes.fromhex("8100a005 88b5") + b"c" * 50,         # 802.1Q, PCP 5, VID 5
              head + bytes.fromhex("88a80007 8100000988b5") + b"s" * 50]  # 802.1ad over 802.1Q
    for f in frames:
        tx.send(f)
    got = 0
    try:
        while got < len(frames):
            if rx.recv(4096)[12:14] != bytes.fromhex("0806"):
                got += 1
    except socket.timeout:
        pass
    tx.send(head + bytes.fromhex("88b5") + b"j" * 3000)  # longer than the ring's slots
    time.sleep(0.3)
    stats = e.rt_stats()
    e.rt_stop()
    print(json.dumps({"sent": [f.hex() for f in frames], "got": got,
                      "port1": stats["ports"][1], "port2": stats["ports"][2]}))
""")


def test_vlan_tags_reach_the_program_and_long_frames_are_counted(tmp_path):
    """The kernel takes VLAN tags out of received frames (into metadata); the
    loop puts them back, so the program parses the frame as it was on the
    wire. A frame longer than the ring's slots (MTU raised after the port
    opened) is counted as truncated, never half delivered."""
    import p4scope_dataplane as dp
    pin, pout = tmp_path / "in.pcap", tmp_path / "out.pcap"
    res = in_netns(VLAN_CHILD, l2_program(tmp_path), pin, pout)
    assert res["got"] == 3
    ins = [d.hex() for _, d in dp.pcap_read(str(pin))]
    outs = [d.hex() for _, d in dp.pcap_read(str(pout))]
    assert ins == res["sent"], "what the program received, tags in place"
    assert outs == res["sent"], "what the switch sent: the same frames"
    p1 = res["port1"]
    assert p1["rx_frames"] == 3 and p1["rx_truncated"] == 1 and p1["rx_dropped"] == 0
    assert p1["rx_bytes"] == sum(len(f) // 2 for f in res["sent"])
    assert res["port2"]["tx_frames"] == 3


def test_loop_priority_is_asked_for_and_checked(tmp_path):
    """The loop thread's SCHED_FIFO priority as asked (root may), normal
    scheduling with 0; out-of-range priorities are refused."""
    import time

    import p4scope_dataplane as dp
    e = dp.Engine(l2_program(tmp_path).read_text())
    with pytest.raises(ValueError):
        e.rt_start(priority=100)
    for want in (7, 0):
        e.rt_start(priority=want)
        deadline = time.monotonic() + 2
        while e.rt_stats()["priority"] != want and time.monotonic() < deadline:
            time.sleep(0.01)
        st = e.rt_stats()
        e.rt_stop()
        assert (st["priority"], st["demotions"]) == (want, 0)


def test_waiter_wakes_on_events_without_holding_the_engine(tmp_path):
    """RtWaiter.wait blocks (GIL released) until the loop queues an event;
    meanwhile the engine takes other calls; after rt_stop it returns False
    at once."""
    import threading
    import time

    import p4scope_dataplane as dp
    e = dp.Engine(l2_program(tmp_path).read_text())
    e.table_add("ingress.mac", "fwd", [0x0000000000CC], [255])
    e.rt_start(cpu_port=255, priority=0)
    w = e.rt_waiter()
    assert w.wait(0.05) is False, "nothing queued: a timeout"
    woke = []
    t = threading.Thread(target=lambda: woke.append((w.wait(5.0), time.monotonic())))
    t.start()
    time.sleep(0.1)
    assert e.rt_stats()["events_dropped"] == 0, "the engine answers while a thread waits"
    sent = time.monotonic()
    e.rt_inject(1, bytes.fromhex("0000000000cc0000000000aa88b5") + b"p" * 50)  # to the CPU port
    t.join(5)
    assert woke and woke[0][0] is True and woke[0][1] - sent < 1.0
    evs = e.rt_take_events(16, 0.0)
    assert [ev[:2] for ev in evs] == [("packet_in", 255)]
    e.rt_stop()
    t0 = time.monotonic()
    assert w.wait(5.0) is False and time.monotonic() - t0 < 1.0, "a stopped loop: no wait"


STORM_CHILD = PRELUDE + textwrap.dedent("""
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    e.rt_start(priority=2)
    deadline = time.monotonic() + 2
    while e.rt_stats()["priority"] != 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    before = e.rt_stats()["priority"]
    # a0 and b0 bridged: what leaves port 2 comes back in on port 1, and
    # the program sends it out of port 2 again, forever
    sh("ip", "link", "add", "br0", "type", "bridge")
    for d in ("a0", "b0", "br0"):
        if d != "br0":
            sh("ip", "link", "set", d, "master", "br0")
        sh("ip", "link", "set", d, "up")
    sock("a0").send(bytes.fromhex("0000000000bb0000000000aa88b5") + b"s" * 50)
    deadline = time.monotonic() + 5
    while e.rt_stats()["demotions"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    during = e.rt_stats()
    sh("ip", "link", "del", "br0")  # the storm ends: the loop goes idle
    deadline = time.monotonic() + 3
    while e.rt_stats()["priority"] != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    after = e.rt_stats()
    e.rt_stop()
    print(json.dumps({"before": before, "during": [during["priority"], during["demotions"]],
                      "looped": during["ports"][1]["rx_frames"],
                      "after": [after["priority"], after["demotions"]]}))
""")


def test_a_loop_that_never_pauses_steps_down_from_real_time_priority(tmp_path):
    """A frame circling forever (the switch's two ports bridged outside it)
    keeps the loop busy: after 0.5 s it runs at normal scheduling, and back
    at real-time priority once the storm is gone."""
    res = in_netns(STORM_CHILD, l2_program(tmp_path))
    assert res["before"] == 2
    assert res["looped"] > 1000, "the frame went round and round"
    assert res["during"] == [0, 1]
    assert res["after"] == [2, 1]


SHAPED_CHILD = PRELUDE + textwrap.dedent("""
    from p4scope.topologies.tc import htb_cmds
    rate, n = int(sys.argv[2]), int(sys.argv[3])
    for c in htb_cmds("b1", rate, None):  # as Mininet's TCLink: htb, no queue limit of ours
        sh(*c.split())
    sh("ip", "link", "add", "c0", "type", "veth", "peer", "name", "c1")  # port 3: not shaped
    sh("ip", "link", "set", "c0", "up")
    sh("ip", "link", "set", "c1", "up")
    e.table_add("ingress.mac", "fwd", [0x0000000000DD], [3])
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    e.rt_add_port(3, "c1")
    e.rt_start()
    tx, rx, rx3 = sock("a0"), sock("b0", timeout=1.5), sock("c0", timeout=1)
    rx3.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    t0 = time.monotonic()
    for i in range(n):  # a burst far above the shaped rate, and as much to port 3
        for dst in ("bb", "dd"):
            tx.send(bytes.fromhex("0000000000" + dst + "0000000000aa88b5") + i.to_bytes(4, "big")
                    + bytes(980))
        if i % 25 == 24:
            time.sleep(0.001)  # let the loop keep up with the sender
    got3 = []
    try:
        while len(got3) < n:
            got3.append(int.from_bytes(rx3.recv(2048)[14:18], "big"))
    except socket.timeout:
        pass
    port3_s = time.monotonic() - t0
    during = [q for q in e.tm_queue_stats() if q["port"] == 2]
    blocked_during = e.rt_stats()["ports"][2]["tx_blocked"]
    got = []
    try:
        while True:
            got.append(int.from_bytes(rx.recv(2048)[14:18], "big"))
    except socket.timeout:
        pass
    port2_s = time.monotonic() - t0 - 1.5
    stats, rts = e.stats(), e.rt_stats()
    q = [q for q in e.tm_queue_stats() if q["port"] == 2]
    e.rt_stop()
    print(json.dumps({"got": got, "got3": got3, "stats": stats, "port2": rts["ports"][2],
                      "port3": rts["ports"][3], "queue": q[0], "depth_during": during[0]["pkts"],
                      "blocked_during": blocked_during, "port3_s": port3_s, "port2_s": port2_s}))
""")


def test_a_shaped_link_pushes_back_into_the_switch_queue(tmp_path):
    """An htb-shaped veth (as Mininet's TCLink) far slower than the burst:
    as on BMv2, the kernel takes about a socket buffer's worth of frames,
    then refuses more; the port stops dequeuing, its traffic-manager queue
    fills to its 64 packets and tail-drops there, counted. Every frame is
    either received or counted as dropped by the switch; none is lost in
    the kernel or in the loop. Another port, not shaped, gets all its
    frames meanwhile: the blocked port holds nobody else up."""
    n = 600
    res = in_netns(SHAPED_CHILD, l2_program(tmp_path), 1_000_000, n)
    st, q, p2 = res["stats"], res["queue"], res["port2"]
    assert st["received"] == 2 * n
    assert res["depth_during"] >= 32, "the switch's own queue holds the backlog"
    assert q["peak_pkts"] == 64, "filled to simple_switch's default depth"
    assert q["drops"]["queue_packets"] == st["dropped_queue"] > 0, "tail drops, counted"
    assert len(res["got"]) + st["dropped_queue"] == n, "nothing dropped silently"
    assert res["got"] == sorted(res["got"]), "in order"
    assert p2["tx_errors"] == 0 and p2["tx_blocked"] >= 1
    assert p2["tx_frames"] == len(res["got"]) == st["transmitted"] - n
    # the kernel took about a socket buffer's worth (some 90 frames), the
    # TM queue 64, and the link drained some while the burst came in; with
    # a send buffer of megabytes the kernel took the whole burst
    assert q["deq_pkts"] == len(res["got"]) < n // 2
    # fairness: port 3 got everything while port 2 was still backed up
    assert res["got3"] == list(range(n)) and res["port3"]["tx_errors"] == 0
    assert res["blocked_during"] >= 1 and res["port3_s"] < res["port2_s"]


STOPPED_CHILD = PRELUDE + textwrap.dedent("""
    from p4scope.topologies.tc import htb_cmds
    for c in htb_cmds("b1", 1_000_000, None):
        sh(*c.split())
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    e.rt_start()
    tx = sock("a0")
    for i in range(300):
        tx.send(bytes.fromhex("0000000000bb0000000000aa88b5") + i.to_bytes(4, "big") + bytes(980))
        if i % 25 == 24:
            time.sleep(0.001)
    time.sleep(0.2)
    e.rt_stop()
    held = [q["pkts"] for q in e.tm_queue_stats() if q["port"] == 2][0]
    out = [o for o in e.process([]) if o[0] == 2]
    print(json.dumps({"held": held, "out": len(out)}))
""")


def test_a_stopped_loop_no_longer_holds_back_the_switch(tmp_path):
    """Stopped while the shaped port was backed up: its queued packets are
    the switch's again (virtual time drains them), not stuck."""
    res = in_netns(STOPPED_CHILD, l2_program(tmp_path))
    assert res["held"] >= 32
    assert res["out"] == res["held"]
