"""Run inside a network namespace of its own by test_watch_switch.py: a
`p4scope switch` with the reference DUT on three veth ports (1 and 4 in,
2 out at 20 Mb/s, 3 towards the collector), configured by this script as
the primary controller; `p4scope watch --switch ... --reports ...`
attached to it (with its Prometheus endpoint); a burst from two ingress
ports, port 1's flow on the INT-XD watchlist (a postcard per packet);
what the watch's JSON feed and one scrape of its endpoint say, and the
reports sniffed on the collector's interface, then both stopped. Prints
one JSON line."""

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

tmp, dut_json, p4info = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
exe = str(Path(sys.executable).parent / "p4scope")
COLLECTOR_IP, UDP = "10.255.0.100", 32766
N = 120  # frames per ingress port


def sh(*a):
    subprocess.run(a, check=True, capture_output=True)


def mac(p):
    return f"02:00:00:00:00:{p:02x}"


def get(url, path):
    return json.load(urllib.request.urlopen(url + path, timeout=10))


sh("ip", "link", "set", "lo", "up")
for a, b in (("a0", "a1"), ("b0", "b1"), ("c0", "c1"), ("d0", "d1")):
    sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
    sh("ip", "link", "set", a, "up")
    sh("ip", "link", "set", b, "up")
sh("ip", "addr", "add", f"{COLLECTOR_IP}/24", "dev", "c0")
collector_mac = Path("/sys/class/net/c0/address").read_text().strip()
(tmp / "tm.json").write_text(json.dumps({"ports": {"2": {"rate_bps": 20_000_000}},
                                         "queue_depth": 1000}))
sw = subprocess.Popen([exe, "switch", "-i", "1@a1", "-i", "2@b1", "-i", "3@c1", "-i", "4@d1",
                       "--thrift-port", "0", dut_json, "--", "--grpc-server-addr", "127.0.0.1:0",
                       "--tm-config", str(tmp / "tm.json"), "--ready-file", str(tmp / "ready")],
                      stdout=subprocess.DEVNULL, stderr=open(tmp / "switch.err", "w"))
