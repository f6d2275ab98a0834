"""What the Prometheus endpoint's tests share: a tiny virtual-time
microburst run (as the live tests run it), a p4scope command started in a
subprocess and stopped by its pid, and Debian's prometheus server."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
ENDPOINT = re.compile(r"Prometheus endpoint at http://127\.0\.0\.1:(\d+)/metrics")
TINY_RUN = ["run", "microburst", "--sizes", "1518", "--sizes-4to1", "none", "--burst-frames",
            "3000", "--profiles", "fair", "--no-report", "--no-progress"]
PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus"
                                            if Path("/usr/bin/prometheus").exists() else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A process started here; its stderr collected; stopped by its pid."""

    def __init__(self, args: list[str], cwd: Path = ROOT):
        self.proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.err.append(line)

    def text(self) -> str:
        return "".join(self.err)

    def wait_for(self, pattern: re.Pattern, timeout: float = 60) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = pattern.search(self.text())
            if m:
                return m
            assert self.proc.poll() is None, self.text()
            time.sleep(0.05)
        raise AssertionError(f"{pattern.pattern!r} not printed:\n{self.text()}")

    def wait(self, timeout: float = 60) -> int:
        rc = self.proc.wait(timeout=timeout)
        self._t.join(timeout=5)
        return rc

    def stop(self, sig: int, timeout: float = 30) -> Optional[int]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._t.join(timeout=5)


def p4scope(*args: str) -> list[str]:
    return [sys.executable, "-m", "p4scope.cli", *args]


def start_prometheus(tmp: Path, target_port: int) -> tuple[Proc, str]:
    """Debian's prometheus on 127.0.0.1, scraping 127.0.0.1:target_port every
    second, its config and storage under `tmp`; (process, API base URL)."""
    cfg = tmp / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                   "scrape_configs:\n  - job_name: p4scope\n    static_configs:\n"
                   f"      - targets: ['127.0.0.1:{target_port}']\n")
    port = free_port()
    proc = Proc([PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={tmp / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}"], cwd=tmp)
    return proc, f"http://127.0.0.1:{port}"


def query(base: str, expr: str) -> list[dict[str, Any]]:
    """The instant vector of `expr` through Prometheus' HTTP API ([] while
    it is not up)."""
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.load(r)
    except OSError:
        return []
    assert body["status"] == "success", body
    return body["data"]["result"]
