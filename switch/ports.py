"""Where packets enter and leave the daemon: Linux interfaces or pcap files.

* `RtPorts`: the engine's own real-time ports (rt_add_port ... rt_start: a
  Rust thread with a receive ring per port and sendmmsg, no GIL, at
  real-time priority while it keeps up: $P4SCOPE_RT_PRIORITY, see
  `rt_priority`), for `-i PORT@IFACE`, per-packet traces included (the
  loop records them, `traces.log_records` writes them) and `--pcap DIR`
  copies (`DIR/<iface>_in.pcap`, `DIR/<iface>_out.pcap`) written by it;
* `FilePorts` (`--use-files WAIT`): reads every `<iface>_in.pcap` (files or
  FIFOs, together, earliest timestamp first) after WAIT seconds and writes
  `<iface>_out.pcap`, as BMv2 does.

A port driver calls `receive(batch)` with [(port, bytes)] and is given
packets to send with `send(port, data)`.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import threading
import time
from typing import Callable, Optional

from . import traces
from .pcap_stream import PcapError, PcapStream

log = logging.getLogger("p4scope.switch")

MAX_FRAME = 65536
Receive = Callable[[list[tuple[int, bytes]]], None]


class PcapWriter:
    """A pcap file (microsecond timestamps, Ethernet), flushed per packet."""

    def __init__(self, path: str):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, MAX_FRAME, 1))
        self.f.flush()
        self.lock = threading.Lock()

    def write(self, data: bytes, t: Optional[float] = None) -> None:
        t = time.time() if t is None else t
        sec = int(t)
        usec = int((t - sec) * 1e6)
        with self.lock:
            self.f.write(struct.pack("<IIII", sec, usec, len(data), len(data)) + data)
            self.f.flush()

    def close(self) -> None:
        with self.lock:
            self.f.close()


class FilePorts:
    """--use-files WAIT: packets from <iface>_in.pcap, to <iface>_out.pcap.

    As BMv2 (bm_sim's FilesDevMgrImp, PcapFilesReader with no real-time
    replay): every port's files are opened at start-up in port order; after
    WAIT seconds the inputs are read together and the packet with the
    earliest timestamp goes first (ties: the lowest port), at once. Inputs
    are opened without blocking and read as streams: a FIFO's packets go in
    as its writer writes them, whatever order the writer opened the FIFOs
    in; a packet is not held back for a FIFO that has nothing yet, so
    regular files merge exactly as on BMv2 and FIFOs in arrival order.
    A missing or malformed input stops the start (BMv2 exits); one that
    goes bad while read ends that port's input with an error in the log.
    """

    POLL_MS = 200

    def __init__(self, ifaces: dict[int, str], wait_s: int, directory: str = "."):
        self.wait_s = wait_s
        self.inputs: list[PcapStream] = []
        self.outs: dict[int, PcapWriter] = {}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._r, self._w = os.pipe()
        try:
            for port, name in sorted(ifaces.items()):
                s = PcapStream(port, os.path.join(directory, f"{name}_in.pcap"))
                self.inputs.append(s)
                s.fill()  # a regular file's header is checked now
                self.outs[port] = PcapWriter(os.path.join(directory, f"{name}_out.pcap"))
        except (OSError, PcapError) as e:
            self.close()
            if isinstance(e, OSError) and e.filename:
                raise RuntimeError(f"--use-files: {e.filename}: {e.strerror}") from None
            raise RuntimeError(f"--use-files: {e}") from None

    def start(self, receive: Receive) -> None:
        self._thread = threading.Thread(target=self._run, args=(receive,), name="pcap-in",
                                        daemon=True)
        self._thread.start()

    def _run(self, receive: Receive) -> None:
        if self._stop.wait(self.wait_s):
            return
        poller = select.poll()
        by_fd = {s.fd: s for s in self.inputs if not s.eof}
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        poller.register(self._r, select.POLLIN)
        while by_fd and not self._stop.is_set():
            waiting = any(s.head is not None for s in self.inputs)
            try:
                events = poller.poll(0 if waiting else self.POLL_MS)
            except InterruptedError:
                continue
            for fd, _ in events:
                s = by_fd.get(fd)
                if s is not None:
                    s.readable = True
                    self._fill(s, poller, by_fd)
            ready = [s for s in self.inputs if s.head is not None]
            if not ready:
                continue
            first = min(ready, key=lambda s: s.head[0])  # min keeps the lowest port on ties
            try:
                receive([(first.port, first.take())])
            except Exception:
                log.exception("packet processing failed")
            self._fill(first, poller, by_fd)
        log.debug("--use-files: end of all input files")

    @staticmethod
    def _fill(s: PcapStream, poller, by_fd: dict) -> None:
        try:
            s.fill()
        except PcapError as e:
            log.error("--use-files: %s; port %d receives nothing more", e, s.port)
            s.eof, s.head = True, None
        if s.eof and s.head is None and s.fd in by_fd:
            poller.unregister(s.fd)
            del by_fd[s.fd]

    def send(self, port: int, data: bytes) -> None:
        w = self.outs.get(port)
        if w is not None:
            w.write(data)

    def close(self) -> None:
        self._stop.set()
        try:
            os.write(self._w, b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(timeout=2)
        for s in self.inputs:
            s.close()
        for w in self.outs.values():
            w.close()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._r = self._w = -1


RT_PRIORITY_ENV = "P4SCOPE_RT_PRIORITY"
RT_PRIORITY_DEFAULT = 1


def rt_priority() -> int:
    """The SCHED_FIFO priority of the real-time loop's thread: 1..99 from
    $P4SCOPE_RT_PRIORITY, 0 for normal scheduling, 1 when unset. The engine
    steps down to normal scheduling while the loop cannot keep up, and uses
    it throughout without CAP_SYS_NICE."""
    v = os.environ.get(RT_PRIORITY_ENV, "").strip()
    if not v:
        return RT_PRIORITY_DEFAULT
    try:
        p = int(v)
    except ValueError:
        p = -1
    if not 0 <= p <= 99:
        log.warning("%s=%r: give 0..99; using %d", RT_PRIORITY_ENV, v, RT_PRIORITY_DEFAULT)
        return RT_PRIORITY_DEFAULT
    return p


class RtPorts:
    """-i PORT@IFACE served by the engine's real-time loop.

    The ports belong to whichever engine forwards: `attach` is the device's
    `on_dataplane` hook, so a pipeline change (a new engine) stops the old
    engine's loop, unbinds its ports and binds them to the new one. Packet-outs
    go in with rt_inject on the CPU port; a thread moves packet-ins and
    digests (rt_take_events) to the device and, when the packets logger
    wants them (--log-console/--log-file at debug or trace level, log_msg
    lines at info, --dump-packet-data), writes the loop's per-packet trace
    records (rt_trace, rt_take_traces) with the in-process path's texts.

    Every engine call is made under the device lock: the engine is a PyO3
    object that refuses concurrent calls, and rt_take_events releases the GIL
    while it runs, so it is called without waiting (timeout 0). The thread
    waits for the loop's events and records with the engine's RtWaiter
    instead, which holds neither the engine nor the lock (and wakes as soon
    as the loop queues something: no polling while traffic flows).
    """

    WAIT_S = 0.2
    POLL_IDLE_S = 0.001
    TRACES_PER_POLL = 4096
    LOST_REPORT_S = 1.0

    def __init__(self, device, ifaces: dict[int, str], cpu_port: int = 0,
                 pcap_dir: Optional[str] = None, dump_bytes: int = 0):
        for name in ifaces.values():
            socket.if_nametoindex(name)  # a missing interface fails at start-up (OSError)
        self.device = device
        self.ifaces = ifaces
        self.cpu_port = cpu_port
        self.pcap_dir = pcap_dir
        self.trace = traces.wanted(dump_bytes)  # (per packet, log_msg lines, dump bytes)
        self.engine = None  # the adapter whose loop runs our ports
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _pcap(self, name: str, way: str) -> Optional[str]:
        return os.path.join(self.pcap_dir, f"{name}_{way}.pcap") if self.pcap_dir else None

    def attach(self, old, new) -> None:
        """Moves the ports from engine `old` to `new` (device lock held)."""
        self.detach()
        raw = new.raw
        try:
            for port, name in self.ifaces.items():
                raw.rt_add_port(port, name, self._pcap(name, "in"), self._pcap(name, "out"))
            packets, log_lines, dump = self.trace
            raw.rt_trace(packets=packets, log=log_lines, dump_bytes=dump)
            raw.rt_start(cpu_port=self.cpu_port or None, priority=rt_priority())
        except Exception:
            for port in self.ifaces:
                raw.rt_remove_port(port)
            raise
        self.engine = new

    def detach(self) -> None:
        """Stops the loop and unbinds the ports (flushing --pcap files)."""
        e, self.engine = self.engine, None
        if e is None:
            return
        e.raw.rt_stop()
        if any(self.trace[:2]):  # what the stopped loop recorded last
            traces.log_records(e.raw.rt_take_traces(1 << 30), self.trace[2], self.cpu_port)
        for port in self.ifaces:
            e.raw.rt_remove_port(port)

    def inject(self, port: int, data: bytes) -> None:
        with self.device.lock:
            if self.engine is not None:
                self.engine.raw.rt_inject(port, data)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._events, name="rt-events", daemon=True)
        self._thread.start()

    def _events(self) -> None:
        dev = self.device
        tracing = any(self.trace[:2])
        lost, checked = 0, time.monotonic()
        waiter, waiter_of = None, None
        while not self._stop.is_set():
            try:
                with dev.lock:
                    engine = self.engine
                    if engine is not None and engine is not waiter_of:
                        waiter, waiter_of = engine.raw.rt_waiter(), engine
                if engine is None:  # between two engines
                    self._stop.wait(self.POLL_IDLE_S)
                    continue
                if not waiter.wait(self.WAIT_S):  # a timeout, or that loop stopped
                    self._stop.wait(self.POLL_IDLE_S)
                recs: list = []
                with dev.lock:
                    engine = self.engine
                    evs = engine.raw.rt_take_events(1024, 0.0) if engine is not None else []
                    if tracing and engine is not None:
                        recs = engine.raw.rt_take_traces(self.TRACES_PER_POLL)
                        if time.monotonic() - checked > self.LOST_REPORT_S:
                            checked = time.monotonic()
                            now_lost = engine.raw.rt_stats()["traces_dropped"]
                            if now_lost > lost:
                                log.warning("%d per-packet trace records lost (the log is slower "
                                            "than the traffic)", now_lost - lost)
                            lost = now_lost
                if recs:  # outside the lock: writing the log is slow
                    traces.log_records(recs, self.trace[2], self.cpu_port)
                if evs:
                    dev.deliver_events(engine, evs)
                if tracing:  # records come every round: take them in batches
                    self._stop.wait(self.POLL_IDLE_S)
            except Exception:  # the thread must outlive a bad event
                log.exception("real-time events failed")
                self._stop.wait(self.POLL_IDLE_S)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self.device.lock:
            self.detach()
