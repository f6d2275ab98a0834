"""Hostile requests to the switch's P4Runtime server (`p4scope switch
--no-p4`, probe.p4 set over P4Runtime): writes and pipeline configs without
the primary's election id, configs built to exhaust the switch, entities
with unknown ids and values too wide, bytes that are not protobuf, and
packet-outs the spec says to drop.  Codes as the spec (and the switch's
tests in tests/switch) have them: PERMISSION_DENIED, INVALID_ARGUMENT,
OUT_OF_RANGE, NOT_FOUND...; a Write's failures as UNKNOWN with one
p4.v1.Error per update.  A packet-out that must be dropped is followed by a
good one (a marker): probe.p4 echoes every packet-out back as a packet-in,
so anything echoed before the marker was delivered."""

from __future__ import annotations

import json
import queue
import random
import threading
import time
from contextlib import contextmanager
from typing import Callable, Optional

import grpc
from finsy.proto import U128, p4i, p4r, p4r_grpc, rpc_code, rpc_status

from hostile_core import Area, Probe, Verdict, crashed, handled, wrong
from hostile_programs import by_name, dut_program, probe_program
from hostile_switch import SwitchProcess, stop_verdict, watched

NAME = "P4Runtime"
SFP = p4r.SetForwardingPipelineConfigRequest
U = p4r.Update
TIMEOUT = 20.0
SWITCH_ARGS = ["--no-p4", "--thrift-port", "0", "--", "--grpc-server-addr", "127.0.0.1:0",
               "--cpu-port", "255", "--no-thrift"]


# -- a controller's stream ----------------------------------------------------------

class Stream:
    """One StreamChannel: requests in, every response kept in order."""

    def __init__(self, stub):
        self._out: queue.Queue = queue.Queue()
        self.got: queue.Queue = queue.Queue()
        self.error: Optional[grpc.RpcError] = None
        self.closed = threading.Event()
        self.call = stub.StreamChannel(iter(self._out.get, None))
        threading.Thread(target=self._pump, daemon=True, name="hostile-stream").start()

    def _pump(self) -> None:
        try:
            for msg in self.call:
                self.got.put(msg)
        except grpc.RpcError as e:
            self.error = e
        self.closed.set()
        self.got.put(None)

    def send(self, msg) -> None:
        self._out.put(msg)

    def arbitrate(self, election_id: Optional[int], device_id: int = 0) -> None:
        req = p4r.StreamMessageRequest()
        req.arbitration.device_id = device_id
        if election_id is not None:
            req.arbitration.election_id.CopyFrom(U128.encode(election_id))
        self.send(req)

    def until(self, pred: Callable, timeout: float = 5.0) -> tuple[list, bool]:
        """(messages received, whether one matched `pred`) until the first
        that does, the stream ends, or `timeout`."""
        out, deadline = [], time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out, False
            try:
                msg = self.got.get(timeout=left)
            except queue.Empty:
                return out, False
            if msg is None:
                self.got.put(None)
                return out, False
            out.append(msg)
            if pred(msg):
                return out, True

    def kind(self, kind: str, timeout: float = 5.0):
        msgs, ok = self.until(lambda m: m.WhichOneof("update") == kind, timeout)
        return msgs[-1] if ok else None

    def close(self) -> None:
        self._out.put(None)
        self.call.cancel()


def packet_out(metadata, payload: bytes = b"\x00" * 14):
    req = p4r.StreamMessageRequest()
    req.packet.payload = payload
    for mid, value in metadata:
        req.packet.metadata.add(metadata_id=mid, value=value)
    return req


def good_metadata(port: int = 3):
    return [(1, port.to_bytes(2, "big")), (2, b"\x00")]


# -- the switch and its primary ------------------------------------------------------

