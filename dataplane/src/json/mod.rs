//! Loading BMv2 JSON (behavioral-model docs/JSON_format.md, version 2.x).
//!
//! `load` parses the document with serde_json once and compiles it into a
//! [`Program`]: names become indices, field references carry their slot and
//! width, constant sub-expressions are folded. Anything unsupported or
//! inconsistent is rejected with a [`LoadError`] that names the JSON path
//! (`pipelines[0].tables[3].key[1]`) and the object's name where it has one.
//!
//! Submodules: `layout` (headers, fields, stacks, unions), `expr` (operands,
//! expressions, primitives), `parser` (parse states), `control` (tables,
//! conditionals, pipelines, checksums, externs).

mod control;
mod expr;
mod layout;
mod parser;

use crate::pipeline::{narrow, words};
use crate::program::*;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

/// A JSON file the engine cannot run: what is wrong and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// JSON path of the offending element, e.g. `actions[3].primitives[0]`.
    pub path: String,
    pub msg: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BMv2 JSON, at {}: {}", self.path, self.msg)
    }
}

impl std::error::Error for LoadError {}

pub type R<T> = Result<T, LoadError>;

#[cold]
pub(crate) fn err<T>(path: &str, msg: impl Into<String>) -> R<T> {
    Err(LoadError { path: path.to_string(), msg: msg.into() })
}

pub(crate) fn get<'a>(v: &'a Value, key: &str, path: &str) -> R<&'a Value> {
    match v.get(key) {
        Some(x) => Ok(x),
        None => err(path, format!("missing key '{key}'")),
    }
}

pub(crate) fn as_str<'a>(v: &'a Value, path: &str) -> R<&'a str> {
    match v.as_str() {
        Some(s) => Ok(s),
        None => err(path, format!("expected a string, found {}", short(v))),
    }
}

pub(crate) fn as_u32(v: &Value, path: &str) -> R<u32> {
    match v.as_u64() {
        Some(n) if n <= u32::MAX as u64 => Ok(n as u32),
        _ => err(path, format!("expected a non-negative integer, found {}", short(v))),
    }
}

pub(crate) fn as_arr<'a>(v: &'a Value, path: &str) -> R<&'a Vec<Value>> {
    match v.as_array() {
        Some(a) => Ok(a),
        None => err(path, format!("expected an array, found {}", short(v))),
    }
}

/// An optional top-level array: missing or null is empty.
pub(crate) fn opt_arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    match v.get(key).and_then(|x| x.as_array()) {
        Some(a) => a,
        None => &[],
    }
}

pub(crate) fn get_str<'a>(v: &'a Value, key: &str, path: &str) -> R<&'a str> {
    as_str(get(v, key, path)?, &format!("{path}.{key}"))
}

pub(crate) fn get_u32(v: &Value, key: &str, path: &str) -> R<u32> {
    as_u32(get(v, key, path)?, &format!("{path}.{key}"))
}

/// A short rendering of a JSON value for error messages.
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..60])
    } else {
        s
    }
}

/// Path of element `i` of array `key`, with the element's name if it has one.
pub(crate) fn elem_path(base: &str, key: &str, i: usize, v: &Value) -> String {
    let prefix = if base.is_empty() { String::new() } else { format!("{base}.") };
    match v.get("name").and_then(|n| n.as_str()) {
        Some(n) => format!("{prefix}{key}[{i}] ('{n}')"),
        None => format!("{prefix}{key}[{i}]"),
    }
}

/// Everything resolved so far, shared by the submodules while loading.
pub(crate) struct Ctx {
    pub headers: Vec<HeaderDef>,
    pub fields: Vec<FieldDef>,
    pub wide_bytes: Vec<u32>,
    pub stacks: Vec<StackDef>,
    pub unions: Vec<UnionDef>,
    pub union_stacks: Vec<UnionStackDef>,
    pub hdr_by_name: HashMap<String, HdrId>,
    pub stack_by_name: HashMap<String, u32>,
    pub union_by_name: HashMap<String, u32>,
    pub ustack_by_name: HashMap<String, u32>,
    pub aliases: HashMap<String, (String, String)>,
    pub calcs: Vec<CalcDef>,
    pub calc_by_name: HashMap<String, u32>,
    pub counters: Vec<CounterDef>,
    pub counter_by_name: HashMap<String, u32>,
    pub meters: Vec<MeterDef>,
    pub meter_by_name: HashMap<String, u32>,
    pub registers: Vec<RegisterDef>,
    pub register_by_name: HashMap<String, u32>,
    pub vsets: Vec<VSetDef>,
    pub vset_by_name: HashMap<String, u32>,
    pub actions: Vec<ActionDef>,
    pub action_by_name: HashMap<String, u32>,
    pub error_by_name: HashMap<String, u32>,
}

