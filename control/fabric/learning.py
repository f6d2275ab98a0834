"""L2 learning for a fabric: the learning app, aware of LAGs and of the
spanning tree, with digests kept to what the controller can use.

Two things differ from `apps.learning.L2Learning` used alone:

* A host bonded over a LAG sends from one MAC over several member ports.
  The DUT's smac table holds one port per MAC and sends a digest for every
  frame that arrives on another one, so each frame of a flow hashed onto
  the other member would reach the controller. Here a MAC known on one
  member is known on the whole LAG (no table change), and the digest is
  configured with an ack timeout and *not* acknowledged: the switch then
  suppresses repeats of the same (MAC, port) for `repeat_s` (P4Runtime's
  DigestEntry.Config ack_timeout_ns), so a busy LAG costs a digest per
  MAC and member every `repeat_s`, not one per frame. The same keeps a
  flow from an unknown source from flooding the controller with
  identical digests before its entries are in.
* MACs seen on ports off the spanning tree are not learnt (nothing should
  arrive there; a frame that does must not pull traffic off the tree), and
  `forget_port()` drops what was learnt on a port that went down.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterable

from ..apps.learning import L2Learning


@dataclass
class FabricLearning(L2Learning):
    blocked: set[int] = field(default_factory=set)
    """Ports whose digests are ignored (off the tree, or down)."""
    repeat_s: float = 1.0
    """How long the switch suppresses a repeated digest."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.lock = threading.RLock()
        """Held while the tables change: the learning thread and failover
        handling (another thread) both write."""

    def start(self, max_list_size: int = 1, max_timeout_ns: int = 0) -> "FabricLearning":
        self.sw.configure_digest(self.digest, max_timeout_ns=max_timeout_ns,
                                 max_list_size=max_list_size,
                                 ack_timeout_ns=int(self.repeat_s * 1e9))
        return self

    def learn(self, mac: int, port: int) -> bool:
        if port in self.blocked:
            return False
        old = self.macs.get(mac)
        if old is not None and old != port:
            lag = self.lag_of_port.get(port)
            if lag is not None and self.lag_of_port.get(old) == lag:
                return False  # the same LAG: already forwarded to it
        return super().learn(mac, port)

    def handle(self, timeout: float = 0.0) -> int:
        """Digests (unacknowledged: see the module doc) and idle timeouts
        in; table changes out. Returns the number of changes."""
        changes = 0
        for dl in self.sw.digests(timeout, ack=False):
            with self.lock:
                changes += self._learn_all(dl.messages)
        smac = self.sw.schema.table(self.smac).name
        for e in self.sw.idle_timeouts():
            if e.table != smac:
                continue
            mac = next(iter(e.match.values()), None)
            with self.lock:
                if mac is not None and mac in self.macs:
                    self.forget(mac)
                    self.stats.aged += 1
                    changes += 1
        return changes

    def _learn_all(self, messages: list) -> int:
        changes = 0
        for m in messages:
            self.stats.digests += 1
            mac = m.values.get("src_addr", m.values.get("f0"))
            port = m.values.get("ingress_port", m.values.get("f1"))
            if mac is not None and port is not None and self.learn(mac, port):
                changes += 1
        return changes

    def forget_ports(self, ports: Iterable[int]) -> int:
        """Forgets every MAC learnt on `ports` (a link went down); returns
        how many. MACs learnt on a LAG member stay: the LAG forwards them."""
        ports = set(ports)
        with self.lock:
            gone = [mac for mac, p in self.macs.items()
                    if p in ports and self.lag_of_port.get(p) is None]
            for mac in gone:
                self.forget(mac)
        return len(gone)
