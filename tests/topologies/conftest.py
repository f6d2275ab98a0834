"""Shared fixtures: what the real-time tests need, and skips that say why."""

import os
import shutil
import subprocess
import uuid

import pytest


def _netns_works() -> str | None:
    """None if this machine can make a namespace with a veth pair, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces and raw sockets)"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    name = f"p4s-probe-{uuid.uuid4().hex[:6]}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    try:
        r = subprocess.run(["ip", "netns", "exec", name, "ip", "link", "add", "pa", "type", "veth",
                            "peer", "name", "pb"], capture_output=True, text=True)
        if r.returncode != 0:
            return f"no veth support: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return None


_REASON = "unchecked"


@pytest.fixture(scope="session")
def netns_ok():
    global _REASON
    if _REASON == "unchecked":
        _REASON = _netns_works()
    if _REASON:
        pytest.skip(_REASON)


@pytest.fixture(scope="session")
def mininet_ok(netns_ok):
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        pytest.fail("Mininet is not importable: scripts/setup.sh installs it")
    for tool in ("mnexec", "ethtool", "tc"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: scripts/setup.sh installs it")