impl Ctx {
    /// Resolves `[header, field]` (or an alias) to a field id.
    pub fn field(&self, hdr: &str, field: &str, path: &str) -> R<FieldId> {
        let h = match self.hdr_by_name.get(hdr) {
            Some(h) => *h,
            None => return err(path, format!("unknown header '{hdr}'")),
        };
        let hd = &self.headers[h as usize];
        for f in hd.first_field..hd.first_field + hd.nfields {
            if self.fields[f as usize].name == field {
                return Ok(f);
            }
        }
        err(path, format!("header '{hdr}' has no field '{field}'"))
    }

    /// Field offset within its header.
    pub fn field_offset_in(&self, hdr: HdrId, field: &str) -> Option<u32> {
        let hd = &self.headers[hdr as usize];
        (0..hd.nfields).find(|i| self.fields[(hd.first_field + i) as usize].name == field)
    }

    pub fn header(&self, name: &str, path: &str) -> R<HdrId> {
        match self.hdr_by_name.get(name) {
            Some(h) => Ok(*h),
            None => err(path, format!("unknown header '{name}'")),
        }
    }

    pub fn stack(&self, name: &str, path: &str) -> R<u32> {
        match self.stack_by_name.get(name) {
            Some(h) => Ok(*h),
            None => err(path, format!("unknown header stack '{name}'")),
        }
    }

    pub fn union(&self, name: &str, path: &str) -> R<u32> {
        match self.union_by_name.get(name) {
            Some(h) => Ok(*h),
            None => err(path, format!("unknown header union '{name}'")),
        }
    }

    pub fn ustack(&self, name: &str, path: &str) -> R<u32> {
        match self.ustack_by_name.get(name) {
            Some(h) => Ok(*h),
            None => err(path, format!("unknown header union stack '{name}'")),
        }
    }

    /// A field named by simple_switch's well-known names ("standard_metadata.x",
    /// "intrinsic_metadata.x", "queueing_metadata.x"), through field_aliases.
    fn std_field(&self, alias: &str, std_name: &str) -> Option<FieldId> {
        if let Some((h, f)) = self.aliases.get(alias) {
            if let Ok(id) = self.field(h, f, "") {
                return Some(id);
            }
        }
        self.field("standard_metadata", std_name, "").ok()
    }

    /// A field named only by a field alias.
    fn alias_field(&self, alias: &str) -> Option<FieldId> {
        let (h, f) = self.aliases.get(alias)?;
        self.field(h, f, "").ok()
    }
}

fn check_meta(root: &Value) -> R<()> {
    let Some(meta) = root.get("__meta__") else { return Ok(()) };
    let Some(ver) = meta.get("version") else { return Ok(()) };
    let arr = as_arr(ver, "__meta__.version")?;
    if arr.len() < 2 {
        return err("__meta__.version", "expected [major, minor]");
    }
    let major = as_u32(&arr[0], "__meta__.version[0]")?;
    let minor = as_u32(&arr[1], "__meta__.version[1]")?;
    if major != 2 || minor > 24 {
        return err(
            "__meta__.version",
            format!("format version {major}.{minor} is not supported (2.0 to 2.24 are)"),
        );
    }
    Ok(())
}

/// The program of the last document `load_again` compiled, and its text.
static LAST: Mutex<Option<(String, Program)>> = Mutex::new(None);

/// `load`, remembering the last document: a switch given the JSON it
/// already runs (a testbed resets it so before each case) copies the
/// program instead of compiling it again (a copy takes a tenth of the time).
pub fn load_again(text: &str) -> R<Program> {
    if let Some((t, p)) = LAST.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        if t == text {
            return Ok(p.clone());
        }
    }
    let prog = load(text)?;
    *LAST.lock().unwrap_or_else(|e| e.into_inner()) = Some((text.to_owned(), prog.clone()));
    Ok(prog)
}

/// Compiles a BMv2 JSON document into a [`Program`].
pub fn load(text: &str) -> R<Program> {
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return err("(document)", format!("not valid JSON: {e}")),
    };
    load_value(&root)
}

