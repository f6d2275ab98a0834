"""The client against the in-process switch: arbitration, write errors that
name the failing entity, reading a pipeline back, the UDP collector."""

from __future__ import annotations

import socket
import time

import pytest
from tests.control.ctl_helpers import H1, H2, frame

from p4scope.control import NotPrimary, P4RuntimeClientError, Switch, TableEntry, WriteError
from p4scope.control.apps.collector import Collector
from p4scope.control.apps.telemetry import Telemetry
from p4scope.control.reports import parse_report_frame


def test_second_controller_with_lower_election_id_is_not_primary(switch, dut):
    with pytest.raises(NotPrimary, match="not the highest"):
        Switch.connect(switch.address, election_id=0)


def test_backup_adopts_the_running_pipeline_and_reads(switch, dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    with Switch.connect(switch.address, election_id=0, primary=False) as backup:
        (e,) = backup.table("dmac").entries()
        assert e.params == {"port": 2}
        with pytest.raises(P4RuntimeClientError, match="PERMISSION_DENIED"):
            backup.table("dmac").insert({"dst_addr": H1}, "forward", port=1)


def test_write_error_names_the_entity(dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    with pytest.raises(WriteError) as e:
        dut.insert(TableEntry("dmac", {"dst_addr": H1}, "forward", {"port": 1}),
                   TableEntry("dmac", {"dst_addr": H2}, "forward", {"port": 3}))
    msg = str(e.value)
    assert "ALREADY_EXISTS" in msg and "DutIngress.dmac" in msg and "port': 3" not in msg
    assert [x.index for x in e.value.errors] == [1]


def test_collector_listens_on_udp(switch, dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    tel = Telemetry(dut)
    tel.collector(9, switch_ip="10.255.0.1", collector_ip="127.0.0.1", udp_port=32766)
    tel.port(2, burst_threshold=1)
    reports = [d for p, d in switch.send(1, *[frame(H1)] * 3) if p == 9]
    col = Collector()
    port = col.listen("127.0.0.1", 0)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for r in reports:                 # what a collector host would receive
                s.sendto(r[42:], ("127.0.0.1", port))
        deadline = time.monotonic() + 5
        while len(col.reports) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        col.stop()
    assert [s.deq_qdepth for s in col.samples] == [2, 1, 0]  # start, packet, end
    assert parse_report_frame(reports[0]).seq + 1 == col.reports[1].seq


def test_collector_polls_counters_periodically(switch, dut):
    dut.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    col = Collector()
    col.poll_every(dut, {"egress_port_counter": [2]}, period_s=0.02)
    try:
        switch.send(1, frame(H1))
        deadline = time.monotonic() + 5
        while not any(c.packets for c in col.counters) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        col.stop()
    assert col.errors == []
    times = [c.time_ns for c in col.counters]
    assert times == sorted(times) and col.counters[-1].packets == 1
