//! Priority flow control in the traffic manager, on bare packets: senders
//! that obey the pause frames (with a frame in flight when each arrives)
//! never lose a lossless packet while lossy traffic overflows the buffer;
//! senders that ignore them overrun the headroom.

use super::*;
use crate::json;
use serde_json::json;

fn pkt(ingress: u32, len: u32) -> Box<Packet> {
    let p = json::load(crate::engine::tests::MINIMAL).unwrap();
    let mut b = Box::new(Packet::new(&p));
    b.ingress_port = ingress;
    b.tm_len = len;
    b
}

fn tm_with(doc: serde_json::Value) -> TrafficManager {
    let mut tm = TrafficManager::new(1);
    let cfg = TmConfig::parse(&doc, &tm.cfg).unwrap();
    tm.configure(cfg, 0).unwrap();
    tm
}

/// 64 KB of buffer; priority 3 lossless on ports 1-4 (xoff 6000, xon 3000,
/// 3000 bytes of headroom each: two 1000-byte frames in flight and one to
/// spare); queue 0 lossy with alpha 1.
fn lossless_tm() -> TrafficManager {
    tm_with(json!({
        "priority_queues": 8,
        "buffer": {"size_bytes": 64000, "alpha": 1},
        "defaults": {"scheduler": "drr"},
        "pfc": {"priorities": [3], "ports": "1-4", "xoff_bytes": 6000, "xon_bytes": 3000,
                "headroom_bytes": 3000, "quanta": 65535}
    }))
}

struct Outcome {
    lossless_drops: u64,
    lossy_drops: u64,
    lossless_sent: u64,
    lossless_out: u64,
    xoff: u64,
    xon: u64,
    peak_headroom: u64,
}

/// Ports 1-4 each send a 1000-byte lossless packet every step unless
/// paused; a pause frame reaches its sender one step later (the packet
/// then on the wire still arrives). Port 5 floods lossy packets, two per
/// step. Egress port 9 sends one packet per step.
fn incast(obey: bool, steps: u64) -> (TrafficManager, Outcome) {
    let mut tm = lossless_tm();
    let mut paused = [false; 8];
    let mut pending: Vec<(u32, bool)> = vec![];
    let (mut sent, mut out) = (0, 0);
    for t in 0..steps {
        let now = t * 100;
        for (port, xoff) in pending.drain(..) {
            paused[port as usize] = xoff;
        }
        for port in 1..=4u32 {
            if !(obey && paused[port as usize]) {
                let _ = tm.enqueue(now, 9, 3, pkt(port, 1000));
                sent += 1;
            }
        }
        for _ in 0..2 {
            let _ = tm.enqueue(now, 9, 0, pkt(5, 1000));
        }
        if let Some(d) = tm.dequeue(now, 9) {
            out += (d.prio == 3) as u64;
        }
        for p in tm.take_pauses() {
            assert_eq!(p.pause.enable, 1 << 3, "only the lossless priority is paused");
            pending.push((p.port, p.pause.quanta[3] != 0));
        }
    }
    let q = &tm.port(9).unwrap().queues;
    let pf = tm.pfc.as_ref().unwrap();
    let groups: Vec<_> = (1..=4).map(|p| pf.group(p, 3)).collect();
    let o = Outcome {
        lossless_drops: q[3].stats.drop_pkts(),
        lossy_drops: q[0].stats.drop_pkts(),
        lossless_sent: sent,
        lossless_out: out,
        xoff: groups.iter().map(|g| g.xoff_frames).sum(),
        xon: groups.iter().map(|g| g.xon_frames).sum(),
        peak_headroom: groups.iter().map(|g| g.peak_headroom).max().unwrap(),
    };
    (tm, o)
}

