//! Operands, expressions and action primitives.

use super::*;
use crate::ops;
use crate::value::Val;

/// Unwraps `{"type": "expression", "value": X}` layers down to an op node or
/// a plain operand.
fn unwrap_expr(v: &Value) -> &Value {
    let mut cur = v;
    while cur.get("type").and_then(|t| t.as_str()) == Some("expression") {
        match cur.get("value") {
            Some(inner) => cur = inner,
            None => break,
        }
    }
    cur
}

fn pair<'a>(v: &'a Value, path: &str) -> R<(&'a str, &'a str)> {
    let arr = as_arr(v, path)?;
    if arr.len() != 2 {
        return err(path, format!("expected [header, field], found {}", short(v)));
    }
    Ok((as_str(&arr[0], path)?, as_str(&arr[1], path)?))
}

pub(crate) fn hexstr(v: &Value, path: &str) -> R<Val> {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Ok(Val::S(i as i128));
            }
            return err(path, format!("bad number {n}"));
        }
        _ => return err(path, format!("expected a hex string, found {}", short(v))),
    };
    match Val::parse_hexstr(s) {
        Some(v) => Ok(v),
        None => err(path, format!("bad hex string '{s}'")),
    }
}

impl Ctx {
    fn field_expr(&self, h: &str, f: &str, path: &str) -> R<Expr> {
        if f == "$valid$" {
            return Ok(Expr::Valid(HdrX::Static(self.header(h, path)?)));
        }
        Ok(Expr::Field(self.field(h, f, path)?))
    }

    /// A value operand: field, constant, parameter, expression, ...
    pub fn expr(&self, v: &Value, path: &str) -> R<Expr> {
        let v = unwrap_expr(v);
        if v.get("op").is_some() {
            return self.op_expr(v, path);
        }
        let ty = get_str(v, "type", path)?;
        let val = get(v, "value", path)?;
        match ty {
            "field" => {
                let (h, f) = pair(val, path)?;
                self.field_expr(h, f, path)
            }
            "hexstr" => Ok(Expr::Const(hexstr(val, path)?)),
            "bool" => match val.as_bool() {
                Some(b) => Ok(Expr::Const(Val::from(b))),
                None => err(path, "expected a boolean"),
            },
            // action data: `local` inside an expression; BMv2's build_expression
            // refuses `runtime_data` (a primitive's own parameter only, see `param`)
            "local" => Ok(Expr::Param(as_u32(val, path)?)),
            "runtime_data" => err(
                path,
                "Invalid 'type' in expression: 'runtime_data' (action data inside an expression is 'local')",
            ),
            "stack_field" => {
                let (s, f) = pair(val, path)?;
                let st = self.stack(s, path)?;
                let h0 = self.stacks[st as usize].headers.first().copied();
                let Some(h0) = h0 else { return err(path, format!("stack '{s}' is empty")) };
                if f == "$valid$" {
                    return Ok(Expr::Valid(HdrX::StackLast(st)));
                }
                match self.field_offset_in(h0, f) {
                    Some(off) => Ok(Expr::HdrField(HdrX::StackLast(st), off)),
                    None => err(path, format!("stack '{s}' has no field '{f}'")),
                }
            }
            "lookahead" => {
                let arr = as_arr(val, path)?;
                if arr.len() != 2 {
                    return err(path, "expected [bit offset, width]");
                }
                Ok(Expr::Lookahead { off: as_u32(&arr[0], path)?, width: super::layout::lookahead_width(&arr[1], path)? })
            }
            "header" => err(path, "a header is not a value here"),
            other => err(path, format!("operand type '{other}' is not supported here")),
        }
    }

