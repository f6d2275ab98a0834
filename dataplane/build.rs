//! Hashes the engine's sources into `P4SCOPE_SOURCE_HASH` (the module's
//! `SOURCE_HASH`): a run records which sources its engine was built from,
//! and a Dask worker whose engine was built from other sources is refused
//! (scripts/experiments/cluster.py), since its tables could differ.

#[path = "src/source_hash.rs"]
mod source_hash;

fn main() {
    for p in source_hash::INPUTS {
        println!("cargo:rerun-if-changed={p}");
    }
    let h = source_hash::source_hash(std::path::Path::new("."));
    println!("cargo:rustc-env=P4SCOPE_SOURCE_HASH={h}");
}
