"""Process identity and signals, safe against PID reuse.

A process is identified by (pid, start time in clock ticks since boot,
field 22 of /proc/PID/stat) on one boot (/proc/sys/kernel/random/boot_id).
A recorded process is signalled only while that identity still holds, so a
PID reused by someone else's process is never touched. Nothing here looks
processes up by name.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Iterable, Optional


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def start_time(pid: int) -> Optional[int]:
    """The process's start time in ticks, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])  # field 22 overall; fields[0] is field 3


def is_same(pid: int, start: int) -> bool:
    st = start_time(pid)
    return st is not None and st == start


def is_zombie_or_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def identity(pid: int) -> dict:
    st = start_time(pid)
    if st is None:
        raise ProcessLookupError(pid)
    return {"pid": pid, "start": st}


def signal_process(pid: int, start: int, sig: int, group: bool) -> bool:
    """Sends `sig` to the process (or its process group, when it leads one)
    if it is still the recorded one. Returns whether anything was sent."""
    if not is_same(pid, start):
        return False
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


def wait_gone(pids: Iterable[tuple[int, int]], timeout: float) -> list[tuple[int, int]]:
    """Waits until none of (pid, start) runs; returns those still running."""
    left = list(pids)
    deadline = time.monotonic() + timeout
    while left:
        left = [(p, s) for p, s in left if is_same(p, s) and not is_zombie_or_gone(p)]
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.02)
    return left


def terminate(procs: Iterable[tuple[int, int]], group: bool = True, timeout: float = 3.0) -> list[int]:
    """SIGTERM, then SIGKILL for what is left after `timeout`; returns the
    pids still running at the end (normally none)."""
    procs = [(p, s) for p, s in procs if is_same(p, s)]
    for p, s in procs:
        signal_process(p, s, signal.SIGTERM, group)
    left = wait_gone(procs, timeout)
    for p, s in left:
        signal_process(p, s, signal.SIGKILL, group)
    return [p for p, _ in wait_gone(left, 2.0)]


def own_netns() -> list[int]:
    """[device, inode] of this process's network namespace."""
    st = os.stat("/proc/self/ns/net")
    return [st.st_dev, st.st_ino]


def netns_members(ns_path: str) -> list[int]:
    """PIDs of the processes whose network namespace is the one `ns_path`
    (a bind mount such as /run/netns/NAME) pins. Pinned, the namespace
    cannot be freed and its inode reused, so every match belongs to it."""
    try:
        st = os.stat(ns_path)
    except FileNotFoundError:
        return []
    key = (st.st_dev, st.st_ino)
    out = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            s = os.stat(f"/proc/{d}/ns/net")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if (s.st_dev, s.st_ino) == key:
            out.append(int(d))
    return out
