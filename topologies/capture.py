"""The frames a switch sends out of one of its root-namespace interfaces,
captured with the kernel's timestamp, in a thread.

    with OutgoingCapture("t1abc-eth250") as cap:
        ...                               # the switch sends
        got = cap.take()                  # [(wall-clock ns, frame bytes)]

An AF_PACKET socket bound to the interface sees what is transmitted on it
(PACKET_OUTGOING) before the frame crosses to the link's other end; frames
arriving on it are ignored. Each frame carries the kernel's CLOCK_REALTIME
stamp of that moment (SO_TIMESTAMPNS), so a thread that falls behind does
not move the times. The socket's buffer is large (a burst of reports must
not overflow it); frames the kernel still dropped are counted (`drops`).
The switch must send through the qdisc (p4scope's switch does): frames
sent with PACKET_QDISC_BYPASS skip the kernel's taps.
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Optional

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35  # SCM_TIMESTAMPNS too (Linux, 64-bit timespec)
SO_RCVBUFFORCE = 33
_TIMESPEC = struct.Struct("@qq")


class OutgoingCapture:
    def __init__(self, ifname: str, rcvbuf: int = 64 << 20, snaplen: int = 2048) -> None:
        self.ifname, self.rcvbuf, self.snaplen = ifname, rcvbuf, snaplen
        self.drops = 0
        """Frames the kernel dropped because the socket's buffer was full."""
        self._frames: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "OutgoingCapture":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, self.rcvbuf)
        except OSError:  # not privileged: as much as the system allows
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        s.bind((self.ifname, ETH_P_ALL))
        s.settimeout(0.1)
        self._sock = s
        self._thread = threading.Thread(target=self._run, name=f"capture-{self.ifname}",
                                        daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        s = self._sock
        assert s is not None
        anc = socket.CMSG_SPACE(_TIMESPEC.size)
        while not self._stop.is_set():
            try:
                data, ancdata, _flags, addr = s.recvmsg(self.snaplen, anc)
            except socket.timeout:
                continue
            except OSError:
                return
            if addr[2] != PACKET_OUTGOING:
                continue
            ts = 0
            for level, kind, raw in ancdata:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(raw) >= _TIMESPEC.size:
                    sec, nsec = _TIMESPEC.unpack_from(raw)
                    ts = sec * 1_000_000_000 + nsec
            with self._lock:
                self._frames.append((ts, data))

    def take(self) -> list[tuple[int, bytes]]:
        """(kernel wall-clock ns, frame) of what was captured since the last
        take, in capture order; adds the kernel's drops so far to `drops`."""
        with self._lock:
            out, self._frames = self._frames, []
        if self._sock is not None:
            try:
                raw = self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
                self.drops += struct.unpack("II", raw)[1]  # the kernel resets them on read
            except OSError:
                pass
        return out

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "OutgoingCapture":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