    fn op_expr(&self, v: &Value, path: &str) -> R<Expr> {
        let op = get_str(v, "op", path)?;
        let left = v.get("left").filter(|l| !l.is_null());
        let right = v.get("right").filter(|r| !r.is_null());
        let p = format!("{path}(op '{op}')");
        let need = |x: Option<&Value>, which: &str| -> R<Value> {
            match x {
                Some(x) => Ok(x.clone()),
                None => err(&p, format!("operator '{op}' needs a {which} operand")),
            }
        };
        let e = match op {
            "valid" => Expr::Valid(self.hdr(&need(right, "right")?, &p)?),
            "valid_union" => Expr::ValidUnion(self.union_ref(&need(right, "right")?, &p)?),
            "?" => {
                let c = self.expr(&need(v.get("cond").filter(|c| !c.is_null()), "cond")?, &p)?;
                let l = self.expr(&need(left, "left")?, &p)?;
                let r = self.expr(&need(right, "right")?, &p)?;
                if let Expr::Const(cv) = &c {
                    return Ok(if cv.truthy() { l } else { r });
                }
                Expr::Cond(Box::new(c), Box::new(l), Box::new(r))
            }
            "two_comp_mod" | "sat_cast" | "usat_cast" => {
                let l = self.expr(&need(left, "left")?, &p)?;
                let w = match self.expr(&need(right, "right")?, &p)? {
                    Expr::Const(w) => w.to_usize_sat().min(1 << 20) as u32,
                    _ => return err(&p, "the width must be a constant"),
                };
                let e = match op {
                    "two_comp_mod" => Expr::TwoCompMod(Box::new(l), w),
                    "sat_cast" => Expr::SatCast(Box::new(l), w),
                    _ => Expr::USatCast(Box::new(l), w),
                };
                return Ok(fold(e));
            }
            "access_field" => {
                let h = self.hdr(&need(left, "left")?, &p)?;
                let r = need(right, "right")?;
                let off = match r.as_u64() {
                    Some(n) => n as u32,
                    None => match self.expr(&r, &p)? {
                        Expr::Const(c) => c.to_usize_sat() as u32,
                        _ => return err(&p, "the field offset must be a constant"),
                    },
                };
                if let HdrX::Static(hid) = h {
                    let hd = &self.headers[hid as usize];
                    if off >= hd.nfields {
                        return err(&p, format!("header '{}' has no field number {off}", hd.name));
                    }
                    return Ok(Expr::Field(hd.first_field + off));
                }
                Expr::HdrField(h, off)
            }
            "last_stack_index" | "size_stack" => {
                let r = need(right, "right")?;
                let name = as_str(get(&r, "value", &p)?, &p)?;
                let st = self.stack(name, &p)?;
                if op == "size_stack" {
                    Expr::SizeStack(st)
                } else {
                    Expr::LastStackIndex(st)
                }
            }
            "dereference_header_stack" | "dereference_union_stack" | "access_union_header" => {
                return err(&p, format!("'{op}' yields a header, not a value"))
            }
            _ => {
                if left.is_none() {
                    if let Some(u) = ops::unop_by_name(op) {
                        let a = self.expr(&need(right, "right")?, &p)?;
                        return Ok(fold(Expr::Unary(u, Box::new(a))));
                    }
                }
                match ops::binop_by_name(op) {
                    Some(b) => {
                        let a = self.expr(&need(left, "left")?, &p)?;
                        let c = self.expr(&need(right, "right")?, &p)?;
                        return Ok(fold(Expr::Binary(b, Box::new(a), Box::new(c))));
                    }
                    None => return err(&p, format!("unknown operator '{op}'")),
                }
            }
        };
        Ok(e)
    }

