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
    """A p4scope process serving the dashboard; its stderr and stdout are
    collected as it writes them (so it never blocks on a full pipe)."""

    def __init__(self, args: list[str]):
        self.proc = subprocess.Popen(p4scope(*args), cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self._out: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(f, lines), daemon=True)
                         for f, lines in ((self.proc.stderr, self.err), (self.proc.stdout, self._out))]
        for t in self._readers:
            t.start()

    @staticmethod
    def _read(f, lines: list[str]) -> None:
        for line in f:
            lines.append(line)

    @property
    def out(self) -> str:
        return "".join(self._out)

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
        """Sends `sig` and waits at most `timeout` s for the process to end
        (then kills it, and the wait raises: a process that ignores `sig`
        fails the test, never hangs it)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._join()

    def wait(self, timeout: float = 120) -> int:
        rc = self.proc.wait(timeout=timeout)
        self._join()
        return rc

    def _join(self) -> None:
        for t in self._readers:
            t.join(timeout=5)
