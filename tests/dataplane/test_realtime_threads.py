"""The real-time loop's threads: the loop (p4scope-rt) and the thread that
sends for it (p4scope-tx), both running while the loop runs and gone after
rt_stop; `p4scope bench realtime` counts the CPU time of both."""

import glob
import os
import textwrap
import time

import pytest

from tests.dataplane.programs import DROP, FWD, ethernet_program, key, table
from tests.dataplane.test_realtime import PRELUDE, in_netns, l2_program


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


HAND_CHILD = PRELUDE + textwrap.dedent("""
    from p4scope.topologies import traffic as T
    want = int(sys.argv[2])
    # sends out of port 2 are slow: b0 mirrors each frame to 20 veths
    mirrors = []
    for i in range(20):
        sh("ip", "link", "add", f"m{i}a", "type", "veth", "peer", "name", f"m{i}b")
        sh("ip", "link", "set", f"m{i}a", "up")
        sh("ip", "link", "set", f"m{i}b", "up")
        mirrors += ["action", "mirred", "egress", "mirror", "dev", f"m{i}a"]
    sh("tc", "qdisc", "add", "dev", "b0", "ingress")
    sh("tc", "filter", "add", "dev", "b0", "parent", "ffff:", "protocol", "all", "u32", "match",
       "u32", "0", "0", *mirrors)
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    e.rt_start(priority=want)
    deadline = time.monotonic() + 5
    while e.rt_stats()["priority"] != want and time.monotonic() < deadline:
        time.sleep(0.01)  # real-time once the loop has been idle
    flood = T.Stream(1, dst="00:00:00:00:00:bb", size=64, rate="max")
    for _ in range(4):  # until the loop has fallen behind (a loaded machine may defer the mirroring)
        subprocess.run(T.sender_argv("a0", [flood], duration=0.3), check=True, capture_output=True)
        time.sleep(0.2)
        st = e.rt_stats()
        if st["behind_rounds"]:
            break
    e.rt_stop()
    print(json.dumps({"rx": st["ports"][1]["rx_frames"], "tx": st["ports"][2]["tx_frames"],
                      "handed_over": st["handed_over"], "behind_rounds": st["behind_rounds"],
                      "demotions": st["demotions"], "priority": st["priority"]}))
""")


@pytest.mark.parametrize("priority", [0, 1])
def test_rounds_are_handed_over_only_at_real_time_priority(netns_ok, tmp_path, priority):
    """A 64-byte flood into port 1, out of port 2 whose sends are slow (the
    far end mirrors each frame to 20 interfaces): after a round the loop
    finds many frames waiting (behind_rounds). At real-time priority it
    hands such rounds to its sending threads; at normal scheduling, where a
    hand-over would wait for the scheduler to run the thread, it sends every
    frame itself. Either way every frame taken in is sent."""
    from p4scope.topologies.traffic import trafgen_path
    if not os.path.exists(trafgen_path()):
        pytest.skip("p4scope-trafgen is not built")
    res = in_netns(HAND_CHILD, l2_program(tmp_path), priority)
    assert res["priority"] == priority
    assert res["rx"] > 1000 and res["tx"] == res["rx"]
    assert res["behind_rounds"] > 0, res  # the flood kept frames waiting
    if priority and not res["demotions"]:
        assert res["handed_over"] > 0, res
    elif not priority:
        assert res["handed_over"] == 0, res
