"""The run-time server's binary-protocol reader: thriftpy2's TBinaryProtocol
with struct reads and skips that refuse what cannot be real.

thriftpy2 (as Thrift's C++ `skip` before INVALID_DATA) treats an unknown
type, VOID or STOP as a value of no bytes, so "a list of 2**31-1 VOIDs" or
"a map of 2**31-1 STOP keys" is looped over without reading a byte: the
connection thread spins long after the peer has gone. Here, as Thrift's
C++ TBinaryProtocol with a container limit refuses them:

- a field, element, key or value type that the binary protocol does not
  define (anything but BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT,
  MAP, SET, LIST) raises INVALID_DATA;
- a container size below 0 raises NEGATIVE_SIZE, above CONTAINER_LIMIT
  SIZE_LIMIT. (No call of BMv2's API carries more than a handful of
  elements; each element of a valid type takes at least one byte, so what
  stays under the limit costs only what the peer really sends.)
- structs and containers nest at most MAX_DEPTH deep (Thrift's default).

The server ends the connection on any of these with one log line.
Decoding otherwise follows thriftpy2: a field whose wire type is not its
declared one is skipped, strings are decoded as UTF-8 when they can be.
"""

from __future__ import annotations

import struct

from thriftpy2.protocol.binary import TBinaryProtocol
from thriftpy2.protocol.exc import TProtocolException
from thriftpy2.thrift import TType

CONTAINER_LIMIT = 1 << 20
"""Most elements in one list, set or map read from a peer."""
MAX_DEPTH = 64

_FIXED = {TType.BOOL: 1, TType.BYTE: 1, TType.I16: 2, TType.I32: 4, TType.I64: 8,
          TType.DOUBLE: 8}
_FORMAT = {TType.BOOL: "!b", TType.BYTE: "!b", TType.I16: "!h", TType.I32: "!i",
           TType.I64: "!q", TType.DOUBLE: "!d"}
WIRE_TYPES = frozenset(_FIXED) | {TType.STRING, TType.STRUCT, TType.MAP, TType.SET, TType.LIST}
"""The types a binary-protocol value may have on the wire."""
_NAMES = {v: k for k, v in vars(TType).items()
          if isinstance(v, int) and not k.startswith("_") and k not in ("I08", "UTF7")}
DEPTH_LIMIT = 6  # TProtocolException::DEPTH_LIMIT in Thrift's C++ library


def _type_name(t: int) -> str:
    return f"{_NAMES[t]} ({t})" if t in _NAMES else f"unknown type {t}"


def _wire(t: int) -> int:
    """The type a declared type has on the wire (BINARY travels as STRING)."""
    return TType.STRING if t == TType.BINARY else t


def _invalid(what: str, t: int) -> TProtocolException:
    return TProtocolException(TProtocolException.INVALID_DATA,
                              f"{what} of {_type_name(t)}: not a binary-protocol type")