watch = None
out = {"switch_pid": sw.pid}
try:
    deadline = time.monotonic() + 60
    while not (tmp / "ready").exists() or not (tmp / "ready").read_text().strip():
        assert sw.poll() is None and time.monotonic() < deadline, (tmp / "switch.err").read_text()
        time.sleep(0.05)
    addr = (tmp / "ready").read_text().strip()

    from p4scope.control import Pipeline, Switch
    from p4scope.control.apps.telemetry import Telemetry
    from p4scope.control.packets import udp_frame

    ctl = Switch.connect(addr, pipeline=Pipeline.from_files(dut_json, p4info))
    smac, dmac = ctl.table("smac"), ctl.table("dmac")
    ctl.insert(smac.entry({"hdr.ethernet.src_addr": mac(1)}, "smac_hit", port=1),
               smac.entry({"hdr.ethernet.src_addr": mac(4)}, "smac_hit", port=4),
               dmac.entry({"hdr.ethernet.dst_addr": mac(2)}, "forward", port=2))
    tel = Telemetry(ctl)
    tel.collector(3, "10.255.0.1", COLLECTOR_IP, collector_mac=collector_mac, udp_port=UDP)
    tel.port(2, burst_threshold=20, burst_end=2, interval_log2_us=10, report_intervals=True)
    tel.watch(src="10.0.0.1/32")

    # every report the switch sends, as the watch should take them
    from p4scope.control.apps.collector import Collector

    sniffed = Collector(udp_port=UDP)
    sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    sniff.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 1 << 23)
    sniff.bind(("c0", 0))
    sniff.settimeout(0.2)
    sniffing = threading.Event()
    sniffing.set()

    def take_reports():
        while sniffing.is_set():
            try:
                frame, meta = sniff.recvfrom(65535)
            except socket.timeout:
                continue
            if meta[2] != socket.PACKET_OUTGOING:
                sniffed.feed_frame(frame)
    sniffer = threading.Thread(target=take_reports, daemon=True)
    sniffer.start()

    watch = subprocess.Popen([exe, "watch", "--switch", addr, "--reports", f"{COLLECTOR_IP}:{UDP}",
                              "--window", "20", "--metrics-port", "0"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    out["watch_pid"] = watch.pid
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(watch.stderr), daemon=True)
    reader.start()
    while not (m := re.search(r"dashboard at (http://127\.0\.0\.1:\d+/)", "".join(err))):
        assert watch.poll() is None and time.monotonic() < deadline, "".join(err)
        time.sleep(0.05)
    url = m.group(1)
    while not get(url, "api/status")["sources"].get("p4runtime", {}).get("ports"):
        assert time.monotonic() < deadline, "the watch read no measured port"
        time.sleep(0.1)
    out["before"] = get(url, "api/inflight")

    a, d = (socket.socket(socket.AF_PACKET, socket.SOCK_RAW) for _ in range(2))
    a.bind(("a0", 0))
    d.bind(("d0", 0))
    fa = udp_frame(mac(2), mac(1), "10.0.0.1", "10.0.0.2", 5001, 6000, size=1000)
    fd = udp_frame(mac(2), mac(4), "10.0.0.4", "10.0.0.2", 5004, 6000, size=1000)
    for _ in range(N):  # about 2 Mb in a few ms into a 20 Mb/s port: a burst of 0.1 s
        a.send(fa)
        d.send(fd)
    while True:  # the burst ended and the counters read after it
        inf = get(url, "api/inflight")
        st = get(url, "api/status")
        sent = sum(p["sent"] for p in inf.get("drops", []))
        if inf.get("bursts") and inf["bursts"][0]["end_ns"] is not None and sent >= 2 * N:
            break
        assert time.monotonic() < deadline + 30, (st, "".join(err))
        time.sleep(0.1)
    # every report sniffed taken by the watch too (the same count twice in a row), then
    # one scrape
    agreed = 0
    while agreed < 2:
        time.sleep(0.2)
        with sniffed._lock:
            n_sniffed = len(sniffed.samples) + len(sniffed.intervals)
        st = get(url, "api/status")
        agreed = agreed + 1 if st["sources"]["reports"]["received"] == n_sniffed else 0
        assert time.monotonic() < deadline + 45, (n_sniffed, st["sources"], sniffed.errors)
    sniffing.clear()
    sniffer.join(timeout=5)
    sniff.close()
    m = re.search(r"Prometheus endpoint at (http://127\.0\.0\.1:\d+/metrics)", "".join(err))
    out["metrics"] = urllib.request.urlopen(m.group(1), timeout=10).read().decode()
    inf, st = get(url, "api/inflight"), get(url, "api/status")
    out["sniffed"] = {
        "received": n_sniffed,
        "latency": [[s.node_id, s.egress_port, s.hop_latency_ns] for s in sniffed.samples],
        "held_bytes": max([s.held_bytes for s in sniffed.samples]
                          + [i.max_bytes for i in sniffed.intervals]),
        "bursts": [[b.port, b.peak_bytes] for b in sniffed.bursts()]}
    out.update(inflight=inf, status=st, url=url)
    # the watch took nothing from the controller: still primary, still writing
    dmac.insert({"hdr.ethernet.dst_addr": mac(9)}, "forward", port=2)
    out["primary_after"] = ctl.client.is_primary
    ctl.close()
    watch.send_signal(signal.SIGINT)
    out["watch_rc"] = watch.wait(20)
    reader.join(timeout=5)
    out["watch_err"] = "".join(err)
finally:
    if watch is not None and watch.poll() is None:
        watch.kill()
        watch.wait()
    if sw.poll() is None:
        sw.send_signal(signal.SIGTERM)
    try:
        out["switch_rc"] = sw.wait(20)
    finally:
        if sw.poll() is None:
            sw.kill()
            sw.wait()
print(json.dumps(out))
