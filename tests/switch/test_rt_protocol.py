"""The run-time server's checked binary-protocol reader decodes what
Thrift clients send exactly as thriftpy2 does, and refuses types the
protocol does not define and container sizes that cannot be real."""

from __future__ import annotations

import struct

import pytest
from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.protocol.exc import TProtocolException
from thriftpy2.thrift import TType
from thriftpy2.transport.memory import TMemoryBuffer

from p4scope.switch.thrift.protocol import CONTAINER_LIMIT, CheckedBinaryProtocol
from p4scope.switch.thrift.idl import bm


def encoded(obj) -> bytes:
    buf = TMemoryBuffer()
    TBinaryProtocol(buf).write_struct(obj)
    return buf.getvalue()


def decoded(data: bytes, cls):
    obj = cls()
    CheckedBinaryProtocol(TMemoryBuffer(data)).read_struct(obj)
    return obj


def _add_entry_args():
    m = bm()
    key = [m.BmMatchParam(type=m.BmMatchParamType.EXACT, exact=m.BmMatchParamExact(b"\x00\x01")),
           m.BmMatchParam(type=m.BmMatchParamType.LPM,
                          lpm=m.BmMatchParamLPM(key=b"\x0a\x00\x00\x00", prefix_length=8))]
    return m.Standard.bm_mt_add_entry_args(
        cxt_id=0, table_name="ingress.fwd", match_key=key, action_name="ingress.set_port",
        action_data=[b"\x00\x02", b""], options=m.BmAddEntryOptions(priority=3))


def _show_ports_result():
    m = bm()
    return m.Standard.bm_dev_mgr_show_ports_result(success=[
        m.DevMgrPortInfo(port_num=1, iface_name="veth1", is_up=True, extra={"a": "b", "c": ""}),
        m.DevMgrPortInfo(port_num=2, iface_name="v\u00e9th", is_up=False, extra={})])


def _meter_args():
    m = bm()
    return m.Standard.bm_meter_array_set_rates_args(
        cxt_id=1, meter_array_name="m", rates=[m.BmMeterRateConfig(0.5, 10),
                                               m.BmMeterRateConfig(1e-6, 2**31 - 1)])


@pytest.mark.parametrize("make", [_add_entry_args, _show_ports_result, _meter_args])
def test_decodes_as_thriftpy2(make):
    obj = make()
    data = encoded(obj)
    plain = type(obj)()
    TBinaryProtocol(TMemoryBuffer(data)).read_struct(plain)
    assert decoded(data, type(obj)) == plain == obj


def test_unknown_fields_and_wrong_wire_types_are_skipped():
    args_cls = bm().Standard.bm_mt_get_num_entries_args
    data = (struct.pack("!bhi", 8, 1, 5)                        # cxt_id
            + struct.pack("!bhI", 11, 9, 3) + b"xyz"            # unknown field 9
            + struct.pack("!bhbbI", 13, 10, 11, 8, 1) + struct.pack("!I", 1) + b"k"
            + struct.pack("!i", 7)                              # unknown map field 10
            + struct.pack("!bhq", 10, 2, 1)                     # table_name sent as i64
            + b"\x00")
    got = decoded(data, args_cls)
    assert (got.cxt_id, got.table_name) == (5, None)


def _header(etype: int, n: int) -> bytes:
    return struct.pack("!bhbi", 15, 9, etype, n)


@pytest.mark.parametrize("data, kind, text", [
    (_header(TType.VOID, 2**31 - 1), TProtocolException.INVALID_DATA, "VOID (1)"),
    (_header(99, 2**31 - 1), TProtocolException.INVALID_DATA, "unknown type 99"),
    (_header(TType.STOP, 5), TProtocolException.INVALID_DATA, "STOP (0)"),
    (_header(TType.UTF16, 5), TProtocolException.INVALID_DATA, "UTF16 (17)"),
    (struct.pack("!bhbbi", 13, 9, 0, 0, 2**31 - 1), TProtocolException.INVALID_DATA, "STOP"),
    (struct.pack("!bhbbi", 13, 9, 11, 1, 1), TProtocolException.INVALID_DATA, "VOID"),
    (_header(TType.I32, -1), TProtocolException.NEGATIVE_SIZE, "-1 elements"),
    (_header(TType.I32, CONTAINER_LIMIT + 1), TProtocolException.SIZE_LIMIT,
     f"at most {CONTAINER_LIMIT}"),
    (b"\x63\x00\x01", TProtocolException.INVALID_DATA, "unknown type 99"),
    (struct.pack("!bhi", 11, 2, -5), TProtocolException.NEGATIVE_SIZE, "-5 bytes"),
])
def test_refuses_before_reading_elements(data, kind, text):
    """Nothing follows the header: a reader that looped over the elements
    would hit the end of the buffer instead of this refusal."""
    with pytest.raises(TProtocolException) as e:
        decoded(data, bm().Standard.bm_mt_get_num_entries_args)
    assert e.value.type == kind and text in e.value.message


def test_declared_list_of_an_undefined_type_is_refused():
    data = struct.pack("!bhbi", 15, 5, 1, 2**31 - 1)  # bm_mt_add_entry action_data
    with pytest.raises(TProtocolException) as e:
        decoded(data, bm().Standard.bm_mt_add_entry_args)
    assert e.value.type == TProtocolException.INVALID_DATA


def test_nesting_is_limited():
    deep = struct.pack("!bh", 12, 1) * 100 + b"\x00" * 101
    with pytest.raises(TProtocolException, match="nested deeper than 64"):
        decoded(deep, bm().Standard.bm_mt_get_num_entries_args)
    lists = struct.pack("!bh", 15, 9) + struct.pack("!bi", 15, 1) * 100 + struct.pack("!bi", 8, 0)
    with pytest.raises(TProtocolException, match="nested deeper than 64"):
        decoded(lists, bm().Standard.bm_mt_get_num_entries_args)
