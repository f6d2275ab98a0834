"""A `p4scope switch` for the hostile pass: started as a user starts it
(its own process, P4Runtime and Thrift on free loopback ports), its stderr
kept line by line so a probe can see what the switch logged meanwhile, and
stopped with SIGTERM (a clean stop is exit status 0)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from hostile_core import TRACEBACK, Verdict, crashed

READY = re.compile(r"ready: P4Runtime on (\S+),.*?(?:Thrift on (\S+))?$")


class SwitchProcess:
    def __init__(self, args: list[str], folder: Path):
        self.args = args
        self.folder = folder
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self.proc: Optional[subprocess.Popen] = None
        self.address = ""
        self.thrift_address = ""

    def start(self, timeout: float = 60.0) -> "SwitchProcess":
        exe = str(Path(sys.executable).parent / "p4scope")
        self.lines = []
        (self.folder / "stdin").write_bytes(b"")
        with open(self.folder / "stdin", "rb") as i, open(self.folder / "switch.out", "ab") as o:
            self.proc = subprocess.Popen([exe, "switch", *self.args], cwd=self.folder, stdin=i,
                                         stdout=o, stderr=subprocess.PIPE, text=True,
                                         errors="replace")
        threading.Thread(target=self._read, daemon=True, name="hostile-switch-stderr").start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ln in self.snapshot():
                m = READY.search(ln)
                if m:
                    self.address, self.thrift_address = m.group(1), m.group(2) or ""
                    return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"the switch exited ({self.proc.returncode}): "
                                   + " | ".join(self.snapshot()[-3:]))
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"the switch was not ready within {timeout:.0f} s")

    def _read(self) -> None:
        for ln in self.proc.stderr:
            with self._lock:
                self.lines.append(ln.rstrip("\n"))

    def snapshot(self) -> list[str]:
        with self._lock:
            return list(self.lines)

    def since(self, mark: int) -> list[str]:
        return self.snapshot()[mark:]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> tuple[Optional[int], bool]:
        """SIGTERM, then SIGKILL after `timeout`: (exit status, whether it
        had to be killed)."""
        if self.proc is None:
            return None, False
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
            killed = False
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
            killed = True
        return code, killed


def watched(check: Callable, switch_of: Callable) -> Callable:
    """`check`, then a crash verdict if the switch died or logged a
    traceback meanwhile (the switch is started again for the next probe;
    a probe may also have restarted it itself)."""
    def run(env) -> Verdict:
        sw: SwitchProcess = switch_of(env)
        mark = len(sw.snapshot())
        v = check(env)
        time.sleep(0.01)
        new = sw.since(mark)
        restarted = switch_of(env) is not sw  # by the probe, after a hang it saw
        if not sw.alive() and not restarted:
            code = sw.proc.returncode
            env.restart()
            return crashed(f"the switch died ({'signal ' + str(-code) if code < 0 else code}): "
                           + " | ".join(new[-2:]))
        bad = [ln for ln in new if TRACEBACK in ln or "panicked at" in ln]
        if bad:
            return crashed(f"the switch logged: {bad[0][:160]}")
        return v
    return run


def stop_verdict(sw: SwitchProcess) -> Verdict:
    """The last probe of a switch area: SIGTERM ends it cleanly (exit 0,
    no traceback in all it logged)."""
    from hostile_core import handled, wrong
    code, killed = sw.stop()
    lines = sw.snapshot()
    if killed:
        return crashed("no exit within 20 s of SIGTERM")
    if any(TRACEBACK in ln or "panicked at" in ln for ln in lines):
        first = next(ln for ln in lines if TRACEBACK in ln or "panicked at" in ln)
        return crashed(f"the switch logged: {first[:160]}")
    if code != 0:
        return (crashed if code < 0 else wrong)(f"exit status {code} after SIGTERM")
    return handled("exit 0")
