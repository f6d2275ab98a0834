"""Per-packet trace lines (BMv2's --log-console style), one text for both
packet paths: the in-process path (`Device.receive`) and the engine's
real-time loop, whose records (`rt_take_traces`) `log_records` writes.

Lines go to the "p4scope.switch.packets" logger: what became of a packet at
debug level (arrival, digests, drops, departures), log_msg lines and
--dump-packet-data bytes at info level. "[pid.copy]" prefixes every line,
as BMv2's do.
"""

from __future__ import annotations

import logging
from typing import Iterable

trace = logging.getLogger("p4scope.switch.packets")

DROPPED = {
    "ingress": "at the end of ingress (egress_spec is the drop port)",
    "egress": "at the end of egress (egress_spec is the drop port)",
    "queue": "by the traffic manager (queue full or bad priority)",
}


def wanted(dump_bytes: int) -> tuple[bool, bool, int]:
    """What the logger level asks for: (per-packet records, log_msg lines,
    bytes of each frame to dump) — the arguments of `rt_trace`."""
    tracing = trace.isEnabledFor(logging.DEBUG)
    dumping = bool(dump_bytes) and trace.isEnabledFor(logging.INFO)
    return tracing or dumping, trace.isEnabledFor(logging.INFO), dump_bytes if dumping else 0


def received(pid: int, port: int, data: bytes, dump_bytes: int) -> None:
    trace.debug("[%d.0] Processing packet received on port %d", pid, port)
    if dump_bytes:
        trace.info("[%d.0] Packet data: %s", pid, data[:dump_bytes].hex(" "))


def log_line(pid: int, line: str) -> None:
    trace.info("[%d.0] %s", pid, line)


def digest(pid: int, name: str) -> None:
    trace.debug("[%d.0] Digest generated for learn list '%s'", pid, name)


def dropped(pid: int, where: str, n: int) -> None:
    trace.debug("[%d.0] %s dropped %s", pid, "Packet" if n == 1 else f"{n} packets",
                DROPPED[where])


def no_output(pid: int) -> None:
    trace.debug("[%d.0] No packet left the switch (no copy, multicast group empty or "
                "unknown)", pid)


def sent(pid: int, copy: int, port: int, size: int, data: bytes, dump_bytes: int,
         cpu_port: int) -> None:
    if cpu_port and port == cpu_port:
        trace.debug("[%d.%d] Sending packet of size %d to the CPU port %d (packet-in)",
                    pid, copy, size, port)
        return
    trace.debug("[%d.%d] Transmitting packet of size %d out of port %d", pid, copy, size, port)
    if dump_bytes:
        trace.info("[%d.%d] Packet data: %s", pid, copy, data[:dump_bytes].hex(" "))


def log_records(records: Iterable[tuple], dump_bytes: int, cpu_port: int) -> None:
    """Writes the real-time loop's trace records (rt_take_traces tuples:
    kind, packet id, time_ns, details)."""
    for r in records:
        kind, pid = r[0], r[1]
        if kind == "received":
            received(pid, r[3], r[5], dump_bytes)
        elif kind == "log":
            log_line(pid, r[3])
        elif kind == "digest":
            digest(pid, r[3])
        elif kind == "dropped":
            dropped(pid, r[3], r[4])
        elif kind == "no_output":
            no_output(pid)
        elif kind == "sent":
            sent(pid, r[3], r[4], r[5], r[6], dump_bytes, cpu_port)