pub fn load_value(root: &Value) -> R<Program> {
    if !root.is_object() {
        return err("(document)", "the top level must be an object");
    }
    check_meta(root)?;
    for key in ["extern_instances"] {
        if let Some(first) = opt_arr(root, key).first() {
            return err(
                &elem_path("", key, 0, first),
                "extern instances (non-v1model externs) are not supported",
            );
        }
    }
    let mut cx = Ctx {
        headers: vec![],
        fields: vec![],
        wide_bytes: vec![],
        stacks: vec![],
        unions: vec![],
        union_stacks: vec![],
        hdr_by_name: HashMap::new(),
        stack_by_name: HashMap::new(),
        union_by_name: HashMap::new(),
        ustack_by_name: HashMap::new(),
        aliases: HashMap::new(),
        calcs: vec![],
        calc_by_name: HashMap::new(),
        counters: vec![],
        counter_by_name: HashMap::new(),
        meters: vec![],
        meter_by_name: HashMap::new(),
        registers: vec![],
        register_by_name: HashMap::new(),
        vsets: vec![],
        vset_by_name: HashMap::new(),
        actions: vec![],
        action_by_name: HashMap::new(),
        error_by_name: HashMap::new(),
    };
    layout::load_layout(&mut cx, root)?;
    let errors = load_errors(&mut cx, root)?;
    for (i, a) in opt_arr(root, "field_aliases").iter().enumerate() {
        let p = format!("field_aliases[{i}]");
        let arr = as_arr(a, &p)?;
        if arr.len() != 2 {
            return err(&p, "expected [alias, [header, field]]");
        }
        let alias = as_str(&arr[0], &p)?;
        let target = as_arr(&arr[1], &p)?;
        if target.len() != 2 {
            return err(&p, "expected [alias, [header, field]]");
        }
        let (h, f) = (as_str(&target[0], &p)?, as_str(&target[1], &p)?);
        cx.field(h, f, &p)?;
        cx.aliases.insert(alias.to_string(), (h.to_string(), f.to_string()));
    }
    let std = StdMeta {
        ingress_port: cx.std_field("standard_metadata.ingress_port", "ingress_port"),
        egress_spec: cx.std_field("standard_metadata.egress_spec", "egress_spec"),
        egress_port: cx.std_field("standard_metadata.egress_port", "egress_port"),
        instance_type: cx.std_field("standard_metadata.instance_type", "instance_type"),
        packet_length: cx.std_field("standard_metadata.packet_length", "packet_length"),
        enq_timestamp: cx.std_field("queueing_metadata.enq_timestamp", "enq_timestamp"),
        enq_qdepth: cx.std_field("queueing_metadata.enq_qdepth", "enq_qdepth"),
        deq_timedelta: cx.std_field("queueing_metadata.deq_timedelta", "deq_timedelta"),
        deq_qdepth: cx.std_field("queueing_metadata.deq_qdepth", "deq_qdepth"),
        ingress_global_timestamp: cx
            .std_field("intrinsic_metadata.ingress_global_timestamp", "ingress_global_timestamp"),
        egress_global_timestamp: cx
            .std_field("intrinsic_metadata.egress_global_timestamp", "egress_global_timestamp"),
        mcast_grp: cx.std_field("intrinsic_metadata.mcast_grp", "mcast_grp"),
        egress_rid: cx.std_field("intrinsic_metadata.egress_rid", "egress_rid"),
        checksum_error: cx.std_field("standard_metadata.checksum_error", "checksum_error"),
        parser_error: cx.std_field("standard_metadata.parser_error", "parser_error"),
        priority: cx.std_field("intrinsic_metadata.priority", "priority"),
        qid: cx.std_field("queueing_metadata.qid", "qid"),
        p4s_enq_qbytes: cx.alias_field("p4scope.enq_qbytes"),
        p4s_deq_qbytes: cx.alias_field("p4scope.deq_qbytes"),
        p4s_buffer_bytes: cx.alias_field("p4scope.buffer_bytes"),
        p4s_deq_timedelta_ns: cx.alias_field("p4scope.deq_timedelta_ns"),
        p4s_ingress_timestamp_ns: cx.alias_field("p4scope.ingress_timestamp_ns"),
        p4s_egress_timestamp_ns: cx.alias_field("p4scope.egress_timestamp_ns"),
    };
    for (what, f) in [
        ("ingress_port", std.ingress_port),
        ("egress_spec", std.egress_spec),
        ("egress_port", std.egress_port),
        ("instance_type", std.instance_type),
        ("packet_length", std.packet_length),
    ] {
        if f.is_none() {
            return err("headers", format!("simple_switch needs the field standard_metadata.{what}"));
        }
    }
    control::load_calculations(&mut cx, root)?;
    let field_lists = control::load_field_lists(&cx, root, "field_lists")?;
    let learn_lists = control::load_learn_lists(&cx, root)?;
    control::load_externs(&mut cx, root)?;
    parser::load_vsets(&mut cx, root)?;
    expr::load_actions(&mut cx, root)?;
    let parser_def = parser::load_parser(&cx, root)?;
    let deparser = parser::load_deparser(&cx, root)?;
    let pipes = control::load_pipelines(&mut cx, root)?;
    let checksums = control::load_checksums(&cx, root)?;

    let mut names = Names::default();
    names.headers = cx.hdr_by_name.clone();
    names.actions = cx.action_by_name.clone();
    names.counters = cx.counter_by_name.clone();
    names.meters = cx.meter_by_name.clone();
    names.registers = cx.register_by_name.clone();
    names.vsets = cx.vset_by_name.clone();
    names.calcs = cx.calc_by_name.clone();
    for (i, t) in pipes.tables.iter().enumerate() {
        names.tables.insert(t.name.clone(), i as u32);
    }
    for (i, p) in pipes.profiles.iter().enumerate() {
        names.profiles.insert(p.name.clone(), i as u32);
    }
    let mut prog = Program {
        headers: cx.headers,
        fmeta: cx.fields.iter().map(FieldMeta::of).collect(),
        fields: cx.fields,
        wide_bytes: cx.wide_bytes,
        stacks: cx.stacks,
        unions: cx.unions,
        union_stacks: cx.union_stacks,
        errors,
        parser: parser_def,
        vsets: cx.vsets,
        deparser,
        actions: cx.actions,
        tables: pipes.tables,
        conds: pipes.conds,
        ingress: pipes.ingress,
        egress: pipes.egress,
        profiles: pipes.profiles,
        calcs: cx.calcs,
        checksums,
        field_lists,
        learn_lists,
        counters: cx.counters,
        meters: cx.meters,
        registers: cx.registers,
        std,
        deparse_plans: vec![],
        extract_plans: vec![],
        calc_plans: vec![],
        action_plans: vec![],
        cond_tests: vec![],
        table_key_fields: vec![],
        state_plans: vec![],
        native_parser: None,
        native_deparser: None,
        native_controls: vec![],
        fused_csum: None,
        valid_init: vec![],
        metadata: Default::default(),
        names,
    };
    narrow::narrow_program(&mut prog);
    prog.deparse_plans = words::header_plans(&prog);
    prog.extract_plans = words::extract_plans(&prog);
    prog.calc_plans = words::calc_plans(&prog);
    prog.action_plans = crate::pipeline::actions::action_plans(&prog);
    prog.cond_tests = crate::pipeline::cond::cond_tests(&prog);
    prog.table_key_fields = prog.tables.iter().map(|t| one_field_key(&prog, t)).collect();
    prog.state_plans = crate::pipeline::parser::state_plans(&prog);
    prog.valid_init = prog.headers.iter().map(|h| h.metadata).collect();
    prog.metadata = crate::pipeline::phv::MetadataLayout::of(&prog);
    prog.fused_csum = crate::pipeline::csum_fuse::fused_csum(&prog);
    if crate::pipeline::jit::enabled() {
        prog.native_parser = crate::pipeline::native_parser::compile(&prog).map(std::sync::Arc::new);
        prog.native_deparser = crate::pipeline::native_deparser::compile(&prog).map(std::sync::Arc::new);
        let controls = [prog.ingress.init, prog.egress.init].map(|init| crate::pipeline::native_control::compile(&prog, init));
        prog.native_controls = controls.into_iter().flatten().map(std::sync::Arc::new).collect();
    }
    Ok(prog)
}

