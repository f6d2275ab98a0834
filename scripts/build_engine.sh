#!/usr/bin/env bash
# Builds the Rust engine (dataplane/, the p4scope_dataplane module) in
# release mode and installs it into .venv. setup.sh calls it with a recent
# cargo on PATH, after the Python package is installed.
#
# Profile-guided where the toolchain allows: an instrumented build runs a
# short training workload (the engine benchmark, an incast, microburst and
# fairness cases on the reference DUT, about 20 s), then the release build
# is optimised with the profile it wrote (per-packet paths 5-15 % faster:
# the branches and layout the interpreter takes on real programs). That
# needs the toolchain's llvm-profdata (rustup's llvm-tools component, added
# here when rustup is there); without it, or if any step of it fails, the
# build is a plain release build. Builds go to target/pgo/.
set -euo pipefail
cd "$(dirname "$0")/.."

pgo="$PWD/target/pgo"

wheel() {  # wheel NAME [RUSTFLAGS]: a release wheel of dataplane/ in target/pgo/NAME
    rm -rf "$pgo/$1-wheel"
    (cd dataplane && CARGO_TARGET_DIR="$pgo/$1" RUSTFLAGS="${2:-}" \
        ../.venv/bin/maturin build --release -q -i ../.venv/bin/python -o "$pgo/$1-wheel")
}

install() {  # install NAME
    .venv/bin/pip install -q --disable-pip-version-check --no-deps --force-reinstall \
        "$pgo/$1-wheel"/p4scope_dataplane-*.whl
}

profdata_tool() {  # prints the toolchain's llvm-profdata, when it has one
    local bin
    bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
    if [ ! -x "$bin" ] && command -v rustup >/dev/null; then
        rustup component add llvm-tools >/dev/null 2>&1 || true
    fi
    [ -x "$bin" ] && echo "$bin"
}

train() {  # the training workload, on the installed (instrumented) module
    local out
    out="$(mktemp -d)"
    .venv/bin/python -m p4scope.bench.engine --packets 300000 >/dev/null \
    && .venv/bin/python -m p4scope.bench.incast --ms 2 >/dev/null \
    && .venv/bin/p4scope run microburst --sizes 64,1518 --sizes-4to1 512 --jobs 1 \
        --no-report --no-progress --results "$out" >/dev/null \
    && .venv/bin/p4scope run fairness --n 3,16 --jobs 1 \
        --no-report --no-progress --results "$out" >/dev/null
    local status=$?
    rm -rf "$out"
    return $status
}

profile_guided() {
    local tool
    tool="$(profdata_tool)" || return 1
    rm -rf "$pgo/profiles"
    echo "setup: building the Rust engine instrumented, then training it (profile-guided build)"
    wheel instrumented "-Cprofile-generate=$pgo/profiles" && install instrumented && train \
        && "$tool" merge -o "$pgo/merged.profdata" "$pgo/profiles" \
        && echo "setup: building the Rust engine with the profile" \
        && wheel optimised "-Cprofile-use=$pgo/merged.profdata" \
        && install optimised
}

if ! profile_guided; then
    echo "setup: building the Rust engine (release, without a profile; takes a minute or two)"
    wheel plain && install plain
fi
