//! Match tables at run time: entries and their lookup indexes.
//!
//! Keys are the concatenation of each key field's big-endian bytes
//! (`ceil(width/8)` each). Entries are grouped by their mask: an exact
//! table is one hash map; an lpm table is one hash map per prefix length,
//! probed longest first; a ternary table is one hash map per distinct mask
//! (tuple-space search), all probed, the best priority winning (lower number
//! wins, as in BMv2). Range tables are scanned in priority order.

mod fxhash;
pub mod profile;
mod range;
mod wordmap;

use crate::externs::{Count, Meter};
use crate::program::{MatchKind, MatchValue, NodeRef, TableDef};
use crate::value::Val;
pub use fxhash::FxBuildHasher;
use std::collections::HashMap;

/// A table entry. What a hit reads and writes comes first and fills one
/// cache line (`repr(C)`, 64-byte aligned; `Option<Entry>`'s tag is kept
/// in the spare values of `data`'s capacity, in that line too: the compiler
/// puts it in the field with the most spare values, so no later field may
/// be an `Option` of an integer — see `ttl_ns` and `Meter`); the action
/// data's words (`args`) start the next line; the rest is for the control
/// plane and direct meters.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Entry {
    /// Indirect tables: the member or group the entry runs.
    pub indirect: profile::Ref,
    pub action: u32,
    pub idle_notified: bool,
    /// `args` holds `data` (it has at most [`INLINE_ARGS`] parameters).
    args_inline: bool,
    pub last_hit_ns: u64,
    pub counter: Count,
    /// The action data; set it with [`Entry::set_data`] (keeps `args`).
    data: Vec<Val>,
    /// `data` as action plans read it, each parameter's low 128 bits, in
    /// the entry itself: a hit reads no `Val` behind the data's pointer.
    args: [u128; INLINE_ARGS],
    pub key: Vec<MatchValue>,
    pub priority: i32,
    pub meter: Meter,
    /// Idle timeout (ns without a hit); `idle_notified`: it was reported.
    /// Non-zero: an `Option<u64>` here would take `Option<Entry>`'s tag,
    /// and every hit would read a third cache line.
    pub ttl_ns: Option<std::num::NonZeroU64>,
}

/// Action data of up to this many parameters is also kept in the entry as
/// words ([`Entry::args`]).
pub const INLINE_ARGS: usize = 2;

impl Entry {
    /// The action data.
    pub fn data(&self) -> &[Val] {
        &self.data
    }

    /// Sets the action data (and its words).
    pub fn set_data(&mut self, data: Vec<Val>) {
        self.args_inline = data.len() <= INLINE_ARGS;
        self.args = [0; INLINE_ARGS];
        if self.args_inline {
            for (w, v) in self.args.iter_mut().zip(&data) {
                *w = v.low_u128();
            }
        }
        self.data = data;
    }

    /// The data as action plans read it: its words when it has at most
    /// [`INLINE_ARGS`] parameters.
    #[inline(always)]
    pub fn args(&self) -> Option<&[u128; INLINE_ARGS]> {
        self.args_inline.then_some(&self.args)
    }

    /// Moves the action data out (to run an action that needs the `Val`s
    /// while the entry is borrowed elsewhere); `put_back_data` returns it.
    pub fn take_data(&mut self) -> Vec<Val> {
        std::mem::take(&mut self.data)
    }

    /// Returns what `take_data` took (the words did not change).
    pub fn put_back_data(&mut self, data: Vec<Val>) {
        self.data = data;
    }
}

/// The handles of the entries that share one masked key, best first. The
/// best is kept in the map's slot itself, so a lookup reads no other memory
/// (exact and lpm keys never have more than one entry).
#[derive(Clone, Debug)]
struct Handles {
    first: u32,
    rest: Vec<u32>,
}

