//! The entries of one mask group whose keys fit in 64 bits, by masked key:
//! open addressing with linear probing in 16-byte slots (key, best
//! handle, index of the other handles), Fibonacci hashing on the key's
//! high product bits. A lookup is one multiply and, mostly, one slot read;
//! the rare keys with several entries (ternary entries differing only in
//! priority) keep the others in a side list.

/// Marks a free slot (handles are entry indexes, far below it).
const EMPTY: u32 = u32::MAX;
/// A slot without other handles.
const NO_REST: u32 = u32::MAX;
const FIB: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    /// The best handle (EMPTY: a free slot).
    first: u32,
    /// Index in `rests` of the other handles, best first (NO_REST: none).
    rest: u32,
}

const FREE: Slot = Slot { key: 0, first: EMPTY, rest: NO_REST };

#[derive(Clone, Debug)]
pub(super) struct WordMap {
    slots: Vec<Slot>,
    /// 64 - log2(capacity): the home slot is the product's top bits.
    shift: u32,
    len: usize,
    rests: Vec<Vec<u32>>,
    free_rests: Vec<u32>,
}

/// Slots of a new map (a power of two; a map always has a free slot, so
/// probes end without checking the length).
const MIN_SLOTS: usize = 8;

impl WordMap {
    pub fn new() -> WordMap {
        WordMap {
            slots: vec![FREE; MIN_SLOTS],
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
            rests: vec![],
            free_rests: vec![],
        }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(FIB) >> self.shift) as usize
    }

    /// The slot holding `key`, if any.
    #[inline(always)]
    fn find(&self, key: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.first == EMPTY {
                return None;
            }
            if s.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The best handle under `key`.
    #[inline(always)]
    pub fn first(&self, key: u64) -> Option<u32> {
        self.find(key).map(|i| self.slots[i].first)
    }

    /// Every handle under `key`, best first.
    pub fn handles(&self, key: u64) -> Vec<u32> {
        match self.find(key) {
            Some(i) => self.all(&self.slots[i]),
            None => vec![],
        }
    }

    fn all(&self, s: &Slot) -> Vec<u32> {
        let mut v = vec![s.first];
        if s.rest != NO_REST {
            v.extend_from_slice(&self.rests[s.rest as usize]);
        }
        v
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds handle `h` under `key`, the handles kept in the order `rank`
    /// gives.
    pub fn insert(&mut self, key: u64, h: u32, rank: impl Fn(u32) -> (i32, u32)) {
        if let Some(i) = self.find(key) {
            let mut all = self.all(&self.slots[i]);
            all.push(h);
            all.sort_by_key(|x| rank(*x));
            self.store(i, all);
            return;
        }
        if (self.len + 1) * 8 > self.slots.len() * 7 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].first != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = Slot { key, first: h, rest: NO_REST };
        self.len += 1;
    }

    /// Removes handle `h` from `key`; the key goes when no handle is left.
    pub fn remove(&mut self, key: u64, h: u32) {
        let Some(i) = self.find(key) else { return };
        let all: Vec<u32> = self.all(&self.slots[i]).into_iter().filter(|x| *x != h).collect();
        if !all.is_empty() {
            self.store(i, all);
            return;
        }
        self.free_rest(i);
        self.delete_slot(i);
        self.len -= 1;
    }

    /// Sets slot `i`'s handles to `all` (not empty, best first).
    fn store(&mut self, i: usize, all: Vec<u32>) {
        self.slots[i].first = all[0];
        if all.len() == 1 {
            self.free_rest(i);
            return;
        }
        let rest = all[1..].to_vec();
        match self.slots[i].rest {
            NO_REST => {
                let r = match self.free_rests.pop() {
                    Some(r) => {
                        self.rests[r as usize] = rest;
                        r
                    }
                    None => {
                        self.rests.push(rest);
                        self.rests.len() as u32 - 1
                    }
                };
                self.slots[i].rest = r;
            }
            r => self.rests[r as usize] = rest,
        }
    }

    fn free_rest(&mut self, i: usize) {
        let r = self.slots[i].rest;
        if r != NO_REST {
            self.rests[r as usize] = vec![];
            self.free_rests.push(r);
            self.slots[i].rest = NO_REST;
        }
    }

    /// Empties slot `i`, moving back the slots after it that probed past
    /// it (no tombstones: lookups stop at the first free slot).
    fn delete_slot(&mut self, mut i: usize) {
        let mask = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if self.slots[j].first == EMPTY {
                break;
            }
            let k = self.home(self.slots[j].key);
            // the entry at j stays when its home lies cyclically in (i, j]
            let stays = if i <= j { i < k && k <= j } else { i < k || k <= j };
            if !stays {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i] = FREE;
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![FREE; cap]);
        self.shift = 64 - cap.trailing_zeros();
        let mask = cap - 1;
        for s in old.into_iter().filter(|s| s.first != EMPTY) {
            let mut i = self.home(s.key);
            while self.slots[i].first != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts and removes (keys from a small range, so that probe
    /// runs collide and deletions move entries back) agree with a HashMap.
    #[test]
    fn agrees_with_a_hash_map_through_inserts_and_removes() {
        let mut m = WordMap::new();
        let mut reference: HashMap<u64, Vec<u32>> = HashMap::new();
        let rank = |h: u32| ((h % 7) as i32, h);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for step in 0..20_000u32 {
            let r = crate::hash::xorshift64star(&mut seed);
            // prefixes with trailing zeros, as lpm keys are
            let key = (r % 300) << 8;
            let h = (r >> 20) as u32 % 50;
            let hs = reference.entry(key).or_default();
            if r & (1 << 40) == 0 || hs.is_empty() {
                if !hs.contains(&h) {
                    hs.push(h);
                    hs.sort_by_key(|x| rank(*x));
                    m.insert(key, h, rank);
                }
            } else {
                let victim = hs[(r >> 50) as usize % hs.len()];
                hs.retain(|x| *x != victim);
                m.remove(key, victim);
            }
            if step % 97 == 0 {
                for k in (0..300u64).map(|k| k << 8) {
                    let want = reference.get(&k).cloned().unwrap_or_default();
                    assert_eq!(m.handles(k), want, "key {k:#x} at step {step}");
                    assert_eq!(m.first(k), want.first().copied());
                }
            }
        }
        let live = reference.values().filter(|v| !v.is_empty()).count();
        assert_eq!(m.len, live);
        assert_eq!(m.is_empty(), live == 0);
        assert!(m.slots.len() * 7 >= m.len * 8, "load at most 7/8");
    }

    #[test]
    fn slots_are_16_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
    }
}