class Env:
    def __init__(self, ctx):
        self.ctx = ctx
        self.folder = ctx.workspace.fresh("switch")
        self.prog = probe_program()
        self.info = self.prog.p4info()
        self.next_id = 100  # primaries: 110, 120, ... (each above all before)
        self.low_id = 0  # backups: 1, 2, ... (below every primary)
        self.primary: Optional[Stream] = None
        self.primary_id = 0
        self.piped = False
        self.streams: list[Stream] = []
        self._start()

    def _start(self) -> None:
        self.switch = SwitchProcess(SWITCH_ARGS, self.folder).start()
        self.channel = grpc.insecure_channel(self.switch.address, options=[
            ("grpc.max_metadata_size", 64 * 1024 * 1024),
            ("grpc.max_receive_message_length", 256 * 1024 * 1024),
            ("grpc.max_send_message_length", 256 * 1024 * 1024)])
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.primary, self.piped = None, False

    def restart(self) -> None:
        self.close_streams()
        self.channel.close()
        self.switch.stop(5)
        self._start()

    def stream(self) -> Stream:
        s = Stream(self.stub)
        self.streams.append(s)
        return s

    def close_streams(self) -> None:
        for s in self.streams:
            s.close()
        self.streams.clear()
        self.primary = None

    def close_others(self) -> None:
        """Every stream but the primary's (a probe's backups and extras)."""
        for s in self.streams:
            if s is not self.primary:
                s.close()
        self.streams = [s for s in self.streams if s is self.primary]

    def backup_id(self) -> int:
        self.low_id += 1
        return self.low_id

    def ready(self, pipeline: bool = True) -> Stream:
        """A primary (an election id above every one used) with probe.p4 set
        (unless not `pipeline`)."""
        if self.primary is None or self.primary.closed.is_set():
            self.next_id += 10
            s = self.stream()
            s.arbitrate(self.next_id)
            msg = s.kind("arbitration")
            if msg is None or msg.arbitration.status.code != rpc_code.OK:
                raise RuntimeError(f"election id {self.next_id} did not become primary: {msg}")
            self.primary, self.primary_id = s, self.next_id
        if pipeline and not self.piped:
            self.set_pipeline(self.info, self.prog.json_text.encode())
            self.piped = True
        return self.primary

    def leave(self) -> None:
        """The primary goes away (the next ready() elects a new one)."""
        if self.primary is not None:
            self.primary.close()
            self.primary.closed.wait(5)
            self.primary = None

    def set_pipeline(self, info, config: bytes, election_id: Optional[int] = -1,
                     action=SFP.VERIFY_AND_COMMIT, with_config: bool = True):
        req = SFP(device_id=0, action=action)
        eid = self.primary_id if election_id == -1 else election_id
        if eid is not None:
            req.election_id.CopyFrom(U128.encode(eid))
        if with_config:
            req.config.p4info.CopyFrom(info)
            req.config.p4_device_config = config
        return self.stub.SetForwardingPipelineConfig(req, timeout=TIMEOUT)

    def write(self, *updates, election_id: Optional[int] = -1, device_id: int = 0,
              atomicity: int = 0):
        req = p4r.WriteRequest(device_id=device_id, atomicity=atomicity)
        eid = self.primary_id if election_id == -1 else election_id
        if eid is not None:
            req.election_id.CopyFrom(U128.encode(eid))
        req.updates.extend(updates)
        return self.stub.Write(req, timeout=TIMEOUT)

    def read(self, *entities, device_id: int = 0) -> list:
        req = p4r.ReadRequest(device_id=device_id)
        req.entities.extend(entities)
        return [e for r in self.stub.Read(req, timeout=TIMEOUT) for e in r.entities]

    def close(self) -> None:
        self.close_streams()
        self.channel.close()
        self.switch.stop(5)

    # the program's entities
    def id_of(self, kind: str, name: str) -> int:
        return by_name(getattr(self.info, kind), name).preamble.id


@contextmanager
def environment(ctx):
    env = Env(ctx)
    try:
        yield env
    finally:
        env.close()


# -- verdicts -------------------------------------------------------------------

def code_name(n: int) -> str:
    return rpc_code.Code.Name(n)


def update_errors(e: grpc.RpcError) -> list[tuple[str, str]]:
    for k, v in e.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = rpc_status.Status()
            st.ParseFromString(v)
            out = []
            for d in st.details:
                err = p4r.Error()
                d.Unpack(err)
                out.append((code_name(err.canonical_code), err.message))
            return out
    return []


def rpc_verdict(call: Callable, want: str | tuple[str, ...], says: str = "",
                max_seconds: Optional[float] = None) -> Verdict:
    """`call()` must fail with status `want` (one of them), its details
    saying `says`, within `max_seconds`."""
    wants = (want,) if isinstance(want, str) else want
    t0 = time.monotonic()
    try:
        call()
        return wrong(f"OK where {'/'.join(wants)} was due")
    except grpc.RpcError as e:
        got, details = e.code().name, e.details() or ""
    took = time.monotonic() - t0
    if got == "DEADLINE_EXCEEDED":
        return crashed(f"no answer within {TIMEOUT:.0f} s")
    if got not in wants:
        bad = got in ("INTERNAL", "UNKNOWN")
        return (crashed if bad else wrong)(f"{got} where {'/'.join(wants)} was due: "
                                           f"{details[:150]}")
    if says and says not in details:
        return wrong(f"{got}, but the message does not say {says!r}: {details[:150]}")
    if max_seconds is not None and took > max_seconds:
        return wrong(f"{got} after {took:.1f} s (at most {max_seconds:g} s was due)")
    return handled(got)


def rpc(call: Callable[[Env], object], want: str, says: str = "",
        first: Optional[Callable[[Env], object]] = None) -> Callable[[Env], Verdict]:
    """A check: `first(env)` (e.g. Env.ready: a primary with probe.p4), then
    `call(env)` must fail with status `want`."""
    def check(env: Env) -> Verdict:
        if first is not None:
            first(env)
        return rpc_verdict(lambda: call(env), want, says)
    return check


