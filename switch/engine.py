"""The adapter between the P4Runtime layer and the dataplane engine.

`EngineAdapter` is the whole interface the switch uses; `DataplaneEngine`
implements it over `p4scope_dataplane.Engine` (the Rust engine's Python
module). Tables, counters, meters and registers are addressed by their BMv2
JSON names; table entries by the handle the engine returned.

The engine ships with the package at the same version, so every call here
is always there (no capability probing); action profiles and selectors are
reached through `raw` (p4runtime/action_profiles.py).

The adapter is not thread-safe; the device serialises every call with its
lock (the engine itself is a single-threaded object).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence

from .p4runtime.errors import P4RuntimeError, exhausted, internal, invalid


class EngineAdapter(Protocol):
    """What the switch needs from an engine (names are BMv2 JSON names)."""

    @property
    def raw(self) -> Any:
        """The engine object itself (action profiles, the traffic manager)."""

    # tables; key items: ("exact", bytes) ("lpm", bytes, plen) ("ternary", bytes, mask)
    # ("range", lo, hi); priority: lower number wins (BMv2)
    def table_add(self, table: str, action: str, key: Sequence[tuple], args: Sequence[int],
                  priority: int) -> int: ...
    def table_add_many(self, table: str, entries: Sequence[tuple]) -> list:
        """Entries given as (action, key, args, priority), as table_add takes
        them: a handle or a P4RuntimeError each, in order (only the refused
        ones are not added)."""
    def table_modify(self, table: str, handle: int, action: str, args: Sequence[int]) -> None: ...
    def table_delete(self, table: str, handle: int) -> None: ...
    def table_set_default(self, table: str, action: str, args: Sequence[int]) -> None: ...
    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]: ...
    def direct_counter_write(self, table: str, handle: int, nbytes: int, packets: int) -> None: ...
    def direct_meter_set_rates(self, table: str, handle: int,
                               rates: Sequence[tuple[float, int]]) -> None: ...
    # indexed externs
    def counter_read(self, name: str, index: int) -> tuple[int, int]: ...
    def counter_write(self, name: str, index: int, nbytes: int, packets: int) -> None: ...
    def register_read(self, name: str, index: int) -> int: ...
    def register_write(self, name: str, index: int, value: int) -> None: ...
    def meter_set_rates(self, name: str, index: Optional[int],
                        rates: Sequence[tuple[float, int]]) -> None: ...
    # PRE and mirroring
    def mc_group_create(self, mgid: int) -> None: ...
    def mc_group_destroy(self, mgid: int) -> None: ...
    def mc_node_create(self, rid: int, ports: Sequence[int]) -> int: ...
    def mc_node_update(self, node: int, ports: Sequence[int]) -> None: ...
    def mc_node_destroy(self, node: int) -> None: ...
    def mc_node_associate(self, mgid: int, node: int) -> None: ...
    def mc_node_dissociate(self, mgid: int, node: int) -> None: ...
    def mirroring_add(self, session: int, port: Optional[int], mgid: Optional[int]) -> None: ...
    def mirroring_delete(self, session: int) -> None: ...
    # packets
    def process(self, batch: Sequence[tuple[int, bytes, int]]) -> list[tuple[int, bytes, int]]: ...
    def take_digests(self) -> list[tuple[str, list[bytes], int]]: ...
    def take_log(self) -> list[str]: ...


def _engine_module():
    try:
        import p4scope_dataplane  # type: ignore[import-not-found]
    except ImportError as e:  # pragma: no cover - depends on the build
        raise RuntimeError(
            "the p4scope engine (Python module p4scope_dataplane) is not installed; "
            "build it with `maturin develop -r` in dataplane/") from e
    return p4scope_dataplane


def write_codec(tables: dict):
    """The engine's reader of a P4Runtime Write's common table-entry updates
    (p4scope_dataplane.WriteCodec) for `tables`: TableCodec.wire_spec by table id."""
    return _engine_module().WriteCodec(tables)


def engine_available() -> bool:
    try:
        _engine_module()
        return True
    except RuntimeError:
        return False


class DataplaneEngine:
    """EngineAdapter over p4scope_dataplane.Engine."""

    def __init__(self, json_text: str, drop_port: int = 511, priority_queues: int = 1,
                 seed: int = 0):
        mod = _engine_module()
        self._mod = mod
        try:
            self._e = mod.Engine(json_text, drop_port=drop_port,
                                 priority_queues=priority_queues, seed=seed)
        except mod.LoadError as e:
            raise invalid(f"p4_device_config: the engine cannot run this BMv2 JSON: {e}") from None
        except mod.EngineError as e:
            raise invalid(f"p4_device_config: {e}") from None

    @property
    def raw(self) -> Any:
        """The engine object itself (action profiles, the traffic manager, tests)."""
        return self._e

    def _table_error(self, e: Exception) -> P4RuntimeError:
        msg = str(e)
        if "is full" in msg:
            return exhausted(msg)
        return internal(f"engine: {msg}")

    def table_add(self, table, action, key, args, priority):
        try:  # (the engine takes any sequence: no copies)
            return self._e.table_add(table, action, key, args, priority)
        except self._mod.EngineError as e:
            raise self._table_error(e) from None

    def table_add_many(self, table, entries):
        try:
            got = self._e.table_add_many(table, entries)
        except self._mod.EngineError as e:
            raise self._table_error(e) from None
        table_error = self._table_error
        return [h if type(h) is int else table_error(h) for h in got]

    def table_modify(self, table, handle, action, args):
        try:
            self._e.table_modify(table, handle, action, args)
        except self._mod.EngineError as e:
            raise self._table_error(e) from None

    def table_delete(self, table, handle):
        try:
            self._e.table_delete(table, handle)
        except self._mod.EngineError as e:
            raise self._table_error(e) from None

    def table_set_default(self, table, action, args):
        try:
            self._e.table_set_default(table, action, list(args))
        except self._mod.EngineError as e:
            raise self._table_error(e) from None

    def direct_counter_read(self, table, handle):
        return self._e.direct_counter_read(table, handle)

    def direct_counter_write(self, table, handle, nbytes, packets):
        self._e.direct_counter_write(table, handle, nbytes, packets)

    def direct_meter_set_rates(self, table, handle, rates):
        self._e.direct_meter_set_rates(table, handle, list(rates))

    def counter_read(self, name, index):
        return self._e.counter_read(name, index)

    def counter_write(self, name, index, nbytes, packets):
        self._e.counter_write(name, index, nbytes, packets)

    def register_read(self, name, index):
        v = self._e.register_read(name, index)
        return int.from_bytes(v, "big") if isinstance(v, (bytes, bytearray)) else int(v)

    def register_write(self, name, index, value):
        self._e.register_write(name, index, value)

    def meter_set_rates(self, name, index, rates):
        self._e.meter_set_rates(name, index, list(rates))

    def mc_group_create(self, mgid):
        self._e.mc_group_create(mgid)

    def mc_group_destroy(self, mgid):
        self._e.mc_group_destroy(mgid)

    def mc_node_create(self, rid, ports):
        return self._e.mc_node_create(rid, list(ports))

    def mc_node_update(self, node, ports):
        self._e.mc_node_update(node, list(ports))

    def mc_node_destroy(self, node):
        self._e.mc_node_destroy(node)

    def mc_node_associate(self, mgid, node):
        self._e.mc_node_associate(mgid, node)

    def mc_node_dissociate(self, mgid, node):
        self._e.mc_node_dissociate(mgid, node)

    def mirroring_add(self, session, port, mgid):
        self._e.mirroring_add(session, port, mgid)

    def mirroring_delete(self, session):
        self._e.mirroring_delete(session)

    def process(self, batch):
        return self._e.process(list(batch))

    def take_digests(self):
        return self._e.take_digests()

    def take_log(self):
        return self._e.take_log()

    def stats(self) -> dict:
        return self._e.stats()


def check_json(json_text: str) -> None:
    """Raises INVALID_ARGUMENT if the engine cannot load the document."""
    mod = _engine_module()
    try:
        mod.check_json(json_text)
    except mod.EngineError as e:
        raise invalid(f"p4_device_config: the engine cannot run this BMv2 JSON: {e}") from None


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """The engine's start-up settings (from the daemon's command line)."""
    drop_port: int = 511
    priority_queues: int = 1
    seed: int = 0


EngineFactory = Callable[[str, EngineOptions], EngineAdapter]


def default_engine_factory(json_text: str, opts: EngineOptions) -> EngineAdapter:
    return DataplaneEngine(json_text, opts.drop_port, opts.priority_queues, opts.seed)
