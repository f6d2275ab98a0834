"""Running a little code inside a named network namespace (`ip netns`).

setns() moves only the calling thread, so the code runs in a short-lived
thread of its own; a socket it creates stays in that namespace for good
and may then be used from any thread (BSD sockets belong to the namespace
they were made in).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Callable, TypeVar

CLONE_NEWNET = 0x40000000

T = TypeVar("T")


def run_in_netns(netns: str, fn: Callable[[], T], timeout: float = 5.0) -> T:
    """fn() called in a thread that entered `netns`; its result, or what it
    raised (OSError naming the namespace if it cannot be entered)."""
    out: list = []
    failure: list[BaseException] = []

    def enter_and_call() -> None:
        try:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, f"setns {netns}: {os.strerror(e)}")
            finally:
                os.close(fd)
            out.append(fn())
        except BaseException as e:  # noqa: BLE001 - raised again in the caller
            failure.append(e)

    t = threading.Thread(target=enter_and_call, name=f"in-{netns}", daemon=True)
    t.start()
    t.join(timeout)
    if failure:
        raise failure[0]
    if not out:
        raise TimeoutError(f"no answer from inside {netns} after {timeout} s")
    return out[0]
