"""Link state of switch ports, watched the way a switch's PHY would report it.

A switch daemon in Mininet runs in the root namespace with its ports as
veth ends (<switch>-eth<port>); a link "fails" when either end goes down
(`ip link set s1-eth1 down`, or the host's end). The watcher polls each
interface's operstate in /sys/class/net (the switch ends are in this
process's namespace), which is "up" only while the interface is up and
has a carrier, and calls back on every change:

    w = LinkWatcher(switch_ports(topo), on_change=lambda key, up: ...)
    with w:
        ...
    w.events        # [(time.time(), (switch, port), up)]

Polling (default every 5 ms) starts no process, so nothing can be left
behind; reading a few small files per period costs little.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Hashable, Mapping, Optional


def switch_ports(topo: Any) -> dict[str, tuple[str, int]]:
    """Interface name -> (switch, port) of every P4 switch port of `topo`."""
    p4 = {s.name for s in topo.switches if s.kind != "bridge"}
    out = {}
    for l in topo.links:
        for ep in (l.a, l.b):
            if ep.node in p4:
                out[topo.ifname(ep)] = (ep.node, ep.port)
    return out


def is_up(ifname: str) -> Optional[bool]:
    """Whether the interface is up with a carrier; None if it is gone."""
    try:
        with open(f"/sys/class/net/{ifname}/operstate") as f:
            return f.read().strip() == "up"
    except OSError:
        return None


class LinkWatcher:
    def __init__(self, ifaces: Mapping[str, Hashable],
                 on_change: Callable[[Hashable, bool], None], period: float = 0.005) -> None:
        self.ifaces = dict(ifaces)
        self.on_change = on_change
        self.period = period
        self.state: dict[str, Optional[bool]] = {}
        self.events: list[tuple[float, Hashable, bool]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "LinkWatcher":
        self.state = {i: is_up(i) for i in self.ifaces}
        self._thread = threading.Thread(target=self._run, name="link-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            for ifname, key in self.ifaces.items():
                now = is_up(ifname)
                if now is None or now == self.state.get(ifname):
                    continue
                self.state[ifname] = now
                self.events.append((time.time(), key, now))
                try:
                    self.on_change(key, now)
                except Exception as e:  # keep watching; the caller reads errors
                    self.errors.append(f"{ifname} {'up' if now else 'down'}: {e}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> "LinkWatcher":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
