//! Calculations, field/learn lists, stateful externs, pipelines (tables,
//! conditionals, action profiles) and checksums.

use super::expr::hexstr;
use super::parser::hex_bytes;
use super::*;
use crate::value::Val;

fn algo_by_name(name: &str) -> Option<(HashAlgo, u32)> {
    Some(match name {
        "crc16" => (HashAlgo::Crc16, 16),
        "crc32" => (HashAlgo::Crc32, 32),
        "crcCCITT" => (HashAlgo::CrcCcitt, 16),
        "csum16" | "cksum16" => (HashAlgo::Csum16, 16),
        "identity" => (HashAlgo::Identity, 64),
        "xor16" => (HashAlgo::Xor16, 16),
        "xor32" => (HashAlgo::Xor32, 32),
        "crc8_custom" => (HashAlgo::Crc8Custom, 8),
        "crc16_custom" => (HashAlgo::Crc16Custom, 16),
        "crc32_custom" => (HashAlgo::Crc32Custom, 32),
        "crc64_custom" => (HashAlgo::Crc64Custom, 64),
        "round_robin" => (HashAlgo::RoundRobin, 64),
        _ => return None,
    })
}

fn calc_inputs(cx: &Ctx, list: &[Value], path: &str) -> R<Vec<CalcInput>> {
    let mut inputs = vec![];
    for (j, inp) in list.iter().enumerate() {
        let ip = format!("{path}.input[{j}]");
        let ty = get_str(inp, "type", &ip)?;
        match ty {
            "field" => {
                let arr = as_arr(get(inp, "value", &ip)?, &ip)?;
                if arr.len() != 2 {
                    return err(&ip, "expected [header, field]");
                }
                let (h, f) = (as_str(&arr[0], &ip)?, as_str(&arr[1], &ip)?);
                inputs.push(CalcInput::Field(cx.field(h, f, &ip)?));
            }
            "hexstr" => {
                let value = hexstr(get(inp, "value", &ip)?, &ip)?;
                let width = get_u32(inp, "bitwidth", &ip)?;
                inputs.push(CalcInput::Const { value, width });
            }
            "header" => {
                let h = cx.header(get_str(inp, "value", &ip)?, &ip)?;
                let hd = &cx.headers[h as usize];
                for f in hd.first_field..hd.first_field + hd.nfields {
                    inputs.push(CalcInput::Field(f));
                }
            }
            "payload" => inputs.push(CalcInput::Payload),
            other => return err(&ip, format!("calculation input type '{other}' is not supported")),
        }
    }
    Ok(inputs)
}

pub(super) fn load_calculations(cx: &mut Ctx, root: &Value) -> R<()> {
    for (i, c) in opt_arr(root, "calculations").iter().enumerate() {
        let p = elem_path("", "calculations", i, c);
        let name = get_str(c, "name", &p)?;
        let algo_name = get_str(c, "algo", &p)?;
        let Some((algo, out_width)) = algo_by_name(algo_name) else {
            return err(&p, format!("hash algorithm '{algo_name}' is not supported"));
        };
        let inputs = calc_inputs(cx, opt_arr(c, "input"), &p)?;
        cx.calc_by_name.insert(name.to_string(), cx.calcs.len() as u32);
        cx.calcs.push(CalcDef { name: name.to_string(), algo, inputs, out_width });
    }
    Ok(())
}

fn field_elements(cx: &Ctx, l: &Value, path: &str) -> R<Vec<FieldId>> {
    let mut fields = vec![];
    for (j, e) in opt_arr(l, "elements").iter().enumerate() {
        let ep = format!("{path}.elements[{j}]");
        let ty = get_str(e, "type", &ep)?;
        if ty != "field" {
            return err(&ep, format!("field list element type '{ty}' is not supported"));
        }
        let arr = as_arr(get(e, "value", &ep)?, &ep)?;
        if arr.len() != 2 {
            return err(&ep, "expected [header, field]");
        }
        fields.push(cx.field(as_str(&arr[0], &ep)?, as_str(&arr[1], &ep)?, &ep)?);
    }
    Ok(fields)
}

