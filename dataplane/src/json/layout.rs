//! Header types, header instances, stacks and unions: the PHV layout.

use super::*;

/// The longest header type the engine accepts, in bytes (fixed fields plus
/// a varbit's `max_length`). BMv2 itself has no bound (a JSON width is read
/// with `asInt`, so anything below 2^31 bits is taken, and every header
/// instance then holds that many bits in each packet's PHV: one 2^31-bit
/// field is 256 MiB per packet). 64 KiB is chosen because a header is
/// extracted from a packet and no packet is longer (the IPv4 and IPv6
/// length fields are 16 bits), and p4c never comes near it (it refuses
/// `bit<W>` wider than 2048 bits). Checked on the header types, before any
/// header instance or PHV is laid out.
pub const MAX_HEADER_BYTES: u32 = 64 * 1024;
const MAX_HEADER_BITS: u64 = MAX_HEADER_BYTES as u64 * 8;

struct FieldSpec {
    name: String,
    width: Option<u32>, // None: varbit
    signed: bool,
}

struct TypeSpec {
    fields: Vec<FieldSpec>,
    max_length: Option<u32>,
}

pub(super) fn load_layout(cx: &mut Ctx, root: &Value) -> R<()> {
    let mut types: HashMap<String, TypeSpec> = HashMap::new();
    for (i, t) in opt_arr(root, "header_types").iter().enumerate() {
        let p = elem_path("", "header_types", i, t);
        let name = get_str(t, "name", &p)?;
        let mut fields = vec![];
        let mut fixed_bits = 0u64;
        for (j, f) in as_arr(get(t, "fields", &p)?, &p)?.iter().enumerate() {
            let fp = format!("{p}.fields[{j}]");
            let arr = as_arr(f, &fp)?;
            if arr.len() < 2 {
                return err(&fp, "expected [name, width, signed]");
            }
            let fname = as_str(&arr[0], &fp)?.to_string();
            let width = if arr[1].as_str() == Some("*") {
                None
            } else {
                let w = as_u32(&arr[1], &fp)?;
                if w == 0 {
                    return err(&fp, "a field must be at least 1 bit wide");
                }
                fixed_bits += u64::from(w);
                if fixed_bits > MAX_HEADER_BITS {
                    return err(&fp, too_long(fixed_bits));
                }
                Some(w)
            };
            let signed = arr.get(2).and_then(|s| s.as_bool()).unwrap_or(false);
            fields.push(FieldSpec { name: fname, width, signed });
        }
        let nvar = fields.iter().filter(|f| f.width.is_none()).count();
        if nvar > 1 {
            return err(&p, "a header type may have at most one varbit field");
        }
        if nvar == 1 && fields.last().map(|f| f.width.is_some()).unwrap_or(true) {
            return err(&p, "the varbit field must be the last field of its header type");
        }
        let max_length = match t.get("max_length") {
            Some(v) if !v.is_null() => Some(as_u32(v, &format!("{p}.max_length"))?),
            _ => None,
        };
        if nvar == 1 && max_length.is_none() {
            return err(&p, "a header type with a varbit field needs 'max_length'");
        }
        if let Some(ml) = max_length {
            if ml > MAX_HEADER_BYTES {
                return err(&format!("{p}.max_length"), too_long(u64::from(ml) * 8));
            }
        }
        types.insert(name.to_string(), TypeSpec { fields, max_length });
    }

    for (i, h) in opt_arr(root, "headers").iter().enumerate() {
        let p = elem_path("", "headers", i, h);
        let name = get_str(h, "name", &p)?;
        let tname = get_str(h, "header_type", &p)?;
        let Some(ty) = types.get(tname) else {
            return err(&p, format!("unknown header type '{tname}'"));
        };
        let metadata = h.get("metadata").and_then(|m| m.as_bool()).unwrap_or(false);
        let hid = cx.headers.len() as HdrId;
        let first = cx.fields.len() as FieldId;
        let mut off = 0u32;
        let mut varbit = None;
        for f in &ty.fields {
            let (width, is_var) = match f.width {
                Some(w) => (w, false),
                None => {
                    let max_bits = ty.max_length.unwrap_or(0) * 8;
                    if max_bits < off {
                        return err(&p, format!("max_length of type '{tname}' is smaller than its fixed fields"));
                    }
                    (max_bits - off, true)
                }
            };
            let wide = if is_var || width > 128 {
                cx.wide_bytes.push((width + 7) / 8);
                Some(cx.wide_bytes.len() as u32 - 1)
            } else {
                None
            };
            let fid = cx.fields.len() as FieldId;
            if is_var {
                varbit = Some(fid);
            }
            cx.fields.push(FieldDef {
                name: f.name.clone(),
                hdr: hid,
                bit_off: off,
                width,
                signed: f.signed,
                varbit: is_var,
                wide,
            });
            if !is_var {
                off += width;
            }
        }
        if !metadata && off % 8 != 0 {
            return err(&p, format!("header '{name}' is {off} bits long, not a whole number of bytes"));
        }
        cx.headers.push(HeaderDef {
            name: name.to_string(),
            type_name: tname.to_string(),
            metadata,
            first_field: first,
            nfields: ty.fields.len() as u32,
            fixed_bits: off,
            varbit,
            union_of: None,
        });
        if cx.hdr_by_name.insert(name.to_string(), hid).is_some() {
            return err(&p, format!("duplicate header name '{name}'"));
        }
    }

    for (i, s) in opt_arr(root, "header_stacks").iter().enumerate() {
        let p = elem_path("", "header_stacks", i, s);
        let name = get_str(s, "name", &p)?;
        let mut hs = vec![];
        for (j, id) in as_arr(get(s, "header_ids", &p)?, &p)?.iter().enumerate() {
            let h = as_u32(id, &format!("{p}.header_ids[{j}]"))?;
            if h as usize >= cx.headers.len() {
                return err(&p, format!("header id {h} does not exist"));
            }
            hs.push(h);
        }
        cx.stack_by_name.insert(name.to_string(), cx.stacks.len() as u32);
        cx.stacks.push(StackDef { name: name.to_string(), headers: hs });
    }

    for (i, u) in opt_arr(root, "header_unions").iter().enumerate() {
        let p = elem_path("", "header_unions", i, u);
        let name = get_str(u, "name", &p)?;
        let uid = cx.unions.len() as u32;
        let mut hs = vec![];
        for (j, id) in as_arr(get(u, "header_ids", &p)?, &p)?.iter().enumerate() {
            let h = as_u32(id, &format!("{p}.header_ids[{j}]"))?;
            if h as usize >= cx.headers.len() {
                return err(&p, format!("header id {h} does not exist"));
            }
            cx.headers[h as usize].union_of = Some(uid);
            hs.push(h);
        }
        cx.union_by_name.insert(name.to_string(), uid);
        cx.unions.push(UnionDef { name: name.to_string(), headers: hs });
    }

    for (i, s) in opt_arr(root, "header_union_stacks").iter().enumerate() {
        let p = elem_path("", "header_union_stacks", i, s);
        let name = get_str(s, "name", &p)?;
        let mut us = vec![];
        for (j, id) in as_arr(get(s, "header_union_ids", &p)?, &p)?.iter().enumerate() {
            let u = as_u32(id, &format!("{p}.header_union_ids[{j}]"))?;
            if u as usize >= cx.unions.len() {
                return err(&p, format!("header union id {u} does not exist"));
            }
            us.push(u);
        }
        cx.ustack_by_name.insert(name.to_string(), cx.union_stacks.len() as u32);
        cx.union_stacks.push(UnionStackDef { name: name.to_string(), unions: us });
    }
    Ok(())
}

fn too_long(bits: u64) -> String {
    format!(
        "the header type is at least {bits} bits long; headers of at most {MAX_HEADER_BYTES} \
         bytes ({MAX_HEADER_BITS} bits) are supported"
    )
}

/// A lookahead's width: it reads the packet, so it is bounded as a header
/// is (a wider one would allocate its width in bytes for every packet).
pub(super) fn lookahead_width(v: &Value, path: &str) -> R<u32> {
    let width = as_u32(v, path)?;
    if u64::from(width) > MAX_HEADER_BITS {
        return err(path, format!("a lookahead of {width} bits; at most {MAX_HEADER_BITS} are supported"));
    }
    Ok(width)
}
