"""The `p4_device_config` bytes: raw BMv2 JSON or the legacy wrapper.

PI (device_mgr.cpp) first tries to parse the bytes as the deprecated
`p4.tmp.P4DeviceConfig` message

    message P4DeviceConfig {
      message Extras { map<string, string> kv = 1; }
      bool reassign = 1;
      Extras extras = 2;
      bytes device_data = 3;   // the BMv2 JSON
    }

and otherwise takes them as the JSON itself. The p4lang tutorials'
p4runtime_lib sends the wrapper, p4c's PTF base test the raw JSON. No
generated stub exists for the wrapper in finsy, so it is decoded here from
protobuf's wire format. Bytes that start (after white space) with "{" are
JSON; anything else must decode as the wrapper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import invalid


@dataclass(slots=True)
class DeviceConfig:
    device_data: bytes
    legacy: bool
    reassign: bool = False
    extras: dict[str, str] = field(default_factory=dict)


class WireError(ValueError):
    pass


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = 0
    v = 0
    while True:
        if i >= len(buf):
            raise WireError("truncated varint")
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")


def fields(buf: bytes):
    """Yields (field number, wire type, value) of a message; raises WireError.

    Groups (wire types 3 and 4) are rejected: no message here uses them, and
    JSON text never forms a well-nested group."""
    i = 0
    n = len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            if i + 8 > n:
                raise WireError("truncated fixed64")
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            ln, i = _varint(buf, i)
            if i + ln > n:
                raise WireError("truncated length-delimited field")
            v, i = buf[i:i + ln], i + ln
        elif wt == 5:
            if i + 4 > n:
                raise WireError("truncated fixed32")
            v, i = buf[i:i + 4], i + 4
        else:
            raise WireError(f"wire type {wt}")
        yield num, wt, v


def decode_legacy(buf: bytes) -> DeviceConfig:
    """Decodes a p4.tmp.P4DeviceConfig; raises WireError if it is not one."""
    cfg = DeviceConfig(b"", legacy=True)
    for num, wt, v in fields(buf):
        if num == 1 and wt == 0:
            cfg.reassign = bool(v)
        elif num == 2 and wt == 2:
            for n2, w2, entry in fields(v):
                if n2 == 1 and w2 == 2:  # map entry {key = 1, value = 2}
                    k = val = b""
                    for n3, w3, x in fields(entry):
                        if n3 == 1 and w3 == 2:
                            k = x
                        elif n3 == 2 and w3 == 2:
                            val = x
                    cfg.extras[k.decode("utf-8", "replace")] = val.decode("utf-8", "replace")
        elif num == 3 and wt == 2:
            cfg.device_data = bytes(v)
        elif num in (1, 2, 3):
            raise WireError(f"field {num} has wire type {wt}")
    return cfg


def encode_legacy(device_data: bytes, reassign: bool = True,
                  extras: dict[str, str] | None = None) -> bytes:
    """Encodes a p4.tmp.P4DeviceConfig (for tests and clients)."""

    def varint(v: int) -> bytes:
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            if v:
                out.append(b | 0x80)
            else:
                out.append(b)
                return bytes(out)

    def ld(num: int, data: bytes) -> bytes:
        return varint(num << 3 | 2) + varint(len(data)) + data

    out = b""
    if reassign:
        out += varint(1 << 3) + varint(1)
    if extras:
        body = b"".join(ld(1, ld(1, k.encode()) + ld(2, v.encode())) for k, v in extras.items())
        out += ld(2, body)
    if device_data:
        out += ld(3, device_data)
    return out


def decode_device_config(buf: bytes) -> DeviceConfig:
    """Raw JSON or legacy wrapper, as PI accepts them; INVALID_ARGUMENT otherwise."""
    if buf.lstrip()[:1] == b"{":
        return DeviceConfig(bytes(buf), legacy=False)
    try:
        return decode_legacy(buf)
    except WireError as e:
        raise invalid(
            "p4_device_config: neither BMv2 JSON nor a p4.tmp.P4DeviceConfig message "
            f"({e})") from None
