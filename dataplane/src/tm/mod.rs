//! The traffic manager: per egress port, `nb_queues` priority queues.
//!
//! Defaults are simple_switch's: one queue per port (`--priority-queues`),
//! 64 packets each, tail drop, no rate limit; a higher priority number is
//! served first. `set_queue_depth` and `set_queue_rate` (packets per second)
//! work per queue as in simple_switch_CLI. Depths are in packets, as the
//! P4 program reads them.

use crate::pipeline::Packet;
use std::collections::{HashMap, VecDeque};

pub const DEFAULT_QUEUE_DEPTH: usize = 64;

#[derive(Debug)]
pub struct Queue {
    pub pkts: VecDeque<Box<Packet>>,
    pub capacity: usize,
    /// Packets per second; None: unlimited.
    pub rate_pps: Option<u64>,
    /// Earliest time the next packet may leave (rate limit).
    pub next_ok_ns: u64,
    pub drops: u64,
}

impl Queue {
    fn new(capacity: usize) -> Queue {
        Queue { pkts: VecDeque::new(), capacity, rate_pps: None, next_ok_ns: 0, drops: 0 }
    }
}

#[derive(Debug)]
pub struct TrafficManager {
    pub nb_queues: usize,
    default_depth: usize,
    ports: HashMap<u32, Vec<Queue>>,
}

impl TrafficManager {
    pub fn new(nb_queues: usize) -> TrafficManager {
        TrafficManager { nb_queues: nb_queues.clamp(1, 8), default_depth: DEFAULT_QUEUE_DEPTH, ports: HashMap::new() }
    }

    fn port(&mut self, port: u32) -> &mut Vec<Queue> {
        let (n, d) = (self.nb_queues, self.default_depth);
        self.ports.entry(port).or_insert_with(|| (0..n).map(|_| Queue::new(d)).collect())
    }

    /// Sets the depth of one queue, or of all queues of all ports (port None).
    pub fn set_queue_depth(&mut self, port: Option<u32>, prio: Option<usize>, depth: usize) {
        match port {
            None => {
                self.default_depth = depth;
                for qs in self.ports.values_mut() {
                    qs.iter_mut().for_each(|q| q.capacity = depth);
                }
            }
            Some(p) => {
                for (i, q) in self.port(p).iter_mut().enumerate() {
                    if prio.map(|x| x == i).unwrap_or(true) {
                        q.capacity = depth;
                    }
                }
            }
        }
    }

    pub fn set_queue_rate(&mut self, port: u32, prio: Option<usize>, pps: Option<u64>) {
        for (i, q) in self.port(port).iter_mut().enumerate() {
            if prio.map(|x| x == i).unwrap_or(true) {
                q.rate_pps = pps.filter(|r| *r > 0);
            }
        }
    }

    /// Packets in one queue.
    pub fn depth(&self, port: u32, prio: usize) -> usize {
        self.ports.get(&port).and_then(|q| q.get(prio)).map(|q| q.pkts.len()).unwrap_or(0)
    }

    /// Enqueues; returns the depth before this packet, or the packet back
    /// when the queue is full (tail drop).
    pub fn enqueue(&mut self, port: u32, prio: usize, pkt: Box<Packet>) -> Result<usize, Box<Packet>> {
        let q = &mut self.port(port)[prio];
        if q.pkts.len() >= q.capacity {
            q.drops += 1;
            return Err(pkt);
        }
        let d = q.pkts.len();
        q.pkts.push_back(pkt);
        Ok(d)
    }

    /// The earliest time a packet of `port` may leave, if any is queued.
    pub fn next_ready(&self, port: u32) -> Option<u64> {
        let qs = self.ports.get(&port)?;
        qs.iter().filter(|q| !q.pkts.is_empty()).map(|q| q.next_ok_ns).min()
    }

    /// Dequeues the highest-priority eligible packet at `now`: returns the
    /// packet, its queue and the depth left behind.
    pub fn dequeue(&mut self, port: u32, now_ns: u64) -> Option<(Box<Packet>, usize, usize)> {
        let qs = self.ports.get_mut(&port)?;
        for (prio, q) in qs.iter_mut().enumerate().rev() {
            if q.pkts.is_empty() || q.next_ok_ns > now_ns {
                continue;
            }
            let p = q.pkts.pop_front()?;
            if let Some(r) = q.rate_pps {
                q.next_ok_ns = now_ns.max(q.next_ok_ns) + 1_000_000_000 / r;
            }
            return Some((p, prio, q.pkts.len()));
        }
        None
    }

    /// All packets queued on all ports.
    pub fn total(&self) -> usize {
        self.ports.values().flat_map(|qs| qs.iter()).map(|q| q.pkts.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn pkt() -> Box<Packet> {
        let p = json::load(crate::engine::tests::MINIMAL).unwrap();
        Box::new(Packet::new(&p))
    }

    #[test]
    fn tail_drop_at_64() {
        let mut tm = TrafficManager::new(1);
        for i in 0..64 {
            assert_eq!(tm.enqueue(1, 0, pkt()).ok(), Some(i));
        }
        assert!(tm.enqueue(1, 0, pkt()).is_err());
        assert_eq!(tm.depth(1, 0), 64);
    }

    #[test]
    fn strict_priority_and_rate() {
        let mut tm = TrafficManager::new(2);
        tm.enqueue(3, 0, pkt()).unwrap();
        tm.enqueue(3, 1, pkt()).unwrap();
        let (_, prio, left) = tm.dequeue(3, 0).unwrap();
        assert_eq!((prio, left), (1, 0));
        tm.set_queue_rate(3, Some(0), Some(1000));
        tm.enqueue(3, 0, pkt()).unwrap();
        assert!(tm.dequeue(3, 0).is_some());
        assert!(tm.dequeue(3, 0).is_none(), "rate limit: 1 ms between packets");
        assert_eq!(tm.next_ready(3), Some(1_000_000));
        assert!(tm.dequeue(3, 1_000_000).is_some());
    }
}
