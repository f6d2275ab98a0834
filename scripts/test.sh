#!/usr/bin/env bash
# Run every test of p4scope (after scripts/setup.sh). Exits non-zero when
# any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# cargo from rustup when present
if [ -x /root/.cargo/bin/cargo ]; then export PATH="/root/.cargo/bin:$PATH"; fi
cargo_tests() {  # DIR [ARGS]: a crate's tests; their summary, or all they said when one fails
    local dir="$1" out
    shift
    if out="$(cd "$dir" && cargo test -q "$@" 2>&1)"; then
        tail -n 2 <<<"$out"
    else
        printf '%s\n' "$out"
        return 1
    fi
}
cargo_tests dataplane --lib          # the Rust engine's unit tests
cargo_tests topologies/trafgen       # the traffic generator's
cargo_tests crates/afpacket --lib    # the AF_PACKET crate both use
# the import contracts of pyproject.toml ([tool.importlinter]), checked on
# the package laid out as it installs (the editable install maps folders
# into p4scope, which import-linter cannot follow): a tree of links
farm="$(mktemp -d)"
trap 'rm -rf "$farm"' EXIT
mkdir "$farm/p4scope"
for f in scripts/*; do ln -s "$PWD/$f" "$farm/p4scope/"; done
for d in compiler switch control topologies; do ln -s "$PWD/$d" "$farm/p4scope/$d"; done
(cd "$farm" && PYTHONPATH="$farm" "$OLDPWD/.venv/bin/lint-imports" "$OLDPWD/pyproject.toml" \
    | sed -n '/^Contracts/,$p')
.venv/bin/python -m pytest "$@"
