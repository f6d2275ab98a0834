"""asyncio access to a `Switch`, for controllers written as coroutines.

    async with AsyncSwitch.connect(addr, pipeline=p) as sw:
        await sw.insert(TableEntry("dmac", {"dst_addr": mac}, "forward", {"port": 2}))
        async for dl in sw.digest_stream():
            ...

Blocking calls run in the default executor (gRPC's sync stubs release the
GIL), so the event loop never waits on the network; stream messages come
from the same per-kind queues the sync client fills. The synchronous
`Switch` stays reachable as `.sync` for anything not wrapped here.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Optional

from .device import DigestList, PacketIn, Switch
from .entities import TableEntry
from .pipeline import Pipeline


class AsyncSwitch:
    def __init__(self, sync: Switch):
        self.sync = sync

    @classmethod
    async def open(cls, address: str, pipeline: Optional[Pipeline] = None, **kw: Any) -> "AsyncSwitch":
        sw = await asyncio.to_thread(Switch.connect, address, pipeline, **kw)
        return cls(sw)

    @classmethod
    def connect(cls, address: str, pipeline: Optional[Pipeline] = None, **kw: Any) -> "_Opener":
        return _Opener(address, pipeline, kw)

    async def close(self) -> None:
        await asyncio.to_thread(self.sync.close)

    async def insert(self, *objs: Any) -> None:
        await asyncio.to_thread(self.sync.insert, *objs)

    async def modify(self, *objs: Any) -> None:
        await asyncio.to_thread(self.sync.modify, *objs)

    async def delete(self, *objs: Any) -> None:
        await asyncio.to_thread(self.sync.delete, *objs)

    async def entries(self, table: str, with_counters: bool = False) -> list[TableEntry]:
        return await asyncio.to_thread(self.sync.table(table).entries, with_counters)

    async def counter(self, name: str, index: int):
        return await asyncio.to_thread(self.sync.counter(name).__getitem__, index)

    async def digest_stream(self, poll_s: float = 0.1) -> AsyncIterator[DigestList]:
        """Digest lists as they arrive (acknowledged), forever."""
        while True:
            for dl in await asyncio.to_thread(self.sync.digests, poll_s):
                yield dl

    async def packet_in_stream(self, poll_s: float = 0.1) -> AsyncIterator[PacketIn]:
        while True:
            for p in await asyncio.to_thread(self.sync.packet_ins, poll_s):
                yield p

    async def packet_out(self, payload: bytes, **metadata: Any) -> None:
        await asyncio.to_thread(self.sync.packet_out, payload, **metadata)


class _Opener:
    """`async with AsyncSwitch.connect(...) as sw:` support."""

    def __init__(self, address: str, pipeline: Optional[Pipeline], kw: dict):
        self.args = (address, pipeline, kw)
        self.sw: Optional[AsyncSwitch] = None

    async def __aenter__(self) -> AsyncSwitch:
        address, pipeline, kw = self.args
        self.sw = await AsyncSwitch.open(address, pipeline, **kw)
        return self.sw

    async def __aexit__(self, *exc: Any) -> None:
        if self.sw is not None:
            await self.sw.close()
