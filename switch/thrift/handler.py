"""The Thrift handlers of BMv2's run-time services over one Device.

`RuntimeApi` builds one handler per multiplexed service ("standard",
"simple_pre_lag", "simple_pre", "simple_switch"). Each call runs under the
device lock (P4Runtime writes and packets wait, as the engine is single
threaded), turns Thrift structs into the plain values of the rt_* modules
and their RtError into the service's declared exception. Anything else
becomes a Thrift application error for that call only: the connection and
the switch carry on.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from .errors import RtError
from .externs import RtExterns
from .idl import bm
from .pre import RtPre
from .tables import MtEntry, RtTables
from .target import NoProgram, RuntimeTarget

if TYPE_CHECKING:
    from ..device import Device

log = logging.getLogger("p4scope.switch.runtime")

_EXC = {
    "table": ("InvalidTableOperation", "TableOperationErrorCode"),
    "counter": ("InvalidCounterOperation", "CounterOperationErrorCode"),
    "meter": ("InvalidMeterOperation", "MeterOperationErrorCode"),
    "register": ("InvalidRegisterOperation", "RegisterOperationErrorCode"),
    "mc": ("InvalidMcOperation", "McOperationErrorCode"),
    "mirroring": ("InvalidMirroringOperation", "MirroringOperationErrorCode"),
    "devmgr": ("InvalidDevMgrOperation", "DevMgrErrorCode"),
    "vset": ("InvalidParseVSetOperation", "ParseVSetOperationErrorCode"),
    "learn": ("InvalidLearnOperation", "LearnOperationErrorCode"),
    "swap": ("InvalidSwapOperation", "SwapOperationErrorCode"),
    "crc": ("InvalidCrcOperation", "CrcErrorCode"),
    "toeplitz": ("InvalidToeplitzHashOperation", "ToeplitzHashErrorCode"),
    "idlookup": ("InvalidIdLookup", "IdLookupErrorCode"),
}
# error code when the switch runs no program, per kind
_NO_PROGRAM = {"table": "INVALID_TABLE_NAME", "counter": "INVALID_COUNTER_NAME",
               "meter": "INVALID_METER_NAME", "register": "INVALID_REGISTER_NAME",
               "vset": "INVALID_PARSE_VSET_NAME", "learn": "INVALID_LIST_ID",
               "idlookup": "INVALID_RESOURCE_NAME"}


def thrift_error(e: RtError) -> Exception:
    m = bm()
    exc, enum = _EXC[e.kind]
    codes = getattr(m, enum)
    return getattr(m, exc)(code=getattr(codes, e.code, getattr(codes, "ERROR", 1)))


def i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def api(kind: Optional[str]):
    """Runs a handler method under the device lock with BMv2's error mapping."""
    def wrap(f):
        @functools.wraps(f)
        def call(self, *args):
            from thriftpy2.thrift import TApplicationException
            try:
                with self.runtime.device.lock:
                    return f(self, *args)
            except RtError as e:
                log.info("%s: %s", f.__name__, e)
                raise thrift_error(e) from None
            except NoProgram as e:
                if kind is None:
                    raise TApplicationException(TApplicationException.INTERNAL_ERROR,
                                                str(e)) from None
                raise thrift_error(RtError(kind, _NO_PROGRAM.get(kind, "ERROR"), str(e))) from None
            except TApplicationException:
                raise
            except Exception as e:  # a bug must not end the connection or the switch
                log.exception("run-time API call %s failed", f.__name__)
                raise TApplicationException(TApplicationException.INTERNAL_ERROR,
                                            f"{f.__name__}: internal error: {e!r}") from None
        return call
    return wrap


@dataclass
class PortsView:
    """What the daemon tells the API about its ports (show_ports, port_add)."""
    list: Callable[[], list[tuple[int, str, bool]]] = lambda: []
    add: Optional[Callable[[str, int, str], None]] = None
    remove: Optional[Callable[[int], None]] = None


