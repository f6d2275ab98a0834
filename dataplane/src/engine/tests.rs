//! Engine tests with small hand-written BMv2 JSON programs.

use super::*;

/// The smallest program simple_switch accepts: standard_metadata, an empty
/// parser, empty pipelines.
pub(crate) const MINIMAL: &str = r#"{
  "header_types": [
    {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
      ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]}
  ],
  "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true}],
  "parsers": [{"name": "parser", "id": 0, "init_state": null, "parse_states": []}],
  "deparsers": [{"name": "deparser", "id": 0, "order": []}],
  "pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},
                {"name": "egress", "id": 1, "init_table": null, "tables": [], "conditionals": []}]
}"#;

#[test]
fn minimal_program_forwards_to_port_zero() {
    let mut sw = Switch::from_json(MINIMAL).unwrap();
    sw.inject(3, vec![1, 2, 3], 1000);
    sw.run_until_idle();
    let out = sw.take_outputs();
    assert_eq!(out, vec![Output { port: 0, data: vec![1, 2, 3], time_ns: 1000 }]);
}

#[test]
fn a_program_that_always_resubmits_still_terminates() {
    let doc = MINIMAL.replace(
        r#""pipelines": [{"name": "ingress", "id": 0, "init_table": null, "tables": [], "conditionals": []},"#,
        r#""field_lists": [{"id": 1, "name": "fl", "elements": []}],
  "actions": [{"name": "r", "id": 0, "runtime_data": [], "primitives": [
      {"op": "resubmit", "parameters": [{"type": "hexstr", "value": "0x1"}]}]}],
  "pipelines": [{"name": "ingress", "id": 0, "init_table": "t", "conditionals": [], "tables": [
      {"name": "t", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
       "action_ids": [0], "actions": ["r"], "next_tables": {"r": null},
       "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}]},"#,
    );
    let mut sw = Switch::from_json(&doc).unwrap();
    sw.inject(1, vec![0; 20], 0);
    sw.run_until_idle();
    assert!(sw.take_outputs().is_empty());
    assert_eq!(sw.stats.dropped_ingress, 1);
    assert!(sw.take_log().iter().any(|l| l.contains("resubmitted")));
}

#[test]
fn tx_credit_holds_packets_in_the_queue_and_releases_them_in_order() {
    let mut sw = Switch::from_json(MINIMAL).unwrap();
    sw.set_tx_credit(0, 0);
    for i in 0..3u8 {
        sw.deliver(1, 1000, &[i, 2, 3]);
    }
    sw.advance(5000);
    assert!(sw.take_outputs().is_empty(), "no credit: nothing leaves");
    assert_eq!(sw.tm.depth(0, 0), 3);
    sw.set_tx_credit(0, 1);
    sw.advance(6000);
    let out = sw.take_outputs();
    assert_eq!(out.iter().map(|o| o.data[0]).collect::<Vec<_>>(), vec![0]);
    sw.set_tx_credit(0, crate::tm::TX_UNLIMITED);
    sw.advance(7000);
    assert_eq!(sw.take_outputs().iter().map(|o| o.data[0]).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(sw.tm.depth(0, 0), 0);
}

#[test]
fn events_at_one_time_run_link_change_then_arrivals_then_service() {
    let mut sw = Switch::from_json(MINIMAL).unwrap();
    sw.inject(1, vec![1], 1000);
    sw.inject(2, vec![2], 1000);
    sw.schedule_port_status(2, false, 1000).unwrap();
    let mut seen = vec![];
    while let Some(t) = sw.next_event_at() {
        assert!(sw.step_once());
        let rx_down = sw.link_drops().get(&2).map_or(0, |d| d.rx_down);
        seen.push((t, sw.rt.ports.is_up(2), sw.stats.received, rx_down, sw.outputs().len()));
    }
    assert!(!sw.step_once(), "idle");
    assert_eq!(
        seen,
        vec![
            (1000, false, 0, 0, 0), // the link change first: port 2 down
            (1000, false, 1, 0, 0), // port 1's arrival
            (1000, false, 1, 1, 0), // port 2's arrival, dropped (before port 0's service)
            (1000, false, 1, 1, 1), // the service sends port 1's packet
        ]
    );
    assert_eq!(sw.take_outputs(), vec![Output { port: 0, data: vec![1], time_ns: 1000 }]);
}

/// Packets behind a deep queue wait parked (compact): each still leaves
/// with its own headers, metadata from ingress and payload, in order.
#[test]
fn packets_behind_a_deep_queue_keep_their_headers_metadata_and_bytes() {
    let f = |h: &str, n: &str| serde_json::json!({"type": "field", "value": [h, n]});
    let assign = |d, s| serde_json::json!({"op": "assign", "parameters": [d, s]});
    let keyless = |name: &str, id: u32, action: u32| serde_json::json!({
        "name": name, "id": id, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
        "action_ids": [action], "actions": [format!("a{action}")], "next_tables": {format!("a{action}"): null},
        "default_entry": {"action_id": action, "action_const": true, "action_data": [], "action_entry_const": true}});
    let doc = serde_json::json!({
        "header_types": [
            {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
                ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false], ["_p", 5, false]]},
            {"name": "m_t", "id": 1, "fields": [["x", 8, false], ["wide", 100, false]]},
            {"name": "h_t", "id": 2, "fields": [["a", 8, false], ["b", 8, false]]}],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "m", "id": 1, "header_type": "m_t", "metadata": true},
            {"name": "h", "id": 2, "header_type": "h_t", "metadata": false}],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
        "actions": [
            {"name": "a0", "id": 0, "runtime_data": [], "primitives": [
                assign(f("m", "x"), f("h", "a")),
                assign(f("m", "wide"), serde_json::json!({"type": "hexstr", "value": "0xfedcba9876543210ff"}))]},
            {"name": "a1", "id": 1, "runtime_data": [], "primitives": [assign(f("h", "b"), f("m", "x"))]}],
        "pipelines": [
            {"name": "ingress", "id": 0, "init_table": "t0", "conditionals": [], "tables": [keyless("t0", 0, 0)]},
            {"name": "egress", "id": 1, "init_table": "t1", "conditionals": [], "tables": [keyless("t1", 1, 1)]}]
    });
    let mut sw = Switch::from_json(&doc.to_string()).unwrap();
    sw.set_tx_credit(0, 0);
    let n = 3 * PARK_DEPTH as usize;
    sw.tm.set_queue_depth(None, None, n);
    let frame = |i: usize| {
        let mut d = vec![i as u8, 0];
        d.extend((0..i % 200).map(|k| (k * 7 + i) as u8));
        d
    };
    for i in 0..n {
        sw.deliver(1, 1000, &frame(i));
    }
    sw.advance(2000);
    assert_eq!(sw.tm.depth(0, 0), n);
    sw.set_tx_credit(0, crate::tm::TX_UNLIMITED);
    sw.run_until_idle();
    let out = sw.take_outputs();
    assert_eq!(out.len(), n);
    for (i, o) in out.iter().enumerate() {
        let mut want = frame(i);
        want[1] = i as u8;
        assert_eq!(o.data, want, "packet {i}");
    }
}

/// A program whose packets are one header h (rid: 16 bits): ingress clones
/// each to session 4 and multicasts it to group 5; egress writes the
/// packet's egress_rid into h.rid.
const REPLICATING: &str = r#"{
  "header_types": [
    {"name": "standard_metadata", "id": 0, "fields": [["ingress_port", 9, false], ["egress_spec", 9, false],
      ["egress_port", 9, false], ["instance_type", 32, false], ["packet_length", 32, false],
      ["mcast_grp", 16, false], ["egress_rid", 16, false], ["_p", 5, false]]},
    {"name": "h_t", "id": 1, "fields": [["rid", 16, false]]}
  ],
  "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
              {"name": "h", "id": 1, "header_type": "h_t", "metadata": false}],
  "field_lists": [{"id": 1, "name": "fl", "elements": []}],
  "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
      {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "h"}]}],
       "transition_key": [], "transitions": [{"type": "default", "value": null, "mask": null, "next_state": null}]}]}],
  "deparsers": [{"name": "deparser", "id": 0, "order": ["h"]}],
  "actions": [
    {"name": "out", "id": 0, "runtime_data": [], "primitives": [
      {"op": "clone_ingress_pkt_to_egress", "parameters": [{"type": "hexstr", "value": "0x4"}, {"type": "hexstr", "value": "0x1"}]},
      {"op": "assign", "parameters": [{"type": "field", "value": ["standard_metadata", "mcast_grp"]}, {"type": "hexstr", "value": "0x5"}]}]},
    {"name": "mark", "id": 1, "runtime_data": [], "primitives": [
      {"op": "assign", "parameters": [{"type": "field", "value": ["h", "rid"]}, {"type": "field", "value": ["standard_metadata", "egress_rid"]}]}]}],
  "pipelines": [
    {"name": "ingress", "id": 0, "init_table": "i", "conditionals": [], "tables": [
      {"name": "i", "id": 0, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
       "action_ids": [0], "actions": ["out"], "next_tables": {"out": null},
       "default_entry": {"action_id": 0, "action_const": true, "action_data": [], "action_entry_const": true}}]},
    {"name": "egress", "id": 1, "init_table": "e", "conditionals": [], "tables": [
      {"name": "e", "id": 1, "key": [], "match_type": "exact", "type": "simple", "max_size": 1,
       "action_ids": [1], "actions": ["mark"], "next_tables": {"mark": null},
       "default_entry": {"action_id": 1, "action_const": true, "action_data": [], "action_entry_const": true}}]}]
}"#;