    /// A header operand: `header`, `regular` (parser), a stack element
    /// expression, or a union member.
    pub fn hdr(&self, v: &Value, path: &str) -> R<HdrX> {
        let v = unwrap_expr(v);
        if let Some(op) = v.get("op").and_then(|o| o.as_str()) {
            let left = get(v, "left", path)?;
            let right = get(v, "right", path)?;
            return match op {
                "dereference_header_stack" => {
                    let name = as_str(get(left, "value", path)?, path)?;
                    let stack = self.stack(name, path)?;
                    let index = self.expr(right, path)?;
                    if let Expr::Const(c) = &index {
                        let i = c.to_usize_sat();
                        if let Some(h) = self.stacks[stack as usize].headers.get(i) {
                            return Ok(HdrX::Static(*h));
                        }
                    }
                    Ok(HdrX::StackElem { stack, index: Box::new(index) })
                }
                "access_union_header" => {
                    let u = self.union_ref(left, path)?;
                    let member = match right.as_u64() {
                        Some(n) => n as u32,
                        None => match self.expr(right, path)? {
                            Expr::Const(c) => c.to_usize_sat() as u32,
                            _ => return err(path, "the union member must be a constant"),
                        },
                    };
                    if let UnionX::Static(uid) = u {
                        if let Some(h) = self.unions[uid as usize].headers.get(member as usize) {
                            return Ok(HdrX::Static(*h));
                        }
                        return err(path, format!("union has no member {member}"));
                    }
                    Ok(HdrX::UnionMember { union: Box::new(u), member })
                }
                _ => err(path, format!("operator '{op}' does not yield a header")),
            };
        }
        let ty = get_str(v, "type", path)?;
        let val = get(v, "value", path)?;
        match ty {
            "header" | "regular" => Ok(HdrX::Static(self.header(as_str(val, path)?, path)?)),
            other => err(path, format!("expected a header, found operand type '{other}'")),
        }
    }

    pub fn union_ref(&self, v: &Value, path: &str) -> R<UnionX> {
        let v = unwrap_expr(v);
        if v.get("op").and_then(|o| o.as_str()) == Some("dereference_union_stack") {
            let left = get(v, "left", path)?;
            let name = as_str(get(left, "value", path)?, path)?;
            let us = self.ustack(name, path)?;
            let index = self.expr(get(v, "right", path)?, path)?;
            if let Expr::Const(c) = &index {
                if let Some(u) = self.union_stacks[us as usize].unions.get(c.to_usize_sat()) {
                    return Ok(UnionX::Static(*u));
                }
            }
            return Ok(UnionX::StackElem { ustack: us, index: Box::new(index) });
        }
        let ty = get_str(v, "type", path)?;
        match ty {
            "header_union" => Ok(UnionX::Static(self.union(get_str(v, "value", path)?, path)?)),
            other => err(path, format!("expected a header union, found operand type '{other}'")),
        }
    }

    pub fn lvalue(&self, v: &Value, path: &str) -> R<LValue> {
        match self.expr(v, path)? {
            Expr::Field(f) => Ok(LValue::Field(f)),
            Expr::HdrField(h, off) => Ok(LValue::HdrField(h, off)),
            _ => err(path, format!("{} is not a writable field", short(v))),
        }
    }

    fn named(&self, v: &Value, ty: &str, map: &HashMap<String, u32>, path: &str) -> R<u32> {
        let t = get_str(v, "type", path)?;
        if t != ty {
            return err(path, format!("expected operand type '{ty}', found '{t}'"));
        }
        let name = get_str(v, "value", path)?;
        match map.get(name) {
            Some(i) => Ok(*i),
            None => err(path, format!("unknown {ty} '{name}'")),
        }
    }

    fn stack_ref(&self, v: &Value, path: &str) -> R<StackRef> {
        let t = get_str(v, "type", path)?;
        let name = get_str(v, "value", path)?;
        match t {
            "header_stack" => Ok(StackRef::Headers(self.stack(name, path)?)),
            "header_union_stack" => Ok(StackRef::Unions(self.ustack(name, path)?)),
            _ => err(path, format!("expected a header stack, found '{t}'")),
        }
    }