pub(super) fn load_field_lists(cx: &Ctx, root: &Value, key: &str) -> R<Vec<Option<Vec<FieldId>>>> {
    let mut out: Vec<Option<Vec<FieldId>>> = vec![None];
    for (i, l) in opt_arr(root, key).iter().enumerate() {
        let p = elem_path("", key, i, l);
        let id = get_u32(l, "id", &p)? as usize;
        if id > 65535 {
            return err(&p, "field list id out of range");
        }
        if out.len() <= id {
            out.resize(id + 1, None);
        }
        out[id] = Some(field_elements(cx, l, &p)?);
    }
    Ok(out)
}

pub(super) fn load_learn_lists(cx: &Ctx, root: &Value) -> R<Vec<Option<LearnListDef>>> {
    let mut out: Vec<Option<LearnListDef>> = vec![None];
    for (i, l) in opt_arr(root, "learn_lists").iter().enumerate() {
        let p = elem_path("", "learn_lists", i, l);
        let id = get_u32(l, "id", &p)? as usize;
        if id > 65535 {
            return err(&p, "learn list id out of range");
        }
        if out.len() <= id {
            out.resize(id + 1, None);
        }
        let name = get_str(l, "name", &p)?.to_string();
        out[id] = Some(LearnListDef { name, fields: field_elements(cx, l, &p)? });
    }
    Ok(out)
}

pub(super) fn load_externs(cx: &mut Ctx, root: &Value) -> R<()> {
    for (i, c) in opt_arr(root, "counter_arrays").iter().enumerate() {
        let p = elem_path("", "counter_arrays", i, c);
        let name = get_str(c, "name", &p)?.to_string();
        let is_direct = c.get("is_direct").and_then(|d| d.as_bool()).unwrap_or(false);
        // direct counters have no size of their own
        let size = if is_direct && c.get("size").is_none() { 0 } else { get_u32(c, "size", &p)? };
        cx.counter_by_name.insert(name.clone(), cx.counters.len() as u32);
        cx.counters.push(CounterDef { name, size, is_direct, binding: None });
    }
    for (i, m) in opt_arr(root, "meter_arrays").iter().enumerate() {
        let p = elem_path("", "meter_arrays", i, m);
        let name = get_str(m, "name", &p)?.to_string();
        let size = get_u32(m, "size", &p)?;
        let is_direct = m.get("is_direct").and_then(|d| d.as_bool()).unwrap_or(false);
        let mtype = match m.get("type").and_then(|t| t.as_str()).unwrap_or("bytes") {
            "bytes" => MeterType::Bytes,
            "packets" => MeterType::Packets,
            other => return err(&p, format!("meter type '{other}' is not supported")),
        };
        let rate_count = m.get("rate_count").and_then(|r| r.as_u64()).unwrap_or(2);
        if rate_count != 2 {
            return err(&p, "only two-rate three-colour meters (rate_count 2) are supported");
        }
        let result = match m.get("result_target") {
            Some(t) if !t.is_null() => {
                let arr = as_arr(t, &p)?;
                if arr.len() != 2 {
                    return err(&p, "result_target must be [header, field]");
                }
                Some(cx.field(as_str(&arr[0], &p)?, as_str(&arr[1], &p)?, &p)?)
            }
            _ => None,
        };
        cx.meter_by_name.insert(name.clone(), cx.meters.len() as u32);
        cx.meters.push(MeterDef { name, size, mtype, is_direct, result, binding: None });
    }
    for (i, r) in opt_arr(root, "register_arrays").iter().enumerate() {
        let p = elem_path("", "register_arrays", i, r);
        let name = get_str(r, "name", &p)?.to_string();
        let size = get_u32(r, "size", &p)?;
        let width = get_u32(r, "bitwidth", &p)?;
        cx.register_by_name.insert(name.clone(), cx.registers.len() as u32);
        cx.registers.push(RegisterDef { name, size, width });
    }
    Ok(())
}

