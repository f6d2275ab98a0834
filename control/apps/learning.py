"""L2 learning: digests in, smac/dmac entries out, ageing by idle timeout.

The DUT sends a `mac_learn_t` digest {src_addr, ingress_port} for a frame
whose source MAC is unknown or known on another port (a station move).
`L2Learning.handle()` turns each into an smac entry (smac_hit(port), with
the idle timeout that ages it) and a dmac entry (forward(port), or
forward_lag(id) when the port is a LAG member); an idle-timeout
notification for an smac entry removes both, so the MAC is flooded again
until it is relearnt.

Nothing runs in the background unless `start_thread()` is called: tests
call `handle()` when they want the controller to act.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Optional

from ..client import WriteError
from ..device import Switch
from ..entities import TableEntry


@dataclass
class LearningStats:
    learnt: int = 0
    moved: int = 0
    aged: int = 0
    digests: int = 0
    table_full: int = 0
    """Digests not learnt because the smac or dmac table was full."""


@dataclass
class L2Learning:
    sw: Switch
    ageing_s: float = 300.0
    lag_of_port: dict[int, int] = field(default_factory=dict)
    """port -> LAG id: MACs learnt on a member are forwarded to the LAG."""
    digest: str = "mac_learn_t"
    smac: str = "smac"
    dmac: str = "dmac"
    macs: dict[int, int] = field(default_factory=dict)
    """Learnt MAC -> port."""
    stats: LearningStats = field(default_factory=LearningStats)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self, max_list_size: int = 1, max_timeout_ns: int = 0) -> "L2Learning":
        """Enables the digest. PI needs this before it sends any."""
        self.sw.configure_digest(self.digest, max_timeout_ns=max_timeout_ns,
                                 max_list_size=max_list_size)
        return self

    def _entries(self, mac: int, port: int) -> tuple[TableEntry, TableEntry]:
        ns = int(self.ageing_s * 1e9)
        smac = TableEntry(self.smac, {"src_addr": mac}, "smac_hit", {"port": port},
                          idle_timeout_ns=ns)
        lag = self.lag_of_port.get(port)
        if lag is not None:
            dmac = TableEntry(self.dmac, {"dst_addr": mac}, "forward_lag", {"lag_id": lag})
        else:
            dmac = TableEntry(self.dmac, {"dst_addr": mac}, "forward", {"port": port})
        return smac, dmac

    def learn(self, mac: int, port: int) -> bool:
        """Installs (or moves) one MAC; False if it was already there, or
        if the MAC table is full (stats.table_full counts those)."""
        old = self.macs.get(mac)
        if old == port:
            return False
        smac, dmac = self._entries(mac, port)
        if old is None:
            try:
                self.sw.insert(smac, dmac)
            except WriteError as e:
                if any(u.code_name == "RESOURCE_EXHAUSTED" for u in e.errors):
                    failed = {u.index for u in e.errors}
                    return self._table_full([x for i, x in enumerate((smac, dmac))
                                             if i not in failed])
                # learnt by another controller run, or a digest raced: overwrite
                self.sw.modify(smac, dmac)
            self.stats.learnt += 1
        else:
            self.sw.modify(smac, dmac)
            self.stats.moved += 1
        self.macs[mac] = port
        return True

    def _table_full(self, inserted: list[TableEntry]) -> bool:
        """A full MAC table: the MAC stays unknown (flooded, as a switch
        whose table is full floods it); the half of the pair that was
        `inserted` is taken out again."""
        self.stats.table_full += 1
        for e in inserted:
            try:
                self.sw.delete(e)
            except WriteError:
                pass
        return False

    def forget(self, mac: int) -> None:
        self.macs.pop(mac, None)
        for e in (TableEntry(self.smac, {"src_addr": mac}), TableEntry(self.dmac, {"dst_addr": mac})):
            try:
                self.sw.delete(e)
            except WriteError:
                pass

    def handle(self, timeout: float = 0.0) -> int:
        """Processes pending digests and idle timeouts (waiting up to
        `timeout` s for a digest); returns the number of table changes."""
        changes = 0
        for dl in self.sw.digests(timeout):
            for m in dl.messages:
                self.stats.digests += 1
                mac = m.values.get("src_addr", m.values.get("f0"))
                port = m.values.get("ingress_port", m.values.get("f1"))
                if mac is not None and port is not None and self.learn(mac, port):
                    changes += 1
        return changes + self.expire()

    def expire(self, timeout: float = 0.0) -> int:
        """Forgets the MACs whose smac entry the switch reported idle
        (waiting up to `timeout` s for a report); returns how many."""
        aged = 0
        for e in self.sw.idle_timeouts(timeout):
            if e.table != self.sw.schema.table(self.smac).name:
                continue
            mac = next(iter(e.match.values()), None)
            if mac is not None and mac in self.macs:
                self.forget(mac)
                self.stats.aged += 1
                aged += 1
        return aged

    def start_thread(self, poll_s: float = 0.05) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                self.handle(timeout=poll_s)

        self._thread = threading.Thread(target=loop, name="l2-learning", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
