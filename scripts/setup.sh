#!/usr/bin/env bash
# Set up p4scope on a Debian 12 machine (as root): system packages, a venv in
# .venv with the pinned Python dependencies, p4scope installed in it.
# Safe to run any number of times; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(python3 python3-venv python3-pip python3-dev build-essential)

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
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
   || [ pyproject.toml -nt .venv/.p4scope-installed ]; then
    .venv/bin/pip install -q --disable-pip-version-check --no-deps -e .
    touch .venv/.p4scope-installed
fi