pub(super) struct Pipelines {
    pub tables: Vec<TableDef>,
    pub conds: Vec<CondDef>,
    pub ingress: PipelineDef,
    pub egress: PipelineDef,
    pub profiles: Vec<ActionProfileDef>,
}

fn match_kind(s: &str, path: &str) -> R<MatchKind> {
    MatchKind::from_name(s).map_or_else(|| err(path, format!("match kind '{s}' is not supported")), Ok)
}

fn match_value(k: &KeyDef, v: &Value, path: &str) -> R<MatchValue> {
    let n = k.nbytes as usize;
    let mt = get_str(v, "match_type", path)?;
    Ok(match mt {
        "exact" | "valid" => MatchValue::Exact(hex_bytes(get(v, "key", path)?, n, path)?),
        "lpm" => MatchValue::Lpm(hex_bytes(get(v, "key", path)?, n, path)?, get_u32(v, "prefix_length", path)?),
        "ternary" | "optional" => MatchValue::Ternary(
            hex_bytes(get(v, "key", path)?, n, path)?,
            hex_bytes(get(v, "mask", path)?, n, path)?,
        ),
        "range" => MatchValue::Range(
            hex_bytes(get(v, "start", path)?, n, path)?,
            hex_bytes(get(v, "end", path)?, n, path)?,
        ),
        other => return err(path, format!("match type '{other}' is not supported")),
    })
}

fn action_data(list: &Value, action: &ActionDef, path: &str) -> R<Vec<Val>> {
    let arr = as_arr(list, path)?;
    if arr.len() != action.params.len() {
        return err(
            path,
            format!("action '{}' takes {} argument(s), found {}", action.name, action.params.len(), arr.len()),
        );
    }
    let mut out = vec![];
    for (i, a) in arr.iter().enumerate() {
        let v = hexstr(a, path)?;
        out.push(v.trunc(action.params[i].width));
    }
    Ok(out)
}

