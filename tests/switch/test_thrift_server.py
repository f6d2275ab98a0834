"""The run-time (Thrift) server against unknown names, malformed input and
too many connections: answers as Thrift's C++ server does, one log line
per bad connection, a bounded number of connection threads."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.thrift import TApplicationException, TMessageType
from thriftpy2.transport import TSocket
from thriftpy2.transport.buffered import TBufferedTransport

from p4scope.switch.thrift.handler import RuntimeApi
from p4scope.switch.thrift.server import RuntimeServer
from p4scope.switch.thrift.idl import bm


def message(name: str, mtype: int = TMessageType.CALL, seqid: int = 7,
            args: bytes = b"\x00") -> bytes:
    """A strict binary-protocol message: header, then the args struct."""
    n = name.encode()
    return struct.pack("!iI", -0x7FFF0000 | mtype, len(n)) + n + struct.pack("!i", seqid) + args


def reply(sock: socket.socket):
    """(name, type, seqid, TApplicationException or None) of one answer."""
    proto = TBinaryProtocol(TBufferedTransport(TSocket(sock=sock)))
    name, mtype, seqid = proto.read_message_begin()
    if mtype != TMessageType.EXCEPTION:
        return name, mtype, seqid, proto
    x = TApplicationException()
    proto.read_struct(x)
    return name, mtype, seqid, x


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    return s


def closed(sock: socket.socket, within: float = 3.0) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def get_config(sock: socket.socket) -> str:
    sock.sendall(message("standard:bm_get_config", seqid=8))
    name, mtype, seqid, proto = reply(sock)
    assert (name, mtype, seqid) == ("bm_get_config", TMessageType.REPLY, 8)
    result = bm().Standard.bm_get_config_result()
    proto.read_struct(result)
    return result.success


@pytest.fixture
def records():
    """Records of the run-time server's logger (whatever else is set up)."""
    got: list[logging.LogRecord] = []
    h = logging.Handler(logging.DEBUG)
    h.emit = got.append
    lg = logging.getLogger("p4scope.switch.runtime")
    old = lg.level
    lg.addHandler(h)
    lg.setLevel(logging.DEBUG)
    yield got
    lg.removeHandler(h)
    lg.setLevel(old)


def test_unknown_method_answers_unknown_method_and_carries_on(cli_switch):
    s = connect(cli_switch.port)
    s.sendall(message("standard:bm_nope"))
    name, mtype, seqid, x = reply(s)
    assert (name, mtype, seqid) == ("bm_nope", TMessageType.EXCEPTION, 7)
    assert x.type == TApplicationException.UNKNOWN_METHOD == 1
    assert x.message == "Invalid method name: 'bm_nope'"
    assert get_config(s).startswith("{")  # the same connection still serves
    s.close()