#[test]
fn lossless_priorities_never_drop_while_headroom_holds() {
    let (mut tm, o) = incast(true, 5000);
    assert!(o.lossy_drops > 1000, "the lossy class overflows: {}", o.lossy_drops);
    assert_eq!(o.lossless_drops, 0, "no lossless packet dropped");
    assert!(o.xoff > 10 && o.xon > 10, "paused and resumed: {} XOFF, {} XON", o.xoff, o.xon);
    assert!(o.peak_headroom > 0 && o.peak_headroom <= 3000, "headroom used within its size: {}", o.peak_headroom);
    assert!(o.lossless_out > 1000, "the lossless class goes on: {}", o.lossless_out);
    // drain: every lossless packet comes out, and every byte is given back
    let mut now = 5000 * 100;
    let mut out = o.lossless_out;
    while let Some(d) = tm.dequeue(now, 9) {
        out += (d.prio == 3) as u64;
        now += 100;
    }
    assert_eq!(out, o.lossless_sent);
    let b = tm.buffer.as_ref().unwrap();
    assert_eq!((b.used, b.shared_used), (0, 0));
    let pf = tm.pfc.as_ref().unwrap();
    assert!((1..=4).all(|p| pf.group(p, 3).shared + pf.group(p, 3).headroom == 0 && !pf.group(p, 3).paused));
}

#[test]
fn senders_that_ignore_pause_overrun_the_headroom() {
    let (tm, o) = incast(false, 5000);
    assert!(o.lossless_drops > 0, "without obeying senders the lossless class loses");
    let q = &tm.port(9).unwrap().queues[3];
    assert_eq!(q.stats.drops[DropReason::Headroom as usize], o.lossless_drops);
    assert_eq!(DROP_REASONS[DropReason::Headroom as usize], "headroom");
}

#[test]
fn headroom_is_carved_out_of_the_shared_pool() {
    let tm = lossless_tm();
    // 4 ports x 1 priority x 3000 bytes
    assert_eq!(tm.buffer.as_ref().unwrap().shared_size, 64000 - 12000);
}

#[test]
fn without_pfc_nothing_changes() {
    let mut tm = tm_with(json!({"priority_queues": 8, "buffer": {"size_bytes": 64000, "alpha": 1}}));
    for _ in 0..100 {
        let _ = tm.enqueue(0, 9, 3, pkt(1, 1000));
    }
    assert!(tm.pfc.is_none() && !tm.pauses_pending());
    assert_eq!(tm.depth(9, 3), 32, "alpha 1: half the buffer, as before");
}

#[test]
fn a_strict_queue_is_served_before_the_scheduler_s() {
    let mut tm = tm_with(json!({
        "priority_queues": 8,
        "defaults": {"scheduler": "drr", "queues": {"7": {"strict": true}}},
        "queue_depth": 100
    }));
    for _ in 0..3 {
        tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap();
        tm.enqueue(0, 1, 3, pkt(0, 100)).unwrap();
    }
    tm.enqueue(0, 1, 7, pkt(0, 100)).unwrap();
    let first = tm.dequeue(0, 1).unwrap().prio;
    assert_eq!(first, 7, "the strict queue first");
    tm.enqueue(0, 1, 7, pkt(0, 100)).unwrap();
    let order: Vec<usize> = std::iter::from_fn(|| tm.dequeue(0, 1).map(|d| d.prio)).collect();
    assert_eq!(order[0], 7, "again as soon as it has a packet");
    assert_eq!(order[1..].iter().filter(|p| **p == 0).count(), 3, "the others by DRR");
    let e = TmConfig::parse(&json!({"defaults": {"queue": {"strict": 1}}}), &TmConfig::default()).unwrap_err();
    assert_eq!(e.path, "defaults.queue.strict");
}

#[test]
fn a_paused_egress_queue_waits_and_the_others_go_on() {
    let mut tm = tm_with(json!({"priority_queues": 8}));
    tm.enqueue(0, 1, 3, pkt(0, 100)).unwrap();
    tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap();
    tm.pause_egress(0, 1, 3, 1000);
    assert_eq!(tm.dequeue(0, 1).unwrap().prio, 0, "strict priority passes over the paused queue");
    assert!(tm.dequeue(10, 1).is_none());
    assert_eq!(tm.next_ready(1), Some(1000));
    assert_eq!(tm.dequeue(1000, 1).unwrap().prio, 3);
}
