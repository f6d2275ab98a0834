"""p4scope-trafgen across a veth pair in a namespace the test makes and removes."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from p4scope.topologies import traffic
from p4scope.topologies.vethlab import VethLab


@pytest.fixture(scope="module")
def lab(netns_ok):
    with VethLab([("tga", "tgb")]) as lab:
        yield lab
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert lab.netns not in out


def test_paced_streams_arrive_complete(lab):
    rx = traffic.start_receiver(lab.netns, "tgb", idle=0.4, interval_ms=50)
    streams = [
        traffic.Stream(1, rate="20kpps", size={64: 7, 570: 4, 1518: 1}, burst=8),
        traffic.Stream(2, rate="20Mbps", size=[64, 1518], proto="eth", sport_span=4),
        traffic.Stream(3, rate=5000, size=128, start=0.2, duration=0.4),
    ]
    sent = traffic.send(lab.netns, "tga", streams, duration=0.8)
    res = {r.id: r for r in traffic.combine(sent, rx.result())}
    assert set(res) == {1, 2, 3}
    expect = {1: 20000 * 0.8,
              2: 20e6 * 0.8 / ((64 + 20 + 1518 + 20) / 2 * 8),
              3: 5000 * 0.4}
    for i, r in res.items():
        assert r.lost == 0 and r.duplicates == 0 and r.reordered == 0, r
        assert r.rx_packets == r.tx_packets
        # a loaded machine can stall the sender: it then restarts its schedule
        # and counts a slip instead of catching up, so fewer frames go out
        slack = 0.2 if not sent.get("schedule_slips") else 0.5
        assert abs(r.tx_packets - expect[i]) <= slack * expect[i], \
            (i, r.tx_packets, expect[i], sent.get("schedule_slips"))
        assert sum(r.histogram) == r.rx_packets
        assert sum(r.series_packets) == r.rx_packets and sum(r.series_bytes) == r.rx_bytes
        assert 0 < r.latency_ns["min"] <= r.latency_ns["avg"] <= r.latency_ns["max"]
    # the iMIX mean (with FCS) and the list's alternation
    mean1 = res[1].rx_bytes / res[1].rx_packets
    assert abs(mean1 - (64 * 7 + 570 * 4 + 1518) / 12) < 40, mean1
    assert abs(res[2].rx_bytes / res[2].rx_packets - (64 + 1518) / 2) < 2
    # stream 3 started late and stopped early: its frames sit in the middle of the series
    assert res[3].series_packets[0] == 0


CAPTURE = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind(("tgb", 0))
    s.settimeout(5)
    print("ready", flush=True)
    seen = set()
    while len(seen) < 4:
        f = s.recv(2048)
        if f[12:14] == b"\\x08\\x00" and f[23] == 17:
            seen.add((f[6:12].hex(":"), ".".join(map(str, f[30:34]))))
    print(sorted(seen))
""")


def test_varying_addresses(lab):
    """src_span and ip_dst_span cycle the addresses, in step."""
    cap = subprocess.Popen(["ip", "netns", "exec", lab.netns, sys.executable, "-c", CAPTURE],
                           stdout=subprocess.PIPE, text=True)
    assert cap.stdout.readline().strip() == "ready"
    sent = traffic.send(lab.netns, "tga", [traffic.Stream(5, src="02:00:00:00:10:00", src_span=4, ip_dst="10.0.0.10",
                                              ip_dst_span=4, count=400, rate="20kpps")])
    assert sent["tx_packets"] == 400
    out = cap.communicate(timeout=10)[0]
    assert out.strip() == str([(f"02:00:00:00:10:0{i}", f"10.0.0.1{i}") for i in range(4)]), out


def test_count_and_receiver_count(lab):
    rx = traffic.start_receiver(lab.netns, "tgb", count=3000)
    sent = traffic.send(lab.netns, "tga", [traffic.Stream(7, count=3000, rate="max", size=64)])
    (r,) = traffic.combine(sent, rx.result(timeout=10))
    assert (r.tx_packets, r.rx_packets, r.lost) == (3000, 3000, 0)
    assert sent["tx_packets"] == 3000


