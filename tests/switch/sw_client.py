"""A small P4Runtime client for the switch tests (grpcio + finsy stubs).

It is deliberately independent of the server code: requests are built from
the P4Info by name, so the tests read like a controller would write them.
"""

from __future__ import annotations

import queue
import threading
from typing import Optional

import grpc
from finsy.proto import p4r, p4r_grpc, rpc_status

SFP = p4r.SetForwardingPipelineConfigRequest


class StreamClosed(Exception):
    pass


class Client:
    def __init__(self, address: str, device_id: int = 0, election_id: Optional[int] = 1):
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        # per-update errors of big batches exceed gRPC's default 8 KB of
        # metadata (spec "gRPC Metadata Maximum Size")
        self.channel = grpc.insecure_channel(address, options=[
            ("grpc.max_metadata_size", 8192 + 20_000 * 100),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._requests: queue.Queue = queue.Queue()
        self.responses: queue.Queue = queue.Queue()
        self._stream = None
        self._thread: Optional[threading.Thread] = None
        self.stream_error: Optional[grpc.RpcError] = None

    # ----- stream -----------------------------------------------------------

    def _request_iter(self):
        while True:
            item = self._requests.get()
            if item is None:
                return
            yield item

    def open_stream(self) -> None:
        self._stream = self.stub.StreamChannel(self._request_iter())

        def pump():
            try:
                for msg in self._stream:
                    self.responses.put(msg)
            except grpc.RpcError as e:
                self.stream_error = e
            self.responses.put(None)

        self._thread = threading.Thread(target=pump, daemon=True)
        self._thread.start()

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._requests.put(msg)

    def arbitrate(self, election_id: Optional[int] = None, device_id: Optional[int] = None,
                  wait: bool = True) -> Optional[p4r.StreamMessageResponse]:
        if self._stream is None:
            self.open_stream()
        if election_id is not None:
            self.election_id = election_id
        req = p4r.StreamMessageRequest()
        arb = req.arbitration
        arb.device_id = self.device_id if device_id is None else device_id
        if self.election_id is not None:
            arb.election_id.high = self.election_id >> 64
            arb.election_id.low = self.election_id & (2**64 - 1)
        self.send(req)
        return self.expect("arbitration") if wait else None

    def expect(self, kind: str, timeout: float = 5.0) -> p4r.StreamMessageResponse:
        """The next stream message of `kind`, skipping others."""
        import time
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} message within {timeout}s")
            try:
                msg = self.responses.get(timeout=left)
            except queue.Empty:
                raise TimeoutError(f"no {kind} message within {timeout}s") from None
            if msg is None:
                raise StreamClosed(str(self.stream_error))
            if msg.WhichOneof("update") == kind:
                return msg

    def drain(self, timeout: float = 0.2) -> list:
        out = []
        while True:
            try:
                msg = self.responses.get(timeout=timeout)
            except queue.Empty:
                return out
            if msg is None:
                return out
            out.append(msg)

    def close(self) -> None:
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
        self.channel.close()

    # ----- RPCs -------------------------------------------------------------

    def _eid(self, msg) -> None:
        if self.election_id is not None:
            msg.election_id.high = self.election_id >> 64
            msg.election_id.low = self.election_id & (2**64 - 1)

    def set_pipeline(self, p4info, device_config: bytes, action=SFP.VERIFY_AND_COMMIT,
                     cookie: Optional[int] = None) -> None:
        req = SFP(device_id=self.device_id, action=action)
        self._eid(req)
        if p4info is not None or device_config:
            if p4info is not None:
                req.config.p4info.CopyFrom(p4info)
            req.config.p4_device_config = device_config
            if cookie is not None:
                req.config.cookie.cookie = cookie
        self.stub.SetForwardingPipelineConfig(req, timeout=10)

    def write(self, *updates, atomicity=0) -> None:
        req = p4r.WriteRequest(device_id=self.device_id, atomicity=atomicity)
        self._eid(req)
        req.updates.extend(updates)
        self.stub.Write(req, timeout=10)

    def read(self, *entities) -> list:
        req = p4r.ReadRequest(device_id=self.device_id)
        req.entities.extend(entities)
        out = []
        for resp in self.stub.Read(req, timeout=10):
            out.extend(resp.entities)
        return out


def update(kind: str, **entity) -> p4r.Update:
    t = {"insert": p4r.Update.INSERT, "modify": p4r.Update.MODIFY,
         "delete": p4r.Update.DELETE, "unspecified": p4r.Update.UNSPECIFIED}[kind]
    return p4r.Update(type=t, entity=p4r.Entity(**entity))


def errors_of(e: grpc.RpcError) -> list:
    """The p4.v1.Error details of a failed Write (empty if none)."""
    for k, v in e.trailing_metadata() or ():
        if k == "grpc-status-details-bin":
            st = rpc_status.Status()
            st.ParseFromString(v)
            out = []
            for d in st.details:
                err = p4r.Error()
                d.Unpack(err)
                out.append(err)
            return out
    return []
