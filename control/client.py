"""A synchronous P4Runtime client: RPCs, the stream, arbitration.

Speaks to `p4scope switch` and to BMv2's simple_switch_grpc alike: device
id and election id on every request, the pipeline config sent as the raw
BMv2 JSON (what PI and p4scope's switch take), canonical byte strings.

The stream is read by one background thread that sorts what arrives into
bounded per-kind queues (packet, digest, idle_timeout_notification,
error, arbitration, other); `get(kind, timeout)` and `drain(kind)` take
from them. Nothing else runs in the background: apps decide when to handle
messages, which keeps tests deterministic.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Protocol, Sequence

import grpc
from finsy.proto import U128, p4r, p4r_grpc, rpc_code, rpc_status

log = logging.getLogger("p4scope.control")

SFP = p4r.SetForwardingPipelineConfigRequest
STREAM_KINDS = ("packet", "digest", "idle_timeout_notification", "error", "arbitration", "other")
QUEUE_SIZE = 100_000


class _StreamCall(Protocol):
    """The StreamChannel call: the switch's messages as they come, cancelled on close."""

    def __iter__(self) -> Iterator[p4r.StreamMessageResponse]: ...

    def cancel(self) -> bool: ...


class P4RuntimeClientError(Exception):
    """A P4Runtime RPC failed; `code` is the gRPC status code."""

    def __init__(self, what: str, code: grpc.StatusCode, details: str):
        super().__init__(f"{what}: {code.name}: {details}")
        self.what = what
        self.code = code
        self.details = details


@dataclass(frozen=True)
class UpdateError:
    index: int
    code: int
    message: str

    @property
    def code_name(self) -> str:
        return rpc_code.Code.Name(self.code) if self.code in rpc_code.Code.values() else str(self.code)


class WriteError(P4RuntimeClientError):
    """Some updates of a Write failed; `errors` lists them (index into the batch)."""

    def __init__(self, errors: list[UpdateError], total: int, describe=None):
        self.errors = errors
        first = errors[0]
        where = describe(first.index) if describe else f"update {first.index}"
        more = f" (and {len(errors) - 1} more of {total})" if len(errors) > 1 else ""
        Exception.__init__(self, f"Write failed: {where}: {first.code_name}: {first.message}{more}")
        self.what = "Write"
        self.code = grpc.StatusCode.UNKNOWN
        self.details = first.message


class NotPrimary(P4RuntimeClientError):
    pass


def _rpc_error(what: str, e: grpc.RpcError) -> P4RuntimeClientError:
    return P4RuntimeClientError(what, e.code(), e.details() or "")


def _update_errors(e: grpc.RpcError) -> list[UpdateError]:
    for k, v in e.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = rpc_status.Status()
            st.ParseFromString(v)
            out = []
            for i, d in enumerate(st.details):
                err = p4r.Error()
                d.Unpack(err)
                if err.canonical_code != rpc_code.OK:
                    out.append(UpdateError(i, err.canonical_code, err.message))
            return out
    return []


