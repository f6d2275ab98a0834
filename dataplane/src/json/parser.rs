//! Parser states, parse value sets, and the deparser.

use super::expr::hexstr;
use super::*;

/// A hex string as exactly `n` big-endian bytes (BMv2 pads keys per field).
pub(crate) fn hex_bytes(v: &Value, n: usize, path: &str) -> R<Vec<u8>> {
    let val = hexstr(v, path)?;
    let mut out = vec![0u8; n];
    val.write_be((n * 8) as u32, &mut out);
    Ok(out)
}

pub(super) fn load_vsets(cx: &mut Ctx, root: &Value) -> R<()> {
    for (i, v) in opt_arr(root, "parse_vsets").iter().enumerate() {
        let p = elem_path("", "parse_vsets", i, v);
        let name = get_str(v, "name", &p)?;
        let width = get_u32(v, "compressed_bitwidth", &p)?;
        let max_size = v.get("max_size").and_then(|m| m.as_u64()).unwrap_or(u32::MAX as u64) as u32;
        cx.vset_by_name.insert(name.to_string(), cx.vsets.len() as u32);
        cx.vsets.push(VSetDef { name: name.to_string(), width, max_size });
    }
    Ok(())
}

fn extract_target(cx: &Ctx, v: &Value, path: &str) -> R<ParserOp> {
    let ty = get_str(v, "type", path)?;
    let val = get(v, "value", path)?;
    match ty {
        "regular" | "header" => Ok(ParserOp::Extract(HdrX::Static(cx.header(as_str(val, path)?, path)?))),
        "stack" => Ok(ParserOp::ExtractStackNext(cx.stack(as_str(val, path)?, path)?)),
        "union_stack" => {
            let arr = as_arr(val, path)?;
            if arr.len() != 2 {
                return err(path, "expected [union stack, member]");
            }
            let us = cx.ustack(as_str(&arr[0], path)?, path)?;
            let member_name = as_str(&arr[1], path)?;
            let u0 = cx.union_stacks[us as usize].unions.first().copied();
            let Some(u0) = u0 else { return err(path, "empty union stack") };
            let members = &cx.unions[u0 as usize].headers;
            // member named by the union type's member name: match the header
            // instance name suffix "<union>.<member>"
            let pos = members.iter().position(|h| {
                let n = &cx.headers[*h as usize].name;
                n.ends_with(&format!(".{member_name}"))
            });
            match pos {
                Some(m) => Ok(ParserOp::ExtractUnionStackNext(us, m as u32)),
                None => err(path, format!("union stack has no member '{member_name}'")),
            }
        }
        other => err(path, format!("cannot extract into operand type '{other}'")),
    }
}

fn parser_op(cx: &Ctx, v: &Value, path: &str) -> R<ParserOp> {
    let op = get_str(v, "op", path)?;
    let params = as_arr(get(v, "parameters", path)?, path)?;
    let p = format!("{path} ('{op}')");
    let need = |k: usize| -> R<()> {
        if params.len() != k {
            return err(&p, format!("'{op}' takes {k} parameter(s), found {}", params.len()));
        }
        Ok(())
    };
    Ok(match op {
        "extract" => {
            need(1)?;
            extract_target(cx, &params[0], &p)?
        }
        "extract_VL" => {
            need(2)?;
            let target = match extract_target(cx, &params[0], &p)? {
                ParserOp::Extract(h) => VLTarget::Header(h),
                ParserOp::ExtractStackNext(s) => VLTarget::StackNext(s),
                _ => return err(&p, "extract_VL into a union stack is not supported"),
            };
            let len_bits = cx.expr(&params[1], &p)?;
            let hdr_id = match &target {
                VLTarget::Header(HdrX::Static(h)) => *h,
                VLTarget::StackNext(s) => cx.stacks[*s as usize].headers.first().copied().unwrap_or(0),
                _ => 0,
            };
            let hd = &cx.headers[hdr_id as usize];
            let Some(vf) = hd.varbit else {
                return err(&p, format!("header '{}' has no varbit field", hd.name));
            };
            let max_bytes = (hd.fixed_bits + cx.fields[vf as usize].width) / 8;
            ParserOp::ExtractVL { hdr: target, len_bits, max_bytes }
        }
        "set" => {
            need(2)?;
            ParserOp::Set(cx.lvalue(&params[0], &p)?, cx.expr(&params[1], &p)?)
        }
        "verify" => {
            need(2)?;
            ParserOp::Verify { cond: cx.expr(&params[0], &p)?, error: cx.expr(&params[1], &p)? }
        }
        "shift" => {
            need(1)?;
            // bytes; turn into an advance in bits
            let e = cx.expr(&params[0], &p)?;
            ParserOp::Advance(super::expr::fold(Expr::Binary(
                BinOp::Mul,
                Box::new(e),
                Box::new(Expr::Const(crate::value::Val::S(8))),
            )))
        }
        "advance" => {
            need(1)?;
            ParserOp::Advance(cx.expr(&params[0], &p)?)
        }
        "primitive" => {
            need(1)?;
            ParserOp::Primitive(cx.primitive(&params[0], &p, 0)?)
        }
        other => return err(&p, format!("parser operation '{other}' is not supported")),
    })
}

