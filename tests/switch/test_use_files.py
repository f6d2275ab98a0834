"""--use-files as BMv2 has it: every <if>_in.pcap read together (files or
FIFOs, earliest timestamp first), packets written to <if>_out.pcap."""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import time

import pytest

from p4scope.compiler import compile_file

# the last byte of the destination MAC is the egress port
PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct h_t { eth_t eth; }
struct m_t { }
parser P(packet_in pkt, out h_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control V(inout h_t h, inout m_t m) { apply { } }
control I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>) h.eth.dst[7:0]; }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out pkt, in h_t h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def frame(out_port: int, tag: int) -> bytes:
    """A frame the program sends to `out_port`, told apart by `tag`."""
    return bytes(5) + bytes([out_port]) + bytes(5) + bytes([tag]) + b"\x08\x00" + bytes(50)


def record(data: bytes, t_us: int) -> bytes:
    return struct.pack("<IIII", t_us // 1_000_000, t_us % 1_000_000, len(data), len(data)) + data


def read_out(path) -> list[bytes]:
    data = path.read_bytes() if path.exists() else b""
    out, i = [], 24
    while i + 16 <= len(data):
        n = struct.unpack("<I", data[i + 8:i + 12])[0]
        out.append(data[i + 16:i + 16 + n])
        i += 16 + n
    return out


@pytest.fixture
def program_json(tmp_path):
    src = tmp_path / "by_dst.p4"
    src.write_text(PROGRAM)
    path = tmp_path / "by_dst.json"
    path.write_text(json.dumps(compile_file(src).bmv2_json))
    return path


def start(tmp_path, program_json, *ifaces: str) -> subprocess.Popen:
    args = []
    for i, name in enumerate(ifaces):
        args += ["-i", f"{i}@{tmp_path / name}"]
    return subprocess.Popen(
        [sys.executable, "-m", "p4scope.switch.daemon", "--use-files", "0", *args,
         "--thrift-port", "0", str(program_json), "--", "--grpc-server-addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def open_fifo(path, proc, deadline: float) -> int:
    """Opens FIFO `path` for writing once the switch reads it (no hang)."""
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:  # ENXIO: nobody reads it yet
                raise
            if proc.poll() is not None:
                raise AssertionError(f"switch exited: {proc.communicate()}") from None
            if time.monotonic() > deadline:
                raise AssertionError(f"the switch never opened {path.name}") from None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def wait_out(path, count: int, timeout: float = 20.0) -> list[bytes]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = read_out(path)
        if len(got) >= count:
            return got
        time.sleep(0.05)
    return read_out(path)


def stop(proc) -> str:
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"no clean stop: {proc.communicate()}") from None
    assert proc.returncode == 0, err
    return err


@pytest.mark.parametrize("open_order", ["a,b", "b,a"])
def test_fifos_are_read_together(tmp_path, program_json, open_order):
    """p4c's STF runner: FIFOs opened in port order, packets written one
    after another on either port while every FIFO stays open. Each packet
    is forwarded as it comes, whatever order the writer opened them in."""
    for name in "ab":
        os.mkfifo(tmp_path / f"{name}_in.pcap")
    proc = start(tmp_path, program_json, "a", "b")
    fds = {}
    try:
        deadline = time.monotonic() + 30
        for name in open_order.split(","):
            fds[name] = open_fifo(tmp_path / f"{name}_in.pcap", proc, deadline)
            os.write(fds[name], HEADER)
        t = 1_000_000
        for k in range(3):  # a -> port 1, then b -> port 0, each seen before the next
            os.write(fds["a"], record(frame(1, 10 + k), t))
            assert [f[11] for f in wait_out(tmp_path / "b_out.pcap", k + 1)] == \
                [10 + j for j in range(k + 1)]
            os.write(fds["b"], record(frame(0, 20 + k), t + 1))
            assert [f[11] for f in wait_out(tmp_path / "a_out.pcap", k + 1)] == \
                [20 + j for j in range(k + 1)]
            t += 2
    finally:
        for fd in fds.values():
            os.close(fd)
        err = stop(proc)
    assert "Traceback" not in err


def test_files_merge_by_timestamp(tmp_path, program_json):
    """Regular files: the earliest packet of all inputs goes first (BMv2's
    PcapFilesReader), not one file after the other."""
    (tmp_path / "a_in.pcap").write_bytes(
        HEADER + record(frame(2, 1), 100) + record(frame(2, 3), 300))
    (tmp_path / "b_in.pcap").write_bytes(
        HEADER + record(frame(2, 2), 200) + record(frame(2, 4), 400))
    (tmp_path / "c_in.pcap").write_bytes(HEADER)
    proc = start(tmp_path, program_json, "a", "b", "c")
    try:
        got = wait_out(tmp_path / "c_out.pcap", 4)
    finally:
        stop(proc)
    assert [f[11] for f in got] == [1, 2, 3, 4]


def test_missing_input_stops_the_start(tmp_path, program_json):
    (tmp_path / "a_in.pcap").write_bytes(HEADER)
    proc = start(tmp_path, program_json, "a", "b")
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"still running: {proc.communicate()}") from None
    assert proc.returncode == 1, err
    assert "cannot start" in err and f"{tmp_path / 'b_in.pcap'}: No such file" in err
    assert "Traceback" not in err
