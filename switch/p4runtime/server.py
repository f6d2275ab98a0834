"""The gRPC P4Runtime service: requests in, status codes out.

Status mapping (spec "Error Reporting"): an RPC-wide problem is the gRPC
status of its P4RuntimeError with no details; a Write whose updates failed
is UNKNOWN with a google.rpc.Status in the `grpc-status-details-bin`
trailer holding one p4.v1.Error per update (OK for those that succeeded),
exactly as PI sends it. Any unexpected exception becomes INTERNAL for that
request only: a bad request never takes the server down.

StreamChannel runs a reader thread per stream; responses (arbitration
advisories, packet-ins, digests, idle timeouts, stream errors) go through a
bounded queue, so a slow controller loses packet-ins instead of stalling
the switch.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent import futures
from typing import Optional

import grpc
from finsy.proto import p4r, p4r_grpc, rpc_code, rpc_status

from ..device import Device
from .errors import P4RuntimeError

log = logging.getLogger("p4scope.switch")
ERROR_SPACE = "p4scope"
STREAM_QUEUE = 10_000
_END = object()


class _Status(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata=()):
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata


def grpc_code(code: int) -> grpc.StatusCode:
    for c in grpc.StatusCode:
        if c.value[0] == code:
            return c
    return grpc.StatusCode.UNKNOWN


def batch_status(errors: list[Optional[P4RuntimeError]]) -> rpc_status.Status:
    """The google.rpc.Status of a Write whose updates did not all succeed."""
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    first_i, first = failed[0]
    msg = (f"Write failure: {len(failed)} of {len(errors)} update(s) failed; first: "
           f"{rpc_code.Code.Name(first.code)}: {first.message}")
    st = rpc_status.Status(code=rpc_code.Code.UNKNOWN, message=msg)
    for e in errors:
        err = p4r.Error()
        if e is not None:
            err.canonical_code = e.code
            err.message = e.message
            err.space = ERROR_SPACE
        st.details.add().Pack(err)
    return st


class P4RuntimeService(p4r_grpc.P4RuntimeServicer):
    def __init__(self, device: Device):
        self.device = device

    @staticmethod
    def _abort(context, e: P4RuntimeError):
        context.abort(grpc_code(e.code), e.message)

    @staticmethod
    def _internal(context, what: str, e: Exception):
        log.exception("%s: internal error", what)
        context.abort(grpc.StatusCode.INTERNAL, f"{what}: internal error: {e!r}")

    def Capabilities(self, request, context):
        return self.device.capabilities()

    def SetForwardingPipelineConfig(self, request, context):
        try:
            self.device.set_pipeline(request)
        except P4RuntimeError as e:
            log.info("SetForwardingPipelineConfig refused: %s", e.message)
            self._abort(context, e)
        except Exception as e:
            self._internal(context, "SetForwardingPipelineConfig", e)
        return p4r.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        try:
            return self.device.get_pipeline(request)
        except P4RuntimeError as e:
            self._abort(context, e)
        except Exception as e:
            self._internal(context, "GetForwardingPipelineConfig", e)

    def Write(self, request, context):
        request, wire = request  # (_write_with_bytes)
        try:
            errors = self.device.write(request, wire)
        except P4RuntimeError as e:
            self._abort(context, e)
        except Exception as e:
            self._internal(context, "Write", e)
        if errors is None:
            return p4r.WriteResponse()
        st = batch_status(errors)
        context.abort_with_status(_Status(
            grpc.StatusCode.UNKNOWN, st.message,
            (("grpc-status-details-bin", st.SerializeToString()),)))

    def Read(self, request, context):
        try:
            responses = self.device.read_wire(request)  # (sent as they are: _method_handlers)
        except P4RuntimeError as e:
            self._abort(context, e)
        except Exception as e:
            self._internal(context, "Read", e)
        yield from responses

    def StreamChannel(self, request_iterator, context):
        q: queue.Queue = queue.Queue(maxsize=STREAM_QUEUE)
        dropped = [0]
        end = _StreamEnd(q)

        def send(msg):
            try:
                q.put_nowait(msg)
            except queue.Full:
                dropped[0] += 1

        conn = self.device.stream_open(send, context.peer())

        def reader():
            try:
                for req in request_iterator:
                    try:
                        self.device.stream_request(conn, req)
                    except P4RuntimeError as e:
                        end.finish(e)
                        return
                    except Exception as e:
                        log.exception("stream request failed")
                        end.finish(P4RuntimeError(rpc_code.Code.INTERNAL, f"internal error: {e!r}"))
                        return
            except Exception:
                pass  # the client went away
            finally:
                end.finish()

        # gRPC's serving thread runs the callback: it must never block
        if not context.add_callback(end.finish):
            end.finish()  # the RPC is over already
        t = threading.Thread(target=reader, name=f"p4rt-stream-{conn.id}", daemon=True)
        t.start()
        try:
            while not end.over():
                item = q.get()
                if item is _END:
                    break
                yield item
            if end.error is not None:
                self._abort(context, end.error)
        finally:
            self.device.stream_close(conn)
            if dropped[0]:
                log.warning("stream %d: %d messages dropped (slow controller)", conn.id, dropped[0])


class _StreamEnd:
    """How a StreamChannel's responses end, told without ever blocking.

    The end used to be a blocking put into the stream's bounded queue.
    With a slow controller the queue is full; gRPC runs the end-of-RPC
    callback on its one serving thread, which then waited forever for room
    nobody would make: every RPC of the server stopped, and at exit Python
    joined a worker waiting on that thread, so the daemon never ended on
    SIGTERM. Now the end is a flag plus, when there is room, a marker that
    wakes the consumer; with a full queue the consumer takes what waits
    and sees the flag once the queue is empty (what was queued before the
    end is still sent, as before)."""

    def __init__(self, q: queue.Queue):
        self._q = q
        self._ended = threading.Event()
        self.error: Optional[P4RuntimeError] = None
        """What ends the stream with an error status (the first one)."""

    def finish(self, error: Optional[P4RuntimeError] = None) -> None:
        if error is not None and self.error is None and not self._ended.is_set():
            self.error = error
        self._ended.set()
        try:
            self._q.put_nowait(_END)
        except queue.Full:
            pass  # the consumer is not waiting: it finds the flag after the items

    def over(self) -> bool:
        """Ended, and nothing queued before the end is left to send."""
        return self._ended.is_set() and self._q.empty()


def _write_with_bytes(wire: bytes) -> tuple[p4r.WriteRequest, bytes]:
    """A WriteRequest and the bytes it came in (the switch reads the common
    updates from them); what cannot be parsed fails as grpcio's own
    deserializer fails (INTERNAL)."""
    return p4r.WriteRequest.FromString(wire), wire


def _method_handlers(service: P4RuntimeService) -> dict[str, grpc.RpcMethodHandler]:
    """P4Runtime's methods as p4runtime.proto declares them (the generated
    add_P4RuntimeServicer_to_server's), but Write's requests come with their
    bytes and Read's answers go as the device serialized them."""
    def handler(make, name, request, response, deserializer=None, serialized=False):
        serializer = None if serialized else getattr(p4r, response).SerializeToString
        return make(getattr(service, name),
                    request_deserializer=deserializer or getattr(p4r, request).FromString,
                    response_serializer=serializer)

    unary, stream = grpc.unary_unary_rpc_method_handler, grpc.stream_stream_rpc_method_handler
    return {
        "Write": handler(unary, "Write", "WriteRequest", "WriteResponse", _write_with_bytes),
        "Read": handler(grpc.unary_stream_rpc_method_handler, "Read", "ReadRequest",
                        "ReadResponse", serialized=True),
        "SetForwardingPipelineConfig": handler(unary, "SetForwardingPipelineConfig",
                                               "SetForwardingPipelineConfigRequest",
                                               "SetForwardingPipelineConfigResponse"),
        "GetForwardingPipelineConfig": handler(unary, "GetForwardingPipelineConfig",
                                               "GetForwardingPipelineConfigRequest",
                                               "GetForwardingPipelineConfigResponse"),
        "StreamChannel": handler(stream, "StreamChannel", "StreamMessageRequest",
                                 "StreamMessageResponse"),
        "Capabilities": handler(unary, "Capabilities", "CapabilitiesRequest",
                                "CapabilitiesResponse"),
    }


SERVICE = "p4.v1.P4Runtime"

WORKER_PREFIX = "p4rt"
"""The request handlers' threads are named WORKER_PREFIX_N (the executor's
naming), so a stop can tell whether one is still running."""


def make_server(device: Device, address: str, credentials: Optional[grpc.ServerCredentials] = None,
                max_workers: int = 64, executor: Optional[futures.ThreadPoolExecutor] = None
                ) -> tuple[grpc.Server, int]:
    """A started gRPC server serving P4Runtime for `device`; returns (server,
    port). `executor` runs the handlers (default: a new one of `max_workers`
    threads named WORKER_PREFIX_N); its owner shuts it down after a stop."""
    server = grpc.server(
        executor or futures.ThreadPoolExecutor(max_workers=max_workers,
                                               thread_name_prefix=WORKER_PREFIX),
        options=[("grpc.max_receive_message_length", 256 * 1024 * 1024),
                 ("grpc.max_send_message_length", 256 * 1024 * 1024),
                 ("grpc.so_reuseport", 0)])
    handlers = _method_handlers(P4RuntimeService(device))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_registered_method_handlers(SERVICE, handlers)
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    server.start()
    return server, port
