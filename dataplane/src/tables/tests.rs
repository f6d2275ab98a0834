//! Table index tests: exact, lpm, ternary with priorities, range, delete.

use super::*;
use crate::program::{KeyDef, KeyPart, TableType};

fn tdef(kinds: &[(MatchKind, u32)], match_type: MatchKind) -> TableDef {
    TableDef {
        name: "t".into(),
        keys: kinds
            .iter()
            .enumerate()
            .map(|(i, (k, w))| KeyDef {
                name: format!("k{i}"),
                kind: *k,
                src: KeyPart::Field(0),
                width: *w,
                nbytes: (w + 7) / 8,
                mask: None,
            })
            .collect(),
        match_type,
        ttype: TableType::Simple,
        profile: None,
        max_size: 16,
        actions: vec![0],
        next_by_action: Default::default(),
        next_list: vec![],
        next_hit_miss: None,
        base_default_next: None,
        default: None,
        const_entries: vec![],
        with_counters: false,
        direct_meter: None,
        support_timeout: false,
    }
}

fn look(s: &TableState, key: &[u8]) -> Option<u32> {
    s.lookup(key, &mut vec![])
}

#[test]
fn exact_add_lookup_delete() {
    let t = tdef(&[(MatchKind::Exact, 12)], MatchKind::Exact);
    let mut s = TableState::new(&t);
    let h = s.add(&t, &[MatchValue::Exact(vec![0x0a, 0xbc])], 0, 0, vec![]).unwrap();
    assert_eq!(look(&s, &[0x0a, 0xbc]), Some(h));
    assert_eq!(look(&s, &[0x0a, 0xbd]), None);
    // values wider than the field are truncated to it (0x1abc -> 0xabc)
    assert_eq!(s.add(&t, &[MatchValue::Exact(vec![0x1a, 0xbc])], 0, 0, vec![]), Err(TableError::Duplicate));
    s.delete(&t, h).unwrap();
    assert_eq!(look(&s, &[0x0a, 0xbc]), None);
    assert_eq!(s.delete(&t, h), Err(TableError::NoSuchEntry(h)));
}

#[test]
fn wrong_key_count_and_kind() {
    let t = tdef(&[(MatchKind::Exact, 8)], MatchKind::Exact);
    let mut s = TableState::new(&t);
    assert!(matches!(s.add(&t, &[], 0, 0, vec![]), Err(TableError::WrongKeyCount { .. })));
    assert!(matches!(
        s.add(&t, &[MatchValue::Ternary(vec![1], vec![1])], 0, 0, vec![]),
        Err(TableError::WrongMatchKind { .. })
    ));
}

#[test]
fn lpm_longest_prefix_and_bad_prefix() {
    let t = tdef(&[(MatchKind::Exact, 8), (MatchKind::Lpm, 32)], MatchKind::Lpm);
    let mut s = TableState::new(&t);
    let k = |a: u8, p: u32, v: [u8; 4]| vec![MatchValue::Exact(vec![a]), MatchValue::Lpm(v.to_vec(), p)];
    let h8 = s.add(&t, &k(1, 8, [10, 0, 0, 0]), 0, 0, vec![]).unwrap();
    let h24 = s.add(&t, &k(1, 24, [10, 1, 2, 0]), 0, 0, vec![]).unwrap();
    let h0 = s.add(&t, &k(1, 0, [0, 0, 0, 0]), 0, 0, vec![]).unwrap();
    assert_eq!(look(&s, &[1, 10, 1, 2, 3]), Some(h24));
    assert_eq!(look(&s, &[1, 10, 9, 9, 9]), Some(h8));
    assert_eq!(look(&s, &[1, 11, 0, 0, 0]), Some(h0));
    assert_eq!(look(&s, &[2, 10, 1, 2, 3]), None);
    assert!(matches!(s.add(&t, &k(1, 33, [0; 4]), 0, 0, vec![]), Err(TableError::BadPrefix { .. })));
}

#[test]
fn ternary_best_priority_across_masks() {
    let t = tdef(&[(MatchKind::Ternary, 16)], MatchKind::Ternary);
    let mut s = TableState::new(&t);
    let low = s.add(&t, &[MatchValue::Ternary(vec![0x12, 0x00], vec![0xff, 0x00])], 5, 0, vec![]).unwrap();
    let high = s.add(&t, &[MatchValue::Ternary(vec![0x00, 0x34], vec![0x00, 0xff])], 1, 0, vec![]).unwrap();
    assert_eq!(look(&s, &[0x12, 0x34]), Some(high));
    assert_eq!(look(&s, &[0x12, 0x35]), Some(low));
    assert_eq!(look(&s, &[0x13, 0x35]), None);
    // same key and mask with another priority is allowed, same priority is not
    assert!(s.add(&t, &[MatchValue::Ternary(vec![0x12, 0x00], vec![0xff, 0x00])], 3, 0, vec![]).is_ok());
    assert_eq!(
        s.add(&t, &[MatchValue::Ternary(vec![0x12, 0x00], vec![0xff, 0x00])], 3, 0, vec![]),
        Err(TableError::Duplicate)
    );
}

