//! The sources' next frames in time order: a tournament tree over the
//! sources, each node the earliest (arrival time, source) below it, each
//! leaf one source's next arrival. The earliest is read at the root; a
//! source's new time replays its path to the root: log2 of the number of
//! sources in minimums, no allocation, nothing boxed, where a binary heap
//! would pop and push. A node holds its (time, source) as one u128, the
//! time above the source id, so that the smaller of two is the earlier
//! and, on a tie in time, the lower source id, as in the heap of
//! (time, id) it replaces: one compare and a select a level, no branch.

/// A leaf with nothing due (no arrival time is this late: they are ps / 1000).
const IDLE: u64 = u64::MAX;

/// (time, source) as one ordered key.
#[inline(always)]
fn key(at: u64, id: u16) -> u128 {
    (at as u128) << 16 | id as u128
}

/// The smaller of two keys, without a jump: which of two sources is next
/// is a coin toss to the branch predictor (iMIX sizes, many ports), and
/// the compiler turns `min` of two u128, `select_unpredictable` or masks
/// into a jump (mispredicted half the time: 9 % of the 16-port incast's
/// wall time). The mask passes through `black_box`, which it cannot see
/// through.
#[inline(always)]
fn earlier(a: u128, b: u128) -> u128 {
    let b_first = std::hint::black_box(0u128.wrapping_sub((b < a) as u128));
    a ^ ((a ^ b) & b_first)
}

#[derive(Clone, Debug, Default)]
pub struct SourceQueue {
    /// Each node's earliest (arrival time (ns), source) as a `key`: node
    /// i's children are 2i and 2i + 1, the root is 1, source k's leaf is
    /// `leaves + k` (the leaves past the sources are idle). Empty until a
    /// source joins.
    keys: Vec<u128>,
}

impl SourceQueue {
    /// The earliest (arrival time, source), if any source has one.
    #[inline]
    pub fn first(&self) -> Option<(u64, u16)> {
        let k = *self.keys.get(1)?;
        let at = (k >> 16) as u64;
        (at != IDLE).then_some((at, k as u16))
    }

    /// Source `id`'s next arrival is `at` (None: it has none); a source
    /// not seen before joins.
    #[inline]
    pub fn set(&mut self, id: u16, at: Option<u64>) {
        if id as usize >= self.keys.len() / 2 {
            self.grow(id as usize + 1);
        }
        let keys = &mut self.keys[..];
        let mut i = keys.len() / 2 + id as usize;
        let mut k = key(at.unwrap_or(IDLE), id);
        keys[i] = k;
        while i > 1 {
            k = earlier(k, keys[i ^ 1]);
            i /= 2;
            keys[i] = k;
        }
    }

    /// Forgets every source.
    pub fn clear(&mut self) {
        self.keys.clear();
    }

    /// Room for `n` sources (leaves a power of two), the tree rebuilt.
    fn grow(&mut self, n: usize) {
        let old = self.keys.len() / 2;
        let leaves = n.next_power_of_two().max(2);
        let mut keys: Vec<u128> = (0..2 * leaves).map(|i| key(IDLE, i.saturating_sub(leaves) as u16)).collect();
        keys[leaves..leaves + old].copy_from_slice(&self.keys[old..]);
        for i in (1..leaves).rev() {
            keys[i] = keys[2 * i].min(keys[2 * i + 1]);
        }
        self.keys = keys;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn earlier_is_the_smaller_key() {
        let times = [(0, 0), (0, 1), (5, 9), (1 << 40, 2), (1 << 48, 0), (IDLE - 1, 7), (IDLE, 0), (IDLE, 3)];
        let keys = times.map(|(at, id)| key(at, id));
        for a in keys {
            for b in keys {
                assert_eq!(earlier(a, b), a.min(b), "{a:#x} {b:#x}");
            }
        }
    }

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

    #[test]
    fn times_up_to_the_last_before_idle_keep_their_order() {
        // arrival times past 2^48 ns and up to IDLE - 1: the source id
        // below the time must not spill into it
        let mut q = SourceQueue::default();
        let top = IDLE - 1;
        for (id, t) in [(0u16, top), (1, 1 << 50), (2, top - 1), (3, (1 << 50) + 1), (4, 1 << 50)] {
            q.set(id, Some(t));
        }
        let mut order = vec![];
        while let Some((t, id)) = q.first() {
            order.push((t, id));
            q.set(id, None);
        }
        assert_eq!(order, [(1 << 50, 1), (1 << 50, 4), ((1 << 50) + 1, 3), (top - 1, 2), (top, 0)]);
    }
}
