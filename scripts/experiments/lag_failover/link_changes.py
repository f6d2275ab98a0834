"""When a link really changed: the kernel's rtnetlink link notifications
(RTM_NEWLINK, with the interface's operational state), stamped with
time.time_ns() as they arrive. On a busy machine `ip link set` may take
a hundred milliseconds to return while the link changed early in it; the
notification is sent as the change is made.

    with LinkChanges() as lc:
        ...                                     # ip link set s1-eth11 down
    lc.first(socket.if_nametoindex("s1-eth11"), up=False, after_ns=t0)
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from typing import Any, Optional

RTMGRP_LINK = 1
RTM_NEWLINK = 16
IFLA_OPERSTATE = 16
IF_OPER_UP = 6
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
_NLMSG = struct.Struct("=IHHII")
_IFINFO = struct.Struct("=BxHiII")


def parse(data: bytes) -> list[tuple[int, bool]]:
    """(interface index, usable) of each RTM_NEWLINK in a netlink read:
    usable when its operstate is UP (or, without one, when it is up with a
    carrier)."""
    out = []
    off = 0
    while off + _NLMSG.size <= len(data):
        length, kind, _, _, _ = _NLMSG.unpack_from(data, off)
        if length < _NLMSG.size:
            break
        if kind == RTM_NEWLINK and length >= _NLMSG.size + _IFINFO.size:
            _, _, index, flags, _ = _IFINFO.unpack_from(data, off + _NLMSG.size)
            up = bool(flags & IFF_UP) and bool(flags & IFF_LOWER_UP)
            a = off + _NLMSG.size + _IFINFO.size
            while a + 4 <= off + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype == IFLA_OPERSTATE and alen >= 5:
                    up = data[a + 4] == IF_OPER_UP
                a += (alen + 3) & ~3
            out.append((index, up))
        off += (length + 3) & ~3
    return out


class LinkChanges:
    """Collects (time ns, interface index, usable) from the kernel's link
    notifications while open (nothing where rtnetlink is not available)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int, bool]] = []
        self._sock: Optional[socket.socket] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "LinkChanges":
        try:
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            s.bind((0, RTMGRP_LINK))
        except OSError:
            return self
        self._sock = s
        self._thread = threading.Thread(target=self._run, name="link-changes", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            ready, _, _ = select.select([self._sock], [], [], 0.1)
            if not ready:
                continue
            try:
                data = self._sock.recv(1 << 16)
            except OSError:  # ENOBUFS: some were lost; what is read next still counts
                continue
            now = time.time_ns()
            self.seen += [(now, index, up) for index, up in parse(data)]

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._sock is not None:
            self._sock.close()

    def first(self, index: int, up: bool, after_ns: int) -> Optional[int]:
        """When interface `index` was first announced (un)usable at or
        after `after_ns`; None if it was not."""
        return next((t for t, i, u in list(self.seen)
                     if i == index and u == up and t >= after_ns), None)
