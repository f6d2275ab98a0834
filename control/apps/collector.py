"""The telemetry collector: reports, digests, packet-ins and counter polls
in; time series and burst events out.

Sources (any mix):
    feed(udp_payload) / feed_frame(frame)   INT reports (e.g. frames the
                                            switch sent out of the collector port)
    feed_packet_in(packet_in)               reports sent to the CPU port
    listen("127.0.0.1", 32766)              a UDP socket (loopback by default)
    feed_digests(switch.digests())          digests, as events
    poll_counters(switch, "tel_delivered")  counter snapshots, timestamped

Outputs (lists of dataclasses; `tables()` gives pandas DataFrames):
    samples      one row per DOMAIN_QUEUE report: depth at enqueue and
                 dequeue, time in queue, flow, ingress/egress port
    bursts()     BurstEvent per (node, port, burst id): start, end, peak,
                 packets, packets per ingress port, flows; the data plane
                 detects bursts at dequeue (telemetry.p4), so start and end
                 are the egress times of the dequeues that crossed the
                 thresholds and the peak is what the queue held just
                 before a burst packet left
    intervals    occupancy maxima per interval
    tap          DOMAIN_TAP samples with occupancy = bytes in - bytes out
    int_md_paths IntMdPath per packet an INT-MD sink reported: every hop's
                 metadata in path order, the sink's own hop joined from its
                 postcard (same node, ingress port and timestamp, packet);
                 int_md_hops() gives one row per hop
    counters     counter snapshots
    lost         reports missing by sequence number, per node
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Iterable, Optional

from ..int_md_headers import HOP_FIELDS, IntHop, IntMdStack
from ..packets import parse_frame
from ..reports import (EVENT_BURST_END, EVENT_BURST_PKT, EVENT_BURST_START, EVENT_INTERVAL,
                       EVENT_POSTCARD, QueueBlock, Report, ReportError, TapOccupancy,
                       parse_report, parse_report_frame)


@dataclass
class QueueSample:
    node_id: int
    seq: int
    enq_ns: int
    """When the packet entered the queue (egress time - time in queue)."""
    egress_ns: int
    ingress_port: int
    egress_port: int
    queue_id: int
    enq_qdepth: int
    deq_qdepth: int
    enq_qbytes: int
    deq_qbytes: int
    queue_time_ns: int
    hop_latency_ns: int
    events: int
    burst_id: int
    frame_bytes: int = 0
    flow: Optional[tuple] = None

    @property
    def held_pkts(self) -> int:
        """Packets in the queue just before this one left (what it left
        behind, plus itself)."""
        return self.deq_qdepth + 1

    @property
    def held_bytes(self) -> int:
        """Bytes in the queue just before this one left (p4scope's byte
        metadata; on BMv2 only the packet's own length)."""
        return self.deq_qbytes + self.frame_bytes


@dataclass
class BurstEvent:
    node_id: int
    port: int
    burst_id: int
    start_ns: Optional[int] = None
    """Egress time of the first dequeue that left the threshold behind."""
    end_ns: Optional[int] = None
    """Egress time of the first dequeue that left less than the end threshold."""
    last_ns: Optional[int] = None
    """Egress time of the last packet reported as leaving during the burst."""
    peak_pkts: int = 0
    peak_bytes: int = 0
    packets: int = 0
    """Packets of the burst as the data plane counted them (burst_pkts)."""
    reported: int = 0
    bytes: int = 0
    """Frame bytes of the reported packets."""
    by_ingress: dict[int, int] = field(default_factory=dict)
    flows: set = field(default_factory=set)

    @property
    def complete(self) -> bool:
        return self.start_ns is not None and self.end_ns is not None

    @property
    def duration_ns(self) -> Optional[int]:
        end = self.end_ns if self.end_ns is not None else self.last_ns
        return None if self.start_ns is None or end is None else end - self.start_ns


@dataclass
class IntervalMax:
    node_id: int
    port: int
    interval: int
    max_pkts: int
    max_bytes: int
    reported_ns: int


@dataclass
class TapSample(TapOccupancy):
    node_id: int
    time_ns: int
    direction: int
    bytes_to_dut: int
    bytes_from_dut: int
    pkts_to_dut: int
    pkts_from_dut: int
    frame_bytes: int


@dataclass
class IntMdPath:
    """One INT-MD packet as its sink reported it."""
    node_id: int
    """The sink's (the reports' node id)."""
    seq: int
    """The stack report's sequence number."""
    ingress_port: int
    egress_port: int
    ingress_ts_ns: int
    """At the sink."""
    stack: IntMdStack
    """The INT-MD header and the hops before the sink."""
    sink: Optional[IntHop] = None
    """The sink's own hop, from its postcard (None until it arrives)."""

    @property
    def hops(self) -> list[IntHop]:
        """Every hop's metadata, the source's first, the sink's last."""
        return self.stack.hops + ([self.sink] if self.sink is not None else [])

    @property
    def flow(self) -> tuple:
        return self.stack.flow


def _path_key(node_id: int, ingress_port: int, ingress_ts_ns: int, ip_id: int,
              src: Optional[int], dst: Optional[int], sport: Optional[int]) -> tuple:
    """What a sink's stack report and its postcard of the same packet share."""
    return (node_id, ingress_port, ingress_ts_ns, ip_id, src, dst, sport)


def sink_hop(r: Report) -> IntHop:
    """The hop a postcard describes, as INT-MD metadata."""
    md, q = r.md, r.queue
    return IntHop(node_id=r.node_id, ingress_port=md.ingress_port, egress_port=md.egress_port,
                  hop_latency_ns=md.hop_latency_ns, queue_id=md.queue_id,
                  queue_occupancy=md.queue_occupancy, ingress_ts_ns=md.ingress_ts_ns,
                  egress_ts_ns=md.egress_ts_ns,
                  buffer_id=0 if q is not None and q.bytes_valid else None,
                  buffer_occupancy=q.buffer_bytes if q is not None and q.bytes_valid else None)


@dataclass
class CounterSample:
    time_ns: int
    counter: str
    index: int
    packets: int
    bytes: int


@dataclass
class DigestEvent:
    time_ns: int
    digest: str
    values: dict[str, int]


class Collector:
    def __init__(self, udp_port: Optional[int] = None, clock: Callable[[], int] = time.monotonic_ns):
        self.udp_port = udp_port
        self.clock = clock
        self.reports: list[Report] = []
        self.samples: list[QueueSample] = []
        self.intervals: list[IntervalMax] = []
        self.tap: list[TapSample] = []
        self.counters: list[CounterSample] = []
        self.digests: list[DigestEvent] = []
        self.errors: list[str] = []
        self.int_md_paths: list[IntMdPath] = []
        self._unjoined: dict[tuple, list[IntMdPath]] = {}
        self._waited: set[int] = set()  # ids of paths kept once for their sink
        self._bursts: dict[tuple[int, int, int], BurstEvent] = {}
        self._next_seq: dict[int, int] = {}
        self.lost: dict[int, int] = {}
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self._thread: Optional[threading.Thread] = None
        self._poller: Optional[threading.Thread] = None
        self._poll_stop = threading.Event()

    # ----- inputs -------------------------------------------------------------------

    def feed(self, payload: bytes) -> Optional[Report]:
        """One report's UDP payload; malformed ones are counted in `errors`."""
        try:
            r = parse_report(payload)
        except ReportError as e:
            self.errors.append(str(e))
            return None
        self._add(r)
        return r

    def feed_frame(self, frame: bytes) -> Optional[Report]:
        try:
            r = parse_report_frame(frame, self.udp_port)
        except ReportError as e:
            self.errors.append(str(e))
            return None
        self._add(r)
        return r

    def feed_frames(self, frames: Iterable[bytes]) -> int:
        return sum(1 for f in frames if self.feed_frame(f) is not None)

    def feed_packet_in(self, packet_in: Any) -> Optional[Report]:
        """A report that reached the controller as a packet-in (its payload
        is the report frame; the switch stripped the packet_in header)."""
        return self.feed_frame(packet_in.payload)

    def feed_digests(self, digest_lists: Iterable[Any]) -> None:
        now = self.clock()
        with self._lock:
            for dl in digest_lists:
                for m in dl.messages:
                    self.digests.append(DigestEvent(now, m.digest, dict(m.values)))

    def poll_counters(self, sw: Any, counter: str, indexes: Optional[Iterable[int]] = None) -> int:
        """Reads a counter (all cells, or `indexes`) and records the values
        with the poll time; returns the number of cells."""
        h = sw.counter(counter)
        vals = h.read_all() if indexes is None else h.read_many(indexes)
        now = self.clock()
        with self._lock:
            for i, v in sorted(vals.items()):
                self.counters.append(CounterSample(now, counter, i, v.packets, v.bytes))
        return len(vals)

    def poll_every(self, sw: Any, counters: dict[str, Optional[Iterable[int]]],
                   period_s: float) -> None:
        """Polls `counters` ({name: indexes or None for all}) every
        `period_s` seconds in a background thread until stop()."""
        self._poll_stop = threading.Event()
        wanted = {k: (None if v is None else list(v)) for k, v in counters.items()}

        def loop() -> None:
            while not self._poll_stop.is_set():
                for name, idx in wanted.items():
                    try:
                        self.poll_counters(sw, name, idx)
                    except Exception as e:  # keep polling; say what failed
                        self.errors.append(f"poll {name}: {e}")
                self._poll_stop.wait(period_s)

        self._poller = threading.Thread(target=loop, name="counter-poll", daemon=True)
        self._poller.start()

    # ----- UDP listener -----------------------------------------------------------------

    def listen(self, host: str = "127.0.0.1", port: int = 32766) -> int:
        """Receives reports on a UDP socket in a background thread; returns
        the bound port (pass 0 for any free one)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, port))
        sock.settimeout(0.2)
        self._sock = sock
        self._stop = threading.Event()

        def loop() -> None:
            while not self._stop.is_set():
                try:
                    data, _ = sock.recvfrom(65535)
                except socket.timeout:
                    continue
                except OSError:
                    return
                self.feed(data)

        self._thread = threading.Thread(target=loop, name="int-collector", daemon=True)
        self._thread.start()
        return sock.getsockname()[1]

    def stop(self) -> None:
        if self._poller is not None:
            self._poll_stop.set()
            self._poller.join(timeout=2)
            self._poller = None
        if self._sock is not None:
            self._stop.set()
            if self._thread is not None:
                self._thread.join(timeout=2)
            self._sock.close()
            self._sock = None

    # ----- derivation -----------------------------------------------------------------

    def _add(self, r: Report) -> None:
        with self._lock:
            self.reports.append(r)
            self._sequence(r)
            if r.int_md is not None:
                self._int_md_report(r, r.int_md)
            elif r.queue is not None:
                self._queue_report(r, r.queue)
                if r.tracked and r.queue.events & EVENT_POSTCARD:
                    self._join_sink_hop(r)
            elif r.tap is not None:
                t = r.tap
                self.tap.append(TapSample(r.node_id, r.md.ingress_ts_ns or 0, t.direction,
                                          t.bytes_to_dut, t.bytes_from_dut, t.pkts_to_dut,
                                          t.pkts_from_dut, t.frame_bytes))

    def _sequence(self, r: Report) -> None:
        exp = self._next_seq.get(r.node_id)
        if exp is not None and r.seq != exp:
            gap = (r.seq - exp) & 0x3FFFFF
            if gap < 0x200000:  # ahead: reports lost; behind: reordered
                self.lost[r.node_id] = self.lost.get(r.node_id, 0) + gap
        self._next_seq[r.node_id] = (r.seq + 1) & 0x3FFFFF

    def _int_md_report(self, r: Report, st: IntMdStack) -> None:
        md = r.md
        path = IntMdPath(r.node_id, r.seq, md.ingress_port or 0, md.egress_port or 0,
                         md.ingress_ts_ns or 0, st)
        self.int_md_paths.append(path)
        key = _path_key(r.node_id, path.ingress_port, path.ingress_ts_ns, st.ip_id, st.flow[0],
                        st.flow[1], st.flow[3])
        self._unjoined.setdefault(key, []).append(path)

    def _join_sink_hop(self, r: Report) -> None:
        """A postcard of a packet whose stack this collector holds: the
        sink's own hop (packets alike in every key: in arrival order)."""
        if not self._unjoined or len(r.inner) < 34:
            return
        try:
            f = parse_frame(r.inner)
        except ValueError:
            return
        ip_id = int.from_bytes(r.inner[18:20], "big")
        key = _path_key(r.node_id, r.md.ingress_port or 0, r.md.ingress_ts_ns or 0, ip_id,
                        f.ip_src, f.ip_dst, f.sport)
        waiting = self._unjoined.get(key)
        if waiting:
            waiting.pop(0).sink = sink_hop(r)
            if not waiting:
                del self._unjoined[key]

    def take_int_md_paths(self, wait_for_sink: bool = False) -> list[IntMdPath]:
        """The INT-MD paths since the last take, which the collector then
        forgets (a postcard arriving later no longer joins them). With
        `wait_for_sink`, a path whose sink's postcard has not come yet
        stays for the next take, once (the two reports of a packet may
        fall either side of a take); then it is handed over as it is."""
        with self._lock:
            paths = self.int_md_paths
            stay = [p for p in paths
                    if wait_for_sink and p.sink is None and id(p) not in self._waited]
            self._waited = {id(p) for p in stay}
            self.int_md_paths = stay
            self._unjoined = {k: kept for k, v in self._unjoined.items()
                              if (kept := [p for p in v if id(p) in self._waited])}
        return [p for p in paths if id(p) not in self._waited]

    def int_md_hops(self) -> list[dict]:
        """One row per hop of every INT-MD path: path (index), hop (1 =
        the source), the sink's node and report sequence, the flow, and
        the hop's metadata (None: not reported)."""
        with self._lock:
            paths = list(self.int_md_paths)
        rows = []
        for i, p in enumerate(paths):
            for h, hop in enumerate(p.hops):
                rows.append({"path": i, "hop": h + 1, "sink_node": p.node_id, "seq": p.seq,
                             "flow": str(p.flow), "sink_hop": hop is p.sink,
                             **{k: getattr(hop, k) for k in HOP_FIELDS}})
        return rows

    def _queue_report(self, r: Report, q: QueueBlock) -> None:
        md = r.md
        egress_ns = md.egress_ts_ns or 0
        flow = None
        if r.inner:
            try:
                f = parse_frame(r.inner)
                if f.ip_src is not None:
                    flow = f.five_tuple
            except ValueError:
                pass
        port = md.egress_port or 0
        sample = QueueSample(
            r.node_id, r.seq, egress_ns - q.queue_time_ns, egress_ns, md.ingress_port or 0,
            port, md.queue_id or 0, q.enq_qdepth, q.deq_qdepth, q.enq_qbytes, q.deq_qbytes,
            q.queue_time_ns, md.hop_latency_ns or 0, q.events, q.burst_id, q.frame_bytes, flow)
        if q.events & ~EVENT_INTERVAL:
            self.samples.append(sample)
        if q.events & EVENT_INTERVAL:
            self.intervals.append(IntervalMax(r.node_id, port, q.interval, q.interval_max_pkts,
                                              q.interval_max_bytes, egress_ns))
        if q.events & (EVENT_BURST_START | EVENT_BURST_PKT | EVENT_BURST_END):
            key = (r.node_id, port, q.burst_id)
            b = self._bursts.get(key)
            if b is None:
                b = self._bursts[key] = BurstEvent(r.node_id, port, q.burst_id)
            if q.events & EVENT_BURST_START:
                b.start_ns = egress_ns
            if q.events & (EVENT_BURST_START | EVENT_BURST_PKT):
                b.reported += 1
                b.bytes += q.frame_bytes
                b.last_ns = egress_ns if b.last_ns is None else max(b.last_ns, egress_ns)
                b.peak_pkts = max(b.peak_pkts, sample.held_pkts)
                b.peak_bytes = max(b.peak_bytes, sample.held_bytes)
                ing = sample.ingress_port
                b.by_ingress[ing] = b.by_ingress.get(ing, 0) + 1
                if flow is not None:
                    b.flows.add(flow)
                b.packets = max(b.packets, q.burst_pkts)
            if q.events & EVENT_BURST_END:
                b.end_ns = egress_ns
                b.packets = max(b.packets, q.burst_pkts)

    def take(self) -> tuple[list[QueueSample], list[IntervalMax]]:
        """The queue samples and interval maxima since the last take, which
        the collector then forgets (with the reports they came from), for
        a consumer that keeps its own reduction of a long watch; bursts and
        losses are kept as before."""
        with self._lock:
            samples, intervals = self.samples, self.intervals
            self.samples, self.intervals, self.reports = [], [], []
        return samples, intervals

    def bursts(self, port: Optional[int] = None) -> list[BurstEvent]:
        with self._lock:
            out = [b for b in self._bursts.values() if port is None or b.port == port]
        return sorted(out, key=lambda b: (b.node_id, b.port, b.burst_id))

    def occupancy(self) -> list[tuple[int, int]]:
        """(time, bytes held by the DUT behind the tap) from tap samples."""
        return [(t.time_ns, t.occupancy_bytes) for t in sorted(self.tap, key=lambda t: t.time_ns)]

    def tables(self, flows: bool = True) -> dict[str, Any]:
        """The time series as pandas DataFrames (pandas must be installed);
        `flows` False leaves queue_samples' flow column out."""
        import pandas as pd

        with self._lock:
            samples, intervals = list(self.samples), list(self.intervals)
            tap, counters, digests = list(self.tap), list(self.counters), list(self.digests)
        return make_tables(
            pd.DataFrame([{**_row(s), "held_pkts": s.held_pkts, "held_bytes": s.held_bytes}
                          for s in samples],
                         columns=SAMPLE_COLUMNS if flows else SAMPLE_COLUMNS_NO_FLOW),
            self.bursts(), pd.DataFrame([_row(i) for i in intervals], columns=_names(IntervalMax)),
            tap, counters, digests)

    def int_md_table(self) -> Any:
        """int_md_hops() as a pandas DataFrame (columns INT_MD_HOP_COLUMNS)."""
        import pandas as pd

        return pd.DataFrame(self.int_md_hops(), columns=INT_MD_HOP_COLUMNS)


SAMPLE_COLUMNS = [f.name for f in fields(QueueSample)] + ["held_pkts", "held_bytes"]
SAMPLE_COLUMNS_NO_FLOW = [n for n in SAMPLE_COLUMNS if n != "flow"]
INT_MD_HOP_COLUMNS = ["path", "hop", "sink_node", "seq", "flow", "sink_hop"] + HOP_FIELDS


def _names(cls: type) -> list[str]:
    return [f.name for f in fields(cls)]


def make_tables(samples: Any, bursts: list[BurstEvent], intervals: Any, tap: list[TapSample],
                counters: list[CounterSample], digests: list[DigestEvent]) -> dict[str, Any]:
    """The collector's tables, from its queue samples and intervals as
    DataFrames (SAMPLE_COLUMNS; IntervalMax's fields) and the rest as
    records; every table has its columns, even when empty."""
    import pandas as pd

    def frame(rows: list, cols: list[str]) -> Any:
        return pd.DataFrame(rows, columns=cols)

    return {
        "queue_samples": samples,
        "bursts": frame([{**_row(b), "by_ingress": dict(b.by_ingress), "flows": len(b.flows),
                          "duration_ns": b.duration_ns} for b in bursts],
                        _names(BurstEvent) + ["duration_ns"]),
        "intervals": intervals,
        "tap": frame([{**_row(t), "occupancy_bytes": t.occupancy_bytes} for t in tap],
                     _names(TapSample) + ["occupancy_bytes"]),
        "counters": frame([_row(c) for c in counters], _names(CounterSample)),
        "digests": frame([_row(d) for d in digests], _names(DigestEvent)),
    }


def _row(obj: Any) -> dict:
    d = asdict(obj)
    for k, v in list(d.items()):
        if isinstance(v, (set, tuple)) and k == "flow":
            d[k] = None if v is None else str(v)
        elif isinstance(v, set):
            d[k] = len(v)
    return d