fn key_part(cx: &Ctx, v: &Value, path: &str) -> R<(KeyPart, u32)> {
    let ty = get_str(v, "type", path)?;
    let val = get(v, "value", path)?;
    let strs = |n: usize| -> R<Vec<&str>> {
        let arr = as_arr(val, path)?;
        if arr.len() != n {
            return err(path, format!("expected {n} names"));
        }
        arr.iter().map(|x| as_str(x, path)).collect()
    };
    match ty {
        "field" => {
            let s = strs(2)?;
            if s[1] == "$valid$" {
                return Ok((KeyPart::Valid(HdrX::Static(cx.header(s[0], path)?)), 1));
            }
            let f = cx.field(s[0], s[1], path)?;
            Ok((KeyPart::Field(f), cx.fields[f as usize].width))
        }
        "stack_field" => {
            let s = strs(2)?;
            let st = cx.stack(s[0], path)?;
            let Some(h0) = cx.stacks[st as usize].headers.first().copied() else {
                return err(path, "empty stack");
            };
            let Some(off) = cx.field_offset_in(h0, s[1]) else {
                return err(path, format!("stack '{}' has no field '{}'", s[0], s[1]));
            };
            let f = cx.headers[h0 as usize].first_field + off;
            Ok((KeyPart::StackField { stack: st, off }, cx.fields[f as usize].width))
        }
        "union_stack_field" => {
            let s = strs(3)?;
            let us = cx.ustack(s[0], path)?;
            let Some(u0) = cx.union_stacks[us as usize].unions.first().copied() else {
                return err(path, "empty union stack");
            };
            let members = &cx.unions[u0 as usize].headers;
            let Some(m) = members.iter().position(|h| cx.headers[*h as usize].name.ends_with(&format!(".{}", s[1])))
            else {
                return err(path, format!("union stack has no member '{}'", s[1]));
            };
            let h = members[m];
            let Some(off) = cx.field_offset_in(h, s[2]) else {
                return err(path, format!("no field '{}'", s[2]));
            };
            let f = cx.headers[h as usize].first_field + off;
            Ok((KeyPart::UnionStackField { ustack: us, member: m as u32, off }, cx.fields[f as usize].width))
        }
        "lookahead" => {
            let arr = as_arr(val, path)?;
            if arr.len() != 2 {
                return err(path, "expected [bit offset, width]");
            }
            let off = as_u32(&arr[0], path)?;
            let width = super::layout::lookahead_width(&arr[1], path)?;
            Ok((KeyPart::Lookahead { off, width }, width))
        }
        other => err(path, format!("transition key type '{other}' is not supported")),
    }
}