/// The table's key field when its key is one narrow field without a mask
/// and the table is not a range table (see `Program::table_key_fields`).
fn one_field_key(p: &Program, t: &TableDef) -> Option<FieldId> {
    let [k] = t.keys.as_slice() else { return None };
    match k.src {
        KeyPart::Field(f) if k.mask.is_none() && t.match_type != MatchKind::Range && !p.fmeta[f as usize].wide => Some(f),
        _ => None,
    }
}

fn load_errors(cx: &mut Ctx, root: &Value) -> R<ErrorCodes> {
    for (i, e) in opt_arr(root, "errors").iter().enumerate() {
        let p = format!("errors[{i}]");
        let arr = as_arr(e, &p)?;
        if arr.len() != 2 {
            return err(&p, "expected [name, value]");
        }
        cx.error_by_name.insert(as_str(&arr[0], &p)?.to_string(), as_u32(&arr[1], &p)?);
    }
    // p4c always emits the core errors in this order; use it when absent.
    let core = [
        "NoError",
        "PacketTooShort",
        "NoMatch",
        "StackOutOfBounds",
        "HeaderTooShort",
        "ParserTimeout",
        "ParserInvalidArgument",
    ];
    let mut codes = [0u32; 7];
    for (i, name) in core.iter().enumerate() {
        codes[i] = *cx.error_by_name.get(*name).unwrap_or(&(i as u32));
    }
    Ok(ErrorCodes {
        no_error: codes[0],
        packet_too_short: codes[1],
        no_match: codes[2],
        stack_out_of_bounds: codes[3],
        header_too_short: codes[4],
        parser_timeout: codes[5],
        parser_invalid_argument: codes[6],
    })
}

#[cfg(test)]
mod tests;
