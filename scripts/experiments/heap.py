"""A case worker's heap kept for the next case (glibc only).

Each case builds a fresh engine and its tables, then frees them. glibc
hands blocks above its mmap threshold (128 KiB at first, at most 32 MiB as
it adapts) straight back to the kernel, and trims its heap's top above its
trim threshold, so the next case takes the same memory back as fresh
pages, each one faulted in and zeroed by the kernel (on a virtual machine
a fault costs more still). With the thresholds raised, a freed case's
memory stays in the heap for the next one: on the README's main job
(three runs each), user and system time 58.1-58.5 s -> 56.2-57.4 s, wall
31.3-31.6 s -> 30.3-30.9 s.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest: blocks above it are still mapped apart
TRIM_THRESHOLD = 512 << 20
"""A worker keeps at most this much freed memory at its heap's top."""


def keep_freed_memory() -> bool:
    """Raises this process's malloc thresholds (see the module doc); False
    where the C library is not glibc (nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
