"""The TCP incast application that runs inside the emulated hosts.

    python -m p4scope.experiments.tcp_incast.app recv --port 5001 --flows 256 [--bin-ms 10]
    python -m p4scope.experiments.tcp_incast.app send --dst 10.0.0.17 --port 5001 --sender 3 \
        --flows 16 --bytes 262144 --start-at NS

Why not iperf3: iperf3 ends all parallel streams of a client together, so
it has no per-flow completion time, and one server serves one client at a
time. Here every flow is its own TCP connection carrying a fixed number of
bytes, as in seed 001 (16 senders x 16 flows of one transfer size each):

* the receiver accepts all flows on one port, reads them with one
  selector loop, and records per flow the first and last byte's arrival
  and its EOF, plus the bytes of all flows per time bin (the aggregate
  rate over time, as the receiving server sees it);
* each sender connects its flows first, waits for the common start time
  (the wall clock, shared by all namespaces of the machine), then writes
  every flow's bytes concurrently and closes it; a flow is complete when
  the receiver has read it all and closed its end.

Each side prints one JSON document on stdout; times are CLOCK_REALTIME
nanoseconds. A flow starts with a 16-byte header (magic, sender, flow,
length), so the receiver knows what to expect. Standard library only:
it starts fast in 17 namespaces at once.
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import struct
import sys
import time

HEADER = struct.Struct("!HHHxxQ")
MAGIC = 0x1C57
CHUNK = 1 << 18


def tcp_retransmits() -> int:
    """RetransSegs of this network namespace (/proc/net/snmp is per namespace)."""
    try:
        with open("/proc/net/snmp") as f:
            lines = [l.split() for l in f if l.startswith("Tcp:")]
        return int(lines[1][lines[0].index("RetransSegs")])
    except (OSError, ValueError, IndexError):
        return -1


class _Flow:
    __slots__ = ("sock", "peer", "head", "sender", "flow", "expected", "got", "accept_ns",
                 "first_ns", "last_ns", "end_ns")

    def __init__(self, sock: socket.socket, peer: str) -> None:
        self.sock, self.peer = sock, peer
        self.head = b""
        self.sender = self.flow = -1
        self.expected = self.got = 0
        self.accept_ns = time.time_ns()
        self.first_ns = self.last_ns = self.end_ns = 0


def receive(port: int, flows: int, bin_ms: float, idle_s: float, rcvbuf: int,
            bind: str = "0.0.0.0") -> dict:
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    lsock.bind((bind, port))
    lsock.listen(1024)
    lsock.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, None)
    print(json.dumps({"ready": port}), file=sys.stderr, flush=True)
    bin_ns = int(bin_ms * 1e6)
    bins: dict[int, int] = {}
    done: list[_Flow] = []
    live = 0
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    last_event = time.monotonic()
    while len(done) < flows:
        events = sel.select(timeout=0.2)
        now_mono = time.monotonic()
        if not events:
            if now_mono - last_event > idle_s:
                break
            continue
        last_event = now_mono
        for key, _ in events:
            if key.data is None:
                try:
                    s, addr = lsock.accept()
                except BlockingIOError:
                    continue
                s.setblocking(False)
                sel.register(s, selectors.EVENT_READ, _Flow(s, addr[0]))
                live += 1
                continue
            fl: _Flow = key.data
            try:
                n = fl.sock.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                n = 0
            now = time.time_ns()
            if n == 0:
                fl.end_ns = now
                sel.unregister(fl.sock)
                fl.sock.close()
                done.append(fl)
                continue
            data = view[:n]
            if len(fl.head) < HEADER.size:
                take = min(HEADER.size - len(fl.head), n)
                fl.head += bytes(data[:take])
                data = data[take:]
                if len(fl.head) == HEADER.size:
                    magic, fl.sender, fl.flow, fl.expected = HEADER.unpack(fl.head)
                    if magic != MAGIC:
                        fl.sender = fl.flow = -1
            if len(data):
                if not fl.first_ns:
                    fl.first_ns = now
                fl.got += len(data)
                fl.last_ns = now
                b = now // bin_ns
                bins[b] = bins.get(b, 0) + len(data)
    incomplete = [k.data for k in sel.get_map().values() if k.data is not None]
    for fl in incomplete:
        fl.sock.close()
    lsock.close()
    first = min(bins) if bins else 0
    series = [bins.get(b, 0) for b in range(first, max(bins) + 1)] if bins else []
    return {"role": "recv", "port": port, "bin_ns": bin_ns, "first_bin_ns": first * bin_ns,
            "bins": series, "retransmits": tcp_retransmits(),
            "flows": [{"sender": f.sender, "flow": f.flow, "peer": f.peer, "expected": f.expected,
                       "bytes": f.got, "accept_ns": f.accept_ns, "first_ns": f.first_ns,
                       "last_ns": f.last_ns, "end_ns": f.end_ns, "complete": f.end_ns > 0}
                      for f in done + incomplete]}


def send(dst: str, port: int, sender: int, flows: int, nbytes: int, start_at: int,
         sndbuf: int, timeout_s: float) -> dict:
    retrans0 = tcp_retransmits()
    socks = []
    connect_ns = []
    for i in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if sndbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        s.settimeout(10)
        s.connect((dst, port))
        s.setblocking(False)
        socks.append(s)
        connect_ns.append(time.time_ns())
    payload = memoryview(bytes(CHUNK))
    wait = (start_at - time.time_ns()) / 1e9
    if wait > 0:
        time.sleep(wait)
    t0 = time.time_ns()
    pending = [HEADER.pack(MAGIC, sender, i, nbytes) for i in range(flows)]
    left = [nbytes] * flows
    sent_ns = [0] * flows
    done_ns = [0] * flows
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_WRITE, i)
    open_flows = flows
    deadline = time.monotonic() + timeout_s
    while open_flows and time.monotonic() < deadline:
        for key, ev in sel.select(timeout=0.2):
            i = key.data
            s = socks[i]
            if ev & selectors.EVENT_WRITE:
                try:
                    if pending[i]:
                        n = s.send(pending[i])
                        pending[i] = pending[i][n:]
                        continue
                    n = s.send(payload[:min(CHUNK, left[i])])
                except (BlockingIOError, InterruptedError):
                    continue
                left[i] -= n
                if left[i] == 0:
                    s.shutdown(socket.SHUT_WR)
                    sent_ns[i] = time.time_ns()
                    sel.modify(s, selectors.EVENT_READ, i)
            else:
                try:
                    data = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    done_ns[i] = time.time_ns()
                    sel.unregister(s)
                    s.close()
                    open_flows -= 1
    for s in socks:
        if s.fileno() != -1:
            s.close()
    return {"role": "send", "sender": sender, "start_at": start_at, "t0_ns": t0,
            "retransmits": tcp_retransmits() - retrans0 if retrans0 >= 0 else -1,
            "flows": [{"flow": i, "bytes": nbytes - left[i], "connect_ns": connect_ns[i],
                       "sent_ns": sent_ns[i], "done_ns": done_ns[i]} for i in range(flows)]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="incast_app", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--flows", type=int, required=True)
    r.add_argument("--bin-ms", type=float, default=10.0)
    r.add_argument("--idle", type=float, default=30.0, help="give up after this many idle seconds")
    r.add_argument("--rcvbuf", type=int, default=0)
    r.add_argument("--bind", default="0.0.0.0",
                   help="address to listen on (inside a host's namespace: all of them)")
    s = sub.add_parser("send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--sender", type=int, required=True)
    s.add_argument("--flows", type=int, required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--start-at", type=int, required=True, help="CLOCK_REALTIME ns")
    s.add_argument("--sndbuf", type=int, default=0)
    s.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args(argv)
    if a.cmd == "recv":
        out = receive(a.port, a.flows, a.bin_ms, a.idle, a.rcvbuf, a.bind)
    else:
        out = send(a.dst, a.port, a.sender, a.flows, a.bytes, a.start_at, a.sndbuf, a.timeout)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
