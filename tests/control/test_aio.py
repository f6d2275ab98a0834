"""The asyncio facade drives the same switch: learning as a coroutine."""

from __future__ import annotations

import asyncio

from tests.control.ctl_helpers import H1, H2, frame, ports_of

from p4scope.control import TableEntry
from p4scope.control.aio import AsyncSwitch


def test_async_learning_loop(switch, dut_pipeline):
    async def main():
        async with AsyncSwitch.connect(switch.address, pipeline=dut_pipeline) as sw:
            await asyncio.to_thread(sw.sync.configure_digest, "mac_learn_t")
            await asyncio.to_thread(sw.sync.multicast_group, 1, [1, 2, 3])
            await asyncio.to_thread(switch.send, 1, frame(H1, H2))
            async for dl in sw.digest_stream():
                m = dl.messages[0].values
                await sw.insert(TableEntry("dmac", {"dst_addr": m["src_addr"]}, "forward",
                                           {"port": m["ingress_port"]}))
                break
            assert len(await sw.entries("dmac")) == 1
            out = await asyncio.to_thread(switch.send, 2, frame(H2, H1))
            assert ports_of(out) == [1]
            assert (await sw.counter("ingress_port_counter", 2)).packets == 1

    asyncio.run(asyncio.wait_for(main(), 20))
