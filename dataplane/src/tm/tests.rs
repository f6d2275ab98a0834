//! Traffic-manager tests on bare packets (no pipeline).

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

#[test]
fn tail_drop_at_64() {
    let mut tm = TrafficManager::new(1);
    for i in 0..64 {
        assert_eq!(tm.occupancy(1).0, i);
        assert!(tm.enqueue(0, 1, 0, pkt(0, 100)).is_ok());
    }
    let (_, why) = tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap_err();
    assert_eq!(why, DropReason::QueuePackets);
    assert_eq!(tm.depth(1, 0), 64);
    assert_eq!(tm.port(1).unwrap().queues[0].stats.drops[0], 1);
}

#[test]
fn strict_priority_and_bmv2_rate_limit() {
    let mut tm = TrafficManager::new(2);
    tm.enqueue(0, 3, 0, pkt(0, 100)).unwrap();
    tm.enqueue(0, 3, 1, pkt(0, 100)).unwrap();
    let d = tm.dequeue(0, 3).unwrap();
    assert_eq!((d.prio, d.port_pkts), (1, 1), "higher queue first; depth counts the port");
    assert_eq!(tm.dequeue(0, 3).unwrap().prio, 0);
    tm.set_queue_rate(3, Some(0), Some(1000));
    tm.enqueue(0, 3, 0, pkt(0, 100)).unwrap();
    assert!(tm.dequeue(0, 3).is_some());
    tm.enqueue(0, 3, 0, pkt(0, 100)).unwrap();
    // the third packet's send time was fixed at enqueue: 1 ms after the second
    assert!(tm.dequeue(0, 3).is_none(), "rate limit: 1 ms between packets");
    assert_eq!(tm.next_ready(3), Some(1_000_000));
    assert!(tm.dequeue(1_000_000, 3).is_some());
}

#[test]
fn line_rate_keeps_exact_picosecond_spacing() {
    let mut tm = tm_with(json!({"defaults": {"rate_bps": "100G"}, "queue_depth": 1000}));
    for _ in 0..100 {
        tm.enqueue(0, 1, 0, pkt(0, 60)).unwrap();
    }
    // 60 + 24 bytes at 100 Gb/s: 6.72 ns each
    let mut now = 0;
    let mut starts = vec![];
    while let Some(t) = tm.next_ready(1) {
        now = now.max(t);
        let d = tm.dequeue(now, 1).unwrap();
        starts.push(tm.transmitted(now, 1, d.prio, d.pkt.tm_len as u64 + 24));
    }
    assert_eq!(starts.len(), 100);
    assert_eq!(starts[1], 6720);
    assert_eq!(starts[99], 99 * 6720, "no drift from rounding to ns");
    let p = tm.port(1).unwrap();
    assert_eq!(p.tx_wire_bytes, 8400);
    assert_eq!(p.busy_ps, 672_000);
}

#[test]
fn drr_weights_share_bytes() {
    let mut tm = tm_with(json!({
        "priority_queues": 2, "queue_depth": null,
        "defaults": {"scheduler": "drr", "queues": {"1": {"weight": 3}}}
    }));
    for _ in 0..4000 {
        tm.enqueue(0, 1, 0, pkt(0, 500)).unwrap();
        tm.enqueue(0, 1, 1, pkt(0, 1500)).unwrap();
    }
    let mut bytes = [0u64; 2];
    for _ in 0..4000 {
        let d = tm.dequeue(0, 1).unwrap();
        bytes[d.prio] += d.pkt.tm_len as u64;
    }
    let r = bytes[1] as f64 / bytes[0] as f64;
    assert!((r - 3.0).abs() < 0.05, "{bytes:?}");
}