    /// A primitive's parameter as a value (BMv2's `process_single_param`):
    /// action data is `runtime_data` here, an index below the action's
    /// `nparams`; `local` belongs inside expressions only.
    fn param(&self, nparams: usize, v: &Value, path: &str) -> R<Expr> {
        match v.get("type").and_then(|t| t.as_str()) {
            Some("runtime_data") => {
                let i = as_u32(get(v, "value", path)?, path)?;
                if i as usize >= nparams {
                    return err(
                        path,
                        format!(
                            "Invalid 'runtime_data' parameter reference: trying to use parameter at \
                             offset {i} but action only has {nparams} parameter(s)"
                        ),
                    );
                }
                Ok(Expr::Param(i))
            }
            Some("local") => err(
                path,
                "Parameter type 'local' not supported (action data is 'runtime_data' outside an expression)",
            ),
            _ => self.expr(v, path),
        }
    }

    /// Compiles one primitive call `{op, parameters}` of an action with
    /// `nparams` parameters (0 for a parser's primitive).
    pub fn primitive(&self, v: &Value, path: &str, nparams: usize) -> R<Prim> {
        let op = get_str(v, "op", path)?;
        let empty = vec![];
        let params = match v.get("parameters") {
            Some(p) => as_arr(p, path)?,
            None => &empty,
        };
        let p = format!("{path} ('{op}')");
        let n = |k: usize| -> R<()> {
            if params.len() != k {
                return err(&p, format!("'{op}' takes {k} parameter(s), found {}", params.len()));
            }
            Ok(())
        };
        let pp = |i: usize| format!("{p}.parameters[{i}]");
        let prim = match op {
            "assign" | "modify_field" => {
                n(2)?;
                let dst_ty = params[0].get("type").and_then(|t| t.as_str()).unwrap_or("");
                match dst_ty {
                    "header" => Prim::AssignHeader(self.hdr(&params[0], &pp(0))?, self.hdr(&params[1], &pp(1))?),
                    "header_union" => Prim::AssignUnion(
                        self.union_ref(&params[0], &pp(0))?,
                        self.union_ref(&params[1], &pp(1))?,
                    ),
                    _ => Prim::Assign(self.lvalue(&params[0], &pp(0))?, self.param(nparams, &params[1], &pp(1))?),
                }
            }
            "assign_VL" => {
                n(2)?;
                Prim::AssignVL(self.lvalue(&params[0], &pp(0))?, self.lvalue(&params[1], &pp(1))?)
            }
            "assign_header" | "copy_header" => {
                n(2)?;
                Prim::AssignHeader(self.hdr(&params[0], &pp(0))?, self.hdr(&params[1], &pp(1))?)
            }
            "assign_union" => {
                n(2)?;
                Prim::AssignUnion(self.union_ref(&params[0], &pp(0))?, self.union_ref(&params[1], &pp(1))?)
            }
            "assign_header_stack" => {
                n(2)?;
                let a = self.named(&params[0], "header_stack", &self.stack_by_name, &pp(0))?;
                let b = self.named(&params[1], "header_stack", &self.stack_by_name, &pp(1))?;
                Prim::AssignHeaderStack(a, b)
            }
            "assign_union_stack" => {
                n(2)?;
                let a = self.named(&params[0], "header_union_stack", &self.ustack_by_name, &pp(0))?;
                let b = self.named(&params[1], "header_union_stack", &self.ustack_by_name, &pp(1))?;
                Prim::AssignUnionStack(a, b)
            }
            "push" | "pop" => {
                n(2)?;
                let stack = self.stack_ref(&params[0], &pp(0))?;
                let count = self.param(nparams, &params[1], &pp(1))?;
                if op == "push" {
                    Prim::Push { stack, count }
                } else {
                    Prim::Pop { stack, count }
                }
            }
            "_jump" => {
                n(1)?;
                Prim::Jump(self.const_u32(&params[0], &pp(0))?)
            }
            "_jump_if_zero" => {
                n(2)?;
                Prim::JumpIfZero(self.param(nparams, &params[0], &pp(0))?, self.const_u32(&params[1], &pp(1))?)
            }
            "exit" => Prim::Exit,
            "assert" => {
                n(1)?;
                Prim::Assert(self.param(nparams, &params[0], &pp(0))?)
            }
            "assume" => {
                n(1)?;
                Prim::Assume(self.param(nparams, &params[0], &pp(0))?)
            }
            "log_msg" => {
                if params.is_empty() {
                    return err(&p, "log_msg needs a format string");
                }
                let fmt = get_str(&params[0], "value", &pp(0))?.to_string();
                let mut args = vec![];
                if let Some(list) = params.get(1) {
                    let vals = get(list, "value", &pp(1))?;
                    // p4c writes `{}` for an empty argument list
                    let empty = vec![];
                    let vals = if vals.is_object() { &empty } else { as_arr(vals, &pp(1))? };
                    for (i, a) in vals.iter().enumerate() {
                        args.push(self.param(nparams, a, &format!("{}[{i}]", pp(1)))?);
                    }
                }
                Prim::LogMsg(fmt, args)
            }
            "mark_to_drop" | "drop" => Prim::MarkToDrop,
            "add_header" | "add_header_fast" => {
                n(1)?;
                Prim::AddHeader(self.hdr(&params[0], &pp(0))?)
            }
            "remove_header" => {
                n(1)?;
                Prim::RemoveHeader(self.hdr(&params[0], &pp(0))?)
            }
            "clone_ingress_pkt_to_egress" | "clone_egress_pkt_to_egress" => {
                if params.is_empty() || params.len() > 2 {
                    return err(&p, format!("'{op}' takes 1 or 2 parameters"));
                }
                let session = self.param(nparams, &params[0], &pp(0))?;
                let field_list = match params.get(1) {
                    Some(x) => self.param(nparams, x, &pp(1))?,
                    None => Expr::Const(Val::ZERO),
                };
                if op == "clone_ingress_pkt_to_egress" {
                    Prim::CloneI2E { session, field_list }
                } else {
                    Prim::CloneE2E { session, field_list }
                }
            }
            "resubmit" => {
                n(1)?;
                Prim::Resubmit(self.param(nparams, &params[0], &pp(0))?)
            }
            "recirculate" => {
                n(1)?;
                Prim::Recirculate(self.param(nparams, &params[0], &pp(0))?)
            }
            "generate_digest" => {
                n(2)?;
                Prim::GenerateDigest {
                    receiver: self.param(nparams, &params[0], &pp(0))?,
                    learn_id: self.param(nparams, &params[1], &pp(1))?,
                }
            }
            "modify_field_with_hash_based_offset" => {
                n(4)?;
                Prim::HashOffset {
                    dst: self.lvalue(&params[0], &pp(0))?,
                    base: self.param(nparams, &params[1], &pp(1))?,
                    calc: self.named(&params[2], "calculation", &self.calc_by_name, &pp(2))?,
                    max: self.param(nparams, &params[3], &pp(3))?,
                }
            }
            "modify_field_rng_uniform" => {
                n(3)?;
                Prim::RngUniform {
                    dst: self.lvalue(&params[0], &pp(0))?,
                    lo: self.param(nparams, &params[1], &pp(1))?,
                    hi: self.param(nparams, &params[2], &pp(2))?,
                }
            }
            "count" => {
                n(2)?;
                Prim::Count {
                    counter: self.named(&params[0], "counter_array", &self.counter_by_name, &pp(0))?,
                    index: self.param(nparams, &params[1], &pp(1))?,
                }
            }
            "execute_meter" => {
                n(3)?;
                Prim::ExecuteMeter {
                    meter: self.named(&params[0], "meter_array", &self.meter_by_name, &pp(0))?,
                    index: self.param(nparams, &params[1], &pp(1))?,
                    dst: self.lvalue(&params[2], &pp(2))?,
                }
            }
            "register_read" => {
                n(3)?;
                Prim::RegisterRead {
                    dst: self.lvalue(&params[0], &pp(0))?,
                    reg: self.named(&params[1], "register_array", &self.register_by_name, &pp(1))?,
                    index: self.param(nparams, &params[2], &pp(2))?,
                }
            }
            "register_write" => {
                n(3)?;
                Prim::RegisterWrite {
                    reg: self.named(&params[0], "register_array", &self.register_by_name, &pp(0))?,
                    index: self.param(nparams, &params[1], &pp(1))?,
                    src: self.param(nparams, &params[2], &pp(2))?,
                }
            }
            "truncate" => {
                n(1)?;
                Prim::Truncate(self.param(nparams, &params[0], &pp(0))?)
            }
            "no_op" => Prim::NoOp,
            other => return err(&p, format!("primitive '{other}' is not supported")),
        };
        Ok(prim)
    }

