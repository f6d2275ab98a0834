"""Hostile peers of the switch's BMv2 Thrift server (`p4scope switch
probe.json --thrift-port 0`): unknown methods and services, bytes that are
not Thrift, lengths that lie, deep nesting, and more idle connections than
it serves.  As Thrift's C++ server answers (switch/thrift/mux.py): an unknown
method is an EXCEPTION reply (UNKNOWN_METHOD) and the connection carries
on; an unknown service a PROTOCOL_ERROR, then the connection ends; a
message that cannot be decoded ends its connection with one log line; past
its limit of connections a new one is closed at once.  After each probe a
new client must still be served."""

from __future__ import annotations

import random
import select
import socket
import struct
import time
from contextlib import contextmanager
from typing import Optional

from hostile_core import Area, Probe, Verdict, crashed, handled, wrong
from hostile_programs import probe_program
from hostile_switch import SwitchProcess, stop_verdict, watched

NAME = "Thrift"
CALL, REPLY, EXCEPTION, ONEWAY = 1, 2, 3, 4
UNKNOWN, UNKNOWN_METHOD, PROTOCOL_ERROR = 0, 1, 7
LIMIT = 64  # the server's connection limit (switch/thrift/server.py MAX_CONNECTIONS)
HANG_S = 3.0  # a connection our side has ended, still held this long: the server hangs on it


class Env:
    def __init__(self, ctx):
        self.folder = ctx.workspace.fresh("switch")
        (self.folder / "probe.json").write_text(probe_program().json_text)
        self._start()

    def _start(self) -> None:
        self.switch = SwitchProcess(["probe.json", "--thrift-port", "0", "--",
                                     "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255"],
                                    self.folder).start()
        host, _, port = self.switch.thrift_address.rpartition(":")
        self.addr = (host, int(port))

    def restart(self) -> None:
        self.switch.stop(5)
        self._start()

    def connect(self, timeout: float = 5.0) -> socket.socket:
        s = socket.create_connection(self.addr, timeout=timeout)
        s.settimeout(timeout)
        return s

    def log_lines(self, mark: int) -> list[str]:
        return [ln for ln in self.switch.since(mark) if "thrift: peer" in ln
                or "run-time API call" in ln]


@contextmanager
def environment(ctx):
    env = Env(ctx)
    try:
        yield env
    finally:
        env.switch.stop(5)


# -- the wire -------------------------------------------------------------------------

def message(name: str | bytes, mtype: int = CALL, seqid: int = 7, args: bytes = b"\x00") -> bytes:
    """A strict binary-protocol message: header, then the args struct."""
    n = name.encode() if isinstance(name, str) else name
    return struct.pack("!iI", -0x7FFF0000 | mtype, len(n)) + n + struct.pack("!i", seqid) + args


def tstring(fid: int, data: bytes) -> bytes:
    return struct.pack("!bhI", 11, fid, len(data)) + data


def ti32(fid: int, v: int) -> bytes:
    return struct.pack("!bhi", 8, fid, v)


