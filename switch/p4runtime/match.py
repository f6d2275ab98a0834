"""Match keys: checking a P4Runtime `FieldMatch` list and its canonical form.

A key is checked against the table's P4Info match fields (spec section
"Match Format") and turned into one item per field, in P4Info order:

    exact     v
    lpm       (v, prefix_len)          omitted field: (0, 0)
    ternary   (v, mask)                omitted field: (0, 0)
    range     (low, high)              omitted field: (0, 2**w - 1)
    optional  (v, 2**w - 1)            omitted field: (0, 0)

Two requests naming the same entry give the same tuple, whatever bytestring
lengths they used; reads turn the tuple back into canonical FieldMatch
messages, omitting "don't care" fields (read-write symmetry).
"""

from __future__ import annotations

from typing import Sequence

from .codec import fixed, from_uint, to_uint
from .errors import invalid, out_of_range, unimplemented
from .schema import MatchFieldInfo


def check_key(fields: Sequence[MatchFieldInfo], index: dict[int, int], matches,
              where: str, owner: str) -> tuple:
    """The canonical key of `matches` (repeated FieldMatch); raises on a bad one.

    `where` prefixes messages ("table_entry"), `owner` names the table."""
    n = len(fields)
    given: list = [None] * n
    for i, fm in enumerate(matches):
        pos = index.get(fm.field_id)
        if pos is None:
            raise invalid(f"{where}.match[{i}].field_id: {fm.field_id} is not a match field of "
                          f"{owner}")
        if given[pos] is not None:
            raise invalid(f"{where}.match[{i}]: field '{fields[pos].name}' given twice")
        given[pos] = (i, fm)
    key = []
    for pos in range(n):
        f = fields[pos]
        g = given[pos]
        mt = f.match_type
        w = f.bitwidth
        if g is None:
            if mt == "exact":
                raise invalid(f"{where}.match: exact field '{f.name}' of {owner} is missing "
                              "(only lpm, ternary, range and optional fields may be omitted)")
            if mt == "range":
                key.append((0, (1 << w) - 1))
            elif mt in ("lpm", "ternary", "optional"):
                key.append((0, 0))
            else:
                raise unimplemented(f"{where}.match: match type '{mt}' of field '{f.name}' "
                                    "is not supported")
            continue
        i, fm = g
        if w <= 0:
            raise unimplemented(f"{where}.match[{i}]: field '{f.name}' has a translated type "
                                "(@p4runtime_translation to a string), which is not supported")
        kind = fm.WhichOneof("field_match_type")
        at = f"{where}.match[{i}]"
        if kind != mt:
            if mt not in ("exact", "lpm", "ternary", "range", "optional"):
                raise unimplemented(f"{at}: match type '{mt}' of field '{f.name}' is not supported")
            raise invalid(f"{at}: field '{f.name}' of {owner} is matched {mt}, "
                          f"the request gives {kind or 'no match value'}")
        if mt == "exact":
            key.append(to_uint(fm.exact.value, w, f"{at}.exact.value"))
        elif mt == "lpm":
            plen = fm.lpm.prefix_len
            v = to_uint(fm.lpm.value, w, f"{at}.lpm.value")
            if plen <= 0:
                raise invalid(f"{at}.lpm.prefix_len: {plen}; a prefix length of 0 is a "
                              "\"don't care\" match: omit the field instead")
            if plen > w:
                raise invalid(f"{at}.lpm.prefix_len: {plen} is longer than the field "
                              f"'{f.name}' ({w} bits)")
            if v & ((1 << (w - plen)) - 1):
                raise invalid(f"{at}.lpm.value: bits beyond the prefix length {plen} must be 0")
            key.append((v, plen))
        elif mt == "ternary":
            v = to_uint(fm.ternary.value, w, f"{at}.ternary.value")
            m = to_uint(fm.ternary.mask, w, f"{at}.ternary.mask")
            if m == 0:
                raise invalid(f"{at}.ternary.mask: a zero mask is a \"don't care\" match: "
                              "omit the field instead")
            if v & ~m:
                raise invalid(f"{at}.ternary: value 0x{v:x} has bits outside mask 0x{m:x} "
                              "(value & mask must equal value)")
            key.append((v, m))
        elif mt == "range":
            lo = to_uint(fm.range.low, w, f"{at}.range.low")
            hi = to_uint(fm.range.high, w, f"{at}.range.high")
            if lo > hi:
                raise invalid(f"{at}.range: low {lo} is greater than high {hi}")
            if lo == 0 and hi == (1 << w) - 1:
                raise invalid(f"{at}.range: the full range is a \"don't care\" match: "
                              "omit the field instead")
            key.append((lo, hi))
        else:  # optional
            key.append((to_uint(fm.optional.value, w, f"{at}.optional.value"), (1 << w) - 1))
    return tuple(key)