    fn const_u32(&self, v: &Value, path: &str) -> R<u32> {
        match self.expr(v, path)? {
            Expr::Const(c) => Ok(c.to_usize_sat().min(u32::MAX as usize) as u32),
            _ => err(path, "expected a constant"),
        }
    }
}

/// Folds an operator whose operands are all constants.
pub(crate) fn fold(e: Expr) -> Expr {
    match &e {
        Expr::Unary(op, a) => {
            if let Expr::Const(x) = a.as_ref() {
                return Expr::Const(ops::unary(*op, x));
            }
        }
        Expr::Binary(op, a, b) => {
            if let (Expr::Const(x), Expr::Const(y)) = (a.as_ref(), b.as_ref()) {
                return Expr::Const(ops::binary(*op, x, y));
            }
        }
        Expr::TwoCompMod(a, w) => {
            if let Expr::Const(x) = a.as_ref() {
                return Expr::Const(x.two_comp_mod(*w));
            }
        }
        Expr::SatCast(a, w) => {
            if let Expr::Const(x) = a.as_ref() {
                return Expr::Const(x.sat_cast(*w));
            }
        }
        Expr::USatCast(a, w) => {
            if let Expr::Const(x) = a.as_ref() {
                return Expr::Const(x.usat_cast(*w));
            }
        }
        _ => {}
    }
    e
}