impl Handles {
    fn iter(&self) -> impl Iterator<Item = &u32> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }

    /// Adds `h` and keeps the order given by `rank`.
    fn insert(&mut self, h: u32, rank: impl Fn(u32) -> (i32, u32)) {
        let mut all: Vec<u32> = self.iter().copied().collect();
        all.push(h);
        all.sort_by_key(|x| rank(*x));
        self.first = all[0];
        self.rest = all.split_off(1);
    }

    /// Removes `h`; false when no handle is left.
    fn remove(&mut self, h: u32) -> bool {
        let mut all: Vec<u32> = self.iter().copied().filter(|x| *x != h).collect();
        if all.is_empty() {
            return false;
        }
        self.first = all[0];
        self.rest = all.split_off(1);
        true
    }
}

/// Entries with one mask, by masked key. Keys of up to 16 bytes are kept
/// as integers (no heap key, no byte comparison per lookup); keys of up to
/// 8 bytes in a [`wordmap::WordMap`] (16-byte slots, one multiply to hash).
#[derive(Clone, Debug)]
enum Map {
    Word(wordmap::WordMap),
    Small(HashMap<u128, Handles, FxBuildHasher>),
    Big(HashMap<Vec<u8>, Handles, FxBuildHasher>),
}

#[derive(Clone, Debug)]
struct Group {
    mask: Vec<u8>,
    mask16: u128,
    /// `mask16`'s low 64 bits (word maps: keys of at most 8 bytes).
    mask64: u64,
    all_ones: bool,
    prefix: u32,
    map: Map,
}

#[inline]
fn be16(b: &[u8]) -> u128 {
    b.iter().fold(0u128, |a, x| (a << 8) | *x as u128)
}

impl Group {
    fn new(mask: Vec<u8>, all_ones: bool, prefix: u32) -> Group {
        let map = match mask.len() {
            0..=8 => Map::Word(wordmap::WordMap::new()),
            9..=16 => Map::Small(HashMap::default()),
            _ => Map::Big(HashMap::default()),
        };
        Group { mask16: be16(&mask), mask64: be16(&mask) as u64, mask, all_ones, prefix, map }
    }

    /// The handles of the entries whose (already masked) value is `value`,
    /// best first.
    fn handles(&self, value: &[u8]) -> Vec<u32> {
        let hs = match &self.map {
            Map::Word(m) => return m.handles(be16(value) as u64),
            Map::Small(m) => m.get(&be16(value)),
            Map::Big(m) => m.get(value),
        };
        hs.map(|l| l.iter().copied().collect()).unwrap_or_default()
    }

    /// Adds handle `h` under `value`, in the order `rank` gives.
    fn insert(&mut self, value: Vec<u8>, h: u32, rank: impl Fn(u32) -> (i32, u32)) {
        let slot = match &mut self.map {
            Map::Word(m) => return m.insert(be16(&value) as u64, h, rank),
            Map::Small(m) => m.entry(be16(&value)),
            Map::Big(m) => {
                if let Some(l) = m.get_mut(&value) {
                    l.insert(h, rank);
                    return;
                }
                m.insert(value, Handles { first: h, rest: vec![] });
                return;
            }
        };
        match slot {
            std::collections::hash_map::Entry::Occupied(mut o) => o.get_mut().insert(h, rank),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Handles { first: h, rest: vec![] });
            }
        }
    }

    /// Removes a handle; drops the value when no entry is left.
    fn remove(&mut self, value: &[u8], h: u32) {
        match &mut self.map {
            Map::Word(m) => m.remove(be16(value) as u64, h),
            Map::Small(m) => {
                let k = be16(value);
                if let Some(l) = m.get_mut(&k) {
                    if !l.remove(h) {
                        m.remove(&k);
                    }
                }
            }
            Map::Big(m) => {
                if let Some(l) = m.get_mut(value) {
                    if !l.remove(h) {
                        m.remove(value);
                    }
                }
            }
        }
    }

    fn is_empty(&self) -> bool {
        match &self.map {
            Map::Word(m) => m.is_empty(),
            Map::Small(m) => m.is_empty(),
            Map::Big(m) => m.is_empty(),
        }
    }

    /// As `lookup` for a key of at most 16 bytes given as an integer.
    #[inline(always)]
    fn lookup_small(&self, k: u128) -> Option<u32> {
        let k = if self.all_ones { k } else { k & self.mask16 };
        match &self.map {
            // keys of at most 8 bytes: the high half is zero
            Map::Word(m) => m.first(k as u64),
            Map::Small(m) => m.get(&k).map(|l| l.first),
            Map::Big(_) => None,
        }
    }

    /// The best entry a packet key (not masked) falls on.
    #[inline]
    fn lookup(&self, key: &[u8], scratch: &mut Vec<u8>) -> Option<u32> {
        let hs = match &self.map {
            Map::Word(m) => {
                let k = be16(key);
                return m.first((if self.all_ones { k } else { k & self.mask16 }) as u64);
            }
            Map::Small(m) => {
                let k = be16(key);
                m.get(&if self.all_ones { k } else { k & self.mask16 })
            }
            Map::Big(m) => {
                if self.all_ones {
                    m.get(key)
                } else {
                    m.get(masked(key, &self.mask, scratch))
                }
            }
        };
        hs.map(|l| l.first)
    }
}

