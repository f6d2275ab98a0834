//! Where a stream lost frames, not only how many: each run of missing
//! sequence numbers (a gap the analyzer saw open) with the send times of
//! the frames received on either side of it. The lost frames were sent in
//! between, so a run can be put against an event on the sender's clock
//! (a link going down at a known time) without per-frame records.
//!
//! A frame that arrives late, inside an open run, fills it again (the run's
//! `missing` drops), so reordering is not counted as loss. Only the first
//! MAX_RUNS runs are kept; the ones after are counted in `dropped`.

use crate::json::J;

pub const MAX_RUNS: usize = 10_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// First missing sequence number.
    pub first: u64,
    /// Sequence numbers in the run.
    pub len: u64,
    /// Of those, still not received.
    pub missing: u64,
    /// Send time (ns) of the frame received just before the run (0: the
    /// run starts the stream).
    pub before_tx_ns: u64,
    /// Send time (ns) of the frame that ended the run.
    pub after_tx_ns: u64,
}

#[derive(Default)]
pub struct LossRuns {
    pub runs: Vec<Run>,
    pub dropped: u64,
}

impl LossRuns {
    /// Sequence numbers first..first+len went missing between two frames
    /// sent at `before_tx_ns` and `after_tx_ns`.
    pub fn gap(&mut self, first: u64, len: u64, before_tx_ns: u64, after_tx_ns: u64) {
        if len == 0 {
            return;
        }
        if self.runs.len() >= MAX_RUNS {
            self.dropped += 1;
            return;
        }
        self.runs.push(Run { first, len, missing: len, before_tx_ns, after_tx_ns });
    }

    /// A frame below the highest sequence number arrived: if it was in a
    /// run, the run misses one frame less. Runs are in sequence order.
    pub fn filled(&mut self, seq: u64) {
        let k = self.runs.partition_point(|r| r.first <= seq);
        if k == 0 {
            return;
        }
        let r = &mut self.runs[k - 1];
        if seq < r.first + r.len && r.missing > 0 {
            r.missing -= 1;
        }
    }

    /// [[first, len, missing, before_tx_ns, after_tx_ns], ...] of the runs
    /// that still miss frames.
    pub fn to_json(&self) -> J {
        J::A(self.runs.iter().filter(|r| r.missing > 0).map(|r| {
            J::us(&[r.first, r.len, r.missing, r.before_tx_ns, r.after_tx_ns])
        }).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_keep_their_send_times_and_late_frames_fill_them() {
        let mut l = LossRuns::default();
        l.gap(5, 3, 400, 800);
        l.gap(20, 2, 1900, 2200);
        l.filled(6); // reordered, in the first run
        l.filled(12); // between runs: nothing
        l.filled(21);
        l.filled(21); // a run never goes below zero
        assert_eq!(l.runs[0].missing, 2);
        assert_eq!(l.runs[1].missing, 0);
        assert_eq!(l.to_json().render(), "[[5,3,2,400,800]]");
    }

    #[test]
    fn only_max_runs_are_kept() {
        let mut l = LossRuns::default();
        for k in 0..(MAX_RUNS as u64 + 3) {
            l.gap(2 * k, 1, k, k + 1);
        }
        assert_eq!((l.runs.len(), l.dropped), (MAX_RUNS, 3));
    }
}
