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
