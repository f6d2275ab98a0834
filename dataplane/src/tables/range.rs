//! An index for range tables: the key space of one range field cut into
//! elementary intervals, each with the entries (in priority order) whose
//! range covers it. A lookup finds the packet's interval by binary search
//! and checks only those candidates, instead of every entry. When ranges
//! overlap so much that the lists would grow past 64 times the number of
//! entries, no index is built and lookups scan (correct, just slower).

use crate::program::MatchValue;

#[derive(Clone, Debug, Default)]
pub struct RangeIndex {
    /// Byte offset and length of the indexed field in the key.
    pub off: usize,
    pub len: usize,
    /// Start of each elementary interval, ascending (the first is 0).
    bounds: Vec<u128>,
    cands: Vec<Vec<u32>>,
}

fn be(b: &[u8]) -> u128 {
    b.iter().fold(0u128, |a, x| (a << 8) | *x as u128)
}

impl RangeIndex {
    /// Builds the index over key field `field` (byte `off`, `len` bytes)
    /// for `entries` given in priority order as (handle, key). None when
    /// the field is too wide or the index would be too big.
    pub fn build<'a>(field: usize, off: usize, len: usize, entries: impl Iterator<Item = (u32, &'a [MatchValue])> + Clone) -> Option<RangeIndex> {
        if len > 16 {
            return None;
        }
        let span = |mv: &MatchValue| -> (u128, u128) {
            match mv {
                MatchValue::Range(lo, hi) => (be(lo), be(hi)),
                MatchValue::Exact(x) => (be(x), be(x)),
                _ => (0, u128::MAX),
            }
        };
        let mut pts: Vec<u128> = vec![0];
        let mut n = 0usize;
        for (_, k) in entries.clone() {
            let (lo, hi) = span(k.get(field)?);
            pts.push(lo);
            if hi < u128::MAX {
                pts.push(hi + 1);
            }
            n += 1;
        }
        pts.sort_unstable();
        pts.dedup();
        let mut cands: Vec<Vec<u32>> = vec![vec![]; pts.len()];
        let budget = 64 * n + 65536;
        let mut used = 0usize;
        for (h, k) in entries {
            let (lo, hi) = span(k.get(field)?);
            let a = pts.partition_point(|p| *p < lo);
            let b = pts.partition_point(|p| *p <= hi);
            used += b - a;
            if used > budget {
                return None;
            }
            for c in &mut cands[a..b] {
                c.push(h);
            }
        }
        Some(RangeIndex { off, len, bounds: pts, cands })
    }

    /// The entries that may match `key`, in priority order.
    #[inline]
    pub fn candidates(&self, key: &[u8]) -> &[u32] {
        let v = key.get(self.off..self.off + self.len).map(be).unwrap_or(0);
        let j = self.bounds.partition_point(|b| *b <= v).saturating_sub(1);
        self.cands.get(j).map(|c| c.as_slice()).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(lo: u16, hi: u16) -> Vec<MatchValue> {
        vec![MatchValue::Range(lo.to_be_bytes().to_vec(), hi.to_be_bytes().to_vec())]
    }

    #[test]
    fn intervals_hold_covering_entries_in_order() {
        let keys = [r(10, 20), r(15, 30), r(0, 65535), r(40, 40)];
        let it = keys.iter().enumerate().map(|(i, k)| (i as u32, k.as_slice()));
        let ix = RangeIndex::build(0, 0, 2, it).unwrap();
        assert_eq!(ix.candidates(&5u16.to_be_bytes()), &[2]);
        assert_eq!(ix.candidates(&12u16.to_be_bytes()), &[0, 2]);
        assert_eq!(ix.candidates(&16u16.to_be_bytes()), &[0, 1, 2]);
        assert_eq!(ix.candidates(&21u16.to_be_bytes()), &[1, 2]);
        assert_eq!(ix.candidates(&40u16.to_be_bytes()), &[2, 3]);
        assert_eq!(ix.candidates(&41u16.to_be_bytes()), &[2]);
    }

    #[test]
    fn too_much_overlap_builds_no_index() {
        // nested ranges: entry i covers [i, 20000 - i]
        let keys: Vec<Vec<MatchValue>> = (0..9000u16).map(|i| r(i, 30000 - i)).collect();
        let it = keys.iter().enumerate().map(|(i, k)| (i as u32, k.as_slice()));
        assert!(RangeIndex::build(0, 0, 2, it).is_none());
    }
}
