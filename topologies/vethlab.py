"""Veth pairs inside a network namespace of their own, for tests,
benchmarks and PTF-style set-ups that need interfaces but no Mininet.

    with VethLab([("tga", "tgb")]) as lab:
        subprocess.run(["ip", "netns", "exec", lab.netns, "ip", "-br", "link"])

The namespace is recorded in a run manifest (manifest.py) before it is
made, so a lab whose process dies is cleaned like any run (clean.py): the
namespace goes, and every process still inside it. Interfaces come up with
offloads off (tc.OFFLOADS).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from .clean import CleanReport, clean_run, clean_stale
from .tc import offloads_off_cmd
from .manifest import Manifest


class VethLab:
    def __init__(self, pairs: Sequence[tuple[str, str]], run_dir: Optional[str | Path] = None,
                 mtu: Optional[int] = None) -> None:
        self.pairs = list(pairs)
        self.mtu = mtu
        self._tmp = None
        if run_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="p4scope-lab-")
            run_dir = self._tmp.name
        self.run_dir = Path(run_dir)
        self.manifest: Optional[Manifest] = None
        self.netns = ""

    def _ip(self, *args: str) -> None:
        r = subprocess.run(["ip", "netns", "exec", self.netns, *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")

    def __enter__(self) -> "VethLab":
        clean_stale()
        self.manifest = m = Manifest.create(self.run_dir)
        self.netns = m.netns_name("lab")
        m.add_namespace(self.netns)
        try:
            r = subprocess.run(["ip", "netns", "add", self.netns], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"ip netns add {self.netns}: {r.stderr.strip()}")
            self._ip("ip", "link", "set", "lo", "up")
            for a, b in self.pairs:
                self._ip("ip", "link", "add", "name", a, "type", "veth", "peer", "name", b)
                for dev in (a, b):
                    if self.mtu is not None:
                        self._ip("ip", "link", "set", "dev", dev, "mtu", str(self.mtu))
                    self._ip("sh", "-c", offloads_off_cmd(dev))
                    self._ip("ip", "link", "set", "dev", dev, "up")
            m.set_state("running")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> CleanReport:
        rep = clean_run(self.run_dir, force=True)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return rep

    def __exit__(self, *exc: object) -> None:
        self.close()
