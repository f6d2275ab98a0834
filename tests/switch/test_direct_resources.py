"""Direct counters and direct meters through P4Runtime reach the engine
itself: a written counter is what the data plane counts on from, and a
configured meter colours (and here drops) packets."""

from __future__ import annotations

import json

import pytest
from finsy.proto import p4r

from tests.switch.sw_client import update
from tests.switch.sw_entities import eth, table_entry

from p4scope.compiler import compile_file
from p4scope.switch.p4runtime.schema import P4Schema

HERE = __import__("pathlib").Path(__file__).parent
DST = 0x0A0000000002


@pytest.fixture
def dctl(client_factory):
    r = compile_file(HERE / "direct.p4")
    c = client_factory(1)
    c.set_pipeline(r.p4info, json.dumps(r.bmv2_json).encode())
    c.schema = P4Schema(r.p4info)
    return c


def entry(c, **fields) -> p4r.TableEntry:
    return table_entry(c.schema, "I.fwd", {"hdr.ethernet.dst": DST}, "I.set_port", {"port": 3},
                       **fields)


def test_a_written_direct_counter_counts_on_in_the_engine(dctl, switch):
    dctl.write(update("insert", table_entry=entry(
        dctl, counter_data=p4r.CounterData(byte_count=1000, packet_count=10))))
    frame = eth(DST)
    switch.inject(1, frame)
    assert [p for p, _ in switch.sent] == [3]
    pipe = switch.device.pipeline
    _, e = pipe.tables.find(entry(dctl), "test")
    assert pipe.engine.direct_counter_read("I.fwd", e.handle) == (1000 + len(frame), 11)
    (r,) = dctl.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=entry(dctl))))
    assert r.direct_counter_entry.data == p4r.CounterData(byte_count=1000 + len(frame),
                                                          packet_count=11)


def test_a_direct_meter_config_drops_what_exceeds_it(dctl, switch):
    burst = [eth(DST)] * 6
    dctl.write(update("insert", table_entry=entry(dctl)))
    for f in burst:
        switch.inject(1, f)
    assert len(switch.sent) == 6  # no config: every packet GREEN
    switch.sent.clear()
    # 1 packet/s committed and peak, bursts of 2: back-to-back packets past
    # the peak burst are RED and dropped
    cfg = p4r.MeterConfig(cir=1, cburst=1, pir=1, pburst=2)
    dctl.write(update("modify", table_entry=entry(dctl, meter_config=cfg)))
    for f in burst:
        switch.inject(1, f)
    assert len(switch.sent) == 2
    (r,) = dctl.read(p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(
        table_entry=entry(dctl))))
    assert r.direct_meter_entry.config == cfg
