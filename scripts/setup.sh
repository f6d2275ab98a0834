#!/usr/bin/env bash
# Set up p4scope on a Debian 12 machine (as root): system packages, a venv in
# .venv with the pinned Python dependencies, p4scope installed in it.
# Safe to run any number of times; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium + chromium-driver: the live dashboard's browser test (selenium, headless);
# prometheus: the --metrics-port test scrapes a run with Debian's server (its own, on loopback)
# valgrind: `p4scope bench instructions` counts the engine's instructions a packet with callgrind
APT_PACKAGES=(python3 python3-venv python3-pip python3-dev build-essential chromium chromium-driver
              prometheus valgrind)

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    services=() others=()
    for p in "${missing[@]}"; do
        case "$p" in prometheus) services+=("$p") ;; *) others+=("$p") ;; esac
    done
    [ ${#others[@]} -eq 0 ] || apt-get install -y -qq "${others[@]}" >/dev/null
    if [ ${#services[@]} -gt 0 ]; then
        # Debian's prometheus package starts a Prometheus service on :9090 (the
        # Thrift port BMv2 and p4scope's switch take by default) and recommends
        # exporters; the tests run their own server on loopback. So: no
        # recommends, no service started while it installs (policy-rc.d), and
        # none enabled afterwards
        policy=/usr/sbin/policy-rc.d
        made_policy=""
        if [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && made_policy=1
        fi
        status=0
        apt-get install -y -qq --no-install-recommends "${services[@]}" >/dev/null || status=$?
        [ -z "$made_policy" ] || rm -f "$policy"
        [ "$status" -eq 0 ] || exit "$status"
        if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
            systemctl disable --now prometheus.service >/dev/null 2>&1 || true
        fi
    fi
fi

PY=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PY" -m venv .venv
fi
stamp=.venv/.p4scope-requirements
if ! cmp -s requirements.txt "$stamp" 2>/dev/null; then
    echo "setup: installing Python dependencies"
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    cp requirements.txt "$stamp"
fi
if ! .venv/bin/python -c "import p4scope.compiler" 2>/dev/null \
   || [ pyproject.toml -nt .venv/.p4scope-installed ] || [ setup.py -nt .venv/.p4scope-installed ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
    touch .venv/.p4scope-installed
fi
# the editable install leaves p4scope's own modules uncompiled: their bytecode
# now (what pip does for an installed package), so no run compiles them
# first, in every process it starts (under PYTHONDONTWRITEBYTECODE, in all)
.venv/bin/python -m compileall -q -j 0 scripts compiler switch control topologies >/dev/null

# ---- Rust engine (dataplane/) -------------------------------------------
# The Rust crates are one Cargo workspace (Cargo.toml here: dataplane/,
# topologies/trafgen/ and the AF_PACKET crate both use, crates/afpacket/),
# built into target/ here.
# Builds the extension module p4scope_dataplane with maturin (pinned in
# requirements.txt) in release mode, profile-guided where the toolchain
# allows (scripts/build_engine.sh), and installs it into .venv. Skipped when
# nothing it is built from changed since the last build (hash of the
# workspace's manifest and lock file and of dataplane/ and crates/afpacket/).
# Cargo, the first that is recent enough (the crates need Rust >= 1.74):
# rustup's at /root/.cargo/bin, else one on PATH, else Debian's cargo-web and
# rustc-web (Rust 1.85 in bookworm, newer in bookworm-security; their cargo
# and rustc land in /usr/bin). Debian's plain `cargo` (Rust 1.63) is too old;
# cargo-web conflicts with it, so apt replaces it.
cargo_recent() {  # cargo_recent DIR: DIR/cargo exists and is Rust >= 1.74
    local v
    v="$("$1/cargo" --version 2>/dev/null | awk '{print $2}')" || return 1
    [ -n "$v" ] || return 1
    local major="${v%%.*}" rest="${v#*.}"
    local minor="${rest%%.*}"
    [ "$major" -gt 1 ] 2>/dev/null || { [ "$major" -eq 1 ] && [ "$minor" -ge 74 ]; } 2>/dev/null
}
CARGO_DIR=""
for d in /root/.cargo/bin "$(dirname "$(command -v cargo 2>/dev/null || echo /nonexistent/cargo)")"; do
    if [ -x "$d/cargo" ] && cargo_recent "$d"; then
        CARGO_DIR="$d"
        break
    fi
done
if [ -z "$CARGO_DIR" ]; then
    echo "setup: no cargo for Rust >= 1.74; installing Debian's cargo-web and rustc-web"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq cargo-web rustc-web >/dev/null
    CARGO_DIR=/usr/bin
    if ! cargo_recent "$CARGO_DIR"; then
        echo "setup: /usr/bin/cargo is still older than Rust 1.74; install rustup's toolchain" >&2
        exit 1
    fi
fi
export PATH="$CARGO_DIR:$PATH"
rust_hash() {  # rust_hash PATH...: one hash of the files under the paths
    find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}
rust_common=(Cargo.toml Cargo.lock crates/afpacket/Cargo.toml crates/afpacket/src)
dp_hash="$(rust_hash "${rust_common[@]}" dataplane/Cargo.toml dataplane/pyproject.toml \
           dataplane/p4scope_dataplane.pyi dataplane/src)"
dp_stamp=.venv/.p4scope-dataplane
if [ "$(cat "$dp_stamp" 2>/dev/null)" != "$dp_hash" ] \
   || ! .venv/bin/python -c "import p4scope_dataplane" 2>/dev/null; then
    if ! bash scripts/build_engine.sh; then
        echo "setup: building dataplane/ failed (cargo in $CARGO_DIR)" >&2
        exit 1
    fi
    echo "$dp_hash" > "$dp_stamp"
fi

# ---- Mininet and real-time traffic (topologies/) -------------------------
# This block belongs to topologies/. It is idempotent: each step checks first.
# * Debian packages: mininet (Python 2.3.0 for /usr/bin/python3 and mnexec),
#   bridge-utils and iputils-ping (Mininet needs them but does not pull them
#   in), ethtool (offloads off on every emulated interface), iperf3 (TCP),
#   iproute2 (ip netns). Without recommended packages: Open vSwitch is not
#   used (this kernel has no OVS datapath).
# * How the venv meets Mininet: .venv runs the same /usr/bin/python3.11, so
#   Debian's pure-Python `mininet` package works in it. A .pth file in the
#   venv's site-packages adds one folder, .venv/p4scope-system, that holds a
#   single symlink to that package: the venv sees `mininet` and nothing else
#   from the system site-packages.
# * The traffic generator/analyzer (topologies/trafgen, Rust, over libc and
#   crates/afpacket) is a member of the Cargo workspace (see the engine's
#   block above), built with its release-trafgen profile and copied to
#   .venv/bin/p4scope-trafgen; skipped when its sources did not change.
TOPO_APT=(mininet bridge-utils iputils-ping ethtool iperf3 iproute2)
topo_missing=()
for p in "${TOPO_APT[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || topo_missing+=("$p")
done
if [ ${#topo_missing[@]} -gt 0 ]; then
    echo "setup: installing ${topo_missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${topo_missing[@]}" >/dev/null
fi
mn_pkg="$(/usr/bin/python3 -c 'import mininet, os; print(os.path.dirname(mininet.__file__))')"
venv_site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p .venv/p4scope-system
ln -sfn "$mn_pkg" .venv/p4scope-system/mininet
echo "$PWD/.venv/p4scope-system" > "$venv_site/p4scope-mininet.pth"
tg_hash="$(rust_hash "${rust_common[@]}" topologies/trafgen/Cargo.toml topologies/trafgen/src)"
tg_stamp=.venv/.p4scope-trafgen
if [ "$(cat "$tg_stamp" 2>/dev/null)" != "$tg_hash" ] || [ ! -x .venv/bin/p4scope-trafgen ]; then
    echo "setup: building the traffic generator (topologies/trafgen)"
    cargo build -q --profile release-trafgen -p p4scope-trafgen
    install -m 0755 target/release-trafgen/p4scope-trafgen .venv/bin/p4scope-trafgen
    echo "$tg_hash" > "$tg_stamp"
fi

# --- p4runtime-shell, an independent P4Runtime client for the switch's
# interoperability test. It pins an old protobuf, so it has a venv of its own.
if [ ! -x .venv-p4runtime-shell/bin/python ] \
   || ! .venv-p4runtime-shell/bin/python -c "import p4runtime_sh.shell" 2>/dev/null; then
    echo "setup: installing p4runtime-shell in .venv-p4runtime-shell"
    bash scripts/dev/p4runtime_shell_venv.sh >/dev/null
fi