pub(super) fn load_pipelines(cx: &mut Ctx, root: &Value) -> R<Pipelines> {
    let pipes = opt_arr(root, "pipelines");
    let mut out = Pipelines {
        tables: vec![],
        conds: vec![],
        ingress: PipelineDef { name: "ingress".into(), init: None },
        egress: PipelineDef { name: "egress".into(), init: None },
        profiles: vec![],
    };
    let mut found = [false, false];
    for (pi, pj) in pipes.iter().enumerate() {
        let base = elem_path("", "pipelines", pi, pj);
        let pname = get_str(pj, "name", &base)?;
        // node names are per pipeline
        let mut nodes: HashMap<String, NodeRef> = HashMap::new();
        let t0 = out.tables.len() as u32;
        let c0 = out.conds.len() as u32;
        for (i, t) in opt_arr(pj, "tables").iter().enumerate() {
            nodes.insert(get_str(t, "name", &elem_path(&base, "tables", i, t))?.to_string(), NodeRef::Table(t0 + i as u32));
        }
        for (i, c) in opt_arr(pj, "conditionals").iter().enumerate() {
            nodes.insert(
                get_str(c, "name", &elem_path(&base, "conditionals", i, c))?.to_string(),
                NodeRef::Cond(c0 + i as u32),
            );
        }
        let resolve = |v: Option<&Value>, path: &str| -> R<Option<NodeRef>> {
            match v {
                None => Ok(None),
                Some(x) if x.is_null() => Ok(None),
                Some(x) => {
                    let n = as_str(x, path)?;
                    match nodes.get(n) {
                        Some(r) => Ok(Some(*r)),
                        None => err(path, format!("unknown table or conditional '{n}'")),
                    }
                }
            }
        };
        let mut profile_by_name: HashMap<String, u32> = HashMap::new();
        for (i, a) in opt_arr(pj, "action_profiles").iter().enumerate() {
            let p = elem_path(&base, "action_profiles", i, a);
            let name = get_str(a, "name", &p)?.to_string();
            let max_size = a.get("max_size").and_then(|m| m.as_u64()).unwrap_or(0) as u32;
            let selector = match a.get("selector") {
                Some(s) if !s.is_null() => {
                    let sp = format!("{p}.selector");
                    let algo_name = get_str(s, "algo", &sp)?;
                    let Some((algo, out_width)) = algo_by_name(algo_name) else {
                        return err(&sp, format!("hash algorithm '{algo_name}' is not supported"));
                    };
                    let inputs = calc_inputs(cx, opt_arr(s, "input"), &sp)?;
                    cx.calcs.push(CalcDef { name: format!("{name}$selector"), algo, inputs, out_width });
                    Some(cx.calcs.len() as u32 - 1)
                }
                _ => None,
            };
            profile_by_name.insert(name.clone(), out.profiles.len() as u32);
            out.profiles.push(ActionProfileDef { name, max_size, selector });
        }
        for (i, t) in opt_arr(pj, "tables").iter().enumerate() {
            let p = elem_path(&base, "tables", i, t);
            let table = load_table(cx, t, &p, &resolve, &profile_by_name)?;
            out.tables.push(table);
        }
        for (i, c) in opt_arr(pj, "conditionals").iter().enumerate() {
            let p = elem_path(&base, "conditionals", i, c);
            let expr = cx.expr(get(c, "expression", &p)?, &format!("{p}.expression"))?;
            out.conds.push(CondDef {
                name: get_str(c, "name", &p)?.to_string(),
                expr,
                true_next: resolve(c.get("true_next"), &format!("{p}.true_next"))?,
                false_next: resolve(c.get("false_next"), &format!("{p}.false_next"))?,
            });
        }
        let init = resolve(pj.get("init_table"), &format!("{base}.init_table"))?;
        match pname {
            "ingress" => {
                out.ingress.init = init;
                found[0] = true;
            }
            "egress" => {
                out.egress.init = init;
                found[1] = true;
            }
            _ => {}
        }
    }
    if !found[0] || !found[1] {
        return err("pipelines", "simple_switch needs pipelines named 'ingress' and 'egress'");
    }
    // bind direct counters and meters to their tables (by the JSON's `binding`)
    for (key, is_counter) in [("counter_arrays", true), ("meter_arrays", false)] {
        for (i, c) in opt_arr(root, key).iter().enumerate() {
            let Some(b) = c.get("binding").and_then(|b| b.as_str()) else { continue };
            let Some(ti) = out.tables.iter().position(|t| t.name == b) else {
                return err(&elem_path("", key, i, c), format!("bound to unknown table '{b}'"));
            };
            if is_counter {
                cx.counters[i].binding = Some(ti as u32);
            } else {
                cx.meters[i].binding = Some(ti as u32);
            }
        }
    }
    Ok(out)
}

type Resolver<'a> = dyn Fn(Option<&Value>, &str) -> R<Option<NodeRef>> + 'a;

