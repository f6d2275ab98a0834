"""Link state of the daemon's interface ports (-i PORT@IFACE), as BMv2's
port monitor keeps it.

A port is up while its interface's operstate begins with "u" ("up", or
"unknown" for a driver that reports none), read from /sys/class/net as
BMv2's bmi_port_interface_is_up reads it; an interface that cannot be read
is down. BMv2 reads every 200 ms; here rtnetlink's link notifications wake
the monitor at once as well, so a port is down in the engine about a
millisecond after `ip link set IFACE down`, as a switch's PHY notices loss
of signal (the 200 ms reading stays, should a notification be missed).

Each change goes to the forwarding engine (set_port_status: frames to and
from a down port are dropped, selector members watching it are skipped, as
PI's watch-port enforcement deactivates them) and to the log; `is_up()` is
what the Thrift API's show_ports reports. P4Runtime has no port-status
message, so a controller learns of a change from its own watch of the link
or from show_ports. The engine of a new pipeline starts with every port
up: `apply(engine)` tells it which are down.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from typing import Any, Optional

log = logging.getLogger("p4scope.switch")

POLL_S = 0.2
"""BMv2's port monitor period (PortMonitorActive::ms_sleep)."""
RTMGRP_LINK = 1


def operstate_up(ifname: str) -> bool:
    """Whether the interface's operstate begins with 'u' (BMv2's test)."""
    try:
        with open(f"/sys/class/net/{ifname}/operstate") as f:
            return f.read(1) == "u"
    except OSError:
        return False


def _link_notifications() -> Optional[socket.socket]:
    """A non-blocking rtnetlink socket subscribed to link changes (None
    where there is none: the monitor then only reads every POLL_S)."""
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    except (OSError, AttributeError):
        return None
    try:
        s.bind((0, RTMGRP_LINK))
        s.setblocking(False)
    except OSError:
        s.close()
        return None
    return s


class LinkMonitor:
    """Follows the operstate of `ifaces` ({port: interface}) and tells the
    device's engine of each change (see the module doc)."""

    def __init__(self, device: Any, ifaces: dict[int, str], poll_s: float = POLL_S):
        self.device = device
        self.ifaces = dict(ifaces)
        self.poll_s = poll_s
        self.up = {p: operstate_up(name) for p, name in self.ifaces.items()}
        self.changes: list[tuple[float, int, bool]] = []
        """(time.time(), port, up) of every change seen."""
        self._stop = threading.Event()
        self._sock: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None

    def is_up(self, port: int) -> bool:
        return self.up.get(port, True)

    def apply(self, engine: Any) -> None:
        """Tells `engine` (a new one: every port up) which ports are down;
        called with the device lock held."""
        if engine is None:
            return
        for port, up in sorted(self.up.items()):
            if not up:
                self._tell(engine, port, False)

    @staticmethod
    def _tell(engine: Any, port: int, up: bool) -> None:
        raw = engine.raw
        raw.set_port_status(port, up)
        raw.take_port_events()  # for a virtual-time controller; nobody reads them here

    def check(self) -> list[tuple[int, bool]]:
        """Reads every port's state; applies and returns the changes."""
        changed = []
        for port, name in self.ifaces.items():
            now = operstate_up(name)
            if now != self.up[port]:
                self.up[port] = now
                changed.append((port, now))
        if changed:
            t = time.time()
            with self.device.lock:
                engine = self.device.dataplane
                for port, up in changed:
                    if engine is not None:
                        self._tell(engine, port, up)
            for port, up in changed:
                self.changes.append((t, port, up))
                log.info("port %d (%s) is %s", port, self.ifaces[port], "up" if up else "down")
        return changed

    def start(self) -> "LinkMonitor":
        self._sock = _link_notifications()
        self._thread = threading.Thread(target=self._run, name="link-state", daemon=True)
        self._thread.start()
        return self

    def _wait(self) -> None:
        """Until a link notification arrives or POLL_S passes."""
        if self._sock is None:
            self._stop.wait(self.poll_s)
            return
        ready, _, _ = select.select([self._sock], [], [], self.poll_s)
        while ready:
            try:
                self._sock.recv(65536)
            except BlockingIOError:
                break
            except OSError:  # ENOBUFS: notifications were lost; the reading covers them
                break

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._wait()
                if not self._stop.is_set():
                    self.check()
            except Exception:  # the monitor must outlive a bad read
                log.exception("link state monitor failed")
                self._stop.wait(self.poll_s)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
