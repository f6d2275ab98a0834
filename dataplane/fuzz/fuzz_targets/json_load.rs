//! Arbitrary bytes as BMv2 JSON: the loader reports errors, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    p4scope_dataplane::fuzzing::json_load(data);
});