#[test]
fn range_in_priority_order_and_full_table() {
    let t = tdef(&[(MatchKind::Range, 8)], MatchKind::Range);
    let mut s = TableState::new(&t);
    let a = s.add(&t, &[MatchValue::Range(vec![10], vec![20])], 2, 0, vec![]).unwrap();
    let b = s.add(&t, &[MatchValue::Range(vec![15], vec![30])], 1, 0, vec![]).unwrap();
    assert_eq!(look(&s, &[12]), Some(a));
    assert_eq!(look(&s, &[16]), Some(b));
    assert_eq!(look(&s, &[31]), None);
    for i in 0..14 {
        s.add(&t, &[MatchValue::Range(vec![100 + i], vec![100 + i])], 9, 0, vec![]).unwrap();
    }
    assert_eq!(s.add(&t, &[MatchValue::Range(vec![0], vec![0])], 9, 0, vec![]), Err(TableError::Full));
}

#[test]
fn range_index_agrees_with_a_scan() {
    // an ACL-like table: ternary protocol, range port; 600 entries
    let mut t = tdef(&[(MatchKind::Ternary, 8), (MatchKind::Range, 16)], MatchKind::Range);
    t.max_size = 1000;
    let mut s = TableState::new(&t);
    let mut x: u64 = 7;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut entries = vec![];
    for i in 0..600 {
        let lo = (rnd() % 60000) as u16;
        let hi = lo.saturating_add((rnd() % 2000) as u16);
        let proto = [6u8, 17][(rnd() % 2) as usize];
        let mask = if rnd() % 5 == 0 { 0 } else { 0xff };
        let key = [MatchValue::Ternary(vec![proto], vec![mask]), MatchValue::Range(lo.to_be_bytes().to_vec(), hi.to_be_bytes().to_vec())];
        let prio = (rnd() % 100) as i32;
        if let Ok(h) = s.add(&t, &key, prio, 0, vec![]) {
            entries.push((prio, h, proto & mask, mask, lo, hi));
        }
        let _ = i;
    }
    s.prepare_lookup(&t);
    assert!(s.range_ix.is_some(), "the index was built");
    entries.sort();
    for _ in 0..3000 {
        let proto = [6u8, 17][(rnd() % 2) as usize];
        let port = (rnd() % 65536) as u16;
        let want = entries.iter().find(|e| proto & e.3 == e.2 && port >= e.4 && port <= e.5).map(|e| e.1);
        let key = [proto, (port >> 8) as u8, port as u8];
        assert_eq!(look(&s, &key), want, "proto {proto} port {port}");
    }
}

/// Keys of up to 8 bytes are one word in their hash map (one multiply to
/// hash, smaller slots); up to 16 bytes two; longer ones bytes. Every kind
/// finds the same entries, through bytes or an integer key.
#[test]
fn keys_of_up_to_eight_bytes_are_one_word() {
    for (width, word) in [(48u32, true), (64, true), (72, false), (128, false)] {
        let t = tdef(&[(MatchKind::Lpm, width)], MatchKind::Lpm);
        let mut s = TableState::new(&t);
        let n = width.div_ceil(8) as usize;
        let key = |top: u8| {
            let mut k = vec![0x5a; n];
            k[0] = top;
            k
        };
        let full = s.add(&t, &[MatchValue::Lpm(key(0xff), width)], 0, 0, vec![]).unwrap();
        let short = s.add(&t, &[MatchValue::Lpm(key(0x80), 1)], 0, 0, vec![]).unwrap();
        assert_eq!(s.groups.iter().all(|g| matches!(g.map, Map::Word(_))), word, "{width} bits");
        let top = |k: &[u8]| k.iter().fold(0u128, |a, b| (a << 8) | *b as u128);
        assert_eq!(look(&s, &key(0xff)), Some(full));
        assert_eq!(s.lookup_u128(top(&key(0xff))), Some(full));
        assert_eq!(look(&s, &key(0xc0)), Some(short));
        assert_eq!(s.lookup_u128(top(&key(0xc0))), Some(short));
        assert_eq!(s.lookup_u128(top(&key(0x7f))), None);
        s.delete(&t, full).unwrap();
        assert_eq!(s.lookup_u128(top(&key(0xff))), Some(short));
    }
}

