//! Arbitrary frames through the L3 program's native parser and through the
//! interpreter alone: any difference in what they parse is a bug.
#![no_main]
use libfuzzer_sys::fuzz_target;
use p4scope_dataplane::program::Program;
use std::sync::OnceLock;

static PROGRAMS: OnceLock<(Program, Program)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (native, interpreted) = PROGRAMS.get_or_init(p4scope_dataplane::fuzzing::native_and_interpreted);
    if let Some(d) = p4scope_dataplane::fuzzing::native_parse_mismatch(native, interpreted, data) {
        panic!("{d}");
    }
});
