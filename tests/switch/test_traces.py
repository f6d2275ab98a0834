"""Per-packet trace lines: the real-time loop's records written by
traces.log_records, and the in-process path, give the same texts."""

from __future__ import annotations

import logging

import pytest

from tests.switch.sw_client import update
from tests.switch.sw_entities import eth, table_entry

from p4scope.switch import traces


class Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[int, str]] = []

    def emit(self, record):
        self.lines.append((record.levelno, record.getMessage()))


@pytest.fixture
def lines():
    h = Lines()
    log = traces.trace
    old = log.level
    log.addHandler(h)
    log.setLevel(logging.DEBUG)
    yield h.lines
    log.removeHandler(h)
    log.setLevel(old)


D, I = logging.DEBUG, logging.INFO


def test_loop_records_become_bmv2_lines(lines):
    traces.log_records([
        ("received", 7, 100, 1, 60, b"\x02\xaa"),
        ("log", 7, 100, "ttl is 63"),
        ("digest", 7, 100, "learn_t"),
        ("sent", 7, 900, 0, 2, 60, b"\x02\xaa"),
        ("sent", 7, 950, 1, 255, 62, b""),
        ("received", 8, 1000, 3, 64, b"\x01\x02"),
        ("dropped", 8, 1000, "ingress", 1),
        ("received", 9, 1000, 3, 64, b""),
        ("dropped", 9, 1000, "queue", 3),
        ("received", 10, 1000, 3, 64, b""),
        ("no_output", 10, 1000),
        ("log", 0, 1000, "a line of no packet"),
    ], dump_bytes=2, cpu_port=255)
    assert lines == [
        (D, "[7.0] Processing packet received on port 1"),
        (I, "[7.0] Packet data: 02 aa"),
        (I, "[7.0] ttl is 63"),
        (D, "[7.0] Digest generated for learn list 'learn_t'"),
        (D, "[7.0] Transmitting packet of size 60 out of port 2"),
        (I, "[7.0] Packet data: 02 aa"),
        (D, "[7.1] Sending packet of size 62 to the CPU port 255 (packet-in)"),
        (D, "[8.0] Processing packet received on port 3"),
        (I, "[8.0] Packet data: 01 02"),
        (D, "[8.0] Packet dropped at the end of ingress (egress_spec is the drop port)"),
        (D, "[9.0] Processing packet received on port 3"),
        (I, "[9.0] Packet data: "),
        (D, "[9.0] 3 packets dropped by the traffic manager (queue full or bad priority)"),
        (D, "[10.0] Processing packet received on port 3"),
        (I, "[10.0] Packet data: "),
        (D, "[10.0] No packet left the switch (no copy, multicast group empty or unknown)"),
        (I, "[0.0] a line of no packet"),
    ]


def test_wanted_follows_the_logger_level(lines):
    assert traces.wanted(0) == (True, True, 0)
    assert traces.wanted(16) == (True, True, 16)
    traces.trace.setLevel(logging.INFO)
    assert traces.wanted(0) == (False, True, 0), "info: log_msg lines only"
    assert traces.wanted(16) == (True, True, 16), "info with --dump-packet-data: the bytes"
    traces.trace.setLevel(logging.WARNING)
    assert traces.wanted(16) == (False, False, 0)


def test_in_process_path_writes_the_same_lines(ctl, schema, switch, lines):
    for dst, action, params in ((7, "forward", {"port": 2}), (8, "drop", {}),
                                (9, "flood", {"group": 99})):
        ctl.write(update("insert", table_entry=table_entry(
            schema, "fwd", {"hdr.ethernet.dst": dst}, action, params)))
    frame = eth(7)
    for dst in (7, 8, 9):
        switch.inject(4, eth(dst))
    texts = [t for _, t in lines]
    p = int(texts[0][1:].split(".")[0])
    assert texts == [
        f"[{p}.0] Processing packet received on port 4",
        f"[{p}.0] Transmitting packet of size {len(frame)} out of port 2",
        f"[{p + 1}.0] Processing packet received on port 4",
        f"[{p + 1}.0] Packet dropped at the end of ingress (egress_spec is the drop port)",
        f"[{p + 2}.0] Processing packet received on port 4",
        f"[{p + 2}.0] No packet left the switch (no copy, multicast group empty or unknown)"]


def test_rt_ports_write_the_loops_records_and_report_lost_ones(lines):
    """RtPorts' events thread: the loop's records become lines, and records
    the loop had to drop (rt_stats traces_dropped) a warning."""
    import threading
    import time

    from p4scope.switch.ports import RtPorts

    class Raw:
        def __init__(self):
            self.recs = [("received", 3, 0, 1, 60, b""), ("sent", 3, 0, 0, 2, 60, b"")]

        def rt_take_events(self, n, timeout):
            return []

        def rt_waiter(self):
            return self

        def wait(self, timeout):  # the waiter's: something is waiting
            return True

        def rt_take_traces(self, n):
            recs, self.recs = self.recs, []
            return recs

        def rt_stats(self):
            return {"traces_dropped": 5}

        def rt_stop(self):
            pass

    class Engine:
        raw = Raw()

    class Device:
        lock = threading.RLock()

    warnings = Lines()
    logging.getLogger("p4scope.switch").addHandler(warnings)
    ports = RtPorts(Device(), {}, cpu_port=255)
    ports.LOST_REPORT_S = 0.0
    ports.engine = Engine()
    ports.start()
    try:
        deadline = time.monotonic() + 3
        while (len(lines) < 2 or not warnings.lines) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        ports.close()
        logging.getLogger("p4scope.switch").removeHandler(warnings)
    assert lines == [(D, "[3.0] Processing packet received on port 1"),
                     (D, "[3.0] Transmitting packet of size 60 out of port 2")]
    assert (logging.WARNING, "5 per-packet trace records lost (the log is slower than the "
                             "traffic)") in warnings.lines