def update_verdict(env: Env, updates, want: str, says: str = "", count: int = 1,
                   max_seconds: Optional[float] = None) -> Verdict:
    """A Write of `updates` from the primary fails as UNKNOWN with `count`
    errors of canonical code `want` (the rest OK)."""
    env.ready()
    if not isinstance(updates, list):
        updates = [updates]
    t0 = time.monotonic()
    try:
        env.write(*updates)
        return wrong(f"OK where {want} was due")
    except grpc.RpcError as e:
        got, details = e.code().name, e.details() or ""
        errs = update_errors(e) if got == "UNKNOWN" else []
    took = time.monotonic() - t0
    if got == "DEADLINE_EXCEEDED":
        return crashed(f"no answer within {TIMEOUT:.0f} s")
    if got != "UNKNOWN" or not errs:
        return (crashed if got in ("INTERNAL", "UNKNOWN") else wrong)(
            f"{got} (no per-update errors) where UNKNOWN with {want} was due: {details[:150]}")
    bad = [(c, m) for c, m in errs if c != "OK"]
    if [c for c, _ in bad] != [want] * count or len(errs) != len(updates):
        return wrong(f"per-update codes {sorted(set(c for c, _ in bad))} x{len(bad)} "
                     f"where {want} x{count} was due: {bad[0][1][:120] if bad else ''}")
    if says and says not in bad[0][1]:
        return wrong(f"{want}, but the message does not say {says!r}: {bad[0][1][:150]}")
    if max_seconds is not None and took > max_seconds:
        return wrong(f"answered after {took:.1f} s (at most {max_seconds:g} s was due)")
    return handled(f"UNKNOWN with {want}" + (f" x{count}" if count > 1 else ""))


# -- entities of probe.p4 ------------------------------------------------------------

def fwd_entry(env: Env, key: bytes = b"\x00\x00\x00\x00\x00\x02", port: bytes = b"\x00\x03",
              **kw) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=env.id_of("tables", "fwd"), **kw)
    te.match.add(field_id=1).exact.value = key
    te.action.action.action_id = env.id_of("actions", "forward")
    te.action.action.params.add(param_id=1, value=port)
    return te


def acl_entry(env: Env, priority: int, lo: bytes, hi: bytes) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=env.id_of("tables", "acl"), priority=priority)
    m = te.match.add(field_id=1)
    m.ternary.value, m.ternary.mask = b"\x01", b"\x01"
    r = te.match.add(field_id=2)
    r.range.low, r.range.high = lo, hi
    te.action.action.action_id = env.id_of("actions", "drop")
    return te


def insert(entry) -> p4r.Update:
    return U(type=U.INSERT, entity=p4r.Entity(table_entry=entry))


def key(n: int) -> bytes:
    return n.to_bytes(6, "big")


# -- probes: who may write --------------------------------------------------------------

def _arbitration_without_id(env: Env) -> Verdict:
    s = env.stream()
    s.arbitrate(None)
    msg = s.kind("arbitration")
    if msg is None:
        return wrong(f"no arbitration answer ({s.error.code().name if s.error else 'no error'})")
    if msg.arbitration.status.code == rpc_code.OK:
        return wrong("an arbitration without election id made a primary")
    return rpc_verdict(lambda: env.write(insert(fwd_entry(env)), election_id=None),
                       "PERMISSION_DENIED")


def _stream_closed_with(want: str, says: str, election_id: Optional[int], device_id: int = 0):
    def check(env: Env) -> Verdict:
        if election_id == -1:
            env.ready()
        s = env.stream()
        s.arbitrate(env.primary_id if election_id == -1 else election_id, device_id)
        s.closed.wait(5)
        if not s.closed.is_set():
            msg = s.kind("arbitration", 0.1)
            answer = msg.arbitration.status.code if msg else "no answer"
            return wrong(f"the stream stays open ({answer})")
        got = s.error.code().name if s.error else "OK"
        if got != want:
            return wrong(f"stream ended with {got} where {want} was due")
        if says not in (s.error.details() or ""):
            return wrong(f"{got} without {says!r}: {s.error.details()[:150]}")
        if election_id == -1 and env.primary.closed.is_set():
            return wrong("the primary's own stream was closed")
        return handled(got)
    return check


def _backup(env: Env) -> tuple[Stream, int]:
    """A backup controller (an election id below the primary's)."""
    env.ready()
    eid = env.backup_id()
    s = env.stream()
    s.arbitrate(eid)
    msg = s.kind("arbitration")
    if msg is None or msg.arbitration.status.code == rpc_code.OK:
        raise RuntimeError(f"backup {eid}: {'no answer' if msg is None else 'became primary'}")
    return s, eid


def _backup_writes(env: Env) -> Verdict:
    _, eid = _backup(env)
    return rpc_verdict(lambda: env.write(insert(fwd_entry(env, key(11))), election_id=eid),
                       "PERMISSION_DENIED")


def _backup_sets_pipeline(env: Env) -> Verdict:
    _, eid = _backup(env)
    return rpc_verdict(lambda: env.set_pipeline(env.info, env.prog.json_text.encode(), eid),
                       "PERMISSION_DENIED")


def _backup_after_primary_left(env: Env) -> Verdict:
    b, eid = _backup(env)
    env.leave()
    told = b.kind("arbitration", 5)  # "no primary" advisory
    v = rpc_verdict(lambda: env.write(insert(fwd_entry(env, key(12))), election_id=eid),
                    "PERMISSION_DENIED")
    if v.status == "handled" and told is None:
        return wrong("PERMISSION_DENIED, but the backup was not told the primary left")
    return v


