"""One P4Runtime device: its pipeline, its controllers and its packets.

`Device` is what the gRPC service calls. It owns

* the P4Runtime-facing `ForwardingPipeline` (set by SetForwardingPipelineConfig) and
  the engine that forwards packets (the same one after a commit; the old
  one until COMMIT after a VERIFY_AND_SAVE; the command line's JSON before
  any pipeline was set);
* the `Arbitration` of its controllers;
* the packet path: ports -> engine -> ports, the CPU port to packet-in,
  packet-out to the CPU port, digests and idle timeouts to the primary.

Every engine call happens under `self.lock`, so requests are serialised
(the spec's "strictly serializable" writes) and the engine, which is not
thread-safe, only ever runs one call at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from finsy.proto import p4r

from . import traces
from .engine import EngineAdapter, EngineFactory, EngineOptions, default_engine_factory
from .p4runtime.arbitration import Arbitration, Connection
from .p4runtime.codec import from_u128
from .p4runtime.devconfig import decode_device_config
from .p4runtime.errors import P4RuntimeError, invalid, not_found, precondition, unimplemented
from .p4runtime.packetio import build_packet_out, parse_packet_in
from .p4runtime.pipeline import ForwardingPipeline
from .traces import trace

log = logging.getLogger("p4scope.switch")

API_VERSION = "1.3.0"  # what PI reports
READ_CHUNK = 1000  # entities per ReadResponse message
SFP = p4r.SetForwardingPipelineConfigRequest
GFP = p4r.GetForwardingPipelineConfigRequest


@dataclass
class DeviceOptions:
    device_id: int = 0
    cpu_port: int = 0  # 0: no packet I/O
    drop_port: int = 511
    priority_queues: int = 1
    seed: int = 0
    dump_packet_data: int = 0


@dataclass
class Stats:
    packets_in: int = 0
    packets_out: int = 0
    packet_ins: int = 0
    packet_outs: int = 0
    packet_in_drops: int = 0
    packet_out_drops: int = 0
    """Packet-outs not injected: from a backup, or refused (bad metadata, no pipeline)."""
    digests: int = 0


class Device:
    def __init__(self, options: Optional[DeviceOptions] = None,
                 engine_factory: EngineFactory = default_engine_factory,
                 transmit: Optional[Callable[[int, bytes], None]] = None,
                 clock: Callable[[], int] = time.monotonic_ns):
        options = options or DeviceOptions()
        self.opts = options
        self.device_id = options.device_id
        self.engine_factory = engine_factory
        self.lock = threading.RLock()
        self.arb = Arbitration(options.device_id)
        self.pipeline: Optional[ForwardingPipeline] = None
        self.dataplane: Optional[EngineAdapter] = None
        self.startup_json: Optional[str] = None
        self.pending_commit = False
        self.transmit: Callable[[int, bytes], None] = transmit or (lambda port, data: None)
        self.clock = clock
        self.t0 = clock()
        self.stats = Stats()
        self._pkt_ids = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._housekeeper: Optional[threading.Thread] = None
        # real-time ports (RtPorts): told when the forwarding engine changes
        # (called under self.lock with the old and the new engine) and given
        # packet-outs, which then enter the engine's own loop on the CPU port
        self.on_dataplane: Optional[Callable[[Optional[EngineAdapter], EngineAdapter], None]] = None
        self.inject: Optional[Callable[[int, bytes], None]] = None

    def _set_dataplane(self, engine: EngineAdapter) -> None:
        old = self.dataplane
        self.dataplane = engine
        if self.on_dataplane is not None and engine is not old:
            try:
                self.on_dataplane(old, engine)
            except Exception:  # the pipeline stays committed; its ports are reported
                log.exception("cannot attach the ports to the new engine")

    @property
    def engine_options(self) -> EngineOptions:
        return EngineOptions(self.opts.drop_port, self.opts.priority_queues, self.opts.seed)

    def now_ns(self) -> int:
        return self.clock() - self.t0

    # ----- start-up ---------------------------------------------------------

    def load_json(self, json_text: str) -> None:
        """Runs a BMv2 JSON without P4Info (the command line's positional file).
        P4Runtime writes still need SetForwardingPipelineConfig, as with BMv2."""
        engine = self.engine_factory(json_text, self.engine_options)
        with self.lock:
            self.startup_json = json_text
            self._set_dataplane(engine)

    def start(self) -> None:
        """Starts the background sweeps (digest timeouts, idle timeouts)."""
        if self._housekeeper is None:
            self._housekeeper = threading.Thread(target=self._housekeeping, name="p4rt-sweeps",
                                                 daemon=True)
            self._housekeeper.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._housekeeper is not None:
            self._housekeeper.join(timeout=2)
            self._housekeeper = None

    def _housekeeping(self) -> None:
        last_idle = 0
        while not self._stop.is_set():
            wait = 0.1
            try:
                with self.lock:
                    pipe = self.pipeline
                    if pipe is not None:
                        now = self.clock()
                        pipe.digests.tick(now)
                        d = pipe.digests.next_deadline(now)
                        if d is not None:
                            wait = min(wait, d / 1e9)
                        if now - last_idle >= pipe.idle.interval_ns:
                            last_idle = now
                            pipe.idle.sweep()
            except Exception:  # a sweep must never kill the thread
                log.exception("housekeeping failed")
            self._wake.wait(max(wait, 0.001))
            self._wake.clear()

    # ----- checks -------------------------------------------------------------

    def _check_device(self, device_id: int, what: str) -> None:
        if device_id != self.device_id:
            raise not_found(f"{what}.device_id: {device_id} is not a device of this switch "
                            f"(its device id is {self.device_id})")

    def _need_pipeline(self, what: str) -> ForwardingPipeline:
        if self.pipeline is None:
            raise precondition(f"{what}: no forwarding pipeline config set for this device "
                               "(call SetForwardingPipelineConfig first)")
        return self.pipeline

    # ----- Capabilities -------------------------------------------------------

    def capabilities(self) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    # ----- SetForwardingPipelineConfig / Get -------------------------------

    def set_pipeline(self, req) -> None:
        self._check_device(req.device_id, "SetForwardingPipelineConfig")
        self.arb.check_writer(req, "SetForwardingPipelineConfig")
        action = req.action
        what = "SetForwardingPipelineConfig"
        if action == SFP.UNSPECIFIED:
            raise invalid(f"{what}.action: not set (VERIFY, VERIFY_AND_SAVE, VERIFY_AND_COMMIT, "
                          "COMMIT or RECONCILE_AND_COMMIT)")
        if action not in (SFP.VERIFY, SFP.VERIFY_AND_SAVE, SFP.VERIFY_AND_COMMIT, SFP.COMMIT,
                          SFP.RECONCILE_AND_COMMIT):
            raise invalid(f"{what}.action: {action} is not a valid action")
        if action == SFP.COMMIT:
            if req.HasField("config"):
                raise invalid(f"{what}.config: COMMIT takes no config (it commits the one saved "
                              "by VERIFY_AND_SAVE)")
            with self.lock:
                if not self.pending_commit or self.pipeline is None:
                    raise not_found(f"{what}: there is no saved config to commit "
                                    "(VERIFY_AND_SAVE first)")
                self._commit(self.pipeline)
            return
        if not req.HasField("config"):
            raise invalid(f"{what}.config: missing")
        pipe = self._build(req.config, what)
        if action == SFP.VERIFY:
            return
        with self.lock:
            if action == SFP.VERIFY_AND_SAVE:
                self._install(pipe)
                self.pending_commit = True
                return
            if action == SFP.RECONCILE_AND_COMMIT and self.pipeline is not None:
                self._reconcile(self.pipeline, pipe, what)
            self._install(pipe)
            self._commit(pipe)

    def _build(self, cfg, what: str) -> ForwardingPipeline:
        if not cfg.HasField("p4info"):
            raise invalid(f"{what}.config.p4info: missing")
        dc = decode_device_config(cfg.p4_device_config)
        data = dc.device_data
        if not data:
            # PI's legacy path for BMv2: keep the JSON the switch already runs
            with self.lock:
                current = self.pipeline.json_text if self.pipeline else self.startup_json
            if current is None:
                raise invalid(f"{what}.config.p4_device_config: empty, and the switch has no "
                              "BMv2 JSON loaded (give the JSON, raw or in a P4DeviceConfig)")
            json_text = current
        else:
            try:
                json_text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise invalid(f"{what}.config.p4_device_config: the BMv2 JSON is not UTF-8 "
                              f"({e})") from None
        cookie = cfg.cookie.cookie if cfg.HasField("cookie") else None
        return ForwardingPipeline(cfg.p4info, json_text, device_config=bytes(cfg.p4_device_config),
                        cookie=cookie, options=self.engine_options,
                        engine_factory=self.engine_factory)

    def _install(self, pipe: ForwardingPipeline) -> None:
        pipe.set_stream_sink(self._to_primary)
        self.pipeline = pipe

    def _commit(self, pipe: ForwardingPipeline) -> None:
        self._set_dataplane(pipe.engine)
        self.pending_commit = False
        self._wake.set()
        log.info("pipeline committed (%d tables)", len(pipe.schema.tables))

    def _reconcile(self, old: ForwardingPipeline, new: ForwardingPipeline, what: str) -> None:
        """Replays the old forwarding state into `new`; INVALID_ARGUMENT if it does not fit."""
        for i, ent in enumerate(old.forwarding_state()):
            te = ent.table_entry if ent.WhichOneof("entity") == "table_entry" else None
            utype = p4r.Update.MODIFY if te is not None and te.is_default_action else p4r.Update.INSERT
            try:
                new.write_one(utype, ent, f"state[{i}]")
            except P4RuntimeError as e:
                raise invalid(f"{what}: RECONCILE_AND_COMMIT cannot keep the forwarding state in "
                              f"the new pipeline: {e.message}") from None

    def get_pipeline(self, req) -> p4r.GetForwardingPipelineConfigResponse:
        self._check_device(req.device_id, "GetForwardingPipelineConfig")
        resp = p4r.GetForwardingPipelineConfigResponse()
        with self.lock:
            pipe = self.pipeline
        if pipe is None:
            return resp
        rt = req.response_type
        if rt not in (GFP.ALL, GFP.COOKIE_ONLY, GFP.P4INFO_AND_COOKIE, GFP.DEVICE_CONFIG_AND_COOKIE):
            raise invalid(f"GetForwardingPipelineConfig.response_type: {rt} is not valid")
        cfg = resp.config
        if rt in (GFP.ALL, GFP.P4INFO_AND_COOKIE):
            cfg.p4info.CopyFrom(pipe.p4info)
        if rt in (GFP.ALL, GFP.DEVICE_CONFIG_AND_COOKIE):
            cfg.p4_device_config = pipe.device_config
        if pipe.cookie is not None:
            cfg.cookie.cookie = pipe.cookie
        if rt == GFP.COOKIE_ONLY and pipe.cookie is None:
            cfg.SetInParent()
        return resp

    # ----- Write / Read ---------------------------------------------------------

    def write(self, req, wire: Optional[bytes] = None) -> Optional[list[Optional[P4RuntimeError]]]:
        """Applies a WriteRequest (`wire`: its bytes, where the caller has
        them: the common updates are read from them); None if all updates
        succeeded, else one error (or None) per update. RPC-wide problems
        raise P4RuntimeError."""
        self._check_device(req.device_id, "Write")
        self.arb.check_writer(req, "Write")
        with self.lock:
            pipe = self._need_pipeline("Write")
            if req.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
                raise unimplemented("Write.atomicity: only CONTINUE_ON_ERROR is supported (as PI)")
            return pipe.write_updates(req.updates, wire)

    def read(self, req) -> Iterable[p4r.ReadResponse]:
        return [p4r.ReadResponse.FromString(chunk) for chunk in self.read_wire(req)]

    def read_wire(self, req) -> list[bytes]:
        """As `read`, each ReadResponse serialized (the gRPC server sends
        them as they are: no message built only to be serialized again)."""
        self._check_device(req.device_id, "Read")
        records: list[bytes] = []  # serialized entities (p4runtime/wire.py)
        with self.lock:
            pipe = self._need_pipeline("Read")
            for i, ent in enumerate(req.entities):
                pipe.read_wire(ent, records, f"entities[{i}]")
        return [b"".join(records[start:start + READ_CHUNK])
                for start in range(0, max(len(records), 1), READ_CHUNK)]

    # ----- StreamChannel ----------------------------------------------------------

    def stream_open(self, send: Callable[[p4r.StreamMessageResponse], None],
                    peer: str = "") -> Connection:
        return Connection(send, peer)

    def stream_close(self, conn: Connection) -> None:
        self.arb.remove(conn)

    def stream_request(self, conn: Connection, req) -> None:
        """Handles one StreamMessageRequest; raises P4RuntimeError to end the stream."""
        kind = req.WhichOneof("update")
        if kind == "arbitration":
            arb = req.arbitration
            registered = conn in self.arb.connections
            if arb.device_id != self.device_id:
                if registered:
                    raise precondition(f"arbitration.device_id: {arb.device_id} differs from the "
                                       f"stream's device {self.device_id}")
                raise not_found(f"arbitration.device_id: {arb.device_id} is not a device of this "
                                f"switch (its device id is {self.device_id})")
            if registered and arb.role.name != conn.role:
                raise precondition("arbitration.role: a stream cannot change its role")
            eid = from_u128(arb.election_id) if arb.HasField("election_id") else None
            self.arb.update(conn, eid, arb.role.name)
        elif kind == "packet":
            if self.arb.primary is not conn:
                self.stats.packet_out_drops += 1
                return  # PI drops packet-outs from backups silently
            self.packet_out(req.packet, conn)
        elif kind == "digest_ack":
            if self.arb.primary is not conn:
                return
            with self.lock:
                if self.pipeline is not None:
                    self.pipeline.digests.ack(req.digest_ack.digest_id, req.digest_ack.list_id)

    def _to_primary(self, msg: p4r.StreamMessageResponse) -> None:
        if msg.WhichOneof("update") == "digest":
            self.stats.digests += 1
        self.arb.send_to_primary(msg)

    # ----- packets ------------------------------------------------------------------

    def packet_out(self, pkt, conn: Optional[Connection] = None) -> None:
        try:
            if not self.opts.cpu_port:
                raise precondition("packet: packet-out needs a CPU port (start the switch with "
                                   "-- --cpu-port N)")
            with self.lock:
                pipe = self._need_pipeline("packet")
                data = build_packet_out(pipe.schema.packet_out, pkt)
            self.stats.packet_outs += 1
            if self.inject is not None:
                self.inject(self.opts.cpu_port, data)
            else:
                self.receive([(self.opts.cpu_port, data)])
        except P4RuntimeError as e:
            self._packet_out_dropped(e.message)
            if conn is not None:
                err = p4r.StreamMessageResponse()
                err.error.canonical_code = e.code
                err.error.message = e.message
                err.error.packet_out.packet_out.CopyFrom(pkt)
                conn.send(err)

    def _packet_out_dropped(self, why: str) -> None:
        self.stats.packet_out_drops += 1
        n = self.stats.packet_out_drops
        if n & (n - 1) == 0:  # the 1st, 2nd, 4th, ...: a flood of bad packet-outs is no log flood
            log.warning("packet-out dropped (%d so far): %s", n, why)

    def receive(self, batch: list[tuple[int, bytes]]) -> None:
        """Packets arriving on ports: run them and deliver what comes out.

        With packet tracing on (--log-console -L debug or trace) packets run
        one at a time, so the trace can say what became of each."""
        if not batch:
            return
        if len(batch) > 1 and trace.isEnabledFor(logging.DEBUG):
            for item in batch:
                self.receive([item])
            return
        tracing = trace.isEnabledFor(logging.DEBUG)
        dumping = bool(self.opts.dump_packet_data) and trace.isEnabledFor(logging.INFO)
        pid = 0
        with self.lock:
            engine = self.dataplane
            if engine is None:
                return
            now = self.now_ns()
            if tracing or dumping:
                self._pkt_ids += 1
                pid = self._pkt_ids
                for port, data in batch:
                    traces.received(pid, port, data, self.opts.dump_packet_data)
            before = engine.stats() if tracing else None
            outs = engine.process([(p, d, now) for p, d in batch])
            digests = engine.take_digests()
            pipe = self.pipeline if self.pipeline is not None and self.pipeline.engine is engine else None
            if digests and pipe is not None:
                for name, values, _t in digests:
                    pipe.digests.on_digest(name, values, self.clock())
            if trace.isEnabledFor(logging.INFO):
                for line in engine.take_log():
                    traces.log_line(pid, line)
            if tracing:
                self._trace_fate(pid, engine, before, outs, digests)
            packet_in_info = pipe.schema.packet_in if pipe is not None else None
        self.stats.packets_in += len(batch)
        cpu = self.opts.cpu_port
        for copy, (port, data, _t) in enumerate(outs):
            if cpu and port == cpu:
                self.send_packet_in(packet_in_info, data)
                if tracing:
                    traces.sent(pid, copy, port, len(data), data, 0, cpu)
                continue
            self.stats.packets_out += 1
            if tracing or dumping:
                traces.sent(pid, copy, port, len(data), data, self.opts.dump_packet_data, cpu)
            self.transmit(port, data)

    def deliver_events(self, engine: EngineAdapter, events: list) -> None:
        """Events of the engine's real-time loop (rt_take_events): packet-ins
        and digests reach the primary as `receive` delivers them. Events of an
        engine that no longer forwards are dropped."""
        with self.lock:
            if engine is not self.dataplane:
                return
            pipe = self.pipeline if self.pipeline is not None and self.pipeline.engine is engine else None
            packet_in_info = pipe.schema.packet_in if pipe is not None else None
            packet_ins = []
            for ev in events:
                if ev[0] == "digest":
                    if pipe is not None:
                        pipe.digests.on_digest(ev[1], ev[2], self.clock())
                elif ev[0] == "packet_in":
                    packet_ins.append(ev[2])
        for data in packet_ins:  # outside the lock, as `receive` sends them
            self.send_packet_in(packet_in_info, data)

    def send_packet_in(self, packet_in_info, data: bytes) -> None:
        """Sends one CPU-port frame to the primary as a PacketIn, counting it
        as sent or dropped (no primary); frames shorter than the packet_in
        header are not sent."""
        msg = p4r.StreamMessageResponse()
        if parse_packet_in(packet_in_info, data, msg.packet):
            if self.arb.send_to_primary(msg):
                self.stats.packet_ins += 1
            else:
                self.stats.packet_in_drops += 1

    # ----- packet traces (BMv2's --log-console style; texts in traces.py) ------

    @staticmethod
    def _trace_fate(pid: int, engine, before, outs, digests) -> None:
        for name, _values, _t in digests:
            traces.digest(pid, name)
        if before is None:
            return
        after = engine.stats()
        keys = [f"dropped_{where}" for where in traces.DROPPED]
        for where, key in zip(traces.DROPPED, keys):
            n = after.get(key, 0) - before.get(key, 0)
            if n:
                traces.dropped(pid, where, n)
        if not outs and not any(after.get(k, 0) - before.get(k, 0) for k in keys):
            traces.no_output(pid)