@dataclass
class RuntimeApi:
    device: "Device"
    thrift_port: int = 9090
    ports: PortsView = field(default_factory=PortsView)
    max_l1: int = 4096
    max_groups: int = 65536

    def __post_init__(self):
        self.target = RuntimeTarget(self.device)
        self.tables = RtTables(self.target)
        self.externs = RtExterns(self.target)
        self.pre = RtPre(self.target, self.max_l1, self.max_groups)
        self.started_ns = time.monotonic_ns()
        self.pending_config: Optional[str] = None

    def handlers(self) -> dict[str, object]:
        """Multiplexed service name -> handler."""
        pre_lag = PreHandler(self, lags=True)
        return {"standard": StandardHandler(self), "simple_pre_lag": pre_lag,
                "simple_pre": PreHandler(self, lags=False), "simple_switch": SwitchHandler(self)}


# ----- conversions -------------------------------------------------------------

def _params(match_key) -> list[tuple]:
    out = []
    for p in match_key or []:
        t = p.type
        if t == 0 and p.exact is not None:
            out.append(("exact", p.exact.key or b""))
        elif t == 1 and p.lpm is not None:
            out.append(("lpm", p.lpm.key or b"", p.lpm.prefix_length or 0))
        elif t == 2 and p.ternary is not None:
            out.append(("ternary", p.ternary.key or b"", p.ternary.mask or b""))
        elif t == 3 and p.valid is not None:
            out.append(("valid", bool(p.valid.key)))
        elif t == 4 and p.range is not None:
            out.append(("range", p.range.start or b"", p.range.end_ or b""))
        else:
            raise RtError("table", "BAD_MATCH_KEY", f"match parameter of type {t} has no value")
    return out


def _to_params(key: list[tuple]) -> list:
    m = bm()
    out = []
    for k in key:
        kind = k[0]
        if kind == "exact":
            out.append(m.BmMatchParam(type=0, exact=m.BmMatchParamExact(key=k[1])))
        elif kind == "lpm":
            out.append(m.BmMatchParam(type=1, lpm=m.BmMatchParamLPM(key=k[1], prefix_length=k[2])))
        elif kind == "ternary":
            out.append(m.BmMatchParam(type=2, ternary=m.BmMatchParamTernary(key=k[1], mask=k[2])))
        elif kind == "valid":
            out.append(m.BmMatchParam(type=3, valid=m.BmMatchParamValid(key=k[1])))
        else:
            out.append(m.BmMatchParam(type=4, range=m.BmMatchParamRange(start=k[1], end_=k[2])))
    return out


def _action_entry(a: tuple):
    m = bm()
    if a[0] == "data":
        return m.BmActionEntry(action_type=1, action_name=a[1], action_data=list(a[2]))
    if a[0] == "member":
        return m.BmActionEntry(action_type=2, mbr_handle=i32(a[1]))
    if a[0] == "group":
        return m.BmActionEntry(action_type=3, grp_handle=i32(a[1]))
    return m.BmActionEntry(action_type=0)


def _mt_entry(e: MtEntry):
    m = bm()
    out = m.BmMtEntry(match_key=_to_params(e.key),
                      options=m.BmAddEntryOptions(priority=e.priority),
                      entry_handle=i32(e.handle), action_entry=_action_entry(e.action))
    if e.life is not None:
        out.life = m.BmMtEntryLife(timeout_ms=i32(e.life[0]), time_since_hit_ms=i32(e.life[1]))
    return out


def _rates_in(rates) -> list[tuple[float, int]]:
    return [(float(r.units_per_micros or 0.0), int(r.burst_size or 0)) for r in rates or []]


def _rates_out(rates) -> list:
    m = bm()
    return [m.BmMeterRateConfig(units_per_micros=r, burst_size=i32(b)) for r, b in rates]


def _prio(options) -> Optional[int]:
    return None if options is None else options.priority


# ----- services ------------------------------------------------------------------

