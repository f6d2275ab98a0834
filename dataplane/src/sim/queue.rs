//! The sources' next frames in time order: a tournament tree over the
//! sources, each node the earliest (arrival time, source) below it, each
//! leaf one source's next arrival. The earliest is read at the root; a
//! source's new time replays its path to the root: log2 of the number of
//! sources in compares that pick a child (no branch to mispredict), no
//! allocation, nothing boxed, where a binary heap would pop and push. Ties
//! go to the lower source id, as they did in the heap of (time, id) it
//! replaces.

/// A leaf with nothing due (no arrival time is this late: they are ps / 1000).
const IDLE: u64 = u64::MAX;

#[derive(Clone, Debug, Default)]
pub struct SourceQueue {
    /// Each node's earliest arrival (ns) and its source: node i's children
    /// are 2i and 2i + 1, the root is 1, source k's leaf is `leaves + k`
    /// (the leaves past the sources are idle). Empty until a source joins.
    at: Vec<u64>,
    id: Vec<u16>,
}

impl SourceQueue {
    /// The earliest (arrival time, source), if any source has one.
    #[inline]
    pub fn first(&self) -> Option<(u64, u16)> {
        match self.at.get(1) {
            Some(&t) if t != IDLE => Some((t, self.id[1])),
            _ => None,
        }
    }

    /// Source `id`'s next arrival is `at` (None: it has none); a source
    /// not seen before joins.
    #[inline]
    pub fn set(&mut self, id: u16, at: Option<u64>) {
        if id as usize >= self.at.len() / 2 {
            self.grow(id as usize + 1);
        }
        let n = self.at.len();
        let (times, ids) = (&mut self.at[..n], &mut self.id[..n]);
        let mut i = n / 2 + id as usize;
        let (mut t, mut who) = (at.unwrap_or(IDLE), id as u64);
        times[i] = t;
        while i > 1 {
            let (st, sid) = (times[i ^ 1], ids[i ^ 1] as u64);
            // the sibling's if earlier, or as early and on the left (lower ids);
            // chosen by masks: a branch here is mispredicted half the time
            let take = (st < t) as u64 | ((st == t) as u64 & (i & 1) as u64);
            let mask = take.wrapping_neg();
            t = (st & mask) | (t & !mask);
            who = (sid & mask) | (who & !mask);
            i /= 2;
            times[i] = t;
            ids[i] = who as u16;
        }
    }

    /// Forgets every source.
    pub fn clear(&mut self) {
        self.at.clear();
        self.id.clear();
    }

    /// Room for `n` sources (leaves a power of two), the tree rebuilt.
    fn grow(&mut self, n: usize) {
        let old = self.at.len() / 2;
        let leaves = n.next_power_of_two().max(2);
        let mut at = vec![IDLE; 2 * leaves];
        at[leaves..leaves + old].copy_from_slice(&self.at[old..]);
        let mut id: Vec<u16> = (0..2 * leaves).map(|i| i.saturating_sub(leaves) as u16).collect();
        for i in (1..leaves).rev() {
            let first = 2 * i + (at[2 * i + 1] < at[2 * i]) as usize;
            (at[i], id[i]) = (at[first], id[first]);
        }
        self.at = at;
        self.id = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn earliest_first_and_lower_id_on_a_tie() {
        let mut q = SourceQueue::default();
        assert_eq!(q.first(), None);
        q.set(2, Some(50));
        q.set(0, Some(70));
        q.set(1, Some(50));
        assert_eq!(q.first(), Some((50, 1)), "a tie goes to the lower id");
        q.set(1, None);
        assert_eq!(q.first(), Some((50, 2)));
        q.set(2, Some(80));
        assert_eq!(q.first(), Some((70, 0)));
        q.set(0, None);
        q.set(2, None);
        assert_eq!(q.first(), None, "every source done");
        q.clear();
        assert_eq!(q.first(), None);
    }

    #[test]
    fn the_same_order_as_a_heap_of_time_and_id() {
        // 37 sources (the leaves grow twice), each taking the next frame
        // at pseudo-random intervals with many ties, some stopping
        let mut q = SourceQueue::default();
        let mut heap = BinaryHeap::new();
        let mut rng = 0x1234_5678_9abc_def1u64;
        let mut left = [40u32; 37];
        for id in 0..37u16 {
            let t = crate::hash::xorshift64star(&mut rng) % 8;
            q.set(id, Some(t));
            heap.push(Reverse((t, id)));
        }
        let mut n = 0;
        while let Some(Reverse((t, id))) = heap.pop() {
            assert_eq!(q.first(), Some((t, id)), "frame {n}");
            left[id as usize] -= 1;
            let next = (left[id as usize] > 0).then(|| t + crate::hash::xorshift64star(&mut rng) % 4);
            if let Some(at) = next {
                heap.push(Reverse((at, id)));
            }
            q.set(id, next);
            n += 1;
        }
        assert_eq!((n, q.first()), (37 * 40, None));
    }
}
