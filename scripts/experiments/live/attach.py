"""`p4scope watch` attached to a switch that is already running: its
telemetry instrument (p4src/include/telemetry.p4) seen two ways, either
or both.

* ReportFeed: the instrument's INT reports (Telemetry Report v2.0 over
  UDP, as any INT collector takes them) on a UDP socket, decoded by the
  controller's collector: what each reported packet left behind in its
  queue at its egress time, each interval's maximum, the bursts with the
  ingress ports and flows of their packets. Exact, as far as the
  instrument reports. The switch's clock is put on this process's by the
  fastest report's delay (the smallest receive time minus egress time).
* RuntimeFeed: a read-only P4Runtime client. It never opens the stream
  channel, so it never arbitrates and can never become primary, and it
  never writes: it reads the measured ports (tel_port), the current
  interval's maximum of each (tel_interval_max_bytes/_pkts), the bytes
  offered to and delivered by each (egress, ingress) pair (tel_offered,
  tel_delivered) and the bursts counted (tel_bursts), every `poll_s`. A
  peak between two polls shows only if the reports are taken too.

Either feed also tells `metrics` (a metrics.watch_feed.WatchFeed, for
`--metrics-port`) what it read, when given.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from .switch_model import SwitchModel, flow_name

INGRESS_PORTS = 64  # telemetry.p4's TEL_MAX_PORTS: pairs are counted for ports below it
PAIR_BITS = 6  # TEL_PORT_BITS
PORTS_EVERY_S = 2.0  # how often the measured ports are read again


class AttachError(Exception):
    """The switch cannot be watched as asked (`option` names the option)."""

    def __init__(self, option: str, msg: str):
        super().__init__(msg)
        self.option = option


class ReportFeed:
    """INT reports taken by collector `col` into `model`; `pull` moves what
    arrived since the last pull (`listen`: on a UDP port of its own)."""

    def __init__(self, model: SwitchModel, col: Any, address: str, metrics: Any = None):
        self.model = model
        self.col = col
        self.address = address
        self.metrics = metrics
        self.offset: Optional[int] = None  # this process's clock minus the switch's
        self.received = 0

    @classmethod
    def listen(cls, model: SwitchModel, host: str, port: int,
               metrics: Any = None) -> "ReportFeed":
        """Reports on host:port (UDP); OSError when taken, or not an address here."""
        from ...control.apps.collector import Collector

        col = Collector()
        port = col.listen(host, port)
        return cls(model, col, f"{host}:{port}", metrics)

    def pull(self) -> None:
        m = self.model
        samples, intervals = self.col.take()
        paths = self.col.take_int_md_paths(wait_for_sink=True)
        now = m.now_ns()
        for t in [s.egress_ns for s in samples] + [i.reported_ns for i in intervals]:
            if self.offset is None or now - t < self.offset:
                self.offset = now - t
        for s in samples:
            t = s.egress_ns + self.offset
            m.sample(s.egress_port, s.queue_id, t, s.held_bytes, s.held_pkts)
            m.left_port("reported", s.egress_port, s.ingress_port, t, s.frame_bytes)
        for i in intervals:
            m.sample(i.port, 0, i.reported_ns + self.offset, i.max_bytes, i.max_pkts)
        self.received += len(samples) + len(intervals)
        bursts = self.col.bursts()
        if bursts and self.offset is not None:
            m.set_bursts([self._burst(b) for b in bursts[-200:]], len(bursts))
        if self.metrics is not None:
            self.metrics.reports(samples, intervals, bursts)
            self.metrics.int_md(paths)
        m.note("reports", address=self.address, received=self.received,
               lost=sum(self.col.lost.values()), malformed=len(self.col.errors))

    def _burst(self, b: Any) -> dict[str, Any]:
        def on_ours(t: Optional[int]) -> Optional[float]:
            return None if t is None else float(t + self.offset)

        total = sum(b.by_ingress.values())
        return {"source": "instrument", "egress_port": b.port, "queue": 0, "burst_id": b.burst_id,
                "start_ns": on_ours(b.start_ns), "end_ns": on_ours(b.end_ns), "peak_ns": None,
                "peak": float(b.peak_bytes), "peak_pkts": float(b.peak_pkts), "unit": "bytes",
                "frames": float(b.packets),
                "ingress": [{"port": p, "amount": float(n), "share": n / total,
                             "unit": "packets reported"}
                            for p, n in sorted(b.by_ingress.items(), key=lambda kv: -kv[1])],
                "flows": sorted(flow_name(f) for f in b.flows)}

    def stop(self) -> None:
        self.col.stop()


class RuntimeFeed:
    """The instrument read over P4Runtime, read-only (see the module docstring)."""

    def __init__(self, model: SwitchModel, address: str, device_id: int = 0,
                 timeout: float = 5.0, metrics: Any = None):
        from ...control.client import Client, P4RuntimeClientError, wait_for_server
        from ...control.device import Switch
        from ...control.schema import Schema, UnknownName
        from finsy.proto import p4r

        self.model = model
        self.address = address
        self.metrics = metrics
        try:
            wait_for_server(address, timeout)
        except TimeoutError:
            raise AttachError("--switch", "no P4Runtime server answers there") from None
        # no connect(): no stream, no arbitration, so never primary; reads only
        self.client = Client(address, device_id, timeout=timeout)
        try:
            cfg = self.client.get_pipeline(
                p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        except P4RuntimeClientError as e:
            self.client.close()
            raise AttachError("--switch", f"cannot read its pipeline: {e}") from None
        if not (cfg.p4info.tables or cfg.p4info.actions):
            self.client.close()
            raise AttachError("--switch", "no P4 program is loaded yet")
        self.sw = Switch(self.client, Schema(cfg.p4info))
        try:
            self.sw.schema.table("tel_port")
            for name in ("tel_delivered", "tel_offered", "tel_bursts"):
                self.sw.schema.counter(name)
            for name in ("tel_interval_max_bytes", "tel_interval_max_pkts", "tel_interval_id"):
                self.sw.schema.register(name)
        except UnknownName as e:
            self.client.close()
            raise AttachError("--switch", "its program has no telemetry instrument "
                                          f"(p4src/include/telemetry.p4): {e}") from None
        self.ports: dict[int, int] = {}  # measured egress port -> interval length (ns)
        self.ports_read = -PORTS_EVERY_S
        self.base: Optional[dict[str, dict[int, Any]]] = None  # counters when the watch began
        self.last: dict[str, dict[int, Any]] = {}
        self.counted_at = 0
        self.interval: dict[int, tuple[int, int]] = {}  # port -> (interval id, since ns)
        self.bursts0: dict[int, int] = {}
        self.polls = 0
        self.errors = 0

    def _read_ports(self, now_s: float) -> None:
        if now_s - self.ports_read < PORTS_EVERY_S:
            return
        self.ports_read = now_s
        ports = {}
        for e in self.sw.table("tel_port").entries():
            if e.action != "tel_port_config" and not str(e.action).endswith("tel_port_config"):
                continue
            port = int(next(iter(e.match.values())))
            shift = int(e.params.get("interval_log2_us", 10))
            ports[port] = (1 << shift) * 1000
        self.ports = ports

    def poll(self) -> None:
        """One read of the instrument; the model gets what changed."""
        m = self.model
        now = m.now_ns()
        self._read_ports(now / 1e9)
        ports = sorted(self.ports)
        if ports:
            regs = {n: self.sw.register(n).read_all()
                    for n in ("tel_interval_max_bytes", "tel_interval_max_pkts", "tel_interval_id")}
            levels, idle = {}, set()
            for p in ports:
                iid = regs["tel_interval_id"].get(p, 0)
                seen, since = self.interval.get(p, (None, now))
                if iid != seen:
                    self.interval[p] = (iid, now)
                    since = now
                # no packet left for a whole interval: nothing waited in the queue
                if iid == 0 or now - since > self.ports[p]:
                    idle.add(p)
                levels[p] = (0 if p in idle else regs["tel_interval_max_bytes"].get(p, 0),
                             0 if p in idle else regs["tel_interval_max_pkts"].get(p, 0))
                m.sample(p, 0, now, *levels[p])
            cur = self._counters(ports, now)
            if self.metrics is not None:
                self.metrics.polled(levels, cur, idle)
        self.polls += 1
        m.note("p4runtime", address=self.address, polls=self.polls, ports=ports,
               errors=self.errors, read_only=True)

    def _counters(self, ports: list[int], now: int) -> dict[str, dict[int, Any]]:
        """Reads the counters of `ports` into the model; returns what it read."""
        idx = [(e << PAIR_BITS) | i for e in ports for i in range(INGRESS_PORTS)]
        cur = {n: self.sw.counter(n).read_many(idx) for n in ("tel_offered", "tel_delivered")}
        cur["tel_bursts"] = self.sw.counter("tel_bursts").read_many(ports)
        if self.base is None:
            self.base, self.last, self.counted_at = cur, cur, now
            return cur
        m = self.model
        mid = (self.counted_at + now) // 2  # what left since the last read, put halfway
        self.counted_at = now
        for k, v in cur["tel_delivered"].items():
            before = self.last["tel_delivered"].get(k)
            delta = v.bytes - (before.bytes if before is not None else 0)
            if delta > 0:
                m.left_port("delivered", k >> PAIR_BITS, k & (INGRESS_PORTS - 1), mid, delta)
        pairs = []
        for k in idx:
            off = _since(cur["tel_offered"], self.base["tel_offered"], k)
            dlv = _since(cur["tel_delivered"], self.base["tel_delivered"], k)
            if off or dlv:
                pairs.append({"ingress": k & (INGRESS_PORTS - 1), "egress": k >> PAIR_BITS,
                              "sent": off, "lost": max(0, off - dlv),
                              "what": "offered to the queue, not delivered (dropped or queued)"})
        m.set_pairs(pairs)
        self.last = cur
        n = sum(_since(cur["tel_bursts"], self.base["tel_bursts"], p) for p in ports)
        if n > m.burst_count:
            m.set_bursts(list(m.bursts), n)
        return cur

    def stop(self) -> None:
        self.client.close()


def _since(now: dict[int, Any], base: dict[int, Any], k: int) -> int:
    a, b = now.get(k), base.get(k)
    return (a.packets if a is not None else 0) - (b.packets if b is not None else 0)


class Attached:
    """The sources of one watch, pulled by `step` (the watch's loop)."""

    def __init__(self, model: SwitchModel, reports: Optional[ReportFeed],
                 runtime: Optional[RuntimeFeed], poll_s: float):
        self.model, self.reports, self.runtime, self.poll_s = model, reports, runtime, poll_s
        self._polled = -1e9
        self._touched = 0.0

    def step(self) -> None:
        now = time.monotonic()
        if self.reports is not None:
            self.reports.pull()
        if self.runtime is not None and now - self._polled >= self.poll_s:
            self._polled = now
            try:
                self.runtime.poll()
            except Exception as e:  # noqa: BLE001 - a failed read is shown, the watch goes on
                self.runtime.errors += 1
                self.model.note("p4runtime", errors=self.runtime.errors,
                                last_error=f"{type(e).__name__}: {e}")
        if now - self._touched >= 1.0:  # the window slides even when nothing arrives
            self._touched = now
            self.model.touch()

    def stop(self) -> None:
        for s in (self.reports, self.runtime):
            if s is not None:
                s.stop()