class StandardHandler:
    def __init__(self, runtime: RuntimeApi):
        self.runtime = runtime

    # tables
    @api("table")
    def bm_mt_get_num_entries(self, cxt_id, table_name):
        return self.runtime.tables.num_entries(table_name)

    @api("table")
    def bm_mt_clear_entries(self, cxt_id, table_name, reset_default_entry):
        self.runtime.tables.clear_entries(table_name, bool(reset_default_entry))

    @api("table")
    def bm_mt_add_entry(self, cxt_id, table_name, match_key, action_name, action_data, options):
        return i32(self.runtime.tables.add_entry(table_name, _params(match_key), action_name,
                                            list(action_data or []), _prio(options)))

    @api("table")
    def bm_mt_set_default_action(self, cxt_id, table_name, action_name, action_data):
        self.runtime.tables.set_default(table_name, action_name, list(action_data or []))

    @api("table")
    def bm_mt_reset_default_entry(self, cxt_id, table_name):
        self.runtime.tables.reset_default(table_name)

    @api("table")
    def bm_mt_delete_entry(self, cxt_id, table_name, entry_handle):
        self.runtime.tables.delete_entry(table_name, entry_handle)

    @api("table")
    def bm_mt_modify_entry(self, cxt_id, table_name, entry_handle, action_name, action_data):
        self.runtime.tables.modify_entry(table_name, entry_handle, action_name, list(action_data or []))

    @api("table")
    def bm_mt_set_entry_ttl(self, cxt_id, table_name, entry_handle, timeout_ms):
        self.runtime.tables.set_entry_ttl(table_name, entry_handle, timeout_ms)

    @api("table")
    def bm_mt_read_counter(self, cxt_id, table_name, entry_handle):
        b, p = self.runtime.tables.read_counter(table_name, entry_handle)
        return bm().BmCounterValue(bytes=b, packets=p)

    @api("table")
    def bm_mt_reset_counters(self, cxt_id, table_name):
        self.runtime.tables.reset_counters(table_name)

    @api("table")
    def bm_mt_write_counter(self, cxt_id, table_name, entry_handle, value):
        self.runtime.tables.write_counter(table_name, entry_handle, value.bytes or 0,
                                     value.packets or 0)

    @api("table")
    def bm_mt_set_meter_rates(self, cxt_id, table_name, entry_handle, rates):
        self.runtime.tables.set_meter_rates(table_name, entry_handle, _rates_in(rates))

    @api("table")
    def bm_mt_get_meter_rates(self, cxt_id, table_name, entry_handle):
        return _rates_out(self.runtime.tables.get_meter_rates(table_name, entry_handle))

    @api("table")
    def bm_mt_get_entries(self, cxt_id, table_name):
        return [_mt_entry(e) for e in self.runtime.tables.entries(table_name)]

    @api("table")
    def bm_mt_get_entry(self, cxt_id, table_name, entry_handle):
        return _mt_entry(self.runtime.tables.entry(table_name, entry_handle))

    @api("table")
    def bm_mt_get_default_entry(self, cxt_id, table_name):
        return _action_entry(self.runtime.tables.get_default(table_name))

    @api("table")
    def bm_mt_get_entry_from_key(self, cxt_id, table_name, match_key, options):
        if not match_key:
            out = bm().BmMtEntry()
            out.action_entry = _action_entry(self.runtime.tables.get_default(table_name))
            return out
        return _mt_entry(self.runtime.tables.entry_from_key(table_name, _params(match_key),
                                                       _prio(options)))

    @api("table")
    def bm_mt_act_prof_get_members(self, cxt_id, act_prof_name):
        return []

    @api("table")
    def bm_mt_act_prof_get_groups(self, cxt_id, act_prof_name):
        return []

    @api("table")
    def bm_mt_act_prof_get_member(self, cxt_id, act_prof_name, mbr_handle):
        raise RtError("table", "INVALID_MBR_HANDLE")

    @api("table")
    def bm_mt_act_prof_get_group(self, cxt_id, act_prof_name, grp_handle):
        raise RtError("table", "INVALID_GRP_HANDLE")

    # counters
    @api("counter")
    def bm_counter_read(self, cxt_id, counter_name, index):
        b, p = self.runtime.externs.counter_read(counter_name, index)
        return bm().BmCounterValue(bytes=b, packets=p)

    @api("counter")
    def bm_counter_reset_all(self, cxt_id, counter_name):
        self.runtime.externs.counter_reset(counter_name)

    @api("counter")
    def bm_counter_write(self, cxt_id, counter_name, index, value):
        self.runtime.externs.counter_write(counter_name, index, value.bytes or 0, value.packets or 0)

    # learning: digests go to P4Runtime; the Thrift calls are accepted for known lists
    def _learn_list(self, list_id):
        lists = json.loads(self.runtime.target.config() or "{}").get("learn_lists", [])
        if not any(ll.get("id") == list_id for ll in lists):
            raise RtError("learn", "INVALID_LIST_ID", f"no learn list {list_id}")

    @api("learn")
    def bm_learning_ack(self, cxt_id, list_id, buffer_id, sample_ids):
        self._learn_list(list_id)

    @api("learn")
    def bm_learning_ack_buffer(self, cxt_id, list_id, buffer_id):
        self._learn_list(list_id)

    @api("learn")
    def bm_learning_set_timeout(self, cxt_id, list_id, timeout_ms):
        self._learn_list(list_id)

    @api("learn")
    def bm_learning_set_buffer_size(self, cxt_id, list_id, nb_samples):
        self._learn_list(list_id)

    # configuration swap
    @api("swap")
    def bm_load_new_config(self, config_str):
        from ..engine import check_json
        from ..p4runtime.errors import P4RuntimeError
        try:
            check_json(config_str)
        except P4RuntimeError as e:
            raise RtError("swap", "CONFIG_SWAP_DISABLED", e.message) from None
        self.runtime.pending_config = config_str

    @api("swap")
    def bm_swap_configs(self):
        text = self.runtime.pending_config
        if text is None:
            raise RtError("swap", "NO_ONGOING_SWAP")
        dev = self.runtime.device
        dev.dataplane = dev.engine_factory(text, dev.engine_options)
        dev.startup_json = text
        dev.pipeline = None  # P4Runtime must set its pipeline again, as with PI
        self.runtime.pending_config = None
        self.runtime.target.forget()

    # meters
    @api("meter")
    def bm_meter_array_set_rates(self, cxt_id, meter_array_name, rates):
        self.runtime.externs.meter_set_rates(meter_array_name, None, _rates_in(rates))

    @api("meter")
    def bm_meter_set_rates(self, cxt_id, meter_array_name, index, rates):
        self.runtime.externs.meter_set_rates(meter_array_name, index, _rates_in(rates))

    @api("meter")
    def bm_meter_get_rates(self, cxt_id, meter_array_name, index):
        return _rates_out(self.runtime.externs.meter_get_rates(meter_array_name, index))

    # registers
    @api("register")
    def bm_register_read(self, cxt_id, register_array_name, idx):
        return self.runtime.externs.register_read(register_array_name, idx)

    @api("register")
    def bm_register_read_all(self, cxt_id, register_array_name):
        return self.runtime.externs.register_read_all(register_array_name)

    @api("register")
    def bm_register_write(self, cxt_id, register_array_name, index, value):
        self.runtime.externs.register_write(register_array_name, index, value)

    @api("register")
    def bm_register_write_range(self, cxt_id, register_array_name, start_index, end_index, value):
        self.runtime.externs.register_write_range(register_array_name, start_index, end_index, value)

    @api("register")
    def bm_register_reset(self, cxt_id, register_array_name):
        self.runtime.externs.register_reset(register_array_name)

    # parser value sets
    @api("vset")
    def bm_parse_vset_add(self, cxt_id, parse_vset_name, value):
        self.runtime.externs.vset_add(parse_vset_name, value or b"")

    @api("vset")
    def bm_parse_vset_remove(self, cxt_id, parse_vset_name, value):
        self.runtime.externs.vset_remove(parse_vset_name, value or b"")

    @api("vset")
    def bm_parse_vset_get(self, cxt_id, parse_vset_name):
        return self.runtime.externs.vset_get(parse_vset_name)

    @api("vset")
    def bm_parse_vset_clear(self, cxt_id, parse_vset_name):
        self.runtime.externs.vset_clear(parse_vset_name)

    # device manager
    @api("devmgr")
    def bm_dev_mgr_add_port(self, iface_name, port_num, pcap_path):
        if self.runtime.ports.add is None:
            raise RtError("devmgr", "ERROR", "ports cannot be added to this switch at run time")
        self.runtime.ports.add(iface_name, port_num, pcap_path or "")

    @api("devmgr")
    def bm_dev_mgr_remove_port(self, port_num):
        if self.runtime.ports.remove is None:
            raise RtError("devmgr", "ERROR", "ports cannot be removed from this switch at run time")
        self.runtime.ports.remove(port_num)

    @api("devmgr")
    def bm_dev_mgr_show_ports(self):
        m = bm()
        return [m.DevMgrPortInfo(port_num=p, iface_name=name, is_up=up, extra={})
                for p, name, up in self.runtime.ports.list()]

    # management
    @api(None)
    def bm_mgmt_get_info(self):
        return bm().BmConfig(device_id=self.runtime.device.device_id, thrift_port=self.runtime.thrift_port)

    @api("crc")
    def bm_set_crc16_custom_parameters(self, cxt_id, calc_name, crc16_config):
        self._crc(calc_name, "crc16_custom")

    @api("crc")
    def bm_set_crc32_custom_parameters(self, cxt_id, calc_name, crc32_config):
        self._crc(calc_name, "crc32_custom")

    def _crc(self, name: str, algo: str) -> None:
        calcs = {c.get("name"): c.get("algo") for c in
                 json.loads(self.runtime.target.config() or "{}").get("calculations", [])}
        if name not in calcs:
            raise RtError("crc", "INVALID_CALCULATION_NAME", f"no calculation '{name}'")
        if calcs[name] != algo:
            raise RtError("crc", "WRONG_TYPE_CALCULATION", f"'{name}' is not {algo}")
        raise RtError("crc", "INVALID_CONFIG", "the engine cannot change custom CRC parameters")

    @api("toeplitz")
    def bm_set_toeplitz_hash_key(self, cxt_id, calc_name, key):
        raise RtError("toeplitz", "INVALID_CALCULATION_NAME",
                      "the engine cannot change Toeplitz keys")

    @api(None)
    def bm_reset_state(self):
        """Empties tables, registers, counters, PRE and sessions; keeps the program."""
        dev = self.runtime.device
        if dev.dataplane is None:
            return
        p = dev.pipeline
        if p is not None and p.engine is dev.dataplane:
            from ..p4runtime.pipeline import ForwardingPipeline
            new = ForwardingPipeline(p.p4info, p.json_text, device_config=p.device_config, cookie=p.cookie,
                           options=dev.engine_options, engine_factory=dev.engine_factory)
            dev._install(new)
            dev._commit(new)
        else:
            text = self.runtime.target.json_of(dev.dataplane)
            dev.dataplane = dev.engine_factory(text, dev.engine_options)
        self.runtime.target.forget()

    @api(None)
    def bm_get_config(self):
        return self.runtime.target.config()

    @api(None)
    def bm_get_config_md5(self):
        return self.runtime.target.config_md5()

    @api("idlookup")
    def bm_get_id_from_name(self, cxt_id, resource_type, resource_name):
        doc = json.loads(self.runtime.target.config() or "{}")
        pipes = doc.get("pipelines", [])
        groups = {0: [t for p in pipes for t in p.get("tables", [])],
                  1: [a for p in pipes for a in p.get("action_profiles", [])],
                  2: doc.get("counter_arrays", []), 3: doc.get("meter_arrays", []),
                  4: doc.get("register_arrays", []), 5: doc.get("learn_lists", [])}
        if resource_type not in groups:
            raise RtError("idlookup", "INVALID_RESOURCE_TYPE")
        for obj in groups[resource_type]:
            if obj.get("name") == resource_name:
                return int(obj.get("id", 0))
        raise RtError("idlookup", "INVALID_RESOURCE_NAME", f"no resource '{resource_name}'")

    @api(None)
    def bm_serialize_state(self):
        return ""