#[test]
fn round_robin_alternates_packets() {
    let mut tm = tm_with(json!({"priority_queues": 3, "defaults": {"scheduler": "rr"}}));
    for q in 0..3 {
        for _ in 0..3 {
            tm.enqueue(0, 1, q, pkt(0, 100)).unwrap();
        }
    }
    let order: Vec<usize> = (0..9).map(|_| tm.dequeue(0, 1).unwrap().prio).collect();
    assert_eq!(order, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
}

#[test]
fn shared_buffer_dynamic_threshold_and_reserve() {
    let mut tm = tm_with(json!({"buffer": {"size_bytes": 10000, "alpha": 1}}));
    let mut n = 0;
    while tm.enqueue(0, 1, 0, pkt(0, 100)).is_ok() {
        n += 1;
    }
    assert_eq!(n, 50, "alpha 1, one queue: half the buffer");
    let (_, why) = tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap_err();
    assert_eq!(why, DropReason::QueueThreshold);
    // a second queue gets a share of what is left
    let mut m = 0;
    while tm.enqueue(0, 2, 0, pkt(0, 100)).is_ok() {
        m += 1;
    }
    assert_eq!(m, 25);
    assert_eq!(tm.occupancy(2).2, 7500);
    // draining frees shared space
    while tm.dequeue(0, 1).is_some() {}
    assert_eq!(tm.buffer.as_ref().unwrap().used, 2500);
    assert_eq!(tm.buffer.as_ref().unwrap().shared_used, 2500);
}

/// Packets of 100 bytes port 1 takes before its dynamic threshold drops
/// one, with an idle port 2 that carried one packet first or not at all.
fn congested_drop_point(doc: serde_json::Value, port2_saw_a_packet: bool) -> u32 {
    let mut tm = tm_with(doc);
    if port2_saw_a_packet {
        tm.enqueue(0, 2, 0, pkt(0, 100)).unwrap();
        tm.dequeue(0, 2).unwrap();
    }
    let mut n = 0;
    while tm.enqueue(0, 1, 0, pkt(0, 100)).is_ok() {
        n += 1;
    }
    assert_eq!(tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap_err().1, DropReason::QueueThreshold);
    n
}

#[test]
fn an_idle_ports_reserve_is_carved_when_configured() {
    // port 2 reserves 2000 of 10000 bytes: port 1 gets alpha 1 of the other 8000
    let doc = json!({"buffer": {"size_bytes": 10000, "alpha": 1}, "ports": {"2": {"reserved_bytes": 2000}}});
    let tm = tm_with(doc.clone());
    assert_eq!(tm.buffer.as_ref().unwrap().shared_size, 8000, "carved before any packet");
    assert_eq!(congested_drop_point(doc.clone(), false), 40);
    assert_eq!(congested_drop_point(doc, true), 40);
    // a reserve given through the defaults belongs to the named ports only
    let doc = json!({"buffer": {"size_bytes": 10000, "alpha": 1, "reserved_bytes": 1000}, "ports": {"2-3": {}}});
    assert_eq!(tm_with(doc.clone()).buffer.as_ref().unwrap().shared_size, 8000);
    assert_eq!(congested_drop_point(doc.clone(), false), 40);
    assert_eq!(congested_drop_point(doc, true), 40);
    // ... and a port not named takes no reserve on its first packet
    let doc = json!({"buffer": {"size_bytes": 10000, "alpha": 1}, "defaults": {"reserved_bytes": 1000}});
    assert_eq!(congested_drop_point(doc.clone(), false), 50);
    assert_eq!(congested_drop_point(doc, true), 50);
}

#[test]
fn reconfiguring_and_naming_a_port_re_carve() {
    let mut tm = tm_with(json!({"buffer": {"size_bytes": 10000, "alpha": 1}, "ports": {"2": {"reserved_bytes": 2000}}}));
    let shared = |tm: &TrafficManager| tm.buffer.as_ref().unwrap().shared_size;
    let cfg = TmConfig::parse(&json!({"ports": {"2": {"reserved_bytes": 500}}}), &tm.cfg).unwrap();
    tm.configure(cfg, 0).unwrap();
    assert_eq!(shared(&tm), 9500);
    // a runtime call on an unnamed port names it: it takes the default reserve then
    let cfg = TmConfig::parse(&json!({"defaults": {"reserved_bytes": 1000}}), &tm.cfg).unwrap();
    tm.configure(cfg, 0).unwrap();
    assert_eq!(shared(&tm), 9500);
    tm.set_port_rate(7, Some(1_000_000_000));
    assert_eq!(shared(&tm), 8500);
    // a live port whose reserve grows moves what it holds out of the shared use
    for _ in 0..5 {
        tm.enqueue(0, 2, 0, pkt(0, 100)).unwrap();
    }
    assert_eq!(tm.buffer.as_ref().unwrap().shared_used, 0, "500 bytes in port 2's reserve");
    tm.set_port_rate(2, None);
    let cfg = TmConfig::parse(&json!({"ports": {"2": {"reserved_bytes": 200}}}), &tm.cfg).unwrap();
    tm.configure(cfg, 0).unwrap();
    assert_eq!(tm.buffer.as_ref().unwrap().shared_used, 300);
    assert_eq!(shared(&tm), 8800);
}

#[test]
fn cells_and_full_buffer() {
    let mut tm = tm_with(json!({"buffer": {"size_bytes": 1000, "cell_bytes": 200}}));
    let mut n = 0;
    while tm.enqueue(0, 1, 0, pkt(0, 64)).is_ok() {
        n += 1;
    }
    assert_eq!(n, 5, "a 64-byte frame takes a whole 200-byte cell");
    let (_, why) = tm.enqueue(0, 2, 0, pkt(0, 64)).unwrap_err();
    assert_eq!(why, DropReason::BufferFull);
}

#[test]
fn per_ingress_limits_and_occupancy() {
    let mut tm = tm_with(json!({"defaults": {"queue": {"ingress_limit_pkts": 2}}}));
    assert!(tm.enqueue(0, 9, 0, pkt(1, 100)).is_ok());
    assert!(tm.enqueue(0, 9, 0, pkt(1, 100)).is_ok());
    assert_eq!(tm.enqueue(0, 9, 0, pkt(1, 100)).unwrap_err().1, DropReason::IngressPackets);
    assert!(tm.enqueue(0, 9, 0, pkt(2, 300)).is_ok());
    let q = &tm.port(9).unwrap().queues[0];
    assert_eq!(q.ingress_occ(1), queue::InOcc { port: 1, pkts: 2, bytes: 200, cells: 200 });
    assert_eq!(q.ingress_occ(2).bytes, 300);
}

/// Ingress ports found by index (up to the largest configurable port)
/// and by search (beyond it) keep one record each, in first-come order.
#[test]
fn ingress_occupancy_by_index_and_beyond() {
    let mut tm = TrafficManager::new(1);
    tm.set_queue_depth(None, None, 100);
    let big = config::MAX_PORT + 7;
    for (ing, len) in [(5u32, 100u32), (big, 40), (0, 10), (5, 1), (big, 2), (config::MAX_PORT, 3)] {
        tm.enqueue(0, 9, 0, pkt(ing, len)).unwrap();
    }
    let q = &tm.port(9).unwrap().queues[0];
    let order: Vec<(u32, u32, u64)> = q.occ.iter().map(|o| (o.port, o.pkts, o.bytes)).collect();
    assert_eq!(order, vec![(5, 2, 101), (big, 2, 42), (0, 1, 10), (config::MAX_PORT, 1, 3)]);
    assert_eq!(q.ingress_occ(big + 1), queue::InOcc { port: big + 1, ..Default::default() });
    assert_eq!(q.ingress_occ(7), queue::InOcc { port: 7, ..Default::default() });
    while tm.dequeue(0, 9).is_some() {}
    let q = &tm.port(9).unwrap().queues[0];
    assert!(q.occ.iter().all(|o| o.pkts == 0 && o.bytes == 0), "{:?}", q.occ);
    assert_eq!(q.occ.len(), 4, "records stay (in order) once made");
}

#[test]
fn trace_records_every_change() {
    let mut tm = TrafficManager::new(1);
    tm.set_queue_depth(None, None, 2);
    tm.trace_start(TraceCfg { drops: true, ..Default::default() });
    tm.enqueue(10, 1, 0, pkt(3, 100)).unwrap();
    tm.enqueue(11, 1, 0, pkt(4, 200)).unwrap();
    assert!(tm.enqueue(12, 1, 0, pkt(4, 50)).is_err());
    tm.dequeue(20, 1).unwrap();
    let t = tm.trace_take().unwrap();
    assert_eq!(t.kind, vec![trace::ENQ, trace::ENQ, trace::DROP, trace::DEQ]);
    assert_eq!(t.q_bytes, vec![100, 300, 300, 200]);
    assert_eq!(t.ingress, vec![3, 4, 4, 3]);
    assert_eq!(t.in_bytes, vec![100, 200, 200, 0]);
    assert_eq!(t.time_ns, vec![10, 11, 12, 20]);
    assert!(tm.trace_take().unwrap().is_empty());
}

#[test]
fn a_drained_trace_shows_its_records_then_starts_afresh_in_the_same_memory() {
    let mut tm = TrafficManager::new(1);
    tm.trace_start(TraceCfg { max_records: 1, ..Default::default() });
    tm.enqueue(10, 1, 0, pkt(3, 100)).unwrap();
    tm.enqueue(11, 1, 0, pkt(3, 100)).unwrap();
    let t = tm.trace.as_mut().unwrap();
    let seen = t.drain(|t| (t.time_ns.clone(), t.q_bytes.clone(), t.overflow));
    assert_eq!(seen, (vec![10], vec![100], 1));
    assert!(t.is_empty() && t.overflow == 0 && t.cfg.max_records == 1, "settings kept, records and overflow gone");
    assert!(t.time_ns.capacity() >= 1 && t.buffer_bytes.capacity() >= 1, "the columns' memory kept");
    tm.dequeue(20, 1).unwrap();
    assert_eq!(tm.trace_take().unwrap().time_ns, vec![20]);
}

#[test]
fn time_weighted_occupancy() {
    let mut tm = TrafficManager::new(1);
    tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap();
    tm.dequeue(1000, 1).unwrap();
    let q = &tm.port(1).unwrap().queues[0];
    assert_eq!(q.stats.area_bytes_ns, 100_000);
    assert_eq!(q.stats.peak_bytes, 100);
}

#[test]
fn arbitration_change_keeps_packets() {
    let mut tm = TrafficManager::new(1);
    for i in 0..4 {
        tm.enqueue(0, 1, 0, pkt(i % 2, 100 + i)).unwrap();
    }
    let cfg = TmConfig::parse(&json!({"defaults": {"arbitration": "fair"}}), &tm.cfg).unwrap();
    tm.configure(cfg, 0).unwrap();
    let mut n = 0;
    while tm.dequeue(0, 1).is_some() {
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn ecn_marks_above_threshold() {
    let mut tm = tm_with(json!({"defaults": {"queue": {"ecn": {"threshold_pkts": 2}}}}));
    let mut marks = vec![];
    for _ in 0..4 {
        tm.enqueue(0, 1, 0, pkt(0, 100)).unwrap();
    }
    while let Some(d) = tm.dequeue(0, 1) {
        marks.push(d.pkt.ecn_mark);
    }
    assert_eq!(marks, vec![false, false, true, true]);
}

#[test]
fn a_port_without_tx_credit_keeps_its_packets_queued() {
    let mut tm = TrafficManager::new(1);
    for _ in 0..3 {
        tm.enqueue(0, 2, 0, pkt(0, 100)).unwrap();
    }
    tm.set_tx_credit(2, 0, 0);
    assert_eq!(tm.next_ready(2), None, "no service while the interface refuses");
    assert!(tm.dequeue(0, 2).is_none());
    assert_eq!(tm.depth(2, 0), 3);
    // the queue keeps filling and tail-drops at its limit, counted
    for _ in 3..64 {
        tm.enqueue(0, 2, 0, pkt(0, 100)).unwrap();
    }
    assert_eq!(tm.enqueue(0, 2, 0, pkt(0, 100)).unwrap_err().1, DropReason::QueuePackets);
    tm.set_tx_credit(2, 2, 0);
    assert_eq!(tm.next_ready(2), Some(0));
    assert_eq!(tm.dequeue(0, 2).unwrap().port_pkts, 63, "deq_qdepth: what is left");
    assert!(tm.dequeue(0, 2).is_some());
    assert!(tm.dequeue(0, 2).is_none(), "two packets of credit");
    assert_eq!(tm.tx_credit(2), 0);
    tm.set_tx_credit(2, TX_UNLIMITED, 0);
    let mut n = 0;
    while tm.dequeue(0, 2).is_some() {
        n += 1;
    }
    assert_eq!((n, tm.tx_credit(2)), (62, TX_UNLIMITED));
}

/// The wire-time division gives the 128-bit quotient and remainder, on
/// either side of 2^64.
#[test]
fn wire_time_division_on_64_and_128_bits() {
    for (n, d) in [(0u128, 1u64), (12_000_000_000_000, 100_000_000_000), (u64::MAX as u128, 7),
                   (u64::MAX as u128 + 1, 7), (9216u128 * 8 * 1_000_000_000_000 * 3, 400_000_000_000), (u128::MAX / 3, 1)] {
        assert_eq!(div_rem(n, d), (n / d as u128, n % d as u128), "{n} / {d}");
    }
}