class Client:
    """One controller connection to one device."""

    def __init__(self, address: str, device_id: int = 0, election_id: int = 1,
                 role: str = "", timeout: float = 10.0):
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self.timeout = timeout
        self.channel = grpc.insecure_channel(address, options=[
            ("grpc.max_receive_message_length", 256 * 1024 * 1024),
            ("grpc.max_send_message_length", 256 * 1024 * 1024),
            ("grpc.max_metadata_size", 4 * 1024 * 1024)])
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._requests: "queue.Queue[Optional[p4r.StreamMessageRequest]]" = queue.Queue()
        self._queues: dict[str, "queue.Queue[Optional[p4r.StreamMessageResponse]]"] = {
            k: queue.Queue(maxsize=QUEUE_SIZE) for k in STREAM_KINDS}
        self._stream: Optional[_StreamCall] = None
        self._reader: Optional[threading.Thread] = None
        self._closed = threading.Event()
        self.stream_error: Optional[grpc.RpcError] = None
        self.dropped = 0
        self.is_primary = False

    # ----- stream and arbitration ----------------------------------------------

    def _request_iter(self) -> Iterator[p4r.StreamMessageRequest]:
        while True:
            item = self._requests.get()
            if item is None:
                return
            yield item

    def _read_stream(self) -> None:
        stream = self._stream
        if stream is None:
            return
        try:
            for msg in stream:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self.is_primary = msg.arbitration.status.code == rpc_code.OK
                q = self._queues.get(kind or "other", self._queues["other"])
                try:
                    q.put_nowait(msg)
                except queue.Full:
                    self.dropped += 1
        except grpc.RpcError as e:
            if not self._closed.is_set():
                self.stream_error = e
                log.warning("P4Runtime stream to %s ended: %s", self.address, e.details())
        finally:
            for k in ("arbitration", "other"):
                try:
                    self._queues[k].put_nowait(None)
                except queue.Full:
                    pass

    def connect(self, wait_primary: bool = True, timeout: Optional[float] = None) -> "Client":
        """Opens the stream and arbitrates; with `wait_primary`, raises
        NotPrimary unless this controller became the primary."""
        if self._stream is None:
            self._stream = self.stub.StreamChannel(self._request_iter())
            self._reader = threading.Thread(target=self._read_stream, daemon=True,
                                            name=f"p4rt-client-{self.address}")
            self._reader.start()
        req = p4r.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.CopyFrom(U128.encode(self.election_id))
        if self.role:
            req.arbitration.role.name = self.role
        self._requests.put(req)
        msg = self.get("arbitration", timeout or self.timeout)
        if msg is None:
            err = self.stream_error
            detail = f"{err.code().name}: {err.details()}" if err is not None else "no answer"
            raise P4RuntimeClientError("arbitration", grpc.StatusCode.UNAVAILABLE,
                                       f"{self.address} did not accept the stream ({detail})")
        if wait_primary and not self.is_primary:
            raise NotPrimary("arbitration", grpc.StatusCode.PERMISSION_DENIED,
                             f"election id {self.election_id} is not the highest: another "
                             "controller is primary")
        return self

    def get(self, kind: str, timeout: Optional[float] = 0.0):
        """The next stream message of `kind`, or None after `timeout` s
        (0: only what is already there)."""
        q = self._queues[kind]
        try:
            if not timeout:
                return q.get_nowait()
            return q.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self, kind: str) -> list:
        out = []
        q = self._queues[kind]
        while True:
            try:
                out.append(q.get_nowait())
            except queue.Empty:
                return out

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._requests.put(msg)

    def packet_out(self, payload: bytes, metadata: Sequence[tuple[int, bytes]] = ()) -> None:
        req = p4r.StreamMessageRequest()
        req.packet.payload = payload
        for mid, value in metadata:
            req.packet.metadata.add(metadata_id=mid, value=value)
        self._requests.put(req)

    def digest_ack(self, digest_id: int, list_id: int) -> None:
        req = p4r.StreamMessageRequest()
        req.digest_ack.digest_id = digest_id
        req.digest_ack.list_id = list_id
        self._requests.put(req)

    def close(self) -> None:
        self._closed.set()
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
        self.channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- RPCs ------------------------------------------------------------------

    def _eid(self, msg) -> None:
        msg.election_id.CopyFrom(U128.encode(self.election_id))
        if self.role:
            msg.role = self.role

    def capabilities(self) -> str:
        try:
            return self.stub.Capabilities(p4r.CapabilitiesRequest(),
                                          timeout=self.timeout).p4runtime_api_version
        except grpc.RpcError as e:
            raise _rpc_error("Capabilities", e) from None

    def set_pipeline(self, p4info, device_config: bytes,
                     action: SFP.Action.ValueType = SFP.VERIFY_AND_COMMIT,
                     cookie: Optional[int] = None) -> None:
        req = SFP(device_id=self.device_id, action=action)
        self._eid(req)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        if cookie is not None:
            req.config.cookie.cookie = cookie
        try:
            self.stub.SetForwardingPipelineConfig(req, timeout=max(self.timeout, 60))
        except grpc.RpcError as e:
            raise _rpc_error("SetForwardingPipelineConfig", e) from None

    def get_pipeline(self, response_type: p4r.GetForwardingPipelineConfigRequest.ResponseType
                     .ValueType = p4r.GetForwardingPipelineConfigRequest.ALL):
        req = p4r.GetForwardingPipelineConfigRequest(device_id=self.device_id,
                                                     response_type=response_type)
        try:
            return self.stub.GetForwardingPipelineConfig(req, timeout=self.timeout).config
        except grpc.RpcError as e:
            raise _rpc_error("GetForwardingPipelineConfig", e) from None

    def write(self, updates: Sequence[p4r.Update], describe=None) -> None:
        """Sends one WriteRequest; WriteError lists the updates that failed."""
        if not updates:
            return
        req = p4r.WriteRequest(device_id=self.device_id)
        self._eid(req)
        req.updates.extend(updates)
        try:
            self.stub.Write(req, timeout=self.timeout)
        except grpc.RpcError as e:
            errs = _update_errors(e)
            if errs:
                raise WriteError(errs, len(updates), describe) from None
            raise _rpc_error("Write", e) from None

    def read(self, entities: Iterable[p4r.Entity]) -> Iterator[p4r.Entity]:
        req = p4r.ReadRequest(device_id=self.device_id)
        if self.role:
            req.role = self.role
        req.entities.extend(entities)
        try:
            for resp in self.stub.Read(req, timeout=self.timeout):
                yield from resp.entities
        except grpc.RpcError as e:
            raise _rpc_error("Read", e) from None


def wait_for_server(address: str, timeout: float = 10.0) -> None:
    """Blocks until a gRPC server accepts connections at `address`."""
    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        raise TimeoutError(f"no P4Runtime server at {address} after {timeout}s") from None
    finally:
        channel.close()
