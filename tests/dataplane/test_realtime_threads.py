"""The real-time loop's threads: the loop (p4scope-rt) and the thread that
sends for it (p4scope-tx), both running while the loop runs and gone after
rt_stop; `p4scope bench realtime` counts the CPU time of both."""

import glob
import os
import time

import pytest

from conftest import DROP, FWD, ethernet_program, key, table


def _threads() -> dict[str, int]:
    """{thread name: CPU ns} of this process's real-time threads."""
    out = {}
    for task in glob.glob(f"/proc/{os.getpid()}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                name = f.read().strip()
            if name.startswith("p4scope-"):
                with open(f"{task}/schedstat") as f:
                    out[name] = out.get(name, 0) + int(f.read().split()[0])
        except OSError:
            continue
    return out


def test_the_loop_sends_from_a_thread_the_bench_counts(tmp_path):
    dp = pytest.importorskip("p4scope_dataplane", reason="the p4scope engine is not built")
    from p4scope.bench.realtime import _loop_cpu_ns

    t = table("ingress.mac", 0, [key("ethernet", "dst")], [0, 1], ["fwd", "drop"], default=1)
    e = dp.Engine(ethernet_program([FWD, DROP], [t], "ingress.mac"))
    e.rt_start(priority=0)
    try:
        deadline = time.monotonic() + 5
        while len(_threads()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # the threads name themselves as they start
        running = _threads()
        counted = _loop_cpu_ns()
    finally:
        e.rt_stop()
    assert {"p4scope-rt", "p4scope-tx"} <= set(running), running
    assert counted >= running["p4scope-rt"] + running["p4scope-tx"] > 0
    assert not {"p4scope-rt", "p4scope-tx"} & set(_threads()), "both end with the loop"