fn load_table(
    cx: &mut Ctx,
    t: &Value,
    p: &str,
    resolve: &Resolver<'_>,
    profiles: &HashMap<String, u32>,
) -> R<TableDef> {
    let name = get_str(t, "name", p)?.to_string();
    let mut keys = vec![];
    for (j, k) in opt_arr(t, "key").iter().enumerate() {
        let kp = format!("{p}.key[{j}]");
        let kind = match_kind(get_str(k, "match_type", &kp)?, &kp)?;
        let target = get(k, "target", &kp)?;
        let (src, width) = if let Some(hname) = target.as_str() {
            // legacy `valid` key on a header name
            (KeyPart::Valid(HdrX::Static(cx.header(hname, &kp)?)), 1)
        } else {
            let arr = as_arr(target, &kp)?;
            if arr.len() != 2 {
                return err(&kp, "key target must be [header, field]");
            }
            let (h, f) = (as_str(&arr[0], &kp)?, as_str(&arr[1], &kp)?);
            if f == "$valid$" {
                (KeyPart::Valid(HdrX::Static(cx.header(h, &kp)?)), 1)
            } else {
                let fid = cx.field(h, f, &kp)?;
                let fd = &cx.fields[fid as usize];
                if fd.varbit {
                    return err(&kp, "varbit fields cannot be table keys");
                }
                (KeyPart::Field(fid), fd.width)
            }
        };
        let nbytes = (width + 7) / 8;
        let mask = match k.get("mask") {
            Some(m) if !m.is_null() => Some(hex_bytes(m, nbytes as usize, &kp)?),
            _ => None,
        };
        let kname = k.get("name").and_then(|n| n.as_str()).map(|s| s.to_string()).unwrap_or_else(|| {
            target.as_array().map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(".")).unwrap_or_default()
        });
        keys.push(KeyDef { name: kname, kind, src, width, nbytes, mask });
    }
    let match_type = match_kind(t.get("match_type").and_then(|m| m.as_str()).unwrap_or("exact"), p)?;
    let ttype = match t.get("type").and_then(|m| m.as_str()).unwrap_or("simple") {
        "simple" => TableType::Simple,
        "indirect" => TableType::Indirect,
        "indirect_ws" => TableType::IndirectWs,
        other => return err(p, format!("table type '{other}' is not supported")),
    };
    let profile = match t.get("action_profile").and_then(|a| a.as_str()) {
        Some(n) => match profiles.get(n) {
            Some(i) => Some(*i),
            None => return err(p, format!("unknown action profile '{n}'")),
        },
        None => None,
    };
    if ttype != TableType::Simple && profile.is_none() {
        return err(p, "an indirect table needs an 'action_profile'");
    }
    let mut actions = vec![];
    for (j, a) in opt_arr(t, "action_ids").iter().enumerate() {
        let id = as_u32(a, &format!("{p}.action_ids[{j}]"))?;
        if id as usize >= cx.actions.len() {
            return err(p, format!("unknown action id {id}"));
        }
        actions.push(id);
    }
    let mut next_by_action = HashMap::new();
    let mut hit = None;
    let mut miss = None;
    let mut hit_miss = false;
    if let Some(nt) = t.get("next_tables").and_then(|n| n.as_object()) {
        for (aname, target) in nt {
            let np = format!("{p}.next_tables.{aname}");
            let node = resolve(Some(target), &np)?;
            match aname.as_str() {
                "__HIT__" => {
                    hit = node;
                    hit_miss = true;
                }
                "__MISS__" => {
                    miss = node;
                    hit_miss = true;
                }
                _ => {
                    let ids: Vec<u32> = actions
                        .iter()
                        .copied()
                        .filter(|a| cx.actions[*a as usize].name == *aname)
                        .collect();
                    let ids = if ids.is_empty() {
                        match cx.action_by_name.get(aname) {
                            Some(a) => vec![*a],
                            None => return err(&np, format!("unknown action '{aname}'")),
                        }
                    } else {
                        ids
                    };
                    for a in ids {
                        next_by_action.insert(a, node);
                    }
                }
            }
        }
    }
    let base_default_next = resolve(t.get("base_default_next"), &format!("{p}.base_default_next"))?;
    let default = match t.get("default_entry") {
        Some(d) if !d.is_null() => {
            let dp = format!("{p}.default_entry");
            let action = get_u32(d, "action_id", &dp)?;
            if action as usize >= cx.actions.len() {
                return err(&dp, format!("unknown action id {action}"));
            }
            let data = match d.get("action_data") {
                Some(ad) if !ad.is_null() => action_data(ad, &cx.actions[action as usize], &dp)?,
                _ => vec![],
            };
            Some(DefaultEntry {
                action,
                data,
                action_const: d.get("action_const").and_then(|x| x.as_bool()).unwrap_or(false),
                entry_const: d.get("action_entry_const").and_then(|x| x.as_bool()).unwrap_or(false),
            })
        }
        _ => None,
    };
    let mut const_entries = vec![];
    for (j, e) in opt_arr(t, "entries").iter().enumerate() {
        let ep = format!("{p}.entries[{j}]");
        let mk = opt_arr(e, "match_key");
        if mk.len() != keys.len() {
            return err(&ep, format!("{} key values for {} key fields", mk.len(), keys.len()));
        }
        let mut key = vec![];
        for (k, v) in keys.iter().zip(mk) {
            key.push(match_value(k, v, &ep)?);
        }
        let ae = get(e, "action_entry", &ep)?;
        let action = get_u32(ae, "action_id", &ep)?;
        if action as usize >= cx.actions.len() {
            return err(&ep, format!("unknown action id {action}"));
        }
        let data = action_data(get(ae, "action_data", &ep)?, &cx.actions[action as usize], &ep)?;
        let priority = e.get("priority").and_then(|x| x.as_i64()).unwrap_or(j as i64) as i32;
        const_entries.push(ConstEntry { key, action, data, priority });
    }
    let direct_meter = match t.get("direct_meters") {
        Some(m) if !m.is_null() => {
            let n = as_str(m, &format!("{p}.direct_meters"))?;
            match cx.meter_by_name.get(n) {
                Some(i) => Some(*i),
                None => return err(p, format!("unknown direct meter '{n}'")),
            }
        }
        _ => None,
    };
    Ok(TableDef {
        name,
        keys,
        match_type,
        ttype,
        profile,
        max_size: t.get("max_size").and_then(|m| m.as_u64()).unwrap_or(1024) as u32,
        actions,
        next_list: {
            let mut l: Vec<(u32, Option<NodeRef>)> = next_by_action.iter().map(|(a, n)| (*a, *n)).collect();
            l.sort_by_key(|x| x.0);
            l
        },
        next_by_action,
        next_hit_miss: if hit_miss { Some((hit, miss)) } else { None },
        base_default_next,
        default,
        const_entries,
        with_counters: t.get("with_counters").and_then(|x| x.as_bool()).unwrap_or(false),
        direct_meter,
        support_timeout: t.get("support_timeout").and_then(|x| x.as_bool()).unwrap_or(false),
    })
}

