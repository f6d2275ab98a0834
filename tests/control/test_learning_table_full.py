"""The learning app on a full MAC table: the controller keeps running, the
address that did not fit stays unknown (its frames are flooded), and the
learnt ones keep forwarding; the table's size is the program's
(-DMAC_TABLE_SIZE)."""

from __future__ import annotations

from pathlib import Path

from tests.control.ctl_helpers import frame, ports_of

from p4scope.control import Switch
from p4scope.control.apps.flooding import Flooding
from p4scope.control.apps.learning import L2Learning
from p4scope.experiments.testbed import compile_pipeline

ROOT = Path(__file__).parents[2]


def mac(i: int) -> str:
    return f"02:0a:00:00:00:{i:02x}"


def test_a_full_table_floods_the_address_that_did_not_fit(switch):
    pipe = compile_pipeline(ROOT / "p4src" / "dut.p4", {"MAC_TABLE_SIZE": "4"})
    with Switch.connect(switch.address, pipeline=pipe) as sw:
        Flooding(sw).domain([1, 2, 3])
        learn = L2Learning(sw).start()
        for i in range(1, 6):                      # five sources on port 1, room for four
            switch.send(1, frame(src=mac(i), dst=mac(0x40)))
            learn.handle(timeout=2)
        assert learn.stats.learnt == 4 and learn.stats.table_full == 1
        assert set(learn.macs) == {int(mac(i).replace(":", ""), 16) for i in range(1, 5)}
        assert len(sw.table("smac")) == 4 and len(sw.table("dmac")) == 4
        assert ports_of(switch.send(2, frame(src=mac(0x30), dst=mac(4)))) == [1]   # learnt
        assert ports_of(switch.send(2, frame(src=mac(0x30), dst=mac(5)))) == [1, 3]  # flooded