INJECT = textwrap.dedent("""
    import socket, struct, sys
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind(("tga", 0))
    for seq in [0, 1, 3, 2, 2, 6, 7]:
        probe = struct.pack("!HH", 0x7053, 42) + seq.to_bytes(6, "big") + (1000).to_bytes(8, "big")
        frame = bytes(6 * [0xff]) + bytes.fromhex("020000000001") + b"\\x88\\xb5" + probe
        s.send(frame + bytes(60 - len(frame)))
    # a frame that is no probe
    s.send(bytes(6 * [0xff]) + bytes(6) + b"\\x08\\x06" + bytes(46))
""")


def test_analyzer_counts_gaps_reordering_and_duplicates(lab):
    rx = traffic.start_receiver(lab.netns, "tgb", count=7)
    subprocess.run(["ip", "netns", "exec", lab.netns, sys.executable, "-c", INJECT], check=True)
    rep = rx.result(timeout=10)
    (s,) = rep["streams"]
    assert s["id"] == 42
    assert (s["rx_packets"], s["unique"], s["duplicates"], s["reordered"]) == (7, 6, 1, 1)
    assert s["missing"] == 2 and s["max_seq"] == 7  # 4 and 5
    assert s["rx_bytes"] == 7 * 64
    assert rep["other_frames"] >= 0  # the ARP-typed frame may come after the count stops it
    sent = {"streams": [{"id": 42, "tx_packets": 8, "tx_bytes": 8 * 64}]}
    (r,) = traffic.combine(sent, rep)
    assert r.lost == 2 and r.duplicates == 1


def test_frames_larger_than_the_mtu_are_refused(lab):
    with pytest.raises(traffic.TrafficError) as e:
        traffic.send(lab.netns, "tga", [traffic.Stream(1, size=9000, count=1)])
    assert "MTU" in str(e.value)


def test_command_line_errors_exit_2_and_name_the_key():
    exe = traffic.trafgen_path()
    for spec, words in [("id=1,rate=fast", "rate"), ("id=1,size=30", "size"), ("rate=max", "id="),
                        ("id=1,bogus=1", "bogus")]:
        r = subprocess.run([exe, "send", "--iface", "x", "--duration", "1", "--stream", spec],
                           capture_output=True, text=True)
        assert r.returncode == 2, spec
        assert words in r.stderr, r.stderr
    r = subprocess.run([exe, "send", "--iface", "x", "--stream", "id=1"], capture_output=True, text=True)
    assert r.returncode == 2 and "--duration" in r.stderr
    r = subprocess.run([exe, "recv", "--iface", "x", "--frobnicate", "1"], capture_output=True, text=True)
    assert r.returncode == 2 and "frobnicate" in r.stderr


def test_the_workspace_build_is_found_without_the_venv_copy(monkeypatch, tmp_path):
    """Without .venv/bin/p4scope-trafgen, the binary setup.sh built in the
    Cargo workspace's target/ at the repo root is the one run."""
    built = Path(traffic.__file__).resolve().parent.parent / "target" / "release-trafgen" / "p4scope-trafgen"
    if not built.exists():
        pytest.skip("p4scope-trafgen is not built (scripts/setup.sh)")
    monkeypatch.delenv("P4SCOPE_TRAFGEN", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(traffic.shutil, "which", lambda name: None)
    assert traffic.trafgen_path() == str(built)


def test_stream_spec_strings():
    s = traffic.Stream(3, dst="02:00:00:00:00:02", size={64: 7, 1518: 1}, rate=1000, burst=4)
    assert s.spec() == ("id=3,dst=02:00:00:00:00:02,ip_dst=10.0.0.2,size=imix:64:7/1518:1,"
                        "rate=1000pps,burst=4,start=0.0,sport=49152,sport_span=1,dport=7053,dscp=0,"
                        "ttl=64,proto=udp")
    assert traffic.size_arg([64, 128]) == "list:64/128"
    assert traffic.histogram_quantile([10, 20], [1, 1, 0], 0.5) == 10
    assert traffic.histogram_quantile([10, 20], [0, 0, 3], 0.5) is None
