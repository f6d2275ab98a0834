"""The PTF lab: veth pairs in a network namespace of their own, and the
processes (switch, ptf) that run inside it.

Why a namespace and not unique names in the root namespace: the switch's
P4Runtime and Thrift servers then listen on the namespace's own loopback,
so their fixed ports (9559, 9090) never clash with anything else on the
machine, the tests' traffic cannot leak onto other interfaces, and
removing the namespace removes every interface and stops every process of
the run in one step. The namespace and its processes are recorded in a
run manifest (topologies/manifest.py) before or right after they are
created; topologies.VethLab removes exactly that on exit, and the next
lab (or `p4scope clean`) removes what a crashed run left behind.

    with PtfLab(5, run_dir) as lab:          # sw1..sw5 <-> ptf1..ptf5
        sw = lab.popen(["p4scope", "switch", ...], "switch", run_dir / "switch.log")
        lab.wait_tcp(9559, timeout=30, alive=lambda: sw.poll() is None)

Children also get SIGTERM when the runner dies (PR_SET_PDEATHSIG), so a
killed runner leaves at most a namespace for the next clean-up.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..topologies.netns import run_in_netns
from ..topologies.vethlab import VethLab

PR_SET_PDEATHSIG = 1
SWITCH_PREFIX = "sw"
PTF_PREFIX = "ptf"


def switch_iface(port: int) -> str:
    return f"{SWITCH_PREFIX}{port}"


def ptf_iface(port: int) -> str:
    return f"{PTF_PREFIX}{port}"


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class PtfLab:
    """Switch ports 1..N as interfaces swN, each paired with ptfN for PTF."""

    def __init__(self, ports: Sequence[int], run_dir: Path) -> None:
        self.ports = list(ports)
        self.run_dir = Path(run_dir)
        self._lab = VethLab([(switch_iface(p), ptf_iface(p)) for p in self.ports],
                            run_dir=self.run_dir)
        self.procs: list[subprocess.Popen] = []

    @property
    def netns(self) -> str:
        return self._lab.netns

    def __enter__(self) -> "PtfLab":
        self._lab.__enter__()
        try:
            self._ipv6_off()
        except BaseException:
            self._lab.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> list[str]:
        """Stops what still runs and removes the namespace; returns problems."""
        for p in self.procs:
            stop(p)
        rep = self._lab.close()
        return rep.problems

    def _ipv6_off(self) -> None:
        """A fresh interface sends IPv6 router solicitations and MLD
        reports on its own; the switch would flood them into the tests as
        packets nobody sent. With IPv6 off the only frames on the veths are
        the ones PTF and the switch send."""
        keys = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]
        for p in self.ports:
            for name in (switch_iface(p), ptf_iface(p)):
                keys.append(f"net.ipv6.conf.{name}.disable_ipv6=1")
        r = subprocess.run(["ip", "netns", "exec", self.netns, "sysctl", "-qw", *keys],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cannot turn IPv6 off in {self.netns}: {r.stderr.strip()}")

    def popen(self, argv: Sequence[str], what: str, log: Optional[Path] = None,
              cwd: Optional[Path] = None) -> subprocess.Popen:
        """Starts `argv` inside the namespace in a session of its own and
        records it in the manifest. With `log`, stdout and stderr go there;
        otherwise they are inherited."""
        out = open(log, "ab") if log is not None else None
        try:
            p = subprocess.Popen(["ip", "netns", "exec", self.netns, *argv], cwd=cwd,
                                 stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT if out is not None else None,
                                 start_new_session=True, preexec_fn=_die_with_parent)
        finally:
            if out is not None:
                out.close()
        self.procs.append(p)
        assert self._lab.manifest is not None
        self._lab.manifest.add_process(p.pid, what, group=True)
        return p

    def wait_tcp(self, port: int, timeout: float, alive: Callable[[], bool] = lambda: True,
                 host: str = "127.0.0.1") -> bool:
        """True once something accepts TCP connections on host:port inside
        the namespace; False after `timeout` s or as soon as `alive()` says
        the process that should listen is gone."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not alive():
                return False
            if connect_in_netns(self.netns, host, port):
                return True
            time.sleep(0.1)
        return False


def connect_in_netns(netns: str, host: str, port: int, timeout: float = 0.5) -> bool:
    """Tries one TCP connection from inside `netns`."""
    def attempt() -> bool:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return True
        except (ConnectionError, socket.timeout):
            return False
        except OSError as e:
            if e.errno in (errno.ECONNREFUSED, errno.ETIMEDOUT, None):
                return False
            raise

    try:
        return run_in_netns(netns, attempt, timeout + 1)
    except TimeoutError:
        return False


def stop(p: subprocess.Popen, timeout: float = 5.0) -> Optional[int]:
    """SIGTERM to the process's group (it leads a session of its own), then
    SIGKILL after `timeout`; returns the exit status."""
    if p.poll() is not None:
        return p.returncode
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return p.wait(wait)
        except subprocess.TimeoutExpired:
            continue
    return p.poll()
