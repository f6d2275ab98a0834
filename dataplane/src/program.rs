//! The pre-compiled program: what `json::load` makes of a BMv2 JSON file.
//!
//! Every name in the JSON is resolved once, at load time, to an index into
//! one of the flat arrays below; field references carry their global slot,
//! width and signedness. Nothing here is looked up by string per packet.
//! The runtime state that changes (table entries, counters, registers, ...)
//! lives elsewhere (`tables`, `externs`); a `Program` is immutable and shared.

use crate::pipeline::actions::ActionPlan;
use crate::pipeline::parser::StatePlan;
use crate::pipeline::words::{CalcPlan, ExtractPlan, WordPlan};
use crate::value::Val;
use std::collections::HashMap;

/// Index of a header instance in [`Program::headers`].
pub type HdrId = u32;
/// Index of a field in [`Program::fields`] (also its slot in the PHV).
pub type FieldId = u32;

#[derive(Debug, Clone)]
pub struct FieldDef {
    pub name: String,
    pub hdr: HdrId,
    /// Bit offset from the start of the header on the wire (fixed fields).
    pub bit_off: u32,
    /// Width in bits; for a varbit field, its maximum width.
    pub width: u32,
    pub signed: bool,
    pub varbit: bool,
    /// Index into the PHV's wide storage when width > 128 or varbit.
    pub wide: Option<u32>,
}

/// What the per-packet loops need of a field, 12 bytes per field (the full
/// `FieldDef` with its name is for the control path).
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldMeta {
    pub bit_off: u32,
    pub width: u16,
    /// Stored in the PHV's wide storage (wider than 128 bits, or varbit).
    pub wide: bool,
    pub varbit: bool,
    pub signed: bool,
}

impl FieldMeta {
    pub fn of(f: &FieldDef) -> FieldMeta {
        FieldMeta {
            bit_off: f.bit_off,
            width: f.width.min(u16::MAX as u32) as u16,
            wide: f.wide.is_some(),
            varbit: f.varbit,
            signed: f.signed,
        }
    }
}