pub(super) fn load_actions(cx: &mut Ctx, root: &Value) -> R<()> {
    let list = opt_arr(root, "actions");
    let mut max_id = 0usize;
    for (i, a) in list.iter().enumerate() {
        let id = get_u32(a, "id", &elem_path("", "actions", i, a))? as usize;
        max_id = max_id.max(id + 1);
    }
    let mut slots: Vec<Option<ActionDef>> = vec![None; max_id];
    for (i, a) in list.iter().enumerate() {
        let p = elem_path("", "actions", i, a);
        let name = get_str(a, "name", &p)?;
        let id = get_u32(a, "id", &p)?;
        let mut params = vec![];
        for (j, r) in opt_arr(a, "runtime_data").iter().enumerate() {
            let rp = format!("{p}.runtime_data[{j}]");
            params.push(RuntimeParam {
                name: get_str(r, "name", &rp)?.to_string(),
                width: get_u32(r, "bitwidth", &rp)?,
            });
        }
        let mut prims = vec![];
        for (j, pr) in opt_arr(a, "primitives").iter().enumerate() {
            prims.push(cx.primitive(pr, &format!("{p}.primitives[{j}]"), params.len())?);
        }
        let nprims = prims.len() as u32;
        for pr in &prims {
            if let Prim::Jump(t) | Prim::JumpIfZero(_, t) = pr {
                if *t > nprims {
                    return err(&p, format!("jump target {t} is outside the action"));
                }
            }
        }
        if slots[id as usize].is_some() {
            return err(&p, format!("duplicate action id {id}"));
        }
        slots[id as usize] = Some(ActionDef { name: name.to_string(), id, params, prims });
    }
    for (i, s) in slots.into_iter().enumerate() {
        let a = s.unwrap_or(ActionDef { name: format!("$unused{i}"), id: i as u32, params: vec![], prims: vec![] });
        // first action with a name wins the name (p4c names are unique)
        cx.action_by_name.entry(a.name.clone()).or_insert(i as u32);
        cx.actions.push(a);
    }
    Ok(())
}
