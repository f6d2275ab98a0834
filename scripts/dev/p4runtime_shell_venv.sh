#!/usr/bin/env bash
# Creates .venv-p4runtime-shell with p4runtime-shell (it pins protobuf < 3.21,
# so it cannot share .venv). The switch's interop test uses it when present:
#   bash scripts/dev/p4runtime_shell_venv.sh && bash scripts/test.sh tests/switch -k interop
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x .venv-p4runtime-shell/bin/python ]; then
    /usr/bin/python3 -m venv .venv-p4runtime-shell
fi
.venv-p4runtime-shell/bin/pip install -q --disable-pip-version-check "p4runtime-shell==0.0.6"
.venv-p4runtime-shell/bin/python -c "import p4runtime_sh.shell" && echo "p4runtime-shell ready"
