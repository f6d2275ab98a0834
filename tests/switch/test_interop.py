"""p4runtime-shell as an independent P4Runtime client (opt-in).

p4runtime-shell pins protobuf < 3.21, so it lives in a venv of its own:
`bash scripts/dev/p4runtime_shell_venv.sh` creates .venv-p4runtime-shell,
or P4SCOPE_P4RUNTIME_SHELL names another interpreter that has it. Without
either the test is skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import text_format

from tests.switch import sw_program as program

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent


def _shell_python():
    env = os.environ.get("P4SCOPE_P4RUNTIME_SHELL")
    cand = Path(env) if env else ROOT / ".venv-p4runtime-shell" / "bin" / "python"
    return cand if cand.exists() else None


@pytest.mark.skipif(_shell_python() is None, reason="p4runtime-shell venv not set up "
                    "(bash scripts/dev/p4runtime_shell_venv.sh)")
def test_p4runtime_shell_drives_the_switch(tmp_path):
    from tests.switch.test_daemon import start

    p4info = tmp_path / "basic.p4info.txtpb"
    p4info.write_text(text_format.MessageToString(program.p4info()))
    proc, addr, _ = start(tmp_path)
    try:
        r = subprocess.run([str(_shell_python()), str(HERE / "interop" / "p4rtsh_client.py"),
                            addr, str(p4info), str(tmp_path / "basic.json")],
                           capture_output=True, text=True, timeout=60)
    finally:
        proc.terminate()
        proc.communicate(timeout=15)
    assert r.returncode == 0, r.stdout + r.stderr
    for step in ("setup", "insert/read", "modify", "ternary/range", "lpm", "counters",
                 "direct counters", "multicast", "packet-out/packet-in", "delete", "teardown"):
        assert f"ok {step}" in r.stdout, r.stdout + r.stderr
    assert sys.executable