pub(super) fn load_checksums(cx: &Ctx, root: &Value) -> R<Vec<ChecksumDef>> {
    let mut out = vec![];
    for (i, c) in opt_arr(root, "checksums").iter().enumerate() {
        let p = elem_path("", "checksums", i, c);
        let name = get_str(c, "name", &p)?.to_string();
        let target = as_arr(get(c, "target", &p)?, &p)?;
        if target.len() != 2 {
            return err(&p, "target must be [header, field]");
        }
        let target = cx.field(as_str(&target[0], &p)?, as_str(&target[1], &p)?, &p)?;
        let cname = get_str(c, "calculation", &p)?;
        let Some(calc) = cx.calc_by_name.get(cname).copied() else {
            return err(&p, format!("unknown calculation '{cname}'"));
        };
        let cond = match c.get("if_cond") {
            Some(e) if !e.is_null() => match cx.expr(e, &format!("{p}.if_cond"))? {
                Expr::Const(v) if v.truthy() => None,
                other => Some(other),
            },
            _ => None,
        };
        let verify = c.get("verify").and_then(|x| x.as_bool()).unwrap_or(true);
        let update = c.get("update").and_then(|x| x.as_bool()).unwrap_or(true);
        out.push(ChecksumDef { name, target, calc, verify, update, cond });
    }
    Ok(out)
}
