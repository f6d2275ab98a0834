"""The instrument in bytes (p4scope_tm.p4's contract): through the BMv2
field aliases on meta.q (which p4c and p4scope's compiler emit for @alias),
p4scope's engine fills byte depths and nanosecond waits, and a port in
bytes mode detects bursts by bytes."""

from __future__ import annotations

from tests.control.ctl_helpers import H1, H2

from p4scope.control import packets
from p4scope.control.apps.telemetry import Telemetry
from p4scope.control.reports import (EVENT_BURST_END, EVENT_BURST_PKT, EVENT_BURST_START,
                                     parse_report_frame)

def test_bursts_in_bytes(switch, dut):
    sw = dut
    sw.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    tel = Telemetry(sw)
    tel.collector(9, switch_ip="10.255.0.1", collector_ip="10.255.0.100", udp_port=32766)
    tel.port(2, burst_threshold=250, burst_end=100, bytes_mode=True)
    f = packets.udp_frame(dst_mac=H2, src_mac=H1, size=100)
    reps = [parse_report_frame(d) for p, d in switch.send(1, *[f] * 5) if p == 9]
    # bytes left behind: 400, 300, 200, 100 (>= the end, 100) build the
    # burst, 0 ends it
    assert [r.queue.deq_qbytes for r in reps] == [400, 300, 200, 100, 0]
    assert [r.queue.enq_qbytes for r in reps] == [0, 100, 200, 300, 400]
    assert [r.queue.events for r in reps] == [EVENT_BURST_START | EVENT_BURST_PKT] + \
        [EVENT_BURST_PKT] * 3 + [EVENT_BURST_END]
    assert all(r.queue.bytes_valid for r in reps)


def test_time_in_queue_and_timestamps_in_nanoseconds(switch, dut):
    sw = dut
    sw.table("dmac").insert({"dst_addr": H2}, "forward", port=2)
    tel = Telemetry(sw)
    tel.collector(9, switch_ip="10.255.0.1", collector_ip="10.255.0.100", udp_port=32766)
    tel.watch(dst="10.0.0.0/8")
    switch.engine.set_queue_rate(2, 3000)            # 333.333 us per packet
    f = packets.udp_frame(dst_mac=H2, src_mac=H1, size=100)
    reps = [parse_report_frame(d) for p, d in switch.send(1, *[f] * 3) if p == 9]
    waits = [r.queue.queue_time_ns for r in reps]
    assert [r.queue.deq_qbytes for r in reps] == [200, 100, 0]
    # nanosecond waits are not multiples of 1000 (microsecond clocks would be)
    assert waits[0] < waits[1] < waits[2] and any(w % 1000 for w in waits[1:]), waits
    # report timestamps are the engine's ns clock (p4scope.*_timestamp_ns):
    # egress - ingress is the wait, departures 333 333 ns apart
    for r in reps:
        assert r.md.hop_latency_ns == r.md.egress_ts_ns - r.md.ingress_ts_ns
        assert abs(r.md.hop_latency_ns - r.queue.queue_time_ns) < 1000
    gaps = [b.md.egress_ts_ns - a.md.egress_ts_ns for a, b in zip(reps, reps[1:])]
    assert all(abs(g - 333_333) <= 1 for g in gaps), gaps