/// The integer lookup of exact and lpm keys of at most 8 bytes (word maps,
/// first hit longest prefix first) finds what the byte lookup finds,
/// through adds and deletes, on an empty table too.
#[test]
fn word_key_lookups_agree_with_byte_lookups() {
    for (kind, width) in [(MatchKind::Lpm, 32u32), (MatchKind::Exact, 12), (MatchKind::Lpm, 64)] {
        let t = tdef(&[(kind, width)], kind);
        let mut s = TableState::new(&t);
        let nbytes = width.div_ceil(8) as usize;
        let key_of = |v: u64| v.to_be_bytes()[8 - nbytes..].to_vec();
        let wmask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut live = vec![];
        for step in 0..600 {
            let r = crate::hash::xorshift64star(&mut seed);
            if step % 5 == 4 && !live.is_empty() {
                let h = live.swap_remove((r % live.len() as u64) as usize);
                s.delete(&t, h).unwrap();
            } else if live.len() < 16 {
                // values from a small range, so prefixes nest and collide
                let v = (r % 64) << (width - 8) & wmask;
                let mv = match kind {
                    MatchKind::Lpm => MatchValue::Lpm(key_of(v), [4, 6, 8, width][(r >> 40) as usize % 4]),
                    _ => MatchValue::Exact(key_of(v)),
                };
                if let Ok(h) = s.add(&t, &[mv], 0, 0, vec![]) {
                    live.push(h);
                }
            }
            let probe = ((r >> 8) % 64) << (width - 8) & wmask | (r >> 60);
            assert_eq!(s.lookup_u128(probe as u128), look(&s, &key_of(probe)), "{kind:?}/{width} key {probe:#x}");
        }
    }
    let t = tdef(&[(MatchKind::Exact, 16)], MatchKind::Exact);
    assert_eq!(TableState::new(&t).lookup_u128(0), None);
}

/// An entry keeps its action data and, for up to INLINE_ARGS parameters,
/// their low 128 bits as words, through add and modify (wide values too);
/// longer data has no words.
#[test]
fn entry_words_follow_the_action_data() {
    let t = tdef(&[(MatchKind::Exact, 16)], MatchKind::Exact);
    let mut s = TableState::new(&t);
    let wide = Val::from_be_bytes(&[0xab; 20]);
    let words = |s: &TableState, h: u32| s.entries[h as usize].as_ref().unwrap().args().copied();
    let h = s.add(&t, &[MatchValue::Exact(vec![0, 1])], 0, 0, vec![Val::from(7u64), wide.clone()]).unwrap();
    assert_eq!(words(&s, h), Some([7, wide.low_u128()]));
    assert_eq!(s.entries[h as usize].as_ref().unwrap().data(), &[Val::from(7u64), wide.clone()]);
    s.modify(h, 0, vec![Val::from(9u64)]).unwrap();
    assert_eq!(words(&s, h), Some([9, 0]), "a shorter data leaves no stale word");
    s.modify(h, 0, vec![Val::from(1u64), Val::from(2u64), Val::from(3u64)]).unwrap();
    assert_eq!(words(&s, h), None);
    assert_eq!(s.entries[h as usize].as_ref().unwrap().data().len(), 3);
    s.modify(h, 0, vec![]).unwrap();
    assert_eq!(words(&s, h), Some([0, 0]));
}

/// The next node is resolved at load only when no action and neither hit
/// nor miss can change it.
#[test]
fn fixed_next_only_when_nothing_changes_it() {
    let mut t = tdef(&[(MatchKind::Exact, 8)], MatchKind::Exact);
    let (a, b) = (Some(NodeRef::Table(1)), Some(NodeRef::Cond(2)));
    t.base_default_next = a;
    t.next_list = vec![(0, a), (1, a)];
    assert_eq!(fixed_next(&t), Some(a));
    t.next_list = vec![(0, a), (1, b)];
    assert_eq!(fixed_next(&t), None, "an action's own next node");
    t.next_list = vec![(0, b), (1, b)];
    assert_eq!(fixed_next(&t), None, "a miss without an action goes to the base default next");
    t.next_list = vec![];
    assert_eq!(fixed_next(&t), Some(a));
    t.next_hit_miss = Some((a, b));
    assert_eq!(fixed_next(&t), None, "hit and miss differ");
    t.next_hit_miss = Some((None, None));
    assert_eq!(fixed_next(&t), Some(None));
    assert_eq!(TableState::new(&t).fixed_next, Some(None));
}