def _many_controllers(env: Env) -> Verdict:
    env.ready()
    streams = []
    for i in range(20):
        s = env.stream()
        s.arbitrate(20 + i)
        streams.append(s)
    for s in streams:  # each is answered (a backup) or closed (refused)
        s.until(lambda m: m.WhichOneof("update") == "arbitration", 5)
    refused = [s for s in streams if s.closed.is_set()]
    codes = {s.error.code().name for s in refused if s.error is not None}
    for s in streams:
        s.close()
    if not refused:
        return wrong("21 controllers were all admitted (at most 16 is due)")
    if codes != {"RESOURCE_EXHAUSTED"}:
        return wrong(f"refused with {sorted(codes)} where RESOURCE_EXHAUSTED was due")
    env.write(insert(fwd_entry(env, key(13))))  # the primary still writes
    return handled(f"{len(refused)} refused, RESOURCE_EXHAUSTED")


# -- probes: pipeline configs ----------------------------------------------------------------

def _config(make_config: Callable[[Env], bytes], want="INVALID_ARGUMENT", says="",
            info: Optional[Callable[[Env], object]] = None, max_seconds=None):
    def check(env: Env) -> Verdict:
        env.ready()
        cfg = make_config(env)
        i = info(env) if info else env.info
        return rpc_verdict(lambda: env.set_pipeline(i, cfg), want, says, max_seconds)
    return check


def _with_field(bits) -> Callable[[Env], bytes]:
    def make(env: Env) -> bytes:
        doc = env.prog.doc
        doc["header_types"][0]["fields"].append(["huge", bits, False])
        return json.dumps(doc).encode()
    return make


def _nested(depth: int) -> Callable[[Env], bytes]:
    return lambda env: b'{"a":' * depth + b"1" + b"}" * depth


def _dup_table_ids(env: Env):
    info = env.prog.p4info()
    info.tables[1].preamble.id = info.tables[0].preamble.id
    return info


def _wide_key_p4info(env: Env) -> Verdict:
    """A P4Info whose key is 2**31-1 bits (the JSON says 48): refused, or
    accepted as PI would, after which a 100-byte key is still refused (as
    BMv2 refuses a key of the wrong size)."""
    env.ready()
    info = env.prog.p4info()
    by_name(info.tables, "fwd").match_fields[0].bitwidth = 2**31 - 1
    v = rpc_verdict(lambda: env.set_pipeline(info, env.prog.json_text.encode()),
                    "INVALID_ARGUMENT")
    if v.status != "wrong" or not v.detail.startswith("OK"):
        return v
    try:
        env.write(insert(fwd_entry(env, b"\x01" * 100)))
        return wrong("accepted, and then a 100-byte key for the 48-bit field was written")
    except grpc.RpcError as e:
        errs = [c for c, _ in update_errors(e)]
        if e.code().name != "UNKNOWN" or errs not in (["INVALID_ARGUMENT"], ["OUT_OF_RANGE"]):
            return (crashed if e.code().name == "INTERNAL" else wrong)(
                f"accepted; a 100-byte key: {e.code().name} {errs}: {e.details()[:120]}")
        return handled(f"accepted; a 100-byte key: {errs[0]}")
    finally:
        env.set_pipeline(env.info, env.prog.json_text.encode())


def _table_full(env: Env) -> Verdict:
    """fwd holds 1,024 entries: filling it and one more, the one more is
    RESOURCE_EXHAUSTED (then they are deleted again)."""
    env.ready()
    have = len(env.read(p4r.Entity(table_entry=p4r.TableEntry(
        table_id=env.id_of("tables", "fwd")))))
    entries = [fwd_entry(env, key(100_000 + i)) for i in range(1024 - have + 1)]
    try:
        return update_verdict(env, [insert(e) for e in entries], "RESOURCE_EXHAUSTED",
                              max_seconds=10)
    finally:
        try:
            env.write(*[U(type=U.DELETE, entity=p4r.Entity(table_entry=e)) for e in entries[:-1]])
        except grpc.RpcError:
            pass


def _refused_configs_change_nothing(env: Env) -> Verdict:
    env.ready()
    got = env.stub.GetForwardingPipelineConfig(
        p4r.GetForwardingPipelineConfigRequest(device_id=0), timeout=TIMEOUT).config
    if got.p4info != env.info:
        return wrong("the P4Info the switch holds is not the last one committed")
    env.write(insert(fwd_entry(env, key(14))))
    return handled()


# -- probes: bytes that are not protobuf ---------------------------------------------------

