//! The common table-entry updates of a P4Runtime WriteRequest, read from its
//! wire bytes (the switch's fast path of large Writes, with
//! switch/p4runtime/fast_writes.py).
//!
//! `WriteCodec::decode` reads a serialized WriteRequest (prost, over the
//! subset of p4runtime.proto these updates use) and gives, per update, its
//! type, table, key, action, priority and metadata, checked as the Python
//! TableCodec checks them: a key that gives every match field of the table
//! once in P4Info order with values that fit, an action of the table whose
//! parameters come in P4Info order and fit. Anything else is `None`: the
//! caller sends that update down the Python paths, which read the parsed
//! message and word any error. A request prost cannot read is `None` as a
//! whole. The messages here declare every member of the oneofs they hold
//! (Entity, FieldMatch, TableAction), so the member read is the one
//! protobuf reads (the last on the wire), and every field of TableEntry, so
//! an update with any but the plain ones set (default action, const, idle
//! timeout, direct counter or meter data) is left to the Python paths.

use crate::program::MatchKind;
use prost::Message;
use std::collections::HashMap;

#[derive(Clone, PartialEq, Message)]
struct WriteRequest {
    #[prost(message, repeated, tag = "4")]
    updates: Vec<Update>,
}

#[derive(Clone, PartialEq, Message)]
struct Update {
    #[prost(int32, tag = "1")]
    r#type: i32,
    #[prost(message, optional, tag = "2")]
    entity: Option<Entity>,
}

