"""Starting a p4scope command that serves the dashboard (in a subprocess),
reading the URL it prints, stopping it by its pid: only the processes the
live tests started."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"dashboard at (http://127\.0\.0\.1:\d+/)")
TINY_RUN = ["run", "microburst", "--sizes", "1518", "--sizes-4to1", "none", "--burst-frames",
            "3000", "--profiles", "fair", "--jobs", "1", "--no-report", "--no-progress"]


def p4scope(*args: str) -> list[str]:
    return [sys.executable, "-m", "p4scope.cli", *args]


class Served:
    """A p4scope process serving the dashboard; its stderr is collected."""

    def __init__(self, args: list[str]):
        self.proc = subprocess.Popen(p4scope(*args), cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self.out = ""
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.err.append(line)

    def url(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.err):
                m = URL.search(line)
                if m:
                    return m.group(1)
            assert self.proc.poll() is None, "".join(self.err)
            time.sleep(0.05)
        raise AssertionError("no dashboard URL printed:\n" + "".join(self.err))

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.out = self.proc.stdout.read() if self.proc.stdout else ""
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._t.join(timeout=5)

    def wait(self, timeout: float = 120) -> int:
        rc = self.proc.wait(timeout=timeout)
        self.out = self.proc.stdout.read() if self.proc.stdout else ""
        self._t.join(timeout=5)
        return rc
