"""Running commands in a Mininet node's shell, with errors that say so.

Mininet's node.cmd() returns the output and drops the exit status; a tc or
ip command that fails would go unnoticed. run_checked appends the status
to the output and raises on failure with the command and its message.
"""

from __future__ import annotations

import re
from typing import Any

_RC = re.compile(r"__p4s_rc=(\d+)\s*$")


class NodeCommandError(RuntimeError):
    pass


def run_checked(node: Any, cmd: str) -> str:
    out = node.cmd(f"{cmd}; echo __p4s_rc=$?")
    m = _RC.search(out)
    if m is None:
        raise NodeCommandError(f"{node.name}: `{cmd}`: no exit status in output: {out!r}")
    text = out[:m.start()].strip()
    if m.group(1) != "0":
        raise NodeCommandError(f"{node.name}: `{cmd}` failed (status {m.group(1)}): {text}")
    return text
