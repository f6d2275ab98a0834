"""What the PTF run needs, and skips that say why it cannot run here."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

import pytest


def why_no_lab() -> str | None:
    """None if this machine can hold a PTF lab (root, iproute2, ethtool,
    namespaces with veth pairs), else the reason it cannot."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth pairs, raw sockets)"
    for tool in ("ip", "ethtool", "sysctl"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    name = f"p4s-probe-{uuid.uuid4().hex[:6]}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    try:
        r = subprocess.run(["ip", "netns", "exec", name, "ip", "link", "add", "pa", "type",
                            "veth", "peer", "name", "pb"], capture_output=True, text=True)
        if r.returncode != 0:
            return f"no veth support: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return None


@pytest.fixture(scope="session")
def lab_ok() -> None:
    why = why_no_lab()
    if why:
        pytest.skip(why)
