//! Arbitrary frames through parser, tables, traffic manager and deparser
//! of an L3 program (byte 0: ingress port).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::Mutex;

static SWITCH: Mutex<Option<p4scope_dataplane::Switch>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut g = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let sw = g.get_or_insert_with(p4scope_dataplane::fuzzing::packet_switch);
    p4scope_dataplane::fuzzing::packet_path(sw, data);
});