class Reader:
    """Reads one binary-protocol reply from a socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError("closed")
            out += chunk
        return out

    def header(self) -> tuple[str, int, int]:
        version, = struct.unpack("!i", self.exact(4))
        mtype = version & 0xFF
        n, = struct.unpack("!I", self.exact(4))
        name = self.exact(n).decode()
        seqid, = struct.unpack("!i", self.exact(4))
        return name, mtype, seqid

    def app_exception(self) -> tuple[int, str]:
        """TApplicationException {1: string message, 2: i32 type}."""
        msg, typ = "", UNKNOWN
        while True:
            ftype, = struct.unpack("!b", self.exact(1))
            if ftype == 0:
                return typ, msg
            fid, = struct.unpack("!h", self.exact(2))
            if ftype == 11:
                n, = struct.unpack("!I", self.exact(4))
                value = self.exact(n).decode()
                if fid == 1:
                    msg = value
            elif ftype == 8:
                v, = struct.unpack("!i", self.exact(4))
                if fid == 2:
                    typ = v
            else:
                raise ValueError(f"unexpected field type {ftype}")

    SIZES = {2: 1, 3: 1, 4: 8, 6: 2, 8: 4, 10: 8}

    def skip(self, ftype: int = 12) -> None:
        """Reads past one value of type `ftype` (a reply's result struct)."""
        if ftype in self.SIZES:
            self.exact(self.SIZES[ftype])
        elif ftype == 11:
            n, = struct.unpack("!I", self.exact(4))
            self.exact(n)
        elif ftype == 12:
            while True:
                t, = struct.unpack("!b", self.exact(1))
                if t == 0:
                    return
                self.exact(2)
                self.skip(t)
        elif ftype == 13:
            kt, vt, n = struct.unpack("!bbI", self.exact(6))
            for _ in range(n):
                self.skip(kt)
                self.skip(vt)
        elif ftype in (14, 15):
            et, n = struct.unpack("!bI", self.exact(5))
            for _ in range(n):
                self.skip(et)
        else:
            raise ValueError(f"unexpected type {ftype} in a reply")


def closed(sock: socket.socket, within: float = 3.0) -> bool:
    return not still_open([sock], within)


def still_open(socks: list[socket.socket], within: float) -> list[socket.socket]:
    """The sockets the server has not closed within `within` s (what it
    sends meanwhile is read and dropped)."""
    waiting = list(socks)
    deadline = time.monotonic() + within
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select(waiting, [], [], left)
        for s in ready:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                waiting.remove(s)
    return waiting


def served(env: Env) -> Optional[str]:
    """None when a new client gets bm_get_config answered, else why not."""
    try:
        s = env.connect()
    except OSError as e:
        return f"a new client cannot connect: {e}"
    try:
        return answers(s, "a new client")
    finally:
        s.close()


def answers(s: socket.socket, who: str) -> Optional[str]:
    try:
        s.sendall(message("standard:bm_get_config", seqid=8))
        name, mtype, seqid = Reader(s).header()
    except (OSError, EOFError, ValueError, struct.error) as e:
        return f"{who} is not answered: {e}"
    if (name, mtype, seqid) != ("bm_get_config", REPLY, 8):
        return f"{who} got {(name, mtype, seqid)}"
    Reader(s).skip()
    return None


def wait_lines(env: Env, mark: int, want: int, within: float = 2.0) -> list[str]:
    deadline = time.monotonic() + within
    while True:
        lines = env.log_lines(mark)
        if len(lines) >= want or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


# -- probes -------------------------------------------------------------------------

def _unknown_method(env: Env) -> Verdict:
    s = env.connect()
    try:
        s.sendall(message("standard:bm_nope"))
        r = Reader(s)
        name, mtype, seqid = r.header()
        if (mtype, seqid) != (EXCEPTION, 7):
            return wrong(f"answered {name} type {mtype} seqid {seqid}")
        typ, msg = r.app_exception()
        if typ != UNKNOWN_METHOD or msg != "Invalid method name: 'bm_nope'":
            return wrong(f"TApplicationException {typ} {msg!r} where UNKNOWN_METHOD was due")
        problem = answers(s, "the same connection afterwards")
        return wrong(problem) if problem else handled("UNKNOWN_METHOD, the connection carries on")
    finally:
        s.close()


def _protocol_error(name: str):
    def check(env: Env) -> Verdict:
        s = env.connect()
        try:
            s.sendall(message(name))
            r = Reader(s)
            got, mtype, seqid = r.header()
            typ, msg = r.app_exception() if mtype == EXCEPTION else (None, "")
            if (mtype, typ) != (EXCEPTION, PROTOCOL_ERROR):
                return wrong(f"answered type {mtype} ({typ} {msg!r}) where PROTOCOL_ERROR was due")
            if not closed(s):
                return wrong("PROTOCOL_ERROR, but the connection stayed open")
        finally:
            s.close()
        problem = served(env)
        return wrong(problem) if problem else handled("PROTOCOL_ERROR, closed")
    return check


def _malformed(data: bytes | callable, lines: tuple[int, ...] = (1,), end_write: bool = False,
               answer_ok: bool = False):
    """`data` on a new connection: the server closes it (with `lines` log
    lines: one, or none or one), or with `answer_ok` may answer it first;
    then a new client is served.  With `end_write` our side ends after the
    data: a server still holding the connection HANG_S later hangs on it (the
    switch is started again, so its spinning does not slow what follows)."""
    def check(env: Env) -> Verdict:
        payload = data() if callable(data) else data
        mark = len(env.switch.snapshot())
        s = env.connect()
        try:
            try:
                s.sendall(payload)
                if end_write:
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # closed while we were still sending: fine
            if not closed(s, HANG_S):
                if end_write:
                    env.restart()
                    return crashed(f"hang: the connection is still held {HANG_S:g} s after "
                                   "our end (the switch was started again)")
                if not answer_ok:
                    return wrong("the connection stayed open (5 s)")
        finally:
            s.close()
        got = wait_lines(env, mark, max(lines), within=0.3 if 0 in lines else 1.0)
        if len(got) not in lines:
            return wrong(f"{len(got)} log lines where {'/'.join(map(str, lines))} was due: "
                         + " | ".join(ln[:100] for ln in got[:2]))
        if any("run-time API call" in ln for ln in got):
            return crashed(f"a handler failed: {got[0][:160]}")
        problem = served(env)
        return wrong(problem) if problem else handled(f"closed, {len(got)} log line(s)")
    return check


def _answered(name: str, args: bytes, want_type: int = REPLY):
    """A well-formed call with odd arguments: answered (`want_type`), and
    the connection carries on; no handler failure logged."""
    def check(env: Env) -> Verdict:
        mark = len(env.switch.snapshot())
        s = env.connect()
        try:
            s.sendall(message(name, args=args))
            r = Reader(s)
            try:
                got, mtype, seqid = r.header()
            except EOFError:
                return wrong("the connection was closed without an answer")
            detail = ""
            if mtype == EXCEPTION:
                typ, msg = r.app_exception()
                detail = f" {typ} {msg[:100]!r}"
                if typ == UNKNOWN:
                    return crashed(f"an internal error answered:{detail}")
            else:
                r.skip()
            if mtype != want_type:
                return wrong(f"answered type {mtype}{detail} where {want_type} was due")
            problem = answers(s, "the same connection afterwards")
        finally:
            s.close()
        bad = [ln for ln in env.log_lines(mark) if "run-time API call" in ln]
        if bad:
            return crashed(f"a handler failed: {bad[0][:160]}")
        return wrong(problem) if problem else handled(f"answered ({mtype})")
    return check


def _idle_connections(n: int):
    def check(env: Env) -> Verdict:
        mark = len(env.switch.snapshot())
        socks = []
        try:
            for _ in range(n):  # a full listen queue costs SYN retries: be patient
                socks.append(env.connect(timeout=30))
            t0 = time.monotonic()
            open_ = still_open(socks, 1.0)
            shut = [s for s in socks if s not in open_]
            if len(open_) > LIMIT:
                return wrong(f"{len(open_)} connections served at once (at most {LIMIT})")
            if n > LIMIT and len(shut) < n - LIMIT:
                return wrong(f"only {len(shut)} of {n - LIMIT} past the limit were closed")
            if open_:
                problem = answers(open_[-1], "a connection within the limit")
                if problem:
                    return wrong(problem)
            lines = [ln for ln in env.log_lines(mark) if "refused" in ln]
            if n > LIMIT and len(lines) != 1:
                return wrong(f"{len(lines)} 'refused' log lines where 1 was due")
            took = time.monotonic() - t0
        finally:
            for s in socks:
                s.close()
        time.sleep(0.2)  # the server notices them go
        problem = served(env)
        if problem:
            return wrong(problem + " after the idle connections closed")
        return handled(f"{len(open_)} served, {len(shut)} closed at once ({took:.1f} s)")
    return check


def _garbage_together(n: int):
    def check(env: Env) -> Verdict:
        socks = [env.connect() for _ in range(n)]
        rng = random.Random(n)
        for s in socks:
            s.sendall(message("standard:bm_mt_get_num_entries",
                              args=bytes(rng.randrange(256) for _ in range(64))))
            s.shutdown(socket.SHUT_WR)
        still = len(still_open(socks, HANG_S))
        for s in socks:
            s.close()
        if still:
            env.restart()
            return crashed(f"hang: {still} of {n} connections still held {HANG_S:g} s after "
                           "our end (the switch was started again)")
        problem = served(env)
        return wrong(problem) if problem else handled(f"{n} closed")
    return check


def _random_bytes(seed: int, size: int):
    return lambda: random.Random(seed).randbytes(size)


def _nested_structs(depth: int) -> bytes:
    # args { 1: struct { 1: struct { ... } } }
    return struct.pack("!bh", 12, 1) * depth + b"\x00" * (depth + 1)


def _nested_lists(depth: int) -> bytes:
    # args { 1: list<list<...>> } with one element each level
    return struct.pack("!bh", 15, 1) + struct.pack("!bI", 15, 1) * depth + struct.pack("!bI", 8, 0)


def probes(fast: bool) -> list[Probe]:
    P = Probe
    num_entries = "standard:bm_mt_get_num_entries"
    cases = [
        P("an unknown method", _unknown_method),
        P("an unknown service", _protocol_error("nosvc:bm_get_config")),
        P("a name without a service", _protocol_error("bm_get_config")),
        P("a name with three parts", _protocol_error("a:b:c")),
        P("a REPLY sent to the server", lambda env: _protocol_error_type(env, REPLY)),
        P("an EXCEPTION sent to the server", lambda env: _protocol_error_type(env, EXCEPTION)),
        P("an HTTP request", _malformed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(8))),
        P("arguments of the wrong types",
          _malformed(message(num_entries, args=b"\x0b\x00\x02\xff\xff\xff\xff"))),
        P("a name that is not UTF-8",
          _malformed(struct.pack("!iI", -0x7FFF0000 | 1, 2) + b"\xff\xfe" + b"\x00" * 4)),
        P("a name of length -1", _malformed(struct.pack("!iI", -0x7FFF0000 | 1, 0xFFFFFFFF) + bytes(8),
                                            lines=(0, 1), end_write=True)),
        P("a name claiming 2 GB, then the end", _malformed(
            struct.pack("!iI", -0x7FFF0000 | 1, 0x7FFFFFFF) + b"x" * 100, lines=(0, 1),
            end_write=True)),
        P("an argument claiming 2 GB, then the end", _malformed(message(
            num_entries, args=struct.pack("!bhI", 11, 2, 0x7FFFFFFF) + b"x" * 100),
            lines=(0, 1), end_write=True)),
        P("a list claiming 2**31-1 elements, then the end", _malformed(message(
            num_entries, args=struct.pack("!bhbI", 15, 9, 8, 0x7FFFFFFF) + b"\x00" * 64),
            lines=(0, 1), end_write=True)),
        P("a list of 2**31-1 elements of type VOID", _malformed(message(
            num_entries, args=struct.pack("!bhbI", 15, 9, 1, 0x7FFFFFFF)),
            lines=(0, 1), end_write=True)),
        P("a list of 2**31-1 elements of unknown type 99", _malformed(message(
            num_entries, args=struct.pack("!bhbI", 15, 9, 99, 0x7FFFFFFF)),
            lines=(0, 1), end_write=True)),
        P("a map of 2**31-1 STOP keys and values", _malformed(message(
            num_entries, args=struct.pack("!bhbbI", 13, 9, 0, 0, 0x7FFFFFFF)),
            lines=(0, 1), end_write=True)),
        P("a field of unknown type 99",
          _malformed(message(num_entries, args=b"\x63\x00\x01" + bytes(16)),
                     lines=(0, 1), end_write=True)),
        P("structs nested 100,000 deep", _malformed(message(
            num_entries, args=_nested_structs(100_000)), lines=(0, 1), end_write=True,
            answer_ok=True)),
        P("lists nested 100,000 deep", _malformed(message(
            num_entries, args=_nested_lists(100_000)), lines=(0, 1), end_write=True,
            answer_ok=True)),
        P("half a message, then the end", _malformed(message("standard:bm_get_config")[:6],
                                                     lines=(0, 1), end_write=True)),
        P("the version of another protocol (compact)", _malformed(
            b"\x82\x21\x07\x0fstandard:bm_nope\x00", lines=(0, 1), end_write=True)),
        P("a call without its arguments", _answered(num_entries, b"\x00")),
        P("a call on an unknown table", _answered(
            num_entries, ti32(1, 0) + tstring(2, b"nope") + b"\x00")),
        P("a call on context 2**31-1", _answered(
            num_entries, ti32(1, 2**31 - 1) + tstring(2, b"ProbeIngress.fwd") + b"\x00")),
        P("a 16 MB table name", _answered(
            num_entries, ti32(1, 0) + tstring(2, b"x" * (16 << 20)) + b"\x00")),
        P("200 idle connections", _idle_connections(200)),
        P("50 connections of garbage at once", _garbage_together(50)),
    ]
    for seed in range(3 if fast else 30):
        size = random.Random(seed).choice((16, 1024, 65536))
        cases.append(P(f"random bytes #{seed} ({size} B), then the end",
                       _malformed(_random_bytes(seed, size), lines=(0, 1), end_write=True,
                                  answer_ok=True)))
    out = [Probe(p.name, watched(p.check, lambda env: env.switch), p.fast) for p in cases]
    out.append(Probe("the switch stops cleanly on SIGTERM", lambda env: stop_verdict(env.switch)))
    return [p for p in out if p.fast or not fast]


def _protocol_error_type(env: Env, mtype: int) -> Verdict:
    """A message that is not a call: PROTOCOL_ERROR "Unexpected message
    type", then the connection ends (Thrift's C++ TMultiplexedProcessor)."""
    s = env.connect()
    try:
        s.sendall(message("standard:bm_get_config", mtype=mtype))
        r = Reader(s)
        try:
            _, got, _ = r.header()
        except EOFError:
            got = None
        if got != EXCEPTION:
            return wrong(f"answered type {got} where EXCEPTION (PROTOCOL_ERROR) was due")
        typ, msg = r.app_exception()
        if typ != PROTOCOL_ERROR or "Unexpected message type" not in msg:
            return wrong(f"TApplicationException {typ} {msg!r}")
        if not closed(s):
            return wrong("the connection stayed open")
    finally:
        s.close()
    problem = served(env)
    return wrong(problem) if problem else handled("PROTOCOL_ERROR, closed")


AREA = Area(NAME, probes, environment)