@pytest.mark.parametrize("name, why", [
    ("nosvc:bm_get_config", "Unknown service: nosvc. Did you forget to call registerProcessor()?"),
    ("bm_get_config", "Non-multiplexed client request dropped. "
                      "Did you forget to call defaultProcessor()?"),
])
def test_unknown_service_answers_protocol_error_then_closes(cli_switch, records, name, why):
    s = connect(cli_switch.port)
    s.sendall(message(name))
    got, mtype, seqid, x = reply(s)
    assert (got, mtype, seqid) == (name, TMessageType.EXCEPTION, 7)
    assert x.type == TApplicationException.PROTOCOL_ERROR
    assert x.message == f"TMultiplexedProcessor: {why}"
    assert closed(s)
    s.close()
    time.sleep(0.1)
    lines = [r.getMessage() for r in records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and f"malformed message: TMultiplexedProcessor: {why}" in lines[0]


@pytest.mark.parametrize("data", [
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                       # not Thrift at all
    message("standard:bm_mt_get_num_entries", args=b"\x0b\x00\x02\xff\xff\xff\xff"),
    struct.pack("!iI", -0x7FFF0000 | 1, 2) + b"\xff\xfe" + b"\x00" * 4,  # name not UTF-8
])
def test_malformed_message_is_one_log_line(cli_switch, records, data):
    s = connect(cli_switch.port)
    peer_port = s.getsockname()[1]
    s.sendall(data)
    assert closed(s)
    s.close()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not records:
        time.sleep(0.02)
    assert len(records) == 1, [r.getMessage() for r in records]
    r = records[0]
    assert r.levelno == logging.WARNING and r.exc_info is None  # no traceback
    assert r.getMessage().startswith(f"thrift: peer 127.0.0.1:{peer_port}: malformed message: ")
    assert get_config(connect(cli_switch.port)).startswith("{")


def _conn_threads(port: int) -> int:
    return sum(1 for t in threading.enumerate() if t.name == f"thrift-conn-{port}")


def test_connections_are_capped(cli_switch, records):
    srv = RuntimeServer(RuntimeApi(cli_switch.device), "127.0.0.1", 0, max_connections=4,
                        idle_reclaim_s=60)
    port = srv.start()
    socks = []
    try:
        socks = [connect(port) for _ in range(10)]
        served = [s for s in socks if not closed(s, within=0.3)]
        assert len(served) == 4 and srv.connections == 4
        assert _conn_threads(port) == 4
        refused = [r.getMessage() for r in records if "refused" in r.getMessage()]
        assert len(refused) == 1 and "4 connections open, the limit" in refused[0]
        assert get_config(served[0]).startswith("{")  # those served still are
        served[1].close()
        deadline = time.monotonic() + 3
        while srv.connections == 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        late = connect(port)
        socks.append(late)
        assert get_config(late).startswith("{")  # a slot freed is a slot taken
    finally:
        for s in socks:
            s.close()
        srv.stop()


def test_idle_connection_makes_room_when_full(cli_switch, records):
    srv = RuntimeServer(RuntimeApi(cli_switch.device), "127.0.0.1", 0, max_connections=2,
                        idle_reclaim_s=1.0)
    port = srv.start()
    socks = [connect(port) for _ in range(2)]
    try:
        time.sleep(0.7)
        assert get_config(socks[1]).startswith("{")  # socks[1] active, socks[0] never
        time.sleep(0.5)  # socks[0] idle 1.2 s, socks[1] 0.5 s
        new = connect(port)
        socks.append(new)
        assert get_config(new).startswith("{")
        assert closed(socks[0])
        assert get_config(socks[1]).startswith("{")
        assert any("idle to make room" in r.getMessage() for r in records)
    finally:
        for s in socks:
            s.close()
        srv.stop()


def test_incomplete_message_times_out(cli_switch, records):
    srv = RuntimeServer(RuntimeApi(cli_switch.device), "127.0.0.1", 0, message_timeout_s=0.3)
    port = srv.start()
    s = connect(port)
    try:
        s.sendall(message("standard:bm_get_config")[:6])  # and never the rest
        assert closed(s, within=3)
        assert any("message incomplete after" in r.getMessage() for r in records)
        assert srv.connections == 0
    finally:
        s.close()
        srv.stop()


NUM_ENTRIES = "standard:bm_mt_get_num_entries"


@pytest.mark.parametrize("args", [
    struct.pack("!bhbI", 15, 9, 1, 0x7FFFFFFF),       # a list of 2**31-1 VOIDs
    struct.pack("!bhbI", 15, 9, 99, 0x7FFFFFFF),      # ... of unknown type 99
    struct.pack("!bhbbI", 13, 9, 0, 0, 0x7FFFFFFF),   # a map of 2**31-1 STOP keys and values
    struct.pack("!bhbI", 15, 2, 0, 0x7FFFFFFF),       # a declared field, list of STOPs
    struct.pack("!bhbi", 14, 9, 8, -1),               # a set of -1 elements
    struct.pack("!bhbI", 15, 9, 8, 0x7FFFFFFF) + bytes(64),  # 2**31-1 i32s (past the limit)
    b"\x63\x00\x01" + bytes(16),                      # a field of unknown type 99
], ids=["void-list", "type-99-list", "stop-map", "declared-stop-list", "negative-set",
        "list-past-limit", "type-99-field"])
def test_impossible_container_closes_at_once(cli_switch, records, args):
    """Element types the binary protocol does not define, negative sizes and
    sizes past the limit end the connection at once (no thread left spinning
    over elements of no bytes), with one log line; others are still served."""
    srv = RuntimeServer(RuntimeApi(cli_switch.device), "127.0.0.1", 0)
    port = srv.start()
    try:
        s = connect(port)
        s.sendall(message(NUM_ENTRIES, args=args))
        s.shutdown(socket.SHUT_WR)
        assert closed(s, within=1.0)
        s.close()
        deadline = time.monotonic() + 1.0
        while (_conn_threads(port) or not records) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _conn_threads(port) == 0 and srv.connections == 0
        lines = [r.getMessage() for r in records]
        assert len(lines) == 1 and "malformed message: " in lines[0], lines
        assert get_config(connect(port)).startswith("{")
    finally:
        srv.stop()


def test_garbage_on_many_connections_leaves_no_thread(cli_switch):
    """50 connections of random arguments, ended: all closed and their
    threads gone within a second (the hostile pass's probe)."""
    import random
    srv = RuntimeServer(RuntimeApi(cli_switch.device), "127.0.0.1", 0)
    port = srv.start()
    rng = random.Random(50)
    socks = [connect(port) for _ in range(50)]
    try:
        for s in socks:
            s.sendall(message(NUM_ENTRIES, args=rng.randbytes(64)))
            s.shutdown(socket.SHUT_WR)
        assert all(closed(s, within=1.0) for s in socks)
        deadline = time.monotonic() + 1.0
        while _conn_threads(port) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _conn_threads(port) == 0
        assert get_config(connect(port)).startswith("{")
    finally:
        for s in socks:
            s.close()
        srv.stop()
