"""TCP traffic with iperf3 between emulated hosts, with JSON results.

An iperf3 server serves one test at a time, so an N:1 incast needs one
server (port) per sender on the receiver:

    servers = [Iperf3Server(h17, 5201 + i) for i in range(16)]
    clients = [Iperf3Client(h, h17.IP(), 5201 + i, nbytes=8 << 20, parallel=16)
               for i, h in enumerate(senders)]
    reports = [c.result() for c in clients]
    times = [flow_completion_times(r) for r in reports]

Programs run inside the hosts' namespaces, so a run's clean-up ends them
if the caller does not.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
from typing import Any, Optional

from .traffic import place_of


class Iperf3Error(RuntimeError):
    pass


def _iperf3() -> str:
    exe = shutil.which("iperf3")
    if exe is None:
        raise Iperf3Error("iperf3 is not installed (scripts/setup.sh installs it)")
    return exe


def _parse(proc: subprocess.Popen, out: bytes, err: bytes, what: str) -> dict:
    try:
        rep = json.loads(out.decode(errors="replace"))
    except json.JSONDecodeError:
        raise Iperf3Error(f"{what}: no JSON from iperf3 (status {proc.returncode}): "
                          f"{err.decode(errors='replace').strip()}") from None
    if "error" in rep:
        raise Iperf3Error(f"{what}: {rep['error']}")
    return rep


class Iperf3Server:
    """`iperf3 -s -1 -J` on a host: serves one test, then reports."""

    def __init__(self, place: Any, port: int = 5201, interval: float = 0.1,
                 ready_timeout: float = 5.0) -> None:
        self.port = port
        argv = [_iperf3(), "-s", "-1", "-J", "-p", str(port), "-i", f"{interval:g}"]
        self.proc = place_of(place).popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._wait_listening(place, ready_timeout)

    def _wait_listening(self, place: Any, timeout: float) -> None:
        """Polls the host's listening sockets (ss) until the port is open."""
        host = getattr(place, "host", place)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                raise Iperf3Error(f"iperf3 server on port {self.port} exited: {err.decode().strip()}")
            if hasattr(host, "cmd"):
                if f":{self.port} " in host.cmd(f"ss -ltnH 'sport = :{self.port}'"):
                    return
            else:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", self.port)) == 0:
                        return
            time.sleep(0.02)
        raise Iperf3Error(f"iperf3 server on port {self.port} not listening after {timeout} s")

    def result(self, timeout: float = 60.0) -> dict:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            out, err = self.proc.communicate(timeout=5)
        return _parse(self.proc, out, err, f"iperf3 server :{self.port}")


class Iperf3Client:
    """`iperf3 -c` with `parallel` flows, for `seconds` or `nbytes` in all."""

    def __init__(self, place: Any, server_ip: str, port: int = 5201, *,
                 seconds: Optional[float] = None, nbytes: Optional[int] = None,
                 parallel: int = 1, interval: float = 0.1, extra: tuple[str, ...] = ()) -> None:
        if (seconds is None) == (nbytes is None):
            raise ValueError("give seconds or nbytes")
        argv = [_iperf3(), "-c", server_ip, "-p", str(port), "-J", "-P", str(parallel),
                "-i", f"{interval:g}", "--connect-timeout", "5000"]
        argv += ["-t", f"{seconds:g}"] if seconds is not None else ["-n", str(nbytes)]
        argv += list(extra)
        self.started = time.time()
        self.proc = place_of(place).popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def result(self, timeout: float = 120.0) -> dict:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            out, err = self.proc.communicate(timeout=5)
        rep = _parse(self.proc, out, err, "iperf3 client")
        rep["p4scope_started"] = self.started
        return rep


def interval_rates(report: dict) -> list[tuple[float, float, float]]:
    """(start s, end s, bit/s) of each reporting interval, all flows summed."""
    return [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bits_per_second"])
            for i in report.get("intervals", [])]


def flow_completion_times(report: dict) -> list[float]:
    """Seconds each flow of a client took (its sender side)."""
    return [s["sender"]["seconds"] for s in report.get("end", {}).get("streams", [])
            if "sender" in s]


def summary(report: dict) -> dict:
    end = report.get("end", {})
    sent, recv = end.get("sum_sent", {}), end.get("sum_received", {})
    return {"sent_bytes": sent.get("bytes"), "received_bytes": recv.get("bytes"),
            "sender_bps": sent.get("bits_per_second"), "receiver_bps": recv.get("bits_per_second"),
            "retransmits": sent.get("retransmits"), "seconds": recv.get("seconds")}
