"""The case workers' malloc settings (experiments/heap.py)."""

import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")

# In a fresh interpreter: does a 16 MiB block come from its own mapping
# (mallinfo2's hblks counts them) or from the heap, where it stays once freed?
_PROBE = """
import ctypes, sys
from p4scope.experiments import heap
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "kept":
    assert heap.keep_freed_memory() is True
before = libc.mallinfo2().hblks
p = libc.malloc(16 << 20)
print(libc.mallinfo2().hblks - before)
libc.free(p)
"""


@pytest.mark.parametrize("how, mapped", [("default", "1"), ("kept", "0")])
def test_a_case_sized_block_comes_from_the_heap_once_the_thresholds_are_raised(how, mapped):
    out = subprocess.run([sys.executable, "-c", _PROBE, how], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == mapped
