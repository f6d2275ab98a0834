"""The multiplexed Thrift processor of the run-time server, answering as
Apache Thrift's C++ server does (BMv2's TMultiplexedProcessor and the
generated processors behind it):

- an unknown method of a known service: reply EXCEPTION, TApplicationException
  UNKNOWN_METHOD "Invalid method name: 'NAME'"; the connection carries on;
- an unknown service, a name without "service:", or a message that is not
  a call: reply EXCEPTION, PROTOCOL_ERROR "TMultiplexedProcessor: ...", then
  the connection ends (raised as `Refused`);
- a handler raising an exception its method does not declare: reply
  EXCEPTION, TApplicationException UNKNOWN with its text; the connection
  carries on.

Anything that cannot be decoded raises out of `process`: the server ends
that connection (C++: TConnectedClient drops the client).
"""

from __future__ import annotations

import logging
from typing import Any

from thriftpy2.thrift import TApplicationException, TMessageType, TProcessor, TType

log = logging.getLogger("p4scope.switch.runtime")


class Refused(Exception):
    """A message answered with a PROTOCOL_ERROR: the connection must end."""


class MuxProcessor:
    def __init__(self, services: dict[str, tuple[Any, object]]):
        """services: multiplexed name -> (thriftpy2 service, handler)."""
        self._procs = {name: TProcessor(svc, handler) for name, (svc, handler) in services.items()}

    def process(self, iprot, oprot) -> None:
        """Reads one message and answers it."""
        name, mtype, seqid = iprot.read_message_begin()
        if mtype not in (TMessageType.CALL, TMessageType.ONEWAY):
            self._refuse(iprot, oprot, name, seqid, "Unexpected message type")
        tokens = [t for t in name.split(":") if t]  # as boost's tokenizer splits
        if len(tokens) == 1:
            self._refuse(iprot, oprot, name, seqid, "Non-multiplexed client request dropped. "
                                                    "Did you forget to call defaultProcessor()?")
        if len(tokens) != 2:
            self._refuse(iprot, oprot, name, seqid, "Wrong number of tokens.")
        service, method = tokens
        proc = self._procs.get(service)
        if proc is None:
            self._refuse(iprot, oprot, name, seqid, f"Unknown service: {service}. "
                                                    "Did you forget to call registerProcessor()?")
        self._dispatch(proc, iprot, oprot, method, mtype, seqid)

    @staticmethod
    def _dispatch(proc: TProcessor, iprot, oprot, method: str, mtype: int, seqid: int) -> None:
        svc = proc._service
        if method not in svc.thrift_services:
            iprot.skip(TType.STRUCT)
            iprot.read_message_end()
            proc.send_exception(oprot, method, TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'"), seqid)
            return
        args = getattr(svc, method + "_args")()
        args.read(iprot)
        iprot.read_message_end()
        result = getattr(svc, method + "_result")()
        oneway = mtype == TMessageType.ONEWAY or getattr(result, "oneway", False)
        f = getattr(proc._handler, method)
        try:
            result.success = f(*(getattr(args, spec[1]) for spec in args.thrift_spec.values()))
        except TApplicationException as e:
            if not oneway:
                proc.send_exception(oprot, method, e, seqid)
            return
        except Exception as e:  # noqa: BLE001 -- a declared exception, or a handler bug
            if not proc.handle_exception(e, result):
                log.error("run-time API call %s failed: %r", method, e)
                if not oneway:
                    proc.send_exception(oprot, method, TApplicationException(
                        TApplicationException.UNKNOWN, str(e) or repr(e)), seqid)
                return
        if not oneway:
            proc.send_result(oprot, method, result, seqid)

    @staticmethod
    def _refuse(iprot, oprot, name: str, seqid: int, why: str) -> None:
        """C++ TMultiplexedProcessor::protocol_error: skip, answer, end."""
        iprot.skip(TType.STRUCT)
        iprot.read_message_end()
        text = f"TMultiplexedProcessor: {why}"
        oprot.write_message_begin(name, TMessageType.EXCEPTION, seqid)
        TApplicationException(TApplicationException.PROTOCOL_ERROR, text).write(oprot)
        oprot.write_message_end()
        oprot.trans.flush()
        raise Refused(text)
