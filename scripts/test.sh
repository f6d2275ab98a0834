#!/usr/bin/env bash
# Run every test of p4scope (after scripts/setup.sh). Exits non-zero when
# any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# the Rust engine's unit tests (cargo from rustup when present)
if [ -x /root/.cargo/bin/cargo ]; then export PATH="/root/.cargo/bin:$PATH"; fi
(cd dataplane && cargo test -q --lib 2>&1 | tail -n 3)
# the traffic generator's unit tests (topologies/trafgen)
(cd topologies/trafgen && cargo test -q 2>&1 | tail -n 3)
.venv/bin/python -m pytest "$@"