def engine_key(fields: Sequence[MatchFieldInfo], key: tuple, widths: Sequence[int],
               where: str, owner: str) -> list[tuple]:
    """The engine's key items for a canonical key: values as bytes of the
    device's field width (`widths`, the BMv2 JSON's), as BMv2 takes only
    keys of its fields' sizes. The widths differ from the P4Info's only for
    @p4runtime_translation fields, whose values this switch passes on
    untranslated: one that does not fit the device's field is OUT_OF_RANGE
    (an all-ones mask or range end of the P4Info width is the device's)."""
    out = []
    for f, k, dw in zip(fields, key, widths):
        at = (f, dw, where, owner)
        mt = f.match_type
        if mt == "exact":
            out.append(("exact", _device_bytes(k, *at)))
        elif mt == "lpm":
            if k[1] > dw:
                raise out_of_range(f"{where}.match: field '{f.name}' of {owner}: prefix length "
                                   f"{k[1]} is longer than the device's {dw}-bit field")
            out.append(("lpm", _device_bytes(k[0], *at), k[1]))
        elif mt == "range":
            out.append(("range", _device_bytes(k[0], *at), _device_bytes(k[1], *at, True)))
        else:  # ternary, optional
            out.append(("ternary", _device_bytes(k[0], *at), _device_bytes(k[1], *at, True)))
    return out


def _device_bytes(v: int, f: MatchFieldInfo, dw: int, where: str, owner: str,
                  all_ones_is_full: bool = False) -> bytes:
    if all_ones_is_full and v == (1 << f.bitwidth) - 1:
        v = (1 << dw) - 1
    if v >> dw:
        raise out_of_range(f"{where}.match: field '{f.name}' of {owner}: value 0x{v:x} does not "
                           f"fit the device's {dw}-bit field (the P4Info says {f.bitwidth} bits; "
                           "values are not translated)")
    return fixed(v, dw)


def key_to_proto(fields: Sequence[MatchFieldInfo], key: tuple, out) -> None:
    """Appends canonical FieldMatch messages to `out` (a repeated field),
    leaving "don't care" fields out."""
    for f, k in zip(fields, key):
        mt = f.match_type
        if mt == "exact":
            out.add(field_id=f.id).exact.value = from_uint(k)
        elif mt == "lpm":
            if k[1]:
                fm = out.add(field_id=f.id)
                fm.lpm.value = from_uint(k[0])
                fm.lpm.prefix_len = k[1]
        elif mt == "ternary":
            if k[1]:
                fm = out.add(field_id=f.id)
                fm.ternary.value = from_uint(k[0])
                fm.ternary.mask = from_uint(k[1])
        elif mt == "range":
            if not (k[0] == 0 and k[1] == (1 << f.bitwidth) - 1):
                fm = out.add(field_id=f.id)
                fm.range.low = from_uint(k[0])
                fm.range.high = from_uint(k[1])
        elif mt == "optional":
            if k[1]:
                out.add(field_id=f.id).optional.value = from_uint(k[0])


def json_entry_key(fields: Sequence[MatchFieldInfo], match: list[tuple]) -> tuple:
    """The canonical key of a const entry from the BMv2 JSON."""
    key = []
    for f, m in zip(fields, match):
        w = f.bitwidth
        full = (1 << w) - 1
        kind = m[0]
        if f.match_type == "exact":
            key.append(m[1] & full)
        elif f.match_type == "lpm":
            plen = m[2] if kind == "lpm" else w
            key.append((m[1] & full & ~((1 << (w - plen)) - 1), plen))
        elif f.match_type == "range":
            key.append((m[1], m[2]) if kind == "range" else (m[1], m[1]))
        else:  # ternary / optional
            mask = m[2] & full if len(m) > 2 else full
            key.append((m[1] & mask, mask))
    return tuple(key)
