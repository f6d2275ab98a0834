"""Building P4Runtime entities by name (tests only)."""

from __future__ import annotations

from finsy.proto import p4r

from p4scope.switch.p4runtime.schema import P4Schema


def enc(v: int, nbytes: int | None = None) -> bytes:
    if nbytes is None:
        nbytes = max(1, (v.bit_length() + 7) // 8)
    return v.to_bytes(nbytes, "big")


def action(s: P4Schema, name: str, **params: int) -> p4r.Action:
    a = s.actions.find(name)
    msg = p4r.Action(action_id=a.id)
    for p in a.params:
        if p.name in params:
            msg.params.add(param_id=p.id, value=enc(params[p.name]))
    return msg


def table_entry(s: P4Schema, table: str, match: dict | None = None, act: str | None = None,
                params: dict | None = None, priority: int = 0, **fields) -> p4r.TableEntry:
    """match: {field name: value | ("lpm", v, plen) | ("ternary", v, m) |
    ("range", lo, hi) | ("optional", v)}; values are ints or bytes."""
    t = s.tables.find(table)
    te = p4r.TableEntry(table_id=t.id, priority=priority, **fields)
    for fname, spec in (match or {}).items():
        f = next(x for x in t.fields if x.name == fname)
        fm = te.match.add(field_id=f.id)
        b = lambda v: v if isinstance(v, bytes) else enc(v)  # noqa: E731
        if not isinstance(spec, tuple):
            spec = (f.match_type, spec) if f.match_type in ("exact", "optional") else spec
        kind = spec[0]
        if kind == "exact":
            fm.exact.value = b(spec[1])
        elif kind == "lpm":
            fm.lpm.value = b(spec[1])
            fm.lpm.prefix_len = spec[2]
        elif kind == "ternary":
            fm.ternary.value = b(spec[1])
            fm.ternary.mask = b(spec[2])
        elif kind == "range":
            fm.range.low = b(spec[1])
            fm.range.high = b(spec[2])
        elif kind == "optional":
            fm.optional.value = b(spec[1])
    if act is not None:
        te.action.action.CopyFrom(action(s, act, **(params or {})))
    return te


def eth(dst: int, src: int = 0x0A0000000001, ether_type: int = 0x0800,
        payload: bytes = b"\x00" * 46) -> bytes:
    return dst.to_bytes(6, "big") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big") + payload


def probe(dst: int, addr: int, flags: int = 0, level: int = 0, kind: int = 0) -> bytes:
    body = addr.to_bytes(4, "big") + flags.to_bytes(2, "big") + bytes([level, kind])
    return eth(dst, ether_type=0x88B5, payload=body + b"\x00" * 38)