def _garbage(method: str, kind: str, data: bytes = b"\xff\xff\xff\xff"):
    def check(env: Env) -> Verdict:
        ch = env.channel
        if kind == "unary":
            call = lambda: ch.unary_unary(f"/p4.v1.P4Runtime/{method}")(data, timeout=TIMEOUT)
        elif kind == "stream":
            call = lambda: list(ch.unary_stream(f"/p4.v1.P4Runtime/{method}")(data, timeout=TIMEOUT))
        else:
            call = lambda: list(ch.stream_stream(f"/p4.v1.P4Runtime/{method}")(
                iter([data]), timeout=TIMEOUT))
        # gRPC's own answer to a request it cannot decode is INTERNAL
        v = rpc_verdict(call, ("INTERNAL", "INVALID_ARGUMENT"))
        if v.status != "handled":
            return v
        env.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=TIMEOUT)
        return v
    return check


def _truncated_write(env: Env) -> Verdict:
    env.ready()
    req = p4r.WriteRequest(device_id=0, election_id=U128.encode(env.primary_id))
    req.updates.extend([insert(fwd_entry(env, key(15)))])
    data = req.SerializeToString()
    return _garbage("Write", "unary", data[: len(data) - 7])(env)


# -- probes: packet I/O --------------------------------------------------------------------

def _echoes_until_marker(s: Stream, marker_port: int = 77) -> tuple[list, list, bool]:
    """(packet-ins before the marker's echo, stream errors, marker seen)."""
    s.send(packet_out(good_metadata(marker_port), b"marker" + b"\x00" * 8))
    msgs, seen = s.until(lambda m: m.WhichOneof("update") == "packet"
                         and m.packet.payload.startswith(b"marker"), 10)
    packets = [m for m in msgs if m.WhichOneof("update") == "packet"
               and not m.packet.payload.startswith(b"marker")]
    errors = [m.error for m in msgs if m.WhichOneof("update") == "error"]
    return packets, errors, seen


def _dropped_packet_out(metadata, want: Optional[str], says: str = "", sender: str = "primary"):
    """A packet-out that must not be delivered (and, with `want`, answered
    by a stream error of that code)."""
    def check(env: Env) -> Verdict:
        p = env.ready()
        if sender == "backup":
            s = _backup(env)[0]
        elif sender == "no arbitration":
            s = env.stream()
        else:
            s = p
        s.send(packet_out(metadata))
        if s is not p:
            time.sleep(0.05)
        packets, errors, seen = _echoes_until_marker(p)
        if s is not p:  # another stream: its packet-out may be handled after the marker
            late, _ = p.until(lambda m: False, 0.2)
            packets += [m for m in late if m.WhichOneof("update") == "packet"]
            errors = [m.error for m in s.until(lambda m: False, 0.2)[0]
                      if m.WhichOneof("update") == "error"]
        if not seen:
            return wrong("the marker packet-out was not echoed: the stream stopped working")
        if packets:
            return wrong(f"delivered: {len(packets)} packet-in(s) came back")
        if want is None:
            return handled("dropped")
        codes = [code_name(e.canonical_code) for e in errors]
        if codes != [want]:
            return wrong(f"dropped, but stream errors {codes} where [{want}] was due")
        if says and says not in errors[0].message:
            return wrong(f"{want}, but the message does not say {says!r}: {errors[0].message}")
        return handled(f"dropped, {want}")
    return check


def _good_packet_out(env: Env) -> Verdict:
    p = env.ready()
    p.send(packet_out(good_metadata(3), b"good" + b"\x00" * 10))
    msg = p.kind("packet")
    if msg is None:
        return wrong("a good packet-out was not echoed")
    meta = {m.metadata_id: m.value for m in msg.packet.metadata}
    if meta.get(1) != b"\x03" or not msg.packet.payload.startswith(b"good"):
        return wrong(f"echoed as {meta} {msg.packet.payload[:8]!r}")
    return handled("echoed")


def _random_packet_outs(n: int):
    def check(env: Env) -> Verdict:
        p = env.ready()
        rng = random.Random(n)
        for _ in range(n):
            p.send(packet_out(good_metadata(rng.randrange(1, 64)),
                              bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))))
        packets, errors, seen = _echoes_until_marker(p)
        if not seen:
            return wrong("the marker was not echoed after the random packet-outs")
        if len(packets) != n or errors:
            return wrong(f"{len(packets)} of {n} echoed, {len(errors)} stream error(s)")
        return handled(f"{n} echoed")
    return check


def _huge_packet_out(env: Env) -> Verdict:
    p = env.ready()
    p.send(packet_out(good_metadata(3), random.Random(1).randbytes(1 << 20)))
    msgs, ok = p.until(lambda m: m.WhichOneof("update") in ("packet", "error"), 10)
    if not ok:
        return wrong("no echo and no stream error for a 1 MB packet-out")
    return handled(msgs[-1].WhichOneof("update"))


def _odd_stream_messages(env: Env) -> Verdict:
    p = env.ready()
    p.send(p4r.StreamMessageRequest())
    ack = p4r.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = 77, 5
    p.send(ack)
    packets, errors, seen = _echoes_until_marker(p)
    if not seen or p.closed.is_set():
        return wrong("the primary's stream stopped working")
    return handled(f"{len(errors)} stream error(s)")


# -- the catalogue ---------------------------------------------------------------------------

def write_no_id(env: Env):
    return env.write(insert(fwd_entry(env)), election_id=None)