#[test]
fn replicas_carry_their_rid_and_a_sessions_port_copy_the_last_one() {
    let mut sw = Switch::from_json(REPLICATING).unwrap();
    // group 5: rid 7 to ports 1 and 3, rid 9 to port 2; the session:
    // group 6 (rid 11 to port 4, rid 12 to port 5) and port 8
    for (mgid, nodes) in [(5, vec![(7, vec![1, 3]), (9, vec![2])]), (6, vec![(11, vec![4]), (12, vec![5])])] {
        sw.pre.group_create(mgid);
        for (rid, ports) in nodes {
            let n = sw.pre.node_create(rid, &ports);
            assert!(sw.pre.node_associate(mgid, n));
        }
    }
    sw.mirroring_add(4, Some(8), Some(6)).unwrap();
    sw.inject(0, vec![0xff, 0xff, 0xab], 0);
    sw.run_until_idle();
    let mut got: Vec<(u32, Vec<u8>)> = sw.take_outputs().into_iter().map(|o| (o.port, o.data)).collect();
    got.sort();
    let rid = |r: u16| [&r.to_be_bytes()[..], &[0xab]].concat();
    // simple_switch sets each replica's rid on the packet it copies: the
    // session's port copy is left with the last replica's
    let want = [(1, rid(7)), (2, rid(9)), (3, rid(7)), (4, rid(11)), (5, rid(12)), (8, rid(12))];
    assert_eq!(got, want.to_vec());
}
