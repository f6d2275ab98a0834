"""Network namespaces for the Mininet run tests: the ones that exist now,
and the ones a run's testbeds recorded in their manifests."""

from __future__ import annotations

import json
import subprocess


def netns() -> set[str]:
    """The names `ip netns list` shows."""
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in r.stdout.splitlines() if line.strip()}


def run_namespaces(run) -> set[str]:
    """The namespaces the run's testbeds made (other runs on the machine
    make their own meanwhile)."""
    return {ns for m in (run / "mininet").glob("*/manifest.json")
            for ns in json.loads(m.read_text())["namespaces"]}
