"""The daemon as a process: readiness, P4Runtime, packet traces, clean
stop on SIGTERM/SIGINT; and real Linux ports (veth, root only)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program
from tests.switch.sw_client import Client, update
from tests.switch.sw_entities import eth, table_entry


def wait_for(path, proc, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return open(path).read().strip()
        if proc.poll() is not None:
            raise AssertionError(f"daemon exited early: {proc.communicate()}")
        time.sleep(0.05)
    raise AssertionError("daemon not ready in time")


def start(tmp_path, *extra, general=()):
    """The daemon on free ports (gRPC and Thrift): (process, gRPC address, ready file)."""
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    ready = tmp_path / "ready"
    cmd = [sys.executable, "-m", "p4scope.switch.daemon", "--thrift-port", "0", *general,
           str(prog), "--",
           "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255", "--ready-file", str(ready),
           *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, wait_for(str(ready), proc), ready


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_start_serve_stop(tmp_path, sig):
    proc, addr, ready = start(tmp_path, general=("--log-console", "-L", "debug"))
    try:
        assert addr.startswith("127.0.0.1:")
        c = Client(addr)
        assert c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == "1.3.0"
        c.arbitrate(1)
        # the positional JSON runs, but P4Runtime needs a pipeline (as BMv2)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        req = p4r.StreamMessageRequest()
        req.packet.payload = eth(1)
        req.packet.metadata.add(metadata_id=1, value=b"\x02")  # egress_port
        req.packet.metadata.add(metadata_id=2, value=b"\x00")  # _pad
        c.send(req)
        time.sleep(0.3)
        c.close()
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert "ready: P4Runtime on 127.0.0.1:" in err and "stopped" in err
    assert not ready.exists()
    assert "Processing packet received on port 255" in out
    assert "[p4scope] [D]" in out


def test_cannot_bind_exits_1(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    r = subprocess.run([sys.executable, "-m", "p4scope.switch.daemon", str(prog), "--",
                        "--grpc-server-addr", f"127.0.0.1:{port}"],
                       capture_output=True, text=True, timeout=30)
    s.close()
    assert r.returncode == 1 and "cannot start" in r.stderr


def _listening() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_thrift_port_in_use_exits_1_unless_no_thrift(tmp_path):
    """As simple_switch: the run-time port taken is fatal (BMv2's message);
    -- --no-thrift starts without the Thrift API."""
    taken = _listening()
    port = taken.getsockname()[1]
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    try:
        r = subprocess.run([sys.executable, "-m", "p4scope.switch.daemon", "--thrift-port",
                            str(port), str(prog), "--", "--grpc-server-addr", "127.0.0.1:0"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1, r.stderr
        assert (f"p4scope switch: error: cannot start: Thrift returned an exception when "
                f"trying to bind to port {port}") in r.stderr
        assert "another instance of bmv2" in r.stderr and "--no-thrift" in r.stderr
        assert "ready:" not in r.stderr and "Traceback" not in r.stderr
        proc, addr, _ = start(tmp_path, "--no-thrift", general=("--thrift-port", str(port)))
        try:
            c = Client(addr)
            assert c.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
            c.close()
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=15)
        ready = next(ln for ln in err.splitlines() if "ready:" in ln)
        assert "Thrift" not in ready
    finally:
        taken.close()


def test_bad_thrift_peers_are_one_line_each(tmp_path):
    """On the daemon's stderr: one line per malformed connection, one when
    the 64 connections are all taken; no traceback."""
    proc, _addr, _ = start(tmp_path)
    socks = []
    try:
        # the ready line names the Thrift address
        err_lines = []
        while True:
            line = proc.stderr.readline()
            err_lines.append(line)
            if "ready:" in line or not line:
                break
        port = int(re.search(r"Thrift on 127\.0\.0\.1:(\d+)", line)[1])
        for junk in (b"GET / HTTP/1.1\r\n\r\n", b"\x80\x01\x00\x01\x00\x00\x00\x02\xff\xfe"):
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(junk + bytes(8))
                s.settimeout(5)
                assert s.recv(1) == b""
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(66)]
        for s in socks[64:]:
            s.settimeout(5)
            assert s.recv(1) == b""  # beyond the limit: closed at once
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    thrift = [ln for ln in err.splitlines() if "thrift: peer" in ln]
    assert len(thrift) == 3, err
    assert all(ln.startswith("p4scope switch: WARNING: thrift: peer 127.0.0.1:") for ln in thrift)
    assert sum("malformed message" in ln for ln in thrift) == 2
    assert "refused: 64 connections open, the limit" in thrift[2]
    assert "Traceback" not in err


def test_bad_json_exits_1(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"pipelines": 1}')
    r = subprocess.run([sys.executable, "-m", "p4scope.switch.daemon", str(bad)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "cannot start" in r.stderr


def test_json_with_a_huge_header_exits_1(tmp_path):
    # `p4scope switch x.json`: the engine refuses it before allocating (no panic, no 256 MiB)
    prog = tmp_path / "huge.json"
    prog.write_text(program.huge_field_json(2**31))
    p4scope = os.path.join(os.path.dirname(sys.executable), "p4scope")
    r = subprocess.run([p4scope, "switch", str(prog), "--", "--grpc-server-addr", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "cannot start" in r.stderr and "at most 65536 bytes" in r.stderr
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr


def test_usage_error_exits_2():
    r = subprocess.run([sys.executable, "-m", "p4scope.switch.daemon", "--nope"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "unrecognised general option '--nope'" in r.stderr


@pytest.fixture
def veths(netns_ok):
    """Two veth pairs (switch side, host side), removed afterwards."""
    tag = uuid.uuid4().hex[:6]
    pairs = [(f"p4s{tag}a{i}", f"p4s{tag}b{i}") for i in range(2)]
    made = []
    try:
        for a, b in pairs:
            r = subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                               capture_output=True)
            if r.returncode:
                pytest.skip(f"cannot create veth pairs: {r.stderr.decode().strip()}")
            made.append(a)
            for n in (a, b):
                subprocess.run(["ip", "link", "set", n, "up"], check=True)
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1"],
                               capture_output=True)
        yield pairs
    finally:
        for a in made:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def test_forwarding_between_veths(veths, tmp_path, schema):
    from p4scope.switch.daemon import SwitchDaemon
    from p4scope.switch.options import parse_args

    (a0, b0), (a1, b1) = veths
    pcap = tmp_path / "pcap"
    pcap.mkdir()
    o = parse_args(["-i", f"1@{a0}", "-i", f"2@{a1}", "--pcap", str(pcap), "--no-p4",
                    "--thrift-port", "0", "--",
                    "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"])
    sw = SwitchDaemon(o)
    sw.start()
    assert sw.rt_ports is not None and sw.ports is None  # the engine's real-time loop serves -i
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    rx.bind((b1, 0))
    rx.settimeout(3)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    tx.bind((b0, 0))
    try:
        c = Client(sw.address)
        c.arbitrate(1)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        c.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": 0x02AAAAAAAAAA}, "forward", {"port": 2})))
        frame = eth(0x02AAAAAAAAAA, src=0x02BBBBBBBBBB, ether_type=0x88B6)
        tx.send(frame)
        deadline = time.monotonic() + 3
        got = None
        while time.monotonic() < deadline:
            data = rx.recv(2048)
            if data[:6] == frame[:6]:
                got = data
                break
        assert got == frame
        c.close()
    finally:
        rx.close()
        tx.close()
        sw.stop()
    assert (pcap / f"{a0}_in.pcap").stat().st_size > 24
    assert (pcap / f"{a1}_out.pcap").stat().st_size > 24


def test_tm_config_is_applied(tmp_path):
    import json as _json

    from p4scope.switch.daemon import SwitchDaemon
    from p4scope.switch.options import parse_args

    tm = tmp_path / "tm.json"
    tm.write_text(_json.dumps({"queue_depth": 32, "ports": {"2": {"queue_depth": 8,
                                                                   "rate_pps": 1000}}}))
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    o = parse_args([str(prog), "--thrift-port", "0", "--", "--grpc-server-addr", "127.0.0.1:0",
                    "--tm-config", str(tm)])
    sw = SwitchDaemon(o)
    sw.start()
    try:
        assert sw.device.dataplane is not None
        c = Client(sw.address)
        c.arbitrate(1)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        c.close()
    finally:
        sw.stop()


def test_line_rate_tm_config_reaches_the_engine(tmp_path):
    import json as _json

    from p4scope.switch.daemon import SwitchDaemon
    from p4scope.switch.options import parse_args

    tm = tmp_path / "tm.json"
    tm.write_text(_json.dumps({"buffer": {"size_bytes": "4M", "alpha": 1},
                               "defaults": {"rate_bps": "10G", "scheduler": "drr"}}))
    prog = tmp_path / "basic.json"
    prog.write_text(program.json_text())
    sw = SwitchDaemon(parse_args([str(prog), "--thrift-port", "0", "--",
                            "--grpc-server-addr", "127.0.0.1:0", "--tm-config", str(tm)]))
    sw.start()
    try:
        buf = sw.device.dataplane.raw.tm_buffer()
        assert buf is not None and buf["size_bytes"] == 4_000_000
    finally:
        sw.stop()


def test_per_packet_traces_come_from_the_real_time_loop(veths, tmp_path, schema):
    """--log-console at trace level with -i ports: the engine's real-time
    loop serves the ports (no Python fallback) and the daemon still prints
    each packet's lines, --dump-packet-data bytes included."""
    (a0, b0), (a1, b1) = veths
    proc, addr, _ready = start(tmp_path, general=(
        "-i", f"1@{a0}", "-i", f"2@{a1}", "--log-console", "-L", "trace",
        "--dump-packet-data", "8"))
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    rx.bind((b1, 0))
    rx.settimeout(3)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    tx.bind((b0, 0))
    frame = eth(0x02AAAAAAAAAA, src=0x02BBBBBBBBBB, ether_type=0x88B6)
    try:
        c = Client(addr)
        c.arbitrate(1)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        c.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": 0x02AAAAAAAAAA}, "forward", {"port": 2})))
        tx.send(frame)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and rx.recv(2048)[:6] != frame[:6]:
            pass
        time.sleep(0.3)  # the events thread writes the records
        c.close()
    finally:
        rx.close()
        tx.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert "ports: the engine's real-time loop" in out
    # "[time] [p4scope] [D] [thread N] [pid.copy] text"
    lines = [re.search(r"\] \[(\d+)\.(\d+)\] (.*)$", ln) for ln in out.splitlines()]
    lines = [(int(m[1]), int(m[2]), m[3]) for m in lines if m]
    pid = next(p for p, _, t in lines if t == "Processing packet received on port 1")
    head = frame[:8].hex(" ")
    assert [(c, t) for p, c, t in lines if p == pid] == [
        (0, "Processing packet received on port 1"), (0, f"Packet data: {head}"),
        (0, f"Transmitting packet of size {len(frame)} out of port 2"),
        (0, f"Packet data: {head}")], out


@pytest.mark.parametrize("how", ["tm-config", "thrift"])
def test_rate_limited_port_in_real_time(veths, tmp_path, schema, how):
    """-i ports in the real-time loop keep a port's rate in wall-clock time,
    set by --tm-config (rate_bps, queue_depth) or by Thrift's
    set_queue_rate/set_queue_depth: a burst far above the rate leaves at
    the rate, the queue holds its depth and the rest is dropped."""
    import json as _json
    import struct

    from p4scope.control.switch_cli.client import connect
    from p4scope.switch.daemon import SwitchDaemon
    from p4scope.switch.options import parse_args
    (a0, b0), (a1, b1) = veths
    size, n = 1000, 400
    depth = 100
    general = ["-i", f"1@{a0}", "-i", f"2@{a1}", "--thrift-port", "0", "--no-p4"]
    target = ["--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"]
    if how == "tm-config":
        tm = tmp_path / "tm.json"
        tm.write_text(_json.dumps({"ports": {"2": {"rate_bps": 10_000_000, "queue_depth": depth}}}))
        target += ["--tm-config", str(tm)]
        gap_ns = (size + 24) * 8 * 10**9 // 10_000_000  # the TM counts preamble, gap and FCS
    else:
        gap_ns = 10**9 // 2000
    sw = SwitchDaemon(parse_args(general + ["--"] + target))
    sw.start()
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B6))
    rx.bind((b1, 0))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMPNS", 35), 1)
    rx.settimeout(1)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    tx.bind((b0, 0))
    got = []
    try:
        assert sw.rt_ports is not None
        c = Client(sw.address)
        c.arbitrate(1)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        c.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": 0x02AAAAAAAAAA}, "forward", {"port": 2})))
        if how == "thrift":
            host, port = sw.thrift_address.rsplit(":", 1)
            cli = connect(host, int(port))
            cli.sswitch.set_egress_queue_rate(2, 2000)
            cli.sswitch.set_egress_queue_depth(2, depth)
            cli.close()
        for i in range(n):
            tx.send(eth(0x02AAAAAAAAAA, src=0x02BBBBBBBBBB, ether_type=0x88B6,
                        payload=i.to_bytes(4, "big") + bytes(size - 18)))
        try:
            while True:
                _d, anc, _, _ = rx.recvmsg(2048, 64)
                sec, nsec = struct.unpack("qq", anc[0][2][:16])
                got.append(sec * 10**9 + nsec)
        except socket.timeout:
            pass
        stats = sw.device.dataplane.raw.stats()
        c.close()
    finally:
        rx.close()
        tx.close()
        sw.stop()
    assert stats["transmitted"] == len(got) and stats["dropped_queue"] == n - len(got)
    assert depth < len(got) < n, "the queue held its depth, the rest was dropped"
    xs = range(len(got))
    mx, my = sum(xs) / len(got), sum(got) / len(got)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, got)) / sum((x - mx) ** 2 for x in xs)
    assert abs(slope - gap_ns) / gap_ns < 0.03, (slope, gap_ns)
