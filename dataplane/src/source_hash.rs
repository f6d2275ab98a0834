//! A hash of the engine's sources: build.rs stores the one of the sources
//! a module is built from (`SOURCE_HASH`), and the module computes it again
//! for a source tree on disk, so a checkout whose sources moved on since
//! setup built its engine can tell (scripts/experiments/sources.py).
//! Shared by build.rs (`#[path]`) and the crate: one definition of what
//! is hashed and how.

use std::path::Path;

/// The paths under the crate's folder that decide what the module does:
/// its sources, the shared crate's, the manifests and the locked versions.
pub const INPUTS: &[&str] = &["src", "Cargo.toml", "../crates/afpacket/src", "../crates/afpacket/Cargo.toml", "../Cargo.lock"];

fn collect(crate_dir: &Path, rel: String, out: &mut Vec<String>) {
    let p = crate_dir.join(&rel);
    if p.is_dir() {
        for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            collect(crate_dir, format!("{rel}/{}", e.file_name().to_string_lossy()), out);
        }
    } else if p.is_file() {
        out.push(rel);
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

/// 16 hex digits over the INPUTS files under `crate_dir` (the folder of
/// dataplane/Cargo.toml): each file's path from there, then its bytes, in
/// path order.
pub fn source_hash(crate_dir: &Path) -> String {
    let mut files = vec![];
    for p in INPUTS {
        collect(crate_dir, p.to_string(), &mut files);
    }
    files.sort();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        h = fnv(h, f.as_bytes());
        h = fnv(h, &[0]);
        h = fnv(h, &std::fs::read(crate_dir.join(f)).unwrap_or_default());
        h = fnv(h, &[0]);
    }
    format!("{h:016x}")
}