/// Why a table operation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    WrongKeyCount { expected: usize, found: usize },
    WrongMatchKind { field: String, expected: MatchKind },
    BadPrefix { field: String, prefix: u32, width: u32 },
    Duplicate,
    Full,
    NoSuchEntry(u32),
    ActionNotInTable(String),
    WrongArgCount { action: String, expected: usize, found: usize },
    ConstDefault,
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::WrongKeyCount { expected, found } => {
                write!(f, "the table has {expected} key field(s), {found} given")
            }
            TableError::WrongMatchKind { field, expected } => {
                write!(f, "key field '{field}' is matched {expected:?}; give a value of that kind")
            }
            TableError::BadPrefix { field, prefix, width } => {
                write!(f, "prefix length {prefix} is longer than key field '{field}' ({width} bits)")
            }
            TableError::Duplicate => write!(f, "an entry with this key already exists"),
            TableError::Full => write!(f, "the table is full"),
            TableError::NoSuchEntry(h) => write!(f, "no entry with handle {h}"),
            TableError::ActionNotInTable(a) => write!(f, "action '{a}' is not an action of this table"),
            TableError::WrongArgCount { action, expected, found } => {
                write!(f, "action '{action}' takes {expected} argument(s), {found} given")
            }
            TableError::ConstDefault => write!(f, "the default action of this table is constant"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct TableState {
    pub entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    count: usize,
    groups: Vec<Group>,
    ranges: Vec<u32>,
    /// Range tables: the index over one range field, rebuilt after changes
    /// (None while stale, or when the entries overlap too much).
    range_ix: Option<range::RangeIndex>,
    range_dirty: bool,
    pub default_action: Option<u32>,
    pub default_data: Vec<Val>,
    widths: Vec<(u32, u32)>,
    kind: MatchKind,
    /// Keys of at most 16 bytes: lookups may take the key as an integer.
    pub small_key: bool,
    /// Exact or lpm keys of at most 8 bytes: every group is a word map and
    /// the first hit, longest prefix first, is the answer (resolved here,
    /// not per lookup).
    word_first_hit: bool,
    /// The node after the table when it is the same whatever ran, hit or
    /// miss (resolved at load; see [`fixed_next`]).
    pub fixed_next: Option<Option<NodeRef>>,
    max_size: usize,
}

impl TableState {
    /// Where a table's count of entries is, for machine code that asks
    /// whether a table is empty (`pipeline::native_control`).
    pub const COUNT_OFFSET: usize = std::mem::offset_of!(TableState, count);
}

/// The node after table `t` when it does not depend on the action or on
/// hit/miss: hit and miss lead to the same node, or every action's next
/// node is the base default next (which also follows a miss without an
/// action, and any action the list does not name).
pub fn fixed_next(t: &TableDef) -> Option<Option<NodeRef>> {
    match t.next_hit_miss {
        Some((hit, miss)) => (hit == miss).then_some(hit),
        None => t.next_list.iter().all(|(_, n)| *n == t.base_default_next).then_some(t.base_default_next),
    }
}

fn normalize(v: &[u8], nbytes: usize, width: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(nbytes);
    put_normalized(&mut out, v, nbytes, width);
    out
}

/// Appends `v` as `nbytes` big-endian bytes cut to `width` bits (`normalize`).
fn put_normalized(out: &mut Vec<u8>, v: &[u8], nbytes: usize, width: u32) {
    let start = out.len();
    let n = v.len().min(nbytes);
    out.resize(start + nbytes - n, 0);
    out.extend_from_slice(&v[v.len() - n..]);
    let spare = nbytes as u32 * 8 - width;
    if spare > 0 && nbytes > 0 {
        out[start] &= 0xffu8 >> spare;
    }
}

/// Appends the mask of every bit of a `width`-bit field of `nbytes` bytes.
fn put_ones(out: &mut Vec<u8>, nbytes: usize, width: u32) {
    let start = out.len();
    out.resize(start + nbytes, 0xff);
    let spare = nbytes as u32 * 8 - width;
    if spare > 0 && nbytes > 0 {
        out[start] &= 0xffu8 >> spare;
    }
}

/// `value &= mask`, byte by byte.
fn and_in_place(value: &mut [u8], mask: &[u8]) {
    for (a, b) in value.iter_mut().zip(mask) {
        *a &= b;
    }
}

fn prefix_mask(nbytes: usize, width: u32, prefix: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(nbytes);
    put_prefix_mask(&mut m, nbytes, width, prefix);
    m
}

/// Appends the mask of a `prefix`-bit prefix of a `width`-bit field of `nbytes` bytes.
fn put_prefix_mask(out: &mut Vec<u8>, nbytes: usize, width: u32, prefix: u32) {
    let base = out.len();
    out.resize(base + nbytes, 0);
    let start = nbytes as u32 * 8 - width;
    for b in start..start + prefix {
        out[base + (b / 8) as usize] |= 0x80 >> (b % 8);
    }
}

impl TableState {
    pub fn new(t: &TableDef) -> TableState {
        let key_bytes = t.keys.iter().map(|k| k.nbytes).sum::<u32>();
        let mut s = TableState {
            entries: vec![],
            free: vec![],
            count: 0,
            groups: vec![],
            ranges: vec![],
            range_ix: None,
            range_dirty: false,
            default_action: t.default.as_ref().map(|d| d.action),
            default_data: t.default.as_ref().map(|d| d.data.clone()).unwrap_or_default(),
            widths: t.keys.iter().map(|k| (k.width, k.nbytes)).collect(),
            small_key: key_bytes <= 16 && t.match_type != MatchKind::Range,
            word_first_hit: false,
            fixed_next: fixed_next(t),
            kind: t.match_type,
            max_size: t.max_size.max(1) as usize,
        };
        if s.kind == MatchKind::Lpm && t.keys.iter().all(|k| k.kind != MatchKind::Lpm) {
            s.kind = MatchKind::Exact;
        }
        s.word_first_hit = key_bytes <= 8 && !matches!(s.kind, MatchKind::Ternary | MatchKind::Optional | MatchKind::Range);
        s
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Checks and normalizes a key against the table's key fields; returns
    /// the per-field values and the (value, mask) of the whole key.
    fn prepare(&self, t: &TableDef, key: &[MatchValue]) -> Result<(Vec<MatchValue>, Vec<u8>, Vec<u8>, u32), TableError> {
        if key.len() != t.keys.len() {
            return Err(TableError::WrongKeyCount { expected: t.keys.len(), found: key.len() });
        }
        let key_bytes = t.keys.iter().map(|k| k.nbytes as usize).sum();
        let mut norm = Vec::with_capacity(key.len());
        let mut value = Vec::with_capacity(key_bytes);
        let mut mask = Vec::with_capacity(key_bytes);
        let mut prefix = 0u32;
        // each field's value and mask appended in place, its normalized
        // match value copied from them
        for (k, v) in t.keys.iter().zip(key) {
            let (n, w) = (k.nbytes as usize, k.width);
            let (v0, m0) = (value.len(), mask.len());
            let nv = match (k.kind, v) {
                (MatchKind::Exact | MatchKind::Valid, MatchValue::Exact(x)) => {
                    put_normalized(&mut value, x, n, w);
                    put_ones(&mut mask, n, w);
                    MatchValue::Exact(value[v0..].to_vec())
                }
                (MatchKind::Lpm, MatchValue::Lpm(x, p)) => {
                    if *p > w {
                        return Err(TableError::BadPrefix { field: k.name.clone(), prefix: *p, width: w });
                    }
                    prefix = *p;
                    put_normalized(&mut value, x, n, w);
                    put_prefix_mask(&mut mask, n, w, *p);
                    and_in_place(&mut value[v0..], &mask[m0..]);
                    MatchValue::Lpm(value[v0..].to_vec(), *p)
                }
                (MatchKind::Lpm, MatchValue::Exact(x)) => {
                    prefix = w;
                    put_normalized(&mut value, x, n, w);
                    put_ones(&mut mask, n, w);
                    MatchValue::Lpm(value[v0..].to_vec(), w)
                }
                (MatchKind::Ternary | MatchKind::Optional, MatchValue::Ternary(x, mk)) => {
                    put_normalized(&mut mask, mk, n, w);
                    put_normalized(&mut value, x, n, w);
                    and_in_place(&mut value[v0..], &mask[m0..]);
                    MatchValue::Ternary(value[v0..].to_vec(), mask[m0..].to_vec())
                }
                (MatchKind::Ternary | MatchKind::Optional, MatchValue::Exact(x)) => {
                    put_normalized(&mut value, x, n, w);
                    put_ones(&mut mask, n, w);
                    MatchValue::Ternary(value[v0..].to_vec(), mask[m0..].to_vec())
                }
                (MatchKind::Range, MatchValue::Range(lo, hi)) => {
                    value.resize(v0 + n, 0);
                    mask.resize(m0 + n, 0);
                    MatchValue::Range(normalize(lo, n, w), normalize(hi, n, w))
                }
                (MatchKind::Range, MatchValue::Exact(x)) => {
                    value.resize(v0 + n, 0);
                    mask.resize(m0 + n, 0);
                    let x = normalize(x, n, w);
                    MatchValue::Range(x.clone(), x)
                }
                _ => return Err(TableError::WrongMatchKind { field: k.name.clone(), expected: k.kind }),
            };
            norm.push(nv);
        }
        Ok((norm, value, mask, prefix))
    }

    /// Adds an entry; returns its handle.
    pub fn add(&mut self, t: &TableDef, key: &[MatchValue], priority: i32, action: u32, data: Vec<Val>) -> Result<u32, TableError> {
        let (norm, value, mask, prefix) = self.prepare(t, key)?;
        if self.count >= self.max_size {
            return Err(TableError::Full);
        }
        let ternary_like = matches!(self.kind, MatchKind::Ternary | MatchKind::Range);
        if self.kind == MatchKind::Range {
            for h in &self.ranges {
                let e = self.entries[*h as usize].as_ref();
                if let Some(e) = e {
                    if e.key == norm && e.priority == priority {
                        return Err(TableError::Duplicate);
                    }
                }
            }
        } else if let Some(g) = self.groups.iter().find(|g| g.mask == mask) {
            let dup = g.handles(&value).iter().any(|h| {
                !ternary_like || self.entries[*h as usize].as_ref().map(|e| e.priority) == Some(priority)
            });
            if dup {
                return Err(TableError::Duplicate);
            }
        }
        let mut entry = Entry {
            key: norm,
            priority: if ternary_like { priority } else { 0 },
            action,
            data: vec![],
            args_inline: true,
            args: [0; INLINE_ARGS],
            counter: Count::default(),
            meter: Meter::default(),
            last_hit_ns: 0,
            indirect: profile::Ref::Direct,
            ttl_ns: None,
            idle_notified: false,
        };
        entry.set_data(data);
        let handle = match self.free.pop() {
            Some(h) => {
                self.entries[h as usize] = Some(entry);
                h
            }
            None => {
                self.entries.push(Some(entry));
                self.entries.len() as u32 - 1
            }
        };
        self.count += 1;
        if self.kind == MatchKind::Range {
            self.ranges.push(handle);
            self.range_dirty = true;
            let entries = &self.entries;
            self.ranges.sort_by_key(|h| (entries[*h as usize].as_ref().map(|e| e.priority).unwrap_or(i32::MAX), *h));
            return Ok(handle);
        }
        let gi = match self.groups.iter().position(|g| g.mask == mask) {
            Some(i) => i,
            None => {
                let all_ones = t.keys.iter().all(|k| k.kind == MatchKind::Exact || k.kind == MatchKind::Valid)
                    || mask.iter().zip(self.widths.iter().flat_map(|(w, n)| normalize(&vec![0xff; *n as usize], *n as usize, *w))).all(|(a, b)| *a == b);
                self.groups.push(Group::new(mask.clone(), all_ones, prefix));
                // lpm: longest prefix first
                self.groups.sort_by(|a, b| b.prefix.cmp(&a.prefix));
                self.groups.iter().position(|g| g.mask == mask).unwrap_or(0)
            }
        };
        let entries = &self.entries;
        self.groups[gi].insert(value, handle, |h| (entries[h as usize].as_ref().map(|e| e.priority).unwrap_or(i32::MAX), h));
        Ok(handle)
    }

    pub fn modify(&mut self, handle: u32, action: u32, data: Vec<Val>) -> Result<(), TableError> {
        match self.entries.get_mut(handle as usize).and_then(|e| e.as_mut()) {
            Some(e) => {
                e.action = action;
                e.set_data(data);
                Ok(())
            }
            None => Err(TableError::NoSuchEntry(handle)),
        }
    }

    pub fn delete(&mut self, t: &TableDef, handle: u32) -> Result<(), TableError> {
        let Some(e) = self.entries.get(handle as usize).and_then(|e| e.as_ref()) else {
            return Err(TableError::NoSuchEntry(handle));
        };
        let key = e.key.clone();
        if self.kind == MatchKind::Range {
            self.ranges.retain(|h| *h != handle);
            self.range_dirty = true;
        } else if let Ok((_, value, mask, _)) = self.prepare(t, &key) {
            if let Some(gi) = self.groups.iter().position(|g| g.mask == mask) {
                let g = &mut self.groups[gi];
                g.remove(&value, handle);
                if g.is_empty() {
                    self.groups.remove(gi);
                }
            }
        }
        self.entries[handle as usize] = None;
        self.free.push(handle);
        self.count -= 1;
        Ok(())
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.groups.clear();
        self.ranges.clear();
        self.range_ix = None;
        self.range_dirty = false;
        self.count = 0;
    }

    /// Finds the entry matching `key` (built by the pipeline); `scratch` is
    /// reused for masked keys.
    #[inline]
    pub fn lookup(&self, key: &[u8], scratch: &mut Vec<u8>) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        match self.kind {
            MatchKind::Range => self.lookup_range(key),
            MatchKind::Ternary | MatchKind::Optional => {
                let mut best: Option<(i32, u32)> = None;
                for g in &self.groups {
                    if let Some(h) = g.lookup(key, scratch).as_ref() {
                        let p = self.entries[*h as usize].as_ref().map(|e| e.priority).unwrap_or(i32::MAX);
                        if best.map(|(bp, bh)| (p, *h) < (bp, bh)).unwrap_or(true) {
                            best = Some((p, *h));
                        }
                    }
                }
                best.map(|(_, h)| h)
            }
            _ => {
                for g in &self.groups {
                    if let Some(h) = g.lookup(key, scratch).as_ref() {
                        return Some(*h);
                    }
                }
                None
            }
        }
    }

    /// `lookup` for a table with `small_key`, the key as a big-endian integer.
    #[inline(always)]
    pub fn lookup_u128(&self, k: u128) -> Option<u32> {
        if !self.word_first_hit {
            return self.lookup_u128_general(k);
        }
        for g in &self.groups {
            if let Map::Word(m) = &g.map {
                if let Some(h) = m.first(k as u64 & g.mask64) {
                    return Some(h);
                }
            }
        }
        None
    }

    /// `lookup_u128` for ternary tables and keys of 9 to 16 bytes.
    #[inline]
    fn lookup_u128_general(&self, k: u128) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        match self.kind {
            MatchKind::Ternary | MatchKind::Optional => {
                let mut best: Option<(i32, u32)> = None;
                for g in &self.groups {
                    if let Some(h) = g.lookup_small(k).as_ref() {
                        let p = self.entries[*h as usize].as_ref().map(|e| e.priority).unwrap_or(i32::MAX);
                        if best.map(|(bp, bh)| (p, *h) < (bp, bh)).unwrap_or(true) {
                            best = Some((p, *h));
                        }
                    }
                }
                best.map(|(_, h)| h)
            }
            _ => self.groups.iter().find_map(|g| g.lookup_small(k)),
        }
    }

    /// Rebuilds the range index if entries changed (call before lookups;
    /// small tables are scanned and get none).
    pub fn prepare_lookup(&mut self, t: &TableDef) {
        if !self.range_dirty {
            return;
        }
        self.range_dirty = false;
        self.range_ix = None;
        if self.ranges.len() < 16 {
            return;
        }
        let Some(field) = t.keys.iter().position(|k| k.kind == MatchKind::Range) else { return };
        let off: usize = self.widths[..field].iter().map(|w| w.1 as usize).sum();
        let len = self.widths[field].1 as usize;
        let entries = &self.entries;
        let it = self.ranges.iter().filter_map(|h| entries[*h as usize].as_ref().map(|e| (*h, e.key.as_slice())));
        self.range_ix = range::RangeIndex::build(field, off, len, it);
    }

    fn lookup_range(&self, key: &[u8]) -> Option<u32> {
        if let Some(ix) = &self.range_ix {
            return ix.candidates(key).iter().copied().find(|h| self.range_entry_matches(*h, key));
        }
        self.ranges.iter().copied().find(|h| self.range_entry_matches(*h, key))
    }

    fn range_entry_matches(&self, h: u32, key: &[u8]) -> bool {
        let Some(e) = self.entries[h as usize].as_ref() else { return false };
        let mut off = 0usize;
        for (i, mv) in e.key.iter().enumerate() {
            let n = self.widths[i].1 as usize;
            let Some(k) = key.get(off..off + n) else { return false };
            off += n;
            let ok = match mv {
                MatchValue::Lpm(x, p) => {
                    let m = prefix_mask(n, self.widths[i].0, *p);
                    k.iter().zip(&m).zip(x).all(|((a, m), x)| a & m == *x)
                }
                MatchValue::Ternary(x, m) => k.iter().zip(m).zip(x).all(|((a, m), x)| a & m == *x),
                MatchValue::Range(lo, hi) => k >= &lo[..] && k <= &hi[..],
                MatchValue::Exact(x) => k == &x[..],
            };
            if !ok {
                return false;
            }
        }
        true
    }

}

#[inline]
fn masked<'a>(key: &[u8], mask: &[u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    scratch.clear();
    scratch.extend(key.iter().zip(mask).map(|(a, b)| a & b));
    scratch
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn entry_hot_part_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Option<Entry>>(), std::mem::size_of::<Entry>());
        assert_eq!(std::mem::align_of::<Entry>(), 64);
        let e = Entry {
            indirect: profile::Ref::Direct,
            action: 0,
            idle_notified: false,
            args_inline: true,
            last_hit_ns: 0,
            counter: Count::default(),
            data: vec![],
            args: [0; INLINE_ARGS],
            key: vec![],
            priority: 0,
            meter: Meter::default(),
            ttl_ns: None,
        };
        let base = &e as *const Entry as usize;
        assert!(&e.data as *const Vec<Val> as usize + std::mem::size_of::<Vec<Val>>() - base <= 64);
        // a plan's parameters: the next line, read with no pointer chase
        assert_eq!(&e.args as *const _ as usize - base, 64);
    }
}
