//! Surplus round robin: the fair-share picker used at every level of the
//! traffic manager (queues of a port, ingress groups, ingress ports).
//!
//! Each member has a deficit. At the start of its turn a member whose
//! deficit is not positive is credited one quantum (and loses the turn if
//! that is still not enough); it is then served packet by packet, each
//! packet's cost taken from the deficit, until the deficit is used up, when
//! it goes to the back of the ring. Unlike classic DRR it may overdraw by
//! one packet, so picking needs no look at the head packet's size — which
//! lets two levels (groups, then ports) be stacked. Long-run shares are
//! proportional to the quanta, in whatever unit the costs are (bytes, or 1
//! per packet for round robin by packets).

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Srr {
    ring: VecDeque<u16>,
    deficit: Vec<i64>,
    quantum: Vec<i64>,
    member: Vec<bool>,
    default_quantum: i64,
}

impl Srr {
    pub fn new(default_quantum: u32) -> Srr {
        Srr { default_quantum: default_quantum.max(1) as i64, ..Default::default() }
    }

    fn grow(&mut self, i: usize) {
        if i >= self.deficit.len() {
            self.deficit.resize(i + 1, 0);
            self.quantum.resize(i + 1, self.default_quantum);
            self.member.resize(i + 1, false);
        }
    }

    /// Sets the quantum of member `i` (at least 1).
    pub fn set_quantum(&mut self, i: u16, q: u32) {
        self.grow(i as usize);
        self.quantum[i as usize] = q.max(1) as i64;
    }

    /// Puts `i` in the ring (at the back) if it is not there yet.
    pub fn activate(&mut self, i: u16) {
        self.grow(i as usize);
        if !self.member[i as usize] {
            self.member[i as usize] = true;
            self.ring.push_back(i);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// The member to serve next among those `eligible` says may be served
    /// now; ineligible members keep their deficit and are passed over.
    pub fn pick(&mut self, mut eligible: impl FnMut(u16) -> bool) -> Option<u16> {
        let n = self.ring.len();
        if n == 0 {
            return None;
        }
        // A member is passed over at most once per round when ineligible;
        // credits grow every round, so a member is picked within
        // ceil(max overdraw / quantum) + 1 rounds.
        let mut passed = 0usize;
        let mut guard = 0usize;
        loop {
            guard += 1;
            if guard > 1_000_000 {
                return None;
            }
            let f = *self.ring.front()?;
            if !eligible(f) {
                passed += 1;
                self.ring.rotate_left(1);
                if passed >= n {
                    // nobody may send: leave the order as it was
                    self.ring.rotate_right(passed.min(n) % n.max(1));
                    return None;
                }
                continue;
            }
            let fi = f as usize;
            if self.deficit[fi] <= 0 {
                self.deficit[fi] += self.quantum[fi];
                if self.deficit[fi] <= 0 {
                    self.ring.rotate_left(1);
                    continue;
                }
            }
            return Some(f);
        }
    }

    /// Charges `cost` to the member just picked (the front of the ring);
    /// `still_active`: it has more to send.
    pub fn charge(&mut self, i: u16, cost: u32, still_active: bool) {
        let ii = i as usize;
        if self.ring.front() != Some(&i) {
            // not the front (should not happen): charge and leave order alone
            self.deficit[ii] -= cost as i64;
            if !still_active {
                self.remove(i);
            }
            return;
        }
        self.deficit[ii] -= cost as i64;
        if !still_active {
            self.ring.pop_front();
            self.member[ii] = false;
            self.deficit[ii] = 0;
        } else if self.deficit[ii] <= 0 {
            self.ring.rotate_left(1);
        }
    }

    /// Takes `i` out of the ring (it has nothing left).
    pub fn remove(&mut self, i: u16) {
        if (i as usize) < self.member.len() && self.member[i as usize] {
            self.ring.retain(|x| *x != i);
            self.member[i as usize] = false;
            self.deficit[i as usize] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `n` packets from always-backlogged members with the given
    /// packet sizes; returns the bytes each got.
    fn serve(srr: &mut Srr, sizes: &[u32], n: usize) -> Vec<u64> {
        let mut got = vec![0u64; sizes.len()];
        for i in 0..sizes.len() {
            srr.activate(i as u16);
        }
        for _ in 0..n {
            let f = srr.pick(|_| true).unwrap();
            got[f as usize] += sizes[f as usize] as u64;
            srr.charge(f, sizes[f as usize], true);
        }
        got
    }

    #[test]
    fn byte_fair_with_unequal_packets() {
        let mut s = Srr::new(1500);
        let got = serve(&mut s, &[64, 1518, 9000], 200_000);
        let total: u64 = got.iter().sum();
        for g in &got {
            let share = *g as f64 / total as f64;
            assert!((share - 1.0 / 3.0).abs() < 0.01, "{got:?}");
        }
    }

    #[test]
    fn quanta_weight_the_shares() {
        let mut s = Srr::new(1);
        s.set_quantum(0, 3);
        s.set_quantum(1, 1);
        let got = serve(&mut s, &[1, 1], 4000);
        assert_eq!(got, vec![3000, 1000]);
    }

    #[test]
    fn ineligible_members_are_passed_over_and_keep_their_place() {
        let mut s = Srr::new(1);
        s.activate(0);
        s.activate(1);
        assert_eq!(s.pick(|i| i == 1), Some(1));
        s.charge(1, 1, true);
        assert_eq!(s.pick(|_| false), None);
        assert_eq!(s.pick(|_| true), Some(0));
    }

    #[test]
    fn emptied_member_leaves_and_forgets_its_deficit() {
        let mut s = Srr::new(100);
        s.activate(0);
        let f = s.pick(|_| true).unwrap();
        s.charge(f, 10, false);
        assert!(s.is_empty());
        assert_eq!(s.pick(|_| true), None);
        s.activate(0);
        assert_eq!(s.pick(|_| true), Some(0));
    }
}
