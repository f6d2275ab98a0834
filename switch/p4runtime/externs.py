"""Counters, meters and registers (indexed and direct).

Indexed counters and meters only accept MODIFY (INSERT and DELETE are
INVALID_ARGUMENT); an unset index means every cell, for writes and reads.
Registers are read AND written here (PI refuses both with UNIMPLEMENTED):
`RegisterEntry.data` is a P4Data bitstring of the register's width.
Meter rates are given in units per second (bytes or packets as the P4Info
unit says) and bursts in units; the engine wants units per microsecond.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from finsy.proto import p4i, p4r

from .codec import from_sint, from_uint, to_sint, to_uint
from .errors import invalid, out_of_range, unimplemented

if TYPE_CHECKING:
    from .pipeline import ForwardingPipeline

MODIFY = p4r.Update.MODIFY
# the engine has no "unconfigured" reset: rates this high never mark a packet
_GREEN_RATES = [(1e15, 1 << 62), (1e15, 1 << 62)]


def _indices(msg, size: int, where: str) -> Iterator[int]:
    """The cells an entity names: its index, or every cell when unset."""
    if not msg.HasField("index"):
        yield from range(size)
        return
    i = msg.index.index
    if i < 0:
        raise invalid(f"{where}.index: {i} is negative")
    if i >= size:
        raise out_of_range(f"{where}.index: {i} is out of range (the array has {size} cells)")
    yield i


class ExternManager:
    def __init__(self, pipe: "ForwardingPipeline"):
        self.pipe = pipe
        self.schema = pipe.schema
        self.engine = pipe.engine
        self.tr = pipe.tr
        # meter configs written by the client: (meter id, index) -> serialized MeterConfig
        self.meter_configs: dict[tuple[int, int], bytes] = {}

    @staticmethod
    def _only_modify(utype: int, what: str, where: str) -> None:
        if utype != MODIFY:
            raise invalid(f"{where}: {what} entries can only be modified (MODIFY), not "
                          f"{p4r.Update.Type.Name(utype) if utype in (0, 1, 2, 3) else utype}")

    # ----- indexed counters -----------------------------------------------

    def _counter(self, cid: int, where: str):
        info = self.schema.counters.get(cid)
        if info is None:
            raise invalid(f"{where}.counter_id: {cid} is not a counter of the P4Info"
                          + self._kind_hint(cid))
        return info

    def _kind_hint(self, id_: int) -> str:
        k = self.schema.kind_of(id_)
        return f" (it is a {k})" if k != "unknown id" else ""

    def write_counter(self, utype: int, ce, where: str = "counter_entry") -> None:
        info = self._counter(ce.counter_id, where)
        self._only_modify(utype, "counter", where)
        idx = list(_indices(ce, info.size, where))
        if not ce.HasField("data"):
            return
        name = self.tr.json_name(self.tr.counters, info.id, where)
        b, p = ce.data.byte_count, ce.data.packet_count
        if b < 0 or p < 0:
            raise invalid(f"{where}.data: counts must not be negative")
        for i in idx:
            self.engine.counter_write(name, i, b, p)

    def read_counter(self, ce, out, where: str = "counter_entry") -> None:
        infos = [self._counter(ce.counter_id, where)] if ce.counter_id else [
            c for c in self.schema.counters if c.id in self.tr.counters]
        for info in infos:
            name = self.tr.json_name(self.tr.counters, info.id, where)
            for i in _indices(ce, info.size, where):
                b, p = self.engine.counter_read(name, i)
                msg = out.add().counter_entry
                msg.counter_id = info.id
                msg.index.index = i
                self._fill_counter(info.unit, b, p, msg.data)

    @staticmethod
    def _fill_counter(unit: int, b: int, p: int, data) -> None:
        if unit in (p4i.CounterSpec.BYTES, p4i.CounterSpec.BOTH, p4i.CounterSpec.UNSPECIFIED):
            data.byte_count = b
        if unit in (p4i.CounterSpec.PACKETS, p4i.CounterSpec.BOTH, p4i.CounterSpec.UNSPECIFIED):
            data.packet_count = p

    # ----- direct counters --------------------------------------------------

    def write_direct_counter(self, utype: int, dce, where: str = "direct_counter_entry") -> None:
        self._only_modify(utype, "direct counter", where)
        tables = self.pipe.tables
        st, e = tables.find(dce.table_entry, f"{where}.table_entry")
        if not st.map.info.direct_counter_id:
            raise invalid(f"{where}.table_entry: table '{st.map.info.name}' has no direct counter")
        if dce.HasField("data"):
            tables._set_counter(st, e, dce.data)

    def _direct_targets(self, te, id_attr: str, what: str, where: str) -> list:
        """The (table state, entry) pairs a direct counter/meter read names:
        every entry of every table with one (table_id 0), every entry of one
        table (no match given), or one entry."""
        tables = self.pipe.tables
        if te.table_id == 0:
            return [(s, e) for s in tables.tables.values() if getattr(s.map.info, id_attr)
                    for e in s.entries.values()]
        if len(te.match) == 0 and not te.is_default_action:
            st = tables.state(te.table_id, f"{where}.table_entry")
            entries = list(st.entries.values())
        else:
            st, e = tables.find(te, f"{where}.table_entry")
            entries = [e]
        if not getattr(st.map.info, id_attr):
            raise invalid(f"{where}.table_entry: table '{st.map.info.name}' has no direct {what}")
        return [(st, e) for e in entries]

    def read_direct_counter(self, dce, out, where: str = "direct_counter_entry") -> None:
        tables = self.pipe.tables
        te = dce.table_entry
        pairs = self._direct_targets(te, "direct_counter_id", "counter", where)
        for st, e in pairs:
            b, p = tables.read_counter(st, e)
            msg = out.add().direct_counter_entry
            tables.entry_key_only(st, e, msg.table_entry)
            unit = self.schema.direct_counters.by_id[st.map.info.direct_counter_id].unit
            self._fill_counter(unit, b, p, msg.data)

    # ----- meters ---------------------------------------------------------------

    def check_meter_config(self, cfg, where: str, mtype: int = p4i.MeterSpec.TWO_RATE_THREE_COLOR):
        for f in ("cir", "cburst", "pir", "pburst", "eburst"):
            if getattr(cfg, f) < 0:
                raise invalid(f"{where}.{f}: {getattr(cfg, f)} is negative")
        if mtype == p4i.MeterSpec.TWO_RATE_THREE_COLOR:
            if cfg.eburst:
                raise invalid(f"{where}.eburst: only single-rate three-colour meters take an "
                              "excess burst")
            if cfg.pir < cfg.cir:
                raise invalid(f"{where}: pir {cfg.pir} is lower than cir {cfg.cir}")
        else:
            if cfg.pir != cfg.cir or cfg.pburst != cfg.cburst:
                raise invalid(f"{where}: a single-rate meter needs pir == cir and pburst == cburst")
            if mtype == p4i.MeterSpec.SINGLE_RATE_TWO_COLOR and cfg.eburst:
                raise invalid(f"{where}.eburst: a two-colour meter takes no excess burst")
            if mtype == p4i.MeterSpec.SINGLE_RATE_THREE_COLOR:
                raise unimplemented(f"{where}: single-rate three-colour meters are not "
                                    "supported by the engine (BMv2 meters are two-rate)")

    @staticmethod
    def meter_rates(cfg) -> list[tuple[float, int]]:
        """Engine rates [(committed/us, burst), (peak/us, burst)]; None: always GREEN."""
        if cfg is None:
            return list(_GREEN_RATES)
        return [(cfg.cir / 1e6, cfg.cburst), (cfg.pir / 1e6, cfg.pburst)]

    def _meter(self, mid: int, where: str):
        info = self.schema.meters.get(mid)
        if info is None:
            raise invalid(f"{where}.meter_id: {mid} is not a meter of the P4Info"
                          + self._kind_hint(mid))
        return info

    def write_meter(self, utype: int, me, where: str = "meter_entry") -> None:
        info = self._meter(me.meter_id, where)
        self._only_modify(utype, "meter", where)
        if me.HasField("counter_data"):
            raise unimplemented(f"{where}.counter_data: per-colour meter counters are not "
                                "supported")
        idx = list(_indices(me, info.size, where))
        cfg = me.config if me.HasField("config") else None
        if cfg is not None:
            self.check_meter_config(cfg, f"{where}.config", info.type)
        name = self.tr.json_name(self.tr.meters, info.id, where)
        rates = self.meter_rates(cfg)
        if not me.HasField("index"):
            self.engine.meter_set_rates(name, None, rates)
        for i in idx:
            if me.HasField("index"):
                self.engine.meter_set_rates(name, i, rates)
            if cfg is None:
                self.meter_configs.pop((info.id, i), None)
            else:
                self.meter_configs[(info.id, i)] = cfg.SerializeToString()

    def read_meter(self, me, out, where: str = "meter_entry") -> None:
        if me.HasField("counter_data"):
            raise unimplemented(f"{where}.counter_data: per-colour meter counters are not "
                                "supported")
        infos = [self._meter(me.meter_id, where)] if me.meter_id else list(self.schema.meters)
        for info in infos:
            for i in _indices(me, info.size, where):
                msg = out.add().meter_entry
                msg.meter_id = info.id
                msg.index.index = i
                raw = self.meter_configs.get((info.id, i))
                if raw is not None:
                    msg.config.ParseFromString(raw)

    # ----- direct meters ---------------------------------------------------------

    def write_direct_meter(self, utype: int, dme, where: str = "direct_meter_entry") -> None:
        self._only_modify(utype, "direct meter", where)
        tables = self.pipe.tables
        st, e = tables.find(dme.table_entry, f"{where}.table_entry")
        info = st.map.info
        if not info.direct_meter_id:
            raise invalid(f"{where}.table_entry: table '{info.name}' has no direct meter")
        if dme.HasField("counter_data"):
            raise unimplemented(f"{where}.counter_data: per-colour meter counters are not "
                                "supported")
        cfg = dme.config if dme.HasField("config") else None
        if cfg is not None:
            mtype = self.schema.direct_meters.by_id[info.direct_meter_id].type
            self.check_meter_config(cfg, f"{where}.config", mtype)
        tables._set_meter(st, e, cfg)

    def read_direct_meter(self, dme, out, where: str = "direct_meter_entry") -> None:
        tables = self.pipe.tables
        te = dme.table_entry
        if dme.HasField("counter_data"):
            raise unimplemented(f"{where}.counter_data: per-colour meter counters are not "
                                "supported")
        pairs = self._direct_targets(te, "direct_meter_id", "meter", where)
        for st, e in pairs:
            msg = out.add().direct_meter_entry
            tables.entry_key_only(st, e, msg.table_entry)
            if e.meter_config is not None:
                msg.config.ParseFromString(e.meter_config)

    # ----- registers ----------------------------------------------------------

    def _register(self, rid: int, where: str):
        info = self.schema.registers.get(rid)
        if info is None:
            raise invalid(f"{where}.register_id: {rid} is not a register of the P4Info"
                          + self._kind_hint(rid))
        if info.bitwidth <= 0:
            raise unimplemented(f"{where}: register '{info.name}' does not hold a bit<W>/int<W>")
        return info

    def write_register(self, utype: int, re, where: str = "register_entry") -> None:
        info = self._register(re.register_id, where)
        self._only_modify(utype, "register", where)
        idx = list(_indices(re, info.size, where))
        if not re.HasField("data"):
            raise invalid(f"{where}.data: a register write needs data")
        kind = re.data.WhichOneof("data")
        if kind != "bitstring":
            raise invalid(f"{where}.data: register '{info.name}' holds a bitstring, the request "
                          f"gives {kind or 'nothing'}")
        if info.signed:
            v = to_sint(re.data.bitstring, info.bitwidth, f"{where}.data.bitstring")
            v &= (1 << info.bitwidth) - 1
        else:
            v = to_uint(re.data.bitstring, info.bitwidth, f"{where}.data.bitstring")
        name = self.tr.json_name(self.tr.registers, info.id, where)
        for i in idx:
            self.engine.register_write(name, i, v)

    def read_register(self, re, out, where: str = "register_entry") -> None:
        infos = [self._register(re.register_id, where)] if re.register_id else [
            r for r in self.schema.registers if r.bitwidth > 0 and r.id in self.tr.registers]
        for info in infos:
            name = self.tr.json_name(self.tr.registers, info.id, where)
            w = info.bitwidth
            for i in _indices(re, info.size, where):
                v = self.engine.register_read(name, i) & ((1 << w) - 1)
                msg = out.add().register_entry
                msg.register_id = info.id
                msg.index.index = i
                if info.signed:
                    if v >> (w - 1):
                        v -= 1 << w
                    msg.data.bitstring = from_sint(v)
                else:
                    msg.data.bitstring = from_uint(v)

