"""Where packets enter and leave the daemon: Linux interfaces or pcap files.

Until the engine has its own real-time ports (AF_PACKET in Rust), the
daemon moves packets in Python:

* `LinuxPorts`: one AF_PACKET socket per `-i PORT@IFACE`, a reader thread
  polling them all, each poll round handed to the device as one batch;
* `FilePorts` (`--use-files WAIT`): reads `<iface>_in.pcap` after WAIT
  seconds and writes `<iface>_out.pcap`, as BMv2 does;
* `PcapTap` (`--pcap DIR`): copies what every port receives and sends to
  `DIR/<iface>_in.pcap` and `DIR/<iface>_out.pcap`.

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

log = logging.getLogger("p4scope.switch")

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
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


def read_pcap(path: str) -> list[bytes]:
    """The packets of a pcap file (either byte order, us or ns timestamps)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file")
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        raise ValueError(f"{path}: not a pcap file (magic 0x{magic:08x})")
    out = []
    i = 24
    while i + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[i:i + 16])
        i += 16
        out.append(data[i:i + incl])
        i += incl
    return out


class PcapTap:
    """--pcap DIR: per-interface capture files of what goes in and out."""

    def __init__(self, directory: str, ifaces: dict[int, str]):
        self.ins = {p: PcapWriter(os.path.join(directory, f"{n}_in.pcap")) for p, n in ifaces.items()}
        self.outs = {p: PcapWriter(os.path.join(directory, f"{n}_out.pcap")) for p, n in ifaces.items()}

    def received(self, port: int, data: bytes) -> None:
        w = self.ins.get(port)
        if w is not None:
            w.write(data)

    def sent(self, port: int, data: bytes) -> None:
        w = self.outs.get(port)
        if w is not None:
            w.write(data)

    def close(self) -> None:
        for w in list(self.ins.values()) + list(self.outs.values()):
            w.close()


class LinuxPorts:
    """AF_PACKET sockets on Linux interfaces (needs CAP_NET_RAW)."""

    def __init__(self, ifaces: dict[int, str], tap: Optional[PcapTap] = None):
        self.ifaces = ifaces
        self.tap = tap
        self.socks: dict[int, socket.socket] = {}
        self.by_fd: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._r, self._w = os.pipe()
        try:
            for port, name in ifaces.items():
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                try:
                    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                except OSError:
                    pass  # older kernels: outgoing packets are skipped by pkttype below
                s.bind((name, 0))
                s.setblocking(False)
                self.socks[port] = s
                self.by_fd[s.fileno()] = port
        except OSError:
            self.close()
            raise

    def start(self, receive: Receive) -> None:
        self._thread = threading.Thread(target=self._loop, args=(receive,), name="ports",
                                        daemon=True)
        self._thread.start()

    def _loop(self, receive: Receive) -> None:
        poller = select.poll()
        for fd in self.by_fd:
            poller.register(fd, select.POLLIN)
        poller.register(self._r, select.POLLIN)
        while not self._stop.is_set():
            try:
                events = poller.poll(200)
            except InterruptedError:
                continue
            batch: list[tuple[int, bytes]] = []
            for fd, _ in events:
                port = self.by_fd.get(fd)
                if port is None:
                    continue
                s = self.socks[port]
                for _ in range(64):
                    try:
                        data, addr = s.recvfrom(MAX_FRAME)
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError as e:
                        log.warning("port %d: receive failed: %s", port, e)
                        break
                    if len(addr) > 2 and addr[2] == PACKET_OUTGOING:
                        continue
                    if self.tap:
                        self.tap.received(port, data)
                    batch.append((port, data))
            if batch:
                try:
                    receive(batch)
                except Exception:
                    log.exception("packet processing failed")

    def send(self, port: int, data: bytes) -> None:
        s = self.socks.get(port)
        if s is None:
            return  # BMv2 drops packets sent to ports without an interface
        try:
            s.send(data)
        except OSError as e:
            log.debug("port %d: send failed: %s", port, e)
            return
        if self.tap:
            self.tap.sent(port, data)

    def close(self) -> None:
        self._stop.set()
        try:
            os.write(self._w, b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(timeout=2)
        for s in self.socks.values():
            s.close()
        self.socks.clear()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass


class FilePorts:
    """--use-files: packets from <iface>_in.pcap, to <iface>_out.pcap."""

    def __init__(self, ifaces: dict[int, str], wait_s: int, directory: str = "."):
        self.ifaces = ifaces
        self.wait_s = wait_s
        self.inputs = {p: os.path.join(directory, f"{n}_in.pcap") for p, n in ifaces.items()}
        self.outs = {p: PcapWriter(os.path.join(directory, f"{n}_out.pcap"))
                     for p, n in ifaces.items()}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self, receive: Receive) -> None:
        self._thread = threading.Thread(target=self._run, args=(receive,), name="pcap-in",
                                        daemon=True)
        self._thread.start()

    def _run(self, receive: Receive) -> None:
        if self._stop.wait(self.wait_s):
            return
        for port, path in self.inputs.items():
            if not os.path.exists(path):
                log.warning("--use-files: no %s; port %d receives nothing", path, port)
                continue
            try:
                pkts = read_pcap(path)
            except (OSError, ValueError) as e:
                log.error("--use-files: %s", e)
                continue
            for data in pkts:
                if self._stop.is_set():
                    return
                receive([(port, data)])

    def send(self, port: int, data: bytes) -> None:
        w = self.outs.get(port)
        if w is not None:
            w.write(data)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for w in self.outs.values():
            w.close()