pub(super) fn load_parser(cx: &Ctx, root: &Value) -> R<ParserDef> {
    let parsers = opt_arr(root, "parsers");
    let Some((pi, pj)) = parsers
        .iter()
        .enumerate()
        .find(|(_, p)| p.get("name").and_then(|n| n.as_str()) == Some("parser"))
        .or_else(|| parsers.iter().enumerate().next())
    else {
        return err("parsers", "simple_switch needs a parser named 'parser'");
    };
    let base = elem_path("", "parsers", pi, pj);
    let states_json = as_arr(get(pj, "parse_states", &base)?, &base)?;
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    for (i, s) in states_json.iter().enumerate() {
        by_name.insert(get_str(s, "name", &elem_path(&base, "parse_states", i, s))?, i as u32);
    }
    let resolve = |name: &Value, path: &str| -> R<Option<u32>> {
        if name.is_null() {
            return Ok(None);
        }
        let n = as_str(name, path)?;
        match by_name.get(n) {
            Some(i) => Ok(Some(*i)),
            None => err(path, format!("unknown parse state '{n}'")),
        }
    };
    let mut states = vec![];
    for (i, s) in states_json.iter().enumerate() {
        let p = elem_path(&base, "parse_states", i, s);
        let name = get_str(s, "name", &p)?.to_string();
        let mut ops = vec![];
        for (j, o) in opt_arr(s, "parser_ops").iter().enumerate() {
            ops.push(parser_op(cx, o, &format!("{p}.parser_ops[{j}]"))?);
        }
        let mut key = vec![];
        for (j, k) in opt_arr(s, "transition_key").iter().enumerate() {
            key.push(key_part(cx, k, &format!("{p}.transition_key[{j}]"))?);
        }
        let key_bytes: usize = key.iter().map(|(_, w)| ((*w + 7) / 8) as usize).sum();
        let mut transitions = vec![];
        for (j, t) in opt_arr(s, "transitions").iter().enumerate() {
            let tp = format!("{p}.transitions[{j}]");
            let ty = t.get("type").and_then(|x| x.as_str()).unwrap_or("hexstr");
            let next = resolve(get(t, "next_state", &tp)?, &tp)?;
            let mask = match t.get("mask") {
                Some(m) if !m.is_null() => Some(hex_bytes(m, key_bytes, &tp)?),
                _ => None,
            };
            let kind = match ty {
                "default" => TransitionKind::Default,
                "hexstr" => {
                    let mut value = hex_bytes(get(t, "value", &tp)?, key_bytes, &tp)?;
                    if let Some(m) = &mask {
                        for (v, m) in value.iter_mut().zip(m) {
                            *v &= m;
                        }
                    }
                    TransitionKind::Value { value, mask }
                }
                "parse_vset" => {
                    let vname = get_str(t, "value", &tp)?;
                    match cx.vset_by_name.get(vname) {
                        Some(v) => TransitionKind::VSet { vset: *v, mask },
                        None => return err(&tp, format!("unknown parse value set '{vname}'")),
                    }
                }
                other => return err(&tp, format!("transition type '{other}' is not supported")),
            };
            let small = match &kind {
                TransitionKind::Value { value, mask } if key_bytes <= 16 => Some((
                    be_u128(value),
                    mask.as_ref().map(|m| be_u128(m)).unwrap_or(if key_bytes == 16 { u128::MAX } else { (1u128 << (8 * key_bytes)) - 1 }),
                )),
                _ => None,
            };
            transitions.push(Transition { kind, next, small });
        }
        let small = key_bytes <= 16
            && transitions.iter().all(|t| t.small.is_some() || matches!(t.kind, TransitionKind::Default));
        states.push(ParseState { name, ops, key, key_bytes, transitions, small });
    }
    let init = resolve(get(pj, "init_state", &base)?, &format!("{base}.init_state"))?;
    Ok(ParserDef { init, states })
}

pub(super) fn load_deparser(cx: &Ctx, root: &Value) -> R<Vec<HdrId>> {
    let deps = opt_arr(root, "deparsers");
    let Some((di, d)) = deps
        .iter()
        .enumerate()
        .find(|(_, p)| p.get("name").and_then(|n| n.as_str()) == Some("deparser"))
        .or_else(|| deps.iter().enumerate().next())
    else {
        return err("deparsers", "simple_switch needs a deparser named 'deparser'");
    };
    let p = elem_path("", "deparsers", di, d);
    if let Some(first) = opt_arr(d, "primitives").first() {
        return err(&elem_path(&p, "primitives", 0, first), "deparser primitives are not supported");
    }
    let mut order = vec![];
    for (i, h) in as_arr(get(d, "order", &p)?, &p)?.iter().enumerate() {
        order.push(cx.header(as_str(h, &format!("{p}.order[{i}]"))?, &format!("{p}.order[{i}]"))?);
    }
    Ok(order)
}