_UNSUPPORTED_PROFILE_CALLS = (
    "bm_mt_act_prof_add_member", "bm_mt_act_prof_delete_member", "bm_mt_act_prof_modify_member",
    "bm_mt_act_prof_create_group", "bm_mt_act_prof_delete_group",
    "bm_mt_act_prof_add_member_to_group", "bm_mt_act_prof_remove_member_from_group",
    "bm_mt_indirect_add_entry", "bm_mt_indirect_modify_entry", "bm_mt_indirect_delete_entry",
    "bm_mt_indirect_set_entry_ttl", "bm_mt_indirect_set_default_member",
    "bm_mt_indirect_reset_default_entry", "bm_mt_indirect_ws_add_entry",
    "bm_mt_indirect_ws_modify_entry", "bm_mt_indirect_ws_set_default_group")


def _profiles_unsupported(self, *args):
    raise RtError("table", "ERROR", "action profiles are not supported by the run-time API yet "
                  "(use P4Runtime)")


for _name in _UNSUPPORTED_PROFILE_CALLS:
    setattr(StandardHandler, _name, api("table")(_profiles_unsupported))


class PreHandler:
    """simple_pre_lag (with LAG maps) and simple_pre (without)."""

    def __init__(self, runtime: RuntimeApi, lags: bool):
        self.runtime = runtime
        self.lags = lags

    @api("mc")
    def bm_mc_mgrp_create(self, cxt_id, mgrp):
        return self.runtime.pre.mgrp_create(mgrp)

    @api("mc")
    def bm_mc_mgrp_destroy(self, cxt_id, mgrp_handle):
        self.runtime.pre.mgrp_destroy(mgrp_handle)

    @api("mc")
    def bm_mc_node_create(self, cxt_id, rid, port_map, lag_map=None):
        return self.runtime.pre.node_create(rid, port_map or "", lag_map if self.lags else None)

    @api("mc")
    def bm_mc_node_associate(self, cxt_id, mgrp_handle, l1_handle):
        self.runtime.pre.node_associate(mgrp_handle, l1_handle)

    @api("mc")
    def bm_mc_node_dissociate(self, cxt_id, mgrp_handle, l1_handle):
        self.runtime.pre.node_dissociate(mgrp_handle, l1_handle)

    @api("mc")
    def bm_mc_node_destroy(self, cxt_id, l1_handle):
        self.runtime.pre.node_destroy(l1_handle)

    @api("mc")
    def bm_mc_node_update(self, cxt_id, l1_handle, port_map, lag_map=None):
        self.runtime.pre.node_update(l1_handle, port_map or "", lag_map if self.lags else None)

    @api("mc")
    def bm_mc_set_lag_membership(self, cxt_id, lag_index, port_map):
        self.runtime.pre.set_lag_membership(lag_index, port_map or "")

    @api("mc")
    def bm_mc_get_entries(self, cxt_id):
        return self.runtime.pre.entries_json()