class CheckedBinaryProtocol(TBinaryProtocol):
    """Reads structs and skips values as TBinaryProtocol, checked (module
    docstring). Writing and message headers are thriftpy2's."""

    def read_struct(self, obj):
        self._read_struct(obj, MAX_DEPTH)
        return obj

    def skip(self, ttype):
        self._skip(ttype, MAX_DEPTH)

    # -- the wire ------------------------------------------------------------------

    def _unpack(self, ttype: int):
        return struct.unpack(_FORMAT[ttype], self.trans.read(_FIXED[ttype]))[0]

    def _bytes(self) -> bytes:
        n = self._unpack(TType.I32)
        if n < 0:
            raise TProtocolException(TProtocolException.NEGATIVE_SIZE, f"a string of {n} bytes")
        return self.trans.read(n)

    def _size(self, what: str, types: tuple[int, ...]) -> int:
        for t in types:
            if t not in WIRE_TYPES:
                raise _invalid(f"a {what} with elements", t)
        n = self._unpack(TType.I32)
        if n < 0:
            raise TProtocolException(TProtocolException.NEGATIVE_SIZE,
                                     f"a {what} of {n} elements")
        if n > CONTAINER_LIMIT:
            raise TProtocolException(TProtocolException.SIZE_LIMIT,
                                     f"a {what} of {n} elements (at most {CONTAINER_LIMIT})")
        return n

    def _list_begin(self, what: str) -> tuple[int, int]:
        etype = self._unpack(TType.BYTE)
        return etype, self._size(what, (etype,))

    def _map_begin(self) -> tuple[int, int, int]:
        ktype, vtype = self._unpack(TType.BYTE), self._unpack(TType.BYTE)
        return ktype, vtype, self._size("map", (ktype, vtype))

    @staticmethod
    def _nest(depth: int) -> int:
        if depth <= 0:
            raise TProtocolException(DEPTH_LIMIT,
                                     f"structs and containers nested deeper than {MAX_DEPTH}")
        return depth - 1

    # -- skipping -------------------------------------------------------------------

    def _skip(self, ttype: int, depth: int) -> None:
        if ttype in _FIXED:
            self.trans.read(_FIXED[ttype])
        elif ttype == TType.STRING:
            self._bytes()
        elif ttype == TType.STRUCT:
            inner = self._nest(depth)
            while (ftype := self._field_type()) != TType.STOP:
                self.trans.read(2)
                self._skip(ftype, inner)
        elif ttype in (TType.LIST, TType.SET):
            inner = self._nest(depth)
            etype, n = self._list_begin("list" if ttype == TType.LIST else "set")
            for _ in range(n):
                self._skip(etype, inner)
        elif ttype == TType.MAP:
            inner = self._nest(depth)
            ktype, vtype, n = self._map_begin()
            for _ in range(n):
                self._skip(ktype, inner)
                self._skip(vtype, inner)
        else:
            raise _invalid("a value", ttype)

    def _field_type(self) -> int:
        ftype = self._unpack(TType.BYTE)
        if ftype != TType.STOP and ftype not in WIRE_TYPES:
            raise _invalid("a field", ftype)
        return ftype

    # -- reading into declared types -----------------------------------------------

    def _read_struct(self, obj, depth: int) -> None:
        inner = self._nest(depth)
        spec = obj.thrift_spec
        while (ftype := self._field_type()) != TType.STOP:
            fid = self._unpack(TType.I16)
            fspec = spec.get(fid)
            if fspec is None or _wire(fspec[0]) != ftype:
                self._skip(ftype, inner)
                continue
            sub = fspec[2] if len(fspec) == 4 else None
            setattr(obj, fspec[1], self._read_value(fspec[0], sub, inner))

    def _read_value(self, ttype: int, spec, depth: int):
        if ttype in _FIXED:
            v = self._unpack(ttype)
            return bool(v) if ttype == TType.BOOL else v
        if ttype == TType.BINARY:
            return self._bytes()
        if ttype == TType.STRING:
            data = self._bytes()
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                return data
        if ttype == TType.STRUCT:
            obj = spec()
            self._read_struct(obj, depth)
            return obj
        if ttype in (TType.LIST, TType.SET):
            return self._read_list(ttype, spec, depth)
        if ttype == TType.MAP:
            return self._read_map(spec, depth)
        raise _invalid("a declared value", ttype)

    def _read_list(self, ttype: int, spec, depth: int) -> list:
        inner = self._nest(depth)
        etype, espec = spec if isinstance(spec, tuple) else (spec, None)
        wtype, n = self._list_begin("list" if ttype == TType.LIST else "set")
        if wtype != _wire(etype):
            for _ in range(n):
                self._skip(wtype, inner)
            return []
        return [self._read_value(etype, espec, inner) for _ in range(n)]

    def _read_map(self, spec, depth: int) -> dict:
        inner = self._nest(depth)
        (ktype, kspec), (vtype, vspec) = ((s, None) if isinstance(s, int) else s for s in spec)
        wk, wv, n = self._map_begin()
        if (wk, wv) != (_wire(ktype), _wire(vtype)):
            for _ in range(n):
                self._skip(wk, inner)
                self._skip(wv, inner)
            return {}
        out = {}
        for _ in range(n):
            k = self._read_value(ktype, kspec, inner)
            out[k] = self._read_value(vtype, vspec, inner)
        return out
