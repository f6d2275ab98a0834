"""Counters, registers, meters and parser value sets through BMv2's API.

Indexed counters and registers live in the engine only, so they are read
and written there by their JSON names (what P4Runtime reads too). Meter
rates are remembered in the pipeline's extern manager in P4Runtime units
(per second), so a P4Runtime Read of a MeterEntry shows rates set here.
Value sets go through the pipeline's value set manager (its shadow answers
pvs_get). Register values cross the wire as i64: wider values wrap, as on
BMv2.
"""

from __future__ import annotations

from typing import Optional, Sequence

from finsy.proto import p4r

from ..p4runtime.errors import P4RuntimeError
from .errors import RtError
from .target import EngineState, RuntimeTarget


def _i64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


class RtExterns:
    def __init__(self, target: RuntimeTarget):
        self.target = target

    # ----- counters --------------------------------------------------------

    def _counter(self, name: str):
        es = self.target.state()
        c = es.pipe.prog.counters.get(name)
        if c is None or c.is_direct:
            raise RtError("counter", "INVALID_COUNTER_NAME", f"no indexed counter '{name}'")
        return es, c

    @staticmethod
    def _index(kind: str, arr, index: int) -> int:
        if not 0 <= index < arr.size:
            raise RtError(kind, "INVALID_INDEX", f"index {index} of '{arr.name}' is out of range "
                          f"(size {arr.size})")
        return index

    def counter_read(self, name: str, index: int) -> tuple[int, int]:
        es, c = self._counter(name)
        return es.engine.counter_read(c.name, self._index("counter", c, index))

    def counter_write(self, name: str, index: int, nbytes: int, packets: int) -> None:
        es, c = self._counter(name)
        es.engine.counter_write(c.name, self._index("counter", c, index), max(nbytes, 0),
                                max(packets, 0))

    def counter_reset(self, name: str) -> None:
        es, c = self._counter(name)
        for i in range(c.size):
            es.engine.counter_write(c.name, i, 0, 0)

    # ----- registers ----------------------------------------------------------

    def _register(self, name: str):
        es = self.target.state()
        r = es.pipe.prog.registers.get(name)
        if r is None:
            raise RtError("register", "INVALID_REGISTER_NAME", f"no register '{name}'")
        return es, r

    def register_read(self, name: str, index: int) -> int:
        es, r = self._register(name)
        v = es.engine.register_read(r.name, self._index("register", r, index))
        return _i64(v & ((1 << r.bitwidth) - 1))

    def register_read_all(self, name: str) -> list[int]:
        es, r = self._register(name)
        mask = (1 << r.bitwidth) - 1
        return [_i64(es.engine.register_read(r.name, i) & mask) for i in range(r.size)]

    def register_write(self, name: str, index: int, value: int) -> None:
        es, r = self._register(name)
        es.engine.register_write(r.name, self._index("register", r, index),
                                 value & ((1 << r.bitwidth) - 1))

    def register_write_range(self, name: str, start: int, end: int, value: int) -> None:
        es, r = self._register(name)
        if not 0 <= start <= end < r.size:
            raise RtError("register", "INVALID_INDEX", f"range {start}..{end} of '{name}' is out "
                          f"of range (size {r.size})")
        for i in range(start, end + 1):
            es.engine.register_write(r.name, i, value & ((1 << r.bitwidth) - 1))

    def register_reset(self, name: str) -> None:
        es, r = self._register(name)
        es.engine.raw.register_reset(r.name)

    # ----- meters ---------------------------------------------------------------

    def _meter(self, name: str):
        es = self.target.state()
        m = es.pipe.prog.meters.get(name)
        if m is None or m.is_direct:
            raise RtError("meter", "INVALID_METER_NAME", f"no indexed meter '{name}'")
        mid = next((i for i, n in es.pipe.tr.meters.items() if n == m.name), None)
        return es, m, mid

    @staticmethod
    def _rates(rates: Sequence[tuple[float, int]]):
        if len(rates) != 2:
            raise RtError("meter", "BAD_RATES_LIST", "a meter takes two rates (committed, peak)")
        (cir, cb), (pir, pb) = rates
        if cir < 0 or pir < cir:
            raise RtError("meter", "INVALID_INFO_RATE_VALUE", "rates must not decrease")
        if cb < 0 or pb < 0:
            raise RtError("meter", "INVALID_BURST_SIZE_VALUE", "negative burst size")
        return p4r.MeterConfig(cir=round(cir * 1e6), cburst=cb, pir=round(pir * 1e6), pburst=pb)

    def meter_set_rates(self, name: str, index: Optional[int],
                        rates: Sequence[tuple[float, int]]) -> None:
        es, m, mid = self._meter(name)
        cfg = self._rates(rates)
        cells = range(m.size) if index is None else [self._index("meter", m, index)]
        es.engine.meter_set_rates(m.name, index, [(float(r), int(b)) for r, b in rates])
        if mid is not None:
            raw = cfg.SerializeToString()
            for i in cells:
                es.pipe.externs.meter_configs[(mid, i)] = raw

    def meter_get_rates(self, name: str, index: int) -> list[tuple[float, int]]:
        es, m, mid = self._meter(name)
        self._index("meter", m, index)
        raw = es.pipe.externs.meter_configs.get((mid, index)) if mid is not None else None
        if raw is None:
            return []
        cfg = p4r.MeterConfig()
        cfg.ParseFromString(raw)
        return [(cfg.cir / 1e6, cfg.cburst), (cfg.pir / 1e6, cfg.pburst)]

    # ----- parser value sets -----------------------------------------------------

    def _vset(self, name: str) -> tuple[EngineState, int, int]:
        es = self.target.state()
        vid = next((i for i, n in es.pipe.tr.value_sets.items() if n == name), None)
        if vid is None:
            raise RtError("vset", "INVALID_PARSE_VSET_NAME", f"no parser value set '{name}'")
        return es, vid, es.pipe.schema.value_sets.by_id[vid].fields[0].bitwidth

    def vset_get(self, name: str) -> list[bytes]:
        es, vid, w = self._vset(name)
        return [k[0].to_bytes((w + 7) // 8, "big") for k in es.pipe.value_sets.members[vid]]

    def _vset_write(self, es: EngineState, vid: int, values: list[int]) -> None:
        ve = p4r.ValueSetEntry(value_set_id=vid)
        info = es.pipe.schema.value_sets.by_id[vid]
        for v in values:
            ve.members.add().match.add(field_id=info.fields[0].id).exact.value = \
                v.to_bytes(max((v.bit_length() + 7) // 8, 1), "big")
        try:
            es.pipe.value_sets.write(p4r.Update.MODIFY, ve, "pvs")
        except P4RuntimeError as e:
            raise RtError("vset", "ERROR", e.message) from None

    def vset_add(self, name: str, value: bytes) -> None:
        es, vid, w = self._vset(name)
        v = int.from_bytes(value, "big") & ((1 << w) - 1)
        cur = [k[0] for k in es.pipe.value_sets.members[vid]]
        if v not in cur:
            self._vset_write(es, vid, cur + [v])

    def vset_remove(self, name: str, value: bytes) -> None:
        es, vid, w = self._vset(name)
        v = int.from_bytes(value, "big") & ((1 << w) - 1)
        cur = [k[0] for k in es.pipe.value_sets.members[vid]]
        if v in cur:
            self._vset_write(es, vid, [x for x in cur if x != v])

    def vset_clear(self, name: str) -> None:
        es, vid, _ = self._vset(name)
        if es.pipe.value_sets.members[vid]:
            self._vset_write(es, vid, [])
