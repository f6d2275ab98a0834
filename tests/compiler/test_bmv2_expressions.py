"""BMv2 backend: how expressions are encoded (masks, two_comp_mod, casts,
slices, concatenation, booleans, saturation, ?:)."""

from tests.compiler.bmv2_support import compile_ingress, scalars_field, walk_primitives


def fld(h, f):
    return {"type": "field", "value": [h, f]}


def hx(v):
    return {"type": "hexstr", "value": v}


def ex(op, left, right, **kw):
    v = {"op": op, "left": left, "right": right}
    v.update(kw)
    return {"type": "expression", "value": v}


def assigned(body, locals_=""):
    """The value operands of the assignments of a straight-line body."""
    prims = walk_primitives(compile_ingress(body, locals_))
    out = []
    for p in prims:
        assert p["op"] == "assign", p
        v = p["parameters"][1]
        out.append(v["value"] if v["type"] == "expression" else v)
    return out


def test_unsigned_add_is_masked():
    [v] = assigned("hdr.h.a = hdr.h.a + hdr.h.b;")
    assert v == ex("&", ex("+", fld("h", "a"), fld("h", "b")), hx("0xff"))


def test_signed_sub_uses_two_comp_mod():
    [v] = assigned("hdr.h.s = hdr.h.s - 1;")
    assert v == ex("two_comp_mod", ex("-", fld("h", "s"), hx("0x01")), hx("0x8"))


def test_slice_is_shift_and_mask():
    [v] = assigned("hdr.h.b = hdr.h.w[11:4];")
    assert v == ex("&", ex(">>", fld("h", "w"), hx("0x4")), hx("0xff"))


def test_concatenation():
    [v] = assigned("hdr.h.w = hdr.h.a ++ hdr.h.b;")
    a = ex("&", fld("h", "a"), hx("0xff"))
    b = ex("&", fld("h", "b"), hx("0xff"))
    assert v == ex("&", ex("|", ex("<<", a, hx("0x8")), b), hx("0xffff"))


def test_constants_are_folded_and_padded():
    [v] = assigned("hdr.h.w = 16w3 + 4 * 2;")
    assert v == hx("0x000b")


def test_narrowing_cast_masks_widening_does_not():
    v1, v2 = assigned("hdr.h.a = (bit<8>)hdr.h.w; hdr.h.w = (bit<16>)hdr.h.a;")
    assert v1 == ex("&", fld("h", "w"), hx("0xff"))
    assert v2 == fld("h", "a")


def test_unsigned_to_signed_cast():
    [v] = assigned("hdr.h.s = (int<8>)hdr.h.a;")
    assert v == ex("two_comp_mod", fld("h", "a"), hx("0x8"))


def test_bool_stored_as_bit_and_read_with_d2b():
    v1, v2 = assigned("meta.flag = hdr.h.isValid(); hdr.h.a = meta.flag ? 8w1 : 8w2;")
    assert v1 == ex("b2d", None, ex("d2b", None, fld("h", "$valid$")))
    assert v2 == ex("?", hx("0x01"), hx("0x02"), cond=ex("d2b", None, fld("scalars", "metadata.flag")))


def test_comparison_and_logic():
    [v] = assigned("meta.flag = hdr.h.a < hdr.h.b && !(hdr.h.a == 3);")
    inner = ex("and", ex("<", fld("h", "a"), fld("h", "b")),
               ex("not", None, ex("==", fld("h", "a"), hx("0x03"))))
    assert v == ex("b2d", None, inner)


def test_saturating_add():
    [v] = assigned("hdr.h.a = hdr.h.a |+| hdr.h.b;")
    assert v == ex("usat_cast", ex("+", fld("h", "a"), fld("h", "b")), hx("0x8"))


def test_complement_is_masked():
    [v] = assigned("hdr.h.a = ~hdr.h.b;")
    assert v == ex("&", ex("~", None, fld("h", "b")), hx("0xff"))


def test_slice_assignment_keeps_other_bits():
    [v] = assigned("hdr.h.w[7:4] = hdr.h.a[3:0];")
    rhs = ex("&", fld("h", "a"), hx("0x0f"))
    assert v == ex("|", ex("&", fld("h", "w"), hx("0xff0f")),
                   ex("&", ex("<<", rhs, hx("0x4")), hx("0x00f0")))


def test_locals_live_in_scalars_padded_to_bytes():
    j = compile_ingress("x = hdr.h.a[2:0]; hdr.h.b = (bit<8>)x;", "bit<3> x;")
    assert scalars_field(j, "x") == [["x", 3, False]]
    st = next(t for t in j["header_types"] if t["name"] == "scalars_0")
    assert sum(f[1] for f in st["fields"]) % 8 == 0
    assert st["fields"][-1][0].startswith("_padding")


def test_user_metadata_fields_are_named_after_the_struct_parameter():
    j = compile_ingress("meta.tag = 1;")
    assert ["metadata.tag", 16, False] in scalars_field(j, "metadata.")