class SwitchHandler:
    """simple_switch: mirroring sessions, egress queues, clocks."""

    def __init__(self, runtime: RuntimeApi):
        self.runtime = runtime

    @api(None)
    def mirroring_mapping_add(self, mirror_id, egress_port):
        return 0 if self.runtime.pre.mirroring_add(mirror_id, egress_port, None) else 1

    @api(None)
    def mirroring_mapping_delete(self, mirror_id):
        return 0 if self.runtime.pre.mirroring_delete(mirror_id) else 1

    @api(None)
    def mirroring_mapping_get_egress_port(self, mirror_id):
        s = self.runtime.pre.mirroring_get(mirror_id)
        return s[0] if s is not None and s[0] is not None else -1

    @api("mirroring")
    def mirroring_session_add(self, mirror_id, config):
        self.runtime.pre.mirroring_add(mirror_id, config.port, config.mgid)

    @api("mirroring")
    def mirroring_session_delete(self, mirror_id):
        if not self.runtime.pre.mirroring_delete(mirror_id):
            raise RtError("mirroring", "SESSION_NOT_FOUND", f"no mirroring session {mirror_id}")

    @api("mirroring")
    def mirroring_session_get(self, mirror_id):
        s = self.runtime.pre.mirroring_get(mirror_id)
        if s is None:
            raise RtError("mirroring", "SESSION_NOT_FOUND", f"no mirroring session {mirror_id}")
        return bm().MirroringSessionConfig(port=s[0], mgid=s[1])

    def _queue(self, kind, value, port, prio) -> int:
        if value < 0:
            return 1
        self.runtime.target.queue(kind, value, port, prio)
        return 0

    @api(None)
    def set_egress_priority_queue_depth(self, port_num, priority, depth_pkts):
        return self._queue("depth", depth_pkts, port_num, priority)

    @api(None)
    def set_egress_queue_depth(self, port_num, depth_pkts):
        return self._queue("depth", depth_pkts, port_num, None)

    @api(None)
    def set_all_egress_queue_depths(self, depth_pkts):
        return self._queue("depth", depth_pkts, None, None)

    @api(None)
    def set_egress_priority_queue_rate(self, port_num, priority, rate_pps):
        return self._queue("rate", rate_pps, port_num, priority)

    @api(None)
    def set_egress_queue_rate(self, port_num, rate_pps):
        return self._queue("rate", rate_pps, port_num, None)

    @api(None)
    def set_all_egress_queue_rates(self, rate_pps):
        return self._queue("rate", rate_pps, None, None)

    @api(None)
    def get_time_elapsed_us(self):
        return self.runtime.device.now_ns() // 1000

    @api(None)
    def get_time_since_epoch_us(self):
        return time.time_ns() // 1000
