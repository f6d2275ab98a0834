//! Hashes the engine's sources into `P4SCOPE_SOURCE_HASH` (the module's
//! `SOURCE_HASH`): a run records which sources its engine was built from,
//! and a Dask worker whose engine was built from other sources is refused
//! (scripts/experiments/cluster.py), since its tables could differ.

use std::path::{Path, PathBuf};

/// The files under the paths that decide what the module does: its
/// sources, the shared crate's, the manifests and the locked versions.
const INPUTS: &[&str] = &["src", "Cargo.toml", "../crates/afpacket/src", "../crates/afpacket/Cargo.toml", "../Cargo.lock"];

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            collect(&e.path(), out);
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

/// FNV-1a, 64 bits: stable across toolchains (std's hashers are not
/// promised to be).
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn main() {
    let mut files = vec![];
    for p in INPUTS {
        println!("cargo:rerun-if-changed={p}");
        collect(Path::new(p), &mut files);
    }
    files.sort();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        // the path with / whatever the platform, so equal trees hash equal
        let name = f.to_string_lossy().replace('\\', "/");
        h = fnv(h, name.as_bytes());
        h = fnv(h, &[0]);
        h = fnv(h, &std::fs::read(f).unwrap_or_default());
        h = fnv(h, &[0]);
    }
    println!("cargo:rustc-env=P4SCOPE_SOURCE_HASH={h:016x}");
}