def set_pipeline_no_id(env: Env):
    return env.set_pipeline(env.info, env.prog.json_text.encode(), None)


def probes(fast: bool) -> list[Probe]:
    P = Probe
    cases: list[Probe] = [
        # before any controller: nobody may write or set a pipeline
        P("Write, no election id, no controller", rpc(write_no_id, "PERMISSION_DENIED")),
        P("SetForwardingPipelineConfig, no election id, no controller",
          rpc(set_pipeline_no_id, "PERMISSION_DENIED")),
        P("Write with an election id, no stream", rpc(
            lambda env: env.write(insert(fwd_entry(env)), election_id=5), "PERMISSION_DENIED")),
        P("SetForwardingPipelineConfig with an election id, no stream", rpc(
            lambda env: env.set_pipeline(env.info, env.prog.json_text.encode(), 5),
            "PERMISSION_DENIED")),
        P("Read before any pipeline", rpc(
            lambda env: env.read(p4r.Entity(table_entry=p4r.TableEntry())),
            "FAILED_PRECONDITION")),
        P("arbitration without an election id, then its Write", _arbitration_without_id),
        P("arbitration for device 7", _stream_closed_with("NOT_FOUND", "device", 50, 7)),
        P("device config empty, no JSON loaded", rpc(
            lambda env: env.set_pipeline(env.info, b""), "INVALID_ARGUMENT", "empty",
            first=lambda env: env.ready(pipeline=False))),
        # with a primary
        P("Write, no election id, a primary connected",
          rpc(write_no_id, "PERMISSION_DENIED", first=Env.ready)),
        P("SetForwardingPipelineConfig, no election id, a primary connected",
          rpc(set_pipeline_no_id, "PERMISSION_DENIED", first=Env.ready)),
        P("a backup's Write", _backup_writes),
        P("a backup's SetForwardingPipelineConfig", _backup_sets_pipeline),
        P("a backup's Write after the primary disconnects", _backup_after_primary_left),
        P("Write, no election id, after the primary left",
          rpc(write_no_id, "PERMISSION_DENIED", first=Env.leave)),
        P("a second stream with the primary's election id",
          _stream_closed_with("INVALID_ARGUMENT", "already used", -1)),
        P("21 controllers at once", _many_controllers),
        # pipeline configs
        P("empty P4Info, valid device config",
          _config(lambda env: env.prog.json_text.encode(), says="p4info: empty",
                  info=lambda env: p4i.P4Info())),
        P("empty P4Info but its arch, valid device config",
          _config(lambda env: env.prog.json_text.encode(), says="empty",
                  info=lambda env: p4i.P4Info(pkg_info=p4i.PkgInfo(arch="v1model")))),
        P("device config nested 100,000 levels", _config(_nested(100_000), says="nested")),
        P("device config nested 1,000,000 levels", _config(_nested(1_000_000), says="nested")),
        P("a header field of 2**31 bits", _config(_with_field(2**31), says="65536",
                                                  max_seconds=5)),
        P("a header field of 2**32-1 bits", _config(_with_field(2**32 - 1), max_seconds=5)),
        P("a header field of 2**64 bits", _config(_with_field(2**64))),
        P("a header field of -1 bits", _config(_with_field(-1))),
        P("a header field of 0 bits", _config(_with_field(0))),
        P("a header field of 1.5 bits", _config(_with_field(1.5))),
        P("a header field of 'x' bits", _config(_with_field("x"))),
        P("device config of random bytes",
          _config(lambda env: random.Random(3).randbytes(1000))),
        P("device config 'null'", _config(lambda env: b"null")),
        P("device config '[]'", _config(lambda env: b"[]")),
        P("device config {\"pipelines\": 1}", _config(lambda env: b'{"pipelines": 1}')),
        P("device config not UTF-8", _config(lambda env: b"\xff" + env.prog.json_text.encode())),
        P("P4Info with a duplicate table id",
          _config(lambda env: env.prog.json_text.encode(), says="used by both",
                  info=_dup_table_ids)),
        P("P4Info of another program (the DUT)",
          _config(lambda env: env.prog.json_text.encode(),
                  info=lambda env: dut_program().p4info())),
        P("P4Info with a 2**31-1 bit key", _wide_key_p4info),
        P("SetForwardingPipelineConfig action unset", rpc(
            lambda env: env.set_pipeline(env.info, env.prog.json_text.encode(),
                                         action=SFP.UNSPECIFIED),
            "INVALID_ARGUMENT", first=Env.ready)),
        P("COMMIT with nothing saved", rpc(  # NOT_FOUND as tests/switch pin it
            lambda env: env.set_pipeline(env.info, b"", action=SFP.COMMIT, with_config=False),
            "NOT_FOUND", first=Env.ready)),
        P("refused configs leave the pipeline as it was", _refused_configs_change_nothing),
        # entities
        P("unknown table id", lambda env: update_verdict(env, insert(p4r.TableEntry(
            table_id=0x02FFFFFF)), "INVALID_ARGUMENT", "table_id")),
        P("unknown match field id", lambda env: update_verdict(env, insert(_with(
            fwd_entry(env, key(20)), lambda te: setattr(te.match[0], "field_id", 9))),
            "INVALID_ARGUMENT")),
        P("a key over its 48 bits", lambda env: update_verdict(env, insert(fwd_entry(
            env, (1 << 48).to_bytes(7, "big"))), "OUT_OF_RANGE", "48 bits")),
        P("a 100-byte key", lambda env: update_verdict(env, insert(fwd_entry(env, b"\x01" * 100)),
                                                      "OUT_OF_RANGE")),
        P("a 1 MB key", lambda env: update_verdict(env, insert(fwd_entry(env, b"\x01" * (1 << 20))),
                                                  "OUT_OF_RANGE")),
        P("an empty key", lambda env: update_verdict(env, insert(fwd_entry(env, b"")),
                                                    "OUT_OF_RANGE")),
        P("a parameter over its 9 bits", lambda env: update_verdict(env, insert(fwd_entry(
            env, key(21), b"\x02\x00")), "OUT_OF_RANGE")),
        P("a 100-byte parameter", lambda env: update_verdict(env, insert(fwd_entry(
            env, key(22), b"\x01" * 100)), "OUT_OF_RANGE")),
        P("unknown action id", lambda env: update_verdict(env, insert(_with(
            fwd_entry(env, key(23)), lambda te: setattr(te.action.action, "action_id",
                                                        0x01ABCDEF))), "INVALID_ARGUMENT")),
        P("unknown parameter id", lambda env: update_verdict(env, insert(_with(
            fwd_entry(env, key(24)), lambda te: setattr(te.action.action.params[0],
                                                        "param_id", 7))), "INVALID_ARGUMENT")),
        P("a missing parameter", lambda env: update_verdict(env, insert(_with(
            fwd_entry(env, key(25)), lambda te: te.action.action.ClearField("params"))),
            "INVALID_ARGUMENT")),
        P("a priority on an exact table", lambda env: update_verdict(env, insert(
            fwd_entry(env, key(26), priority=3)), "INVALID_ARGUMENT", "priority")),
        P("ternary entry with priority 0", lambda env: update_verdict(env, insert(
            acl_entry(env, 0, b"\x00\x01", b"\x00\x05")), "INVALID_ARGUMENT", "priority")),
        P("range low above high", lambda env: update_verdict(env, insert(
            acl_entry(env, 5, b"\x00\x09", b"\x00\x05")), "INVALID_ARGUMENT")),
        P("modify an entry that is not there", lambda env: update_verdict(env, U(
            type=U.MODIFY, entity=p4r.Entity(table_entry=fwd_entry(env, key(27)))), "NOT_FOUND")),
        P("delete an entry that is not there", lambda env: update_verdict(env, U(
            type=U.DELETE, entity=p4r.Entity(table_entry=fwd_entry(env, key(28)))), "NOT_FOUND")),
        P("insert the same entry twice in one batch", lambda env: update_verdict(env, [
            insert(fwd_entry(env, key(29))), insert(fwd_entry(env, key(29)))],
            "ALREADY_EXISTS")),
        P("counter index past the end", lambda env: update_verdict(env, U(
            type=U.MODIFY, entity=p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=env.id_of("counters", "port_packets"), index=p4r.Index(index=8)))),
            "OUT_OF_RANGE")),
        P("counter index 2**63-1", lambda env: update_verdict(env, U(
            type=U.MODIFY, entity=p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=env.id_of("counters", "port_packets"),
                index=p4r.Index(index=2**63 - 1)))), "OUT_OF_RANGE")),
        P("counter index -1", lambda env: update_verdict(env, U(
            type=U.MODIFY, entity=p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=env.id_of("counters", "port_packets"), index=p4r.Index(index=-1)))),
            "INVALID_ARGUMENT")),
        P("register value over its 32 bits", lambda env: update_verdict(env, U(
            type=U.MODIFY, entity=p4r.Entity(register_entry=p4r.RegisterEntry(
                register_id=env.id_of("registers", "scratch"), index=p4r.Index(index=0),
                data=_bitstring(b"\x01\x00\x00\x00\x00")))), "OUT_OF_RANGE")),
        P("multicast group 0", lambda env: update_verdict(env, insert_mc(0), "INVALID_ARGUMENT")),
        P("multicast group 40000", lambda env: update_verdict(env, insert_mc(40000),
                                                             "OUT_OF_RANGE")),
        P("an update with no entity", lambda env: update_verdict(env, U(type=U.INSERT),
                                                                "INVALID_ARGUMENT")),
        P("an update with no type", lambda env: update_verdict(env, U(
            entity=p4r.Entity(table_entry=fwd_entry(env, key(30)))), "INVALID_ARGUMENT")),
        P("an extern entry", lambda env: update_verdict(env, insert_extern(), "UNIMPLEMENTED")),
        P("5,000 updates with an unknown table id", lambda env: update_verdict(
            env, [insert(p4r.TableEntry(table_id=0x02FFFFFF)) for _ in range(5000)],
            "INVALID_ARGUMENT", count=5000, max_seconds=10)),
        P("one entry more than the table holds", _table_full),
        P("Write to device 3", rpc(lambda env: env.write(insert(fwd_entry(env)), device_id=3),
                                   "NOT_FOUND", first=Env.ready)),
        P("Read from device 3", rpc(lambda env: env.read(
            p4r.Entity(table_entry=p4r.TableEntry()), device_id=3), "NOT_FOUND")),
        P("Write with atomicity ROLLBACK_ON_ERROR", rpc(
            lambda env: env.write(insert(fwd_entry(env, key(31))), atomicity=1),
            "UNIMPLEMENTED", first=Env.ready)),
        P("Read an unknown table id", rpc(lambda env: env.read(
            p4r.Entity(table_entry=p4r.TableEntry(table_id=0x02FFFFFF))), "INVALID_ARGUMENT")),
        P("Read an empty entity", rpc(lambda env: env.read(p4r.Entity()), "INVALID_ARGUMENT")),
        P("Read counter index 2**63-1", rpc(lambda env: env.read(
            p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=env.id_of("counters", "port_packets"),
                index=p4r.Index(index=2**63 - 1)))), "OUT_OF_RANGE")),
        P("GetForwardingPipelineConfig response_type 99", rpc(
            lambda env: env.stub.GetForwardingPipelineConfig(
                p4r.GetForwardingPipelineConfigRequest(device_id=0, response_type=99),
                timeout=TIMEOUT), "INVALID_ARGUMENT")),
        # bytes that are not protobuf
        P("Write: bytes that are not protobuf", _garbage("Write", "unary")),
        P("SetForwardingPipelineConfig: bytes that are not protobuf",
          _garbage("SetForwardingPipelineConfig", "unary")),
        P("GetForwardingPipelineConfig: bytes that are not protobuf",
          _garbage("GetForwardingPipelineConfig", "unary")),
        P("Capabilities: bytes that are not protobuf", _garbage("Capabilities", "unary")),
        P("Read: bytes that are not protobuf", _garbage("Read", "stream")),
        P("StreamChannel: bytes that are not protobuf", _garbage("StreamChannel", "bidi")),
        P("Write: a request cut short", _truncated_write),
        P("an unknown method", rpc(
            lambda env: env.channel.unary_unary("/p4.v1.P4Runtime/Nope")(b"", timeout=TIMEOUT),
            "UNIMPLEMENTED")),
        # packet I/O
        P("a good packet-out (control: it is echoed)", _good_packet_out),
        P("packet-out without egress_port",
          _dropped_packet_out([(2, b"\x00")], "INVALID_ARGUMENT", "egress_port")),
        P("packet-out without metadata", _dropped_packet_out([], "INVALID_ARGUMENT")),
        P("packet-out with an unknown metadata id",
          _dropped_packet_out(good_metadata() + [(99, b"\x01")], "INVALID_ARGUMENT", "99")),
        P("packet-out with egress_port 0xffffff",
          _dropped_packet_out([(1, b"\xff\xff\xff"), (2, b"\x00")], "OUT_OF_RANGE")),
        P("packet-out with egress_port over 9 bits",
          _dropped_packet_out([(1, b"\x02\x00"), (2, b"\x00")], "OUT_OF_RANGE")),
        P("packet-out with an empty egress_port",
          _dropped_packet_out([(1, b""), (2, b"\x00")], "OUT_OF_RANGE")),
        P("packet-out with egress_port twice",
          _dropped_packet_out([(1, b"\x00\x03"), (1, b"\x00\x04"), (2, b"\x00")],
                              "INVALID_ARGUMENT")),
        P("packet-out from a backup", _dropped_packet_out(good_metadata(), None, sender="backup")),
        P("packet-out on a stream that never arbitrated",
          _dropped_packet_out(good_metadata(), None, sender="no arbitration")),
        P("300 packet-outs of random bytes", _random_packet_outs(300)),
        P("3,000 packet-outs of random bytes", _random_packet_outs(3000), fast=False),
        P("a 1 MB packet-out", _huge_packet_out),
        P("an empty stream message and an unknown digest ack", _odd_stream_messages),
    ]
    out = [Probe(p.name, watched(_closing_others(p.check), lambda env: env.switch), p.fast)
           for p in cases]
    out.append(Probe("the switch stops cleanly on SIGTERM", lambda env: stop_verdict(env.switch)))
    return [p for p in out if p.fast or not fast]


def _closing_others(check):
    def run(env: Env) -> Verdict:
        try:
            return check(env)
        finally:
            env.close_others()
    return run


def _with(te, f):
    f(te)
    return te


def _bitstring(b: bytes):
    from finsy.proto import p4d
    return p4d.P4Data(bitstring=b)


def insert_mc(group: int) -> p4r.Update:
    return U(type=U.INSERT, entity=p4r.Entity(
        packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=group))))


def insert_extern() -> p4r.Update:
    return U(type=U.INSERT, entity=p4r.Entity(extern_entry=p4r.ExternEntry(extern_id=1)))


AREA = Area(NAME, probes, environment)
