#!/usr/bin/env bash
# Run every test of p4scope (after scripts/setup.sh). Exits non-zero when
# any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest "$@"