/// Entity: its oneof, table_entry and the other members (their bytes unread).
#[derive(Clone, PartialEq, Message)]
struct Entity {
    #[prost(oneof = "EntityKind", tags = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12")]
    kind: Option<EntityKind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum EntityKind {
    #[prost(message, tag = "2")]
    TableEntry(TableEntry),
    #[prost(bytes = "vec", tag = "1")]
    Extern(Vec<u8>),
    #[prost(bytes = "vec", tag = "3")]
    ProfileMember(Vec<u8>),
    #[prost(bytes = "vec", tag = "4")]
    ProfileGroup(Vec<u8>),
    #[prost(bytes = "vec", tag = "5")]
    Meter(Vec<u8>),
    #[prost(bytes = "vec", tag = "6")]
    DirectMeter(Vec<u8>),
    #[prost(bytes = "vec", tag = "7")]
    Counter(Vec<u8>),
    #[prost(bytes = "vec", tag = "8")]
    DirectCounter(Vec<u8>),
    #[prost(bytes = "vec", tag = "9")]
    Replication(Vec<u8>),
    #[prost(bytes = "vec", tag = "10")]
    ValueSet(Vec<u8>),
    #[prost(bytes = "vec", tag = "11")]
    Register(Vec<u8>),
    #[prost(bytes = "vec", tag = "12")]
    Digest(Vec<u8>),
}

#[derive(Clone, PartialEq, Message)]
struct TableEntry {
    #[prost(uint32, tag = "1")]
    table_id: u32,
    #[prost(message, repeated, tag = "2")]
    r#match: Vec<FieldMatch>,
    #[prost(message, optional, tag = "3")]
    action: Option<TableAction>,
    #[prost(int32, tag = "4")]
    priority: i32,
    #[prost(uint64, tag = "5")]
    controller_metadata: u64,
    #[prost(bool, tag = "8")]
    is_default_action: bool,
    #[prost(int64, tag = "9")]
    idle_timeout_ns: i64,
    #[prost(bytes = "vec", tag = "11")]
    metadata: Vec<u8>,
    #[prost(bool, tag = "13")]
    is_const: bool,
    // meter_config, counter_data, time_since_last_hit, meter_counter_data:
    // whether set (their bytes unread)
    #[prost(bytes = "vec", optional, tag = "6")]
    meter_config: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "7")]
    counter_data: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "10")]
    time_since_last_hit: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "12")]
    meter_counter_data: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct FieldMatch {
    #[prost(uint32, tag = "1")]
    field_id: u32,
    #[prost(oneof = "FieldMatchKind", tags = "2, 3, 4, 6, 7, 100")]
    kind: Option<FieldMatchKind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum FieldMatchKind {
    #[prost(message, tag = "2")]
    Exact(Values),
    #[prost(message, tag = "3")]
    Ternary(Values),
    #[prost(message, tag = "4")]
    Lpm(Lpm),
    #[prost(message, tag = "6")]
    Range(Values),
    #[prost(message, tag = "7")]
    Optional(Values),
    #[prost(bytes = "vec", tag = "100")]
    Other(Vec<u8>),
}

/// Exact and Optional (value), Ternary (value, mask), Range (low, high).
#[derive(Clone, PartialEq, Message)]
struct Values {
    #[prost(bytes = "vec", tag = "1")]
    first: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    second: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct Lpm {
    #[prost(bytes = "vec", tag = "1")]
    value: Vec<u8>,
    #[prost(int32, tag = "2")]
    prefix_len: i32,
}

/// TableAction: its oneof, action and the other members (unread).
#[derive(Clone, PartialEq, Message)]
struct TableAction {
    #[prost(oneof = "TableActionKind", tags = "1, 2, 3, 4")]
    kind: Option<TableActionKind>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum TableActionKind {
    #[prost(message, tag = "1")]
    Action(Action),
    #[prost(uint32, tag = "2")]
    MemberId(u32),
    #[prost(uint32, tag = "3")]
    GroupId(u32),
    #[prost(bytes = "vec", tag = "4")]
    ActionSet(Vec<u8>),
}

#[derive(Clone, PartialEq, Message)]
struct Action {
    #[prost(uint32, tag = "1")]
    action_id: u32,
    #[prost(message, repeated, tag = "4")]
    params: Vec<Param>,
}

#[derive(Clone, PartialEq, Message)]
struct Param {
    #[prost(uint32, tag = "2")]
    param_id: u32,
    #[prost(bytes = "vec", tag = "3")]
    value: Vec<u8>,
}

/// One match field of a table, in P4Info order.
#[derive(Clone, Debug)]
pub struct FieldWire {
    pub id: u32,
    pub kind: MatchKind,
    /// 1..=128 bits
    pub width: u32,
}

/// What the decoder knows of a table: its match fields and its entry actions'
/// parameters (id, bit width), each in P4Info order.
#[derive(Clone, Debug, Default)]
pub struct TableWire {
    pub fields: Vec<FieldWire>,
    pub actions: HashMap<u32, Vec<(u32, u32)>>,
}

/// A checked key item: its canonical values (TableCodec's) in the field's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyItem {
    Exact(u128),
    Lpm(u128, i32),
    Ternary(u128, u128),
    Range(u128, u128),
    Optional(u128),
}

/// A common update as read from the wire (see the module's docstring).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastUpdate {
    pub utype: i32,
    pub table_id: u32,
    pub key: Vec<KeyItem>,
    /// The entry's action (id, arguments) where it is one of the table's,
    /// well formed; None where absent or anything else.
    pub action: Option<(u32, Vec<u128>)>,
    pub priority: i32,
    pub controller_metadata: u64,
    pub metadata: Vec<u8>,
}

/// The widest field or parameter the decoder takes (wider: the Python paths).
pub const MAX_WIDTH: u32 = 128;

/// A non-empty big-endian value that fits `width` bits.
fn fitting(b: &[u8], width: u32) -> Option<u128> {
    if b.is_empty() {
        return None;
    }
    let lead = b.iter().take_while(|&&x| x == 0).count();
    let digits = &b[lead..];
    if digits.len() > 16 {
        return None;
    }
    let v = digits.iter().fold(0u128, |v, &x| (v << 8) | x as u128);
    if width < 128 && v >> width != 0 {
        return None;
    }
    Some(v)
}

/// Every bit of a `width`-bit value set (width 1..=128).
pub fn ones(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

fn key_item(fm: &FieldMatch, f: &FieldWire) -> Option<KeyItem> {
    if fm.field_id != f.id {
        return None;
    }
    let w = f.width;
    match (f.kind, fm.kind.as_ref()?) {
        (MatchKind::Exact, FieldMatchKind::Exact(m)) => fitting(&m.first, w).map(KeyItem::Exact),
        (MatchKind::Optional, FieldMatchKind::Optional(m)) => {
            fitting(&m.first, w).map(KeyItem::Optional)
        }
        (MatchKind::Lpm, FieldMatchKind::Lpm(m)) => {
            let v = fitting(&m.value, w)?;
            let plen = m.prefix_len;
            if plen <= 0 || plen as u32 > w || v & ones(w - plen as u32) != 0 {
                return None;
            }
            Some(KeyItem::Lpm(v, plen))
        }
        (MatchKind::Ternary, FieldMatchKind::Ternary(m)) => {
            let (v, mask) = (fitting(&m.first, w)?, fitting(&m.second, w)?);
            if mask == 0 || v & !mask != 0 {
                return None;
            }
            Some(KeyItem::Ternary(v, mask))
        }
        (MatchKind::Range, FieldMatchKind::Range(m)) => {
            let (lo, hi) = (fitting(&m.first, w)?, fitting(&m.second, w)?);
            if lo > hi || (lo == 0 && hi == ones(w)) {
                return None;
            }
            Some(KeyItem::Range(lo, hi))
        }
        _ => None,
    }
}

fn action(ta: &TableAction, t: &TableWire) -> Option<(u32, Vec<u128>)> {
    let Some(TableActionKind::Action(a)) = &ta.kind else {
        return None;
    };
    let params = t.actions.get(&a.action_id)?;
    if a.params.len() != params.len() {
        return None;
    }
    let args = a
        .params
        .iter()
        .zip(params)
        .map(|(p, &(id, w))| if p.param_id == id { fitting(&p.value, w) } else { None })
        .collect::<Option<Vec<u128>>>()?;
    Some((a.action_id, args))
}

fn fast_update(u: Update, tables: &HashMap<u32, TableWire>) -> Option<FastUpdate> {
    let Some(EntityKind::TableEntry(te)) = u.entity?.kind else {
        return None;
    };
    if te.is_default_action
        || te.idle_timeout_ns != 0
        || te.is_const
        || te.meter_config.is_some()
        || te.counter_data.is_some()
        || te.time_since_last_hit.is_some()
        || te.meter_counter_data.is_some()
    {
        return None;
    }
    let t = tables.get(&te.table_id)?;
    if te.r#match.len() != t.fields.len() {
        return None;
    }
    let key = te
        .r#match
        .iter()
        .zip(&t.fields)
        .map(|(fm, f)| key_item(fm, f))
        .collect::<Option<Vec<KeyItem>>>()?;
    Some(FastUpdate {
        utype: u.r#type,
        table_id: te.table_id,
        key,
        action: te.action.as_ref().and_then(|ta| action(ta, t)),
        priority: te.priority,
        controller_metadata: te.controller_metadata,
        metadata: te.metadata,
    })
}

/// The decoder of one pipeline's common updates (see the module's docstring).
#[derive(Clone, Debug, Default)]
pub struct WriteCodec {
    pub tables: HashMap<u32, TableWire>,
}

impl WriteCodec {
    /// Each update of a serialized WriteRequest, or None for the request if
    /// it is not a message prost reads.
    pub fn decode(&self, wire: &[u8]) -> Option<Vec<Option<FastUpdate>>> {
        let req = WriteRequest::decode(wire).ok()?;
        Some(req.updates.into_iter().map(|u| fast_update(u, &self.tables)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> WriteCodec {
        let fields = vec![
            FieldWire { id: 1, kind: MatchKind::Exact, width: 9 },
            FieldWire { id: 2, kind: MatchKind::Lpm, width: 32 },
            FieldWire { id: 3, kind: MatchKind::Ternary, width: 16 },
        ];
        let actions = HashMap::from([(7, vec![(1, 9), (2, 48)]), (8, vec![])]);
        WriteCodec { tables: HashMap::from([(100, TableWire { fields, actions })]) }
    }

    fn values(first: &[u8], second: &[u8]) -> Values {
        Values { first: first.to_vec(), second: second.to_vec() }
    }

    fn field(id: u32, kind: FieldMatchKind) -> FieldMatch {
        FieldMatch { field_id: id, kind: Some(kind) }
    }

    fn good_entry() -> TableEntry {
        let lpm = Lpm { value: vec![10, 1, 0, 0], prefix_len: 16 };
        let params = vec![
            Param { param_id: 1, value: vec![3] },
            Param { param_id: 2, value: vec![0, 0, 0, 0, 0, 0, 0, 9] },
        ];
        TableEntry {
            table_id: 100,
            r#match: vec![
                field(1, FieldMatchKind::Exact(values(&[0x01, 0xff], b""))),
                field(2, FieldMatchKind::Lpm(lpm)),
                field(3, FieldMatchKind::Ternary(values(&[0x12, 0x00], &[0xff, 0x00]))),
            ],
            action: Some(TableAction {
                kind: Some(TableActionKind::Action(Action { action_id: 7, params })),
            }),
            priority: 5,
            metadata: b"cookie".to_vec(),
            ..Default::default()
        }
    }

    fn wire(kind: EntityKind) -> Vec<u8> {
        let u = Update { r#type: 1, entity: Some(Entity { kind: Some(kind) }) };
        WriteRequest { updates: vec![u] }.encode_to_vec()
    }

    fn decode_one(te: TableEntry) -> Option<FastUpdate> {
        codec().decode(&wire(EntityKind::TableEntry(te))).unwrap().pop().unwrap()
    }

    #[test]
    fn a_common_entry_is_read_with_its_canonical_values() {
        let got = decode_one(good_entry()).unwrap();
        let key = vec![KeyItem::Exact(0x1ff), KeyItem::Lpm(0x0a01_0000, 16),
                       KeyItem::Ternary(0x1200, 0xff00)];
        assert_eq!(got.key, key);
        assert_eq!(got.action, Some((7, vec![3, 9])));
        assert_eq!((got.utype, got.table_id, got.priority), (1, 100, 5));
        assert_eq!(got.metadata, b"cookie");
    }

    #[test]
    fn what_the_checks_refuse_is_left_to_the_python_paths() {
        let refused: [fn(&mut TableEntry); 9] = [
            |e| e.r#match[0] = field(1, FieldMatchKind::Exact(values(&[2, 0], b""))), // 512: 9 bits
            |e| e.r#match[0] = field(1, FieldMatchKind::Exact(values(b"", b""))), // empty value
            |e| e.r#match[1] = field(2, FieldMatchKind::Lpm(Lpm { value: vec![10, 1, 0, 0], prefix_len: 8 })),
            |e| e.r#match[2] = field(3, FieldMatchKind::Ternary(values(&[0x12, 1], &[0xff, 0]))),
            |e| e.r#match.swap(0, 1), // not in P4Info order
            |e| e.r#match[0] = field(1, FieldMatchKind::Lpm(Lpm::default())), // another kind
            |e| e.idle_timeout_ns = 1,
            |e| e.counter_data = Some(vec![]), // an empty CounterData is set all the same
            |e| e.table_id = 101,
        ];
        for (i, change) in refused.iter().enumerate() {
            let mut e = good_entry();
            change(&mut e);
            assert_eq!(decode_one(e), None, "change {i}");
        }
        assert_eq!(codec().decode(&wire(EntityKind::Counter(vec![]))).unwrap(), vec![None]);
    }

    #[test]
    fn an_action_not_read_leaves_the_key() {
        let mut e = good_entry();
        let Some(TableActionKind::Action(a)) = &mut e.action.as_mut().unwrap().kind else {
            unreachable!()
        };
        a.params[0].value = vec![2, 0]; // 512: more than 9 bits
        assert_eq!(decode_one(e).unwrap().action, None);
        let mut e = good_entry();
        e.action = Some(TableAction { kind: Some(TableActionKind::MemberId(0)) });
        assert_eq!(decode_one(e).unwrap().action, None);
    }

    #[test]
    fn the_last_member_of_a_oneof_on_the_wire_is_the_one_set() {
        // an Entity's bytes, then another's: one message with both members
        let table = Entity { kind: Some(EntityKind::TableEntry(good_entry())) }.encode_to_vec();
        let counter = Entity { kind: Some(EntityKind::Counter(vec![])) }.encode_to_vec();
        let request = |entity: Vec<u8>| {
            let mut update = Update { r#type: 1, entity: None }.encode_to_vec();
            prost::encoding::bytes::encode(2, &entity, &mut update);
            let mut req = vec![];
            prost::encoding::bytes::encode(4, &update, &mut req);
            req
        };
        let last_counter = request([table.clone(), counter.clone()].concat());
        assert_eq!(codec().decode(&last_counter).unwrap(), vec![None]);
        let last_table = request([counter, table].concat());
        assert!(codec().decode(&last_table).unwrap()[0].is_some());
    }

    #[test]
    fn a_request_prost_cannot_read_is_none() {
        assert_eq!(codec().decode(&[0x22, 0x05, 0x01]), None);
    }
}