#[derive(Debug, Clone)]
pub struct HeaderDef {
    pub name: String,
    pub type_name: String,
    pub metadata: bool,
    /// First field's id; the header's fields are `first_field..first_field+nfields`.
    pub first_field: FieldId,
    pub nfields: u32,
    /// Width of the fixed part in bits (varbit field excluded).
    pub fixed_bits: u32,
    /// The varbit field, if any (it must be the last field).
    pub varbit: Option<FieldId>,
    /// The union this header belongs to, if any.
    pub union_of: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct StackDef {
    pub name: String,
    pub headers: Vec<HdrId>,
}

#[derive(Debug, Clone)]
pub struct UnionDef {
    pub name: String,
    pub headers: Vec<HdrId>,
}

#[derive(Debug, Clone)]
pub struct UnionStackDef {
    pub name: String,
    pub unions: Vec<u32>,
}

/// A reference to a header: static, or chosen at run time.
#[derive(Debug, Clone)]
pub enum HdrX {
    Static(HdrId),
    /// `stack[index]`, the index computed per packet.
    StackElem { stack: u32, index: Box<Expr> },
    /// The element just extracted (`stack.last`), used by `stack_field`.
    StackLast(u32),
    /// Member `member` of a union reference.
    UnionMember { union: Box<UnionX>, member: u32 },
}

#[derive(Debug, Clone)]
pub enum UnionX {
    Static(u32),
    StackElem { ustack: u32, index: Box<Expr> },
    StackLast(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Not,
    BitNot,
    Neg,
    D2B,
    B2D,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
}

/// A compiled expression tree. Booleans are the values 0 and 1.
#[derive(Debug, Clone)]
pub enum Expr {
    Const(Val),
    Field(FieldId),
    /// A field of a header chosen at run time: header ref + field offset.
    HdrField(HdrX, u32),
    Valid(HdrX),
    ValidUnion(UnionX),
    /// Action parameter (`runtime_data` / `local`).
    Param(u32),
    /// `lookahead`: bits at an offset from the parser's cursor.
    Lookahead { off: u32, width: u32 },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    TwoCompMod(Box<Expr>, u32),
    SatCast(Box<Expr>, u32),
    USatCast(Box<Expr>, u32),
    LastStackIndex(u32),
    SizeStack(u32),
    /// A subtree whose every intermediate value provably fits in an i128
    /// (`pipeline::narrow`), evaluated without `Val`.
    Narrow(Box<NExpr>),
}

/// An expression over narrow fields and constants whose values, at every
/// node, are known at load time to stay within +-2^120: plain i128
/// arithmetic then computes exactly what unbounded arithmetic would.
#[derive(Debug, Clone)]
pub enum NExpr {
    Const(i128),
    /// An unsigned field of at most 120 bits.
    Field(FieldId),
    /// A signed field (int<w>, w <= 120), read sign-extended.
    SField(FieldId, u32),
    /// Validity of a header known at load time.
    Valid(HdrId),
    Unary(UnOp, Box<NExpr>),
    Binary(BinOp, Box<NExpr>, Box<NExpr>),
    /// `Binary` with a constant right operand (one node less to visit).
    BinaryConst(BinOp, Box<NExpr>, i128),
    Cond(Box<NExpr>, Box<NExpr>, Box<NExpr>),
    TwoCompMod(Box<NExpr>, u32),
}

/// Where a [`Prim::SetField`] takes its value.
#[derive(Debug, Clone)]
pub enum SetSrc {
    /// An action parameter (its low 128 bits, two's complement).
    Param(u32),
    /// A field whose stored bits are the value to copy (unsigned, or signed
    /// and at least as wide as the destination).
    Field(FieldId),
    Const(u128),
    Narrow(Box<NExpr>),
}

/// A writable location.
#[derive(Debug, Clone)]
pub enum LValue {
    Field(FieldId),
    HdrField(HdrX, u32),
}

/// One action primitive (core or simple_switch), operands resolved.
#[derive(Debug, Clone)]
pub enum Prim {
    Assign(LValue, Expr),
    /// An `Assign` to a field of at most 128 bits from a source that needs
    /// no `Val` (made at load by `pipeline::narrow`): the value's low bits
    /// under `mask` are what truncation to the field's width keeps.
    SetField { dst: FieldId, mask: u128, src: SetSrc },
    AssignVL(LValue, LValue),
    AssignHeader(HdrX, HdrX),
    AssignUnion(UnionX, UnionX),
    AssignHeaderStack(u32, u32),
    AssignUnionStack(u32, u32),
    Push { stack: StackRef, count: Expr },
    Pop { stack: StackRef, count: Expr },
    Jump(u32),
    JumpIfZero(Expr, u32),
    Exit,
    Assert(Expr),
    Assume(Expr),
    LogMsg(String, Vec<Expr>),
    MarkToDrop,
    AddHeader(HdrX),
    RemoveHeader(HdrX),
    CloneI2E { session: Expr, field_list: Expr },
    CloneE2E { session: Expr, field_list: Expr },
    Resubmit(Expr),
    Recirculate(Expr),
    GenerateDigest { receiver: Expr, learn_id: Expr },
    HashOffset { dst: LValue, base: Expr, calc: u32, max: Expr },
    RngUniform { dst: LValue, lo: Expr, hi: Expr },
    Count { counter: u32, index: Expr },
    ExecuteMeter { meter: u32, index: Expr, dst: LValue },
    RegisterRead { dst: LValue, reg: u32, index: Expr },
    RegisterWrite { reg: u32, index: Expr, src: Expr },
    Truncate(Expr),
    NoOp,
}

/// `push`/`pop` work on header stacks and header-union stacks alike.
#[derive(Debug, Clone, Copy)]
pub enum StackRef {
    Headers(u32),
    Unions(u32),
}

#[derive(Debug, Clone)]
pub struct RuntimeParam {
    pub name: String,
    pub width: u32,
}

#[derive(Debug, Clone)]
pub struct ActionDef {
    pub name: String,
    pub id: u32,
    pub params: Vec<RuntimeParam>,
    pub prims: Vec<Prim>,
}

/// Parser operations.
#[derive(Debug, Clone)]
pub enum ParserOp {
    Extract(HdrX),
    /// Extract into the next element of a header stack.
    ExtractStackNext(u32),
    /// Extract into member `1` of the next element of a union stack.
    ExtractUnionStackNext(u32, u32),
    /// Extract a header with a varbit field whose length (in bits) is the expression.
    ExtractVL { hdr: VLTarget, len_bits: Expr, max_bytes: u32 },
    Set(LValue, Expr),
    Verify { cond: Expr, error: Expr },
    Advance(Expr),
    Primitive(Prim),
}

/// Where `extract_VL` writes.
#[derive(Debug, Clone)]
pub enum VLTarget {
    Header(HdrX),
    StackNext(u32),
}

#[derive(Debug, Clone)]
pub enum KeyPart {
    Field(FieldId),
    Valid(HdrX),
    /// A field of the last extracted element of a stack (`stack_field`).
    StackField { stack: u32, off: u32 },
    /// A field of a member of the last element of a union stack.
    UnionStackField { ustack: u32, member: u32, off: u32 },
    Lookahead { off: u32, width: u32 },
}

#[derive(Debug, Clone)]
pub enum TransitionKind {
    Default,
    /// value and mask bytes, same length as the key.
    Value { value: Vec<u8>, mask: Option<Vec<u8>> },
    VSet { vset: u32, mask: Option<Vec<u8>> },
}

#[derive(Debug, Clone)]
pub struct Transition {
    pub kind: TransitionKind,
    /// None: accept.
    pub next: Option<u32>,
    /// A `Value` transition of a key of at most 16 bytes as (value, mask)
    /// integers, compared without touching memory.
    pub small: Option<(u128, u128)>,
}

/// Big-endian bytes (at most 16) as an integer.
#[inline]
pub fn be_u128(b: &[u8]) -> u128 {
    b.iter().fold(0u128, |a, x| (a << 8) | *x as u128)
}

#[derive(Debug, Clone)]
pub struct ParseState {
    pub name: String,
    pub ops: Vec<ParserOp>,
    /// Key parts with their width in bits; each is padded to whole bytes.
    pub key: Vec<(KeyPart, u32)>,
    pub key_bytes: usize,
    pub transitions: Vec<Transition>,
    /// The key fits 16 bytes and every transition is a value or the
    /// default: the key can be matched as an integer.
    pub small: bool,
}

#[derive(Debug, Clone)]
pub struct ParserDef {
    pub init: Option<u32>,
    pub states: Vec<ParseState>,
}

#[derive(Debug, Clone)]
pub struct VSetDef {
    pub name: String,
    pub width: u32,
    pub max_size: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
    Valid,
}

impl MatchKind {
    /// The kind a BMv2 JSON or P4Info `match_type` names.
    pub fn from_name(s: &str) -> Option<MatchKind> {
        Some(match s {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            "valid" => MatchKind::Valid,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct KeyDef {
    pub name: String,
    pub kind: MatchKind,
    pub src: KeyPart,
    pub width: u32,
    pub nbytes: u32,
    /// Mask applied to the field value before matching (`mask` in the JSON).
    pub mask: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableType {
    Simple,
    Indirect,
    IndirectWs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeRef {
    Table(u32),
    Cond(u32),
}

#[derive(Debug, Clone)]
pub struct DefaultEntry {
    pub action: u32,
    pub data: Vec<Val>,
    pub action_const: bool,
    pub entry_const: bool,
}

/// How a match value of one key field is given (API and const entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchValue {
    Exact(Vec<u8>),
    Lpm(Vec<u8>, u32),
    Ternary(Vec<u8>, Vec<u8>),
    Range(Vec<u8>, Vec<u8>),
}

#[derive(Debug, Clone)]
pub struct ConstEntry {
    pub key: Vec<MatchValue>,
    pub action: u32,
    pub data: Vec<Val>,
    pub priority: i32,
}

#[derive(Debug, Clone)]
pub struct TableDef {
    pub name: String,
    pub keys: Vec<KeyDef>,
    pub match_type: MatchKind,
    pub ttype: TableType,
    pub profile: Option<u32>,
    pub max_size: u32,
    pub actions: Vec<u32>,
    /// Successor by action id (index: action id). Outer None: action not listed.
    pub next_by_action: HashMap<u32, Option<NodeRef>>,
    /// The same as a list, scanned per packet (tables have few actions).
    pub next_list: Vec<(u32, Option<NodeRef>)>,
    /// Some when the table uses `__HIT__`/`__MISS__` successors.
    pub next_hit_miss: Option<(Option<NodeRef>, Option<NodeRef>)>,
    pub base_default_next: Option<NodeRef>,
    pub default: Option<DefaultEntry>,
    pub const_entries: Vec<ConstEntry>,
    pub with_counters: bool,
    pub direct_meter: Option<u32>,
    pub support_timeout: bool,
}

#[derive(Debug, Clone)]
pub struct CondDef {
    pub name: String,
    pub expr: Expr,
    pub true_next: Option<NodeRef>,
    pub false_next: Option<NodeRef>,
}

#[derive(Debug, Clone)]
pub struct PipelineDef {
    pub name: String,
    pub init: Option<NodeRef>,
}

#[derive(Debug, Clone)]
pub struct ActionProfileDef {
    pub name: String,
    pub max_size: u32,
    /// The selector's hash, for action selectors.
    pub selector: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgo {
    Crc16,
    Crc32,
    CrcCcitt,
    Csum16,
    Identity,
    Xor16,
    Xor32,
    Crc8Custom,
    Crc16Custom,
    Crc32Custom,
    Crc64Custom,
    RoundRobin,
}

#[derive(Debug, Clone)]
pub enum CalcInput {
    Field(FieldId),
    Const { value: Val, width: u32 },
    Payload,
}

#[derive(Debug, Clone)]
pub struct CalcDef {
    pub name: String,
    pub algo: HashAlgo,
    pub inputs: Vec<CalcInput>,
    /// Output width of the algorithm in bits.
    pub out_width: u32,
}

#[derive(Debug, Clone)]
pub struct ChecksumDef {
    pub name: String,
    pub target: FieldId,
    pub calc: u32,
    pub verify: bool,
    pub update: bool,
    pub cond: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct CounterDef {
    pub name: String,
    pub size: u32,
    pub is_direct: bool,
    pub binding: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterType {
    Bytes,
    Packets,
}

#[derive(Debug, Clone)]
pub struct MeterDef {
    pub name: String,
    pub size: u32,
    pub mtype: MeterType,
    pub is_direct: bool,
    /// Direct meters: the field the colour is written to.
    pub result: Option<FieldId>,
    pub binding: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct RegisterDef {
    pub name: String,
    pub size: u32,
    pub width: u32,
}

#[derive(Debug, Clone)]
pub struct LearnListDef {
    pub name: String,
    pub fields: Vec<FieldId>,
}

/// Fields of standard_metadata the target reads or writes (resolved through
/// `field_aliases` as simple_switch does).
#[derive(Debug, Clone, Default)]
pub struct StdMeta {
    pub ingress_port: Option<FieldId>,
    pub egress_spec: Option<FieldId>,
    pub egress_port: Option<FieldId>,
    pub instance_type: Option<FieldId>,
    pub packet_length: Option<FieldId>,
    pub enq_timestamp: Option<FieldId>,
    pub enq_qdepth: Option<FieldId>,
    pub deq_timedelta: Option<FieldId>,
    pub deq_qdepth: Option<FieldId>,
    pub ingress_global_timestamp: Option<FieldId>,
    pub egress_global_timestamp: Option<FieldId>,
    pub mcast_grp: Option<FieldId>,
    pub egress_rid: Option<FieldId>,
    pub checksum_error: Option<FieldId>,
    pub parser_error: Option<FieldId>,
    pub priority: Option<FieldId>,
    pub qid: Option<FieldId>,
    /// p4scope's byte-level queue metadata (p4src/include/p4scope_tm.p4),
    /// found only through their field aliases.
    pub p4s_enq_qbytes: Option<FieldId>,
    pub p4s_deq_qbytes: Option<FieldId>,
    pub p4s_buffer_bytes: Option<FieldId>,
    pub p4s_deq_timedelta_ns: Option<FieldId>,
    pub p4s_ingress_timestamp_ns: Option<FieldId>,
    pub p4s_egress_timestamp_ns: Option<FieldId>,
}

/// The error codes of the `errors` table that the parser raises itself.
#[derive(Debug, Clone)]
pub struct ErrorCodes {
    pub no_error: u32,
    pub packet_too_short: u32,
    pub no_match: u32,
    pub stack_out_of_bounds: u32,
    pub header_too_short: u32,
    pub parser_timeout: u32,
    pub parser_invalid_argument: u32,
}

#[derive(Debug, Clone)]
pub struct Program {
    pub headers: Vec<HeaderDef>,
    pub fields: Vec<FieldDef>,
    /// `fields` in compact form, same indexes.
    pub fmeta: Vec<FieldMeta>,
    /// Byte size of each wide-storage slot.
    pub wide_bytes: Vec<u32>,
    pub stacks: Vec<StackDef>,
    pub unions: Vec<UnionDef>,
    pub union_stacks: Vec<UnionStackDef>,
    pub errors: ErrorCodes,
    pub parser: ParserDef,
    pub vsets: Vec<VSetDef>,
    pub deparser: Vec<HdrId>,
    pub actions: Vec<ActionDef>,
    pub tables: Vec<TableDef>,
    pub conds: Vec<CondDef>,
    pub ingress: PipelineDef,
    pub egress: PipelineDef,
    pub profiles: Vec<ActionProfileDef>,
    pub calcs: Vec<CalcDef>,
    pub checksums: Vec<ChecksumDef>,
    /// Field lists by id (index = id; 0 is unused).
    pub field_lists: Vec<Option<Vec<FieldId>>>,
    pub learn_lists: Vec<Option<LearnListDef>>,
    pub counters: Vec<CounterDef>,
    pub meters: Vec<MeterDef>,
    pub registers: Vec<RegisterDef>,
    pub std: StdMeta,
    /// Derived at load: each header's deparse and extract layouts and each
    /// calculation's input layout, where one applies (`pipeline::words`).
    pub deparse_plans: Vec<Option<WordPlan>>,
    pub extract_plans: Vec<Option<ExtractPlan>>,
    pub calc_plans: Vec<Option<CalcPlan>>,
    /// Derived at load: each action's straight-line plan, where one
    /// applies (`pipeline::actions`).
    pub action_plans: Vec<Option<ActionPlan>>,
    /// Derived at load: each conditional's test, where its expression has
    /// one of the common shapes (`pipeline::cond`).
    pub cond_tests: Vec<Option<crate::pipeline::cond::Test>>,
    /// Derived at load: per table, its key field when the key is one
    /// narrow field without a mask (not a range): the lookup key is then
    /// that field's value as it is.
    pub table_key_fields: Vec<Option<FieldId>>,
    /// Derived at load: each parse state's plan, where one applies
    /// (`pipeline::parser`).
    pub state_plans: Vec<Option<StatePlan>>,
    /// Derived at load: the parser as machine code, where its first state
    /// qualifies (`pipeline::native_parser`).
    pub native_parser: Option<std::sync::Arc<crate::pipeline::native_parser::NativeParser>>,
    /// Derived at load: the in-place deparse as machine code, where every
    /// header qualifies (`pipeline::native_deparser`).
    pub native_deparser: Option<std::sync::Arc<crate::pipeline::native_deparser::NativeDeparser>>,
    /// The ingress and egress pipelines' control flow as machine code,
    /// where any node qualifies (`pipeline::native_control`).
    pub native_controls: Vec<std::sync::Arc<crate::pipeline::native_control::NativeControl>>,
    /// Derived at load: the update checksum the deparser computes as it
    /// writes its header, if one qualifies (`pipeline::csum_fuse`).
    pub fused_csum: Option<crate::pipeline::csum_fuse::FusedCsum>,
    /// Derived at load: each header's validity when a packet starts
    /// (metadata headers are always valid), copied by `Phv::reset`.
    pub valid_init: Vec<bool>,
    /// Derived at load: what `Phv::reset_metadata` zeroes.
    pub metadata: crate::pipeline::phv::MetadataLayout,
    /// Name lookups for the control API (never used per packet).
    pub names: Names,
}

#[derive(Debug, Clone, Default)]
pub struct Names {
    pub headers: HashMap<String, HdrId>,
    pub tables: HashMap<String, u32>,
    pub actions: HashMap<String, u32>,
    pub counters: HashMap<String, u32>,
    pub meters: HashMap<String, u32>,
    pub registers: HashMap<String, u32>,
    pub vsets: HashMap<String, u32>,
    pub profiles: HashMap<String, u32>,
    pub calcs: HashMap<String, u32>,
}

impl Program {
    /// The machine code of the pipeline starting at `init`, if any.
    #[inline(always)]
    pub fn native_control(&self, init: Option<NodeRef>) -> Option<&crate::pipeline::native_control::NativeControl> {
        let init = init?;
        self.native_controls.iter().find(|c| c.init == init).map(|c| &**c)
    }

    pub fn field_by_name(&self, hdr: &str, field: &str) -> Option<FieldId> {
        let h = *self.names.headers.get(hdr)?;
        let hd = &self.headers[h as usize];
        (hd.first_field..hd.first_field + hd.nfields).find(|f| self.fields[*f as usize].name == field)
    }
}
