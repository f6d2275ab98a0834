"""The real-time loop with a batch of frames waiting in a port's ring (sent
before the loop starts, so it takes them in one round): each frame leaves
the traffic manager before the next arrives, and a frame the outgoing
link's qdisc refuses is dropped once, as BMv2 drops a failed send. Veth
pairs in a network namespace of the test's own; needs root and `ip`."""

import json
import textwrap

import pytest

from tests.dataplane.test_realtime import PRELUDE, in_netns, l2_program

pytestmark = pytest.mark.usefixtures("netns_ok")

# frames numbered 0..n-1 wait in port 1's ring; then the loop starts and
# forwards them to port 2 (b1, shaped by the commands in argv[3], if any)
BATCH_CHILD = PRELUDE + textwrap.dedent("""
    n, size, shape = int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
    for c in shape:
        sh(*c.split())
    e.rt_add_port(1, "a1")
    e.rt_add_port(2, "b1")
    tx, rx = sock("a0"), sock("b0", timeout=1)
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    for i in range(n):
        tx.send(bytes.fromhex("0000000000bb0000000000aa88b5") + i.to_bytes(4, "big")
                + bytes(size - 18 - 4))
    e.rt_start()
    got = []
    try:
        while True:
            got.append(int.from_bytes(rx.recv(2048)[14:18], "big"))
    except socket.timeout:
        pass
    queue = [q for q in e.tm_queue_stats() if q["port"] == 2][0]
    port2 = e.rt_stats()["ports"][2]
    e.rt_stop()
    tc = json.loads(subprocess.run(["tc", "-s", "-j", "qdisc", "show", "dev", "b1"],
                                   capture_output=True, text=True).stdout or "[]")
    print(json.dumps({"got": got, "peak": queue["peak_pkts"], "port2": port2,
                      "qdisc_drops": sum(q.get("drops", 0) for q in tc if q["kind"] == "pfifo")}))
""")


def test_a_batch_is_dequeued_frame_by_frame_not_queued_whole(tmp_path):
    """40 frames taken from the ring in one round: the unshaped port's queue
    never holds more than the frame just enqueued (it held the whole batch
    when every frame went through ingress before any dequeue)."""
    n = 40
    res = in_netns(BATCH_CHILD, l2_program(tmp_path), n, 64, "[]")
    assert res["got"] == list(range(n)), "all forwarded, in order"
    assert res["peak"] == 1, "enqueue depth 0 for each frame: dequeued before the next"


def test_a_frame_the_links_queue_refuses_is_dropped_not_sent_again(tmp_path):
    """A 1 Mbit/s link with a 10-packet queue (Mininet's TCLink with
    max_queue_size) under a batch of 60 frames: the qdisc passes its burst,
    queues 10 and refuses the rest (ENOBUFS; the send buffer is far from
    full). Each refused frame is dropped and counted once (tx_errors equals
    the qdisc's drops: no frame is offered to it twice), the frames taken
    arrive in order, and together they are the whole batch."""
    from p4scope.topologies.tc import htb_cmds
    n = 60
    shape = json.dumps(htb_cmds("b1", 1_000_000, 10))
    res = in_netns(BATCH_CHILD, l2_program(tmp_path), n, 1000, shape)
    p2, got = res["port2"], res["got"]
    assert p2["tx_errors"] > 0 and p2["tx_blocked"] == 0
    assert res["qdisc_drops"] == p2["tx_errors"], "each refused frame offered once"
    assert got == sorted(got) and len(got) == p2["tx_frames"]
    assert p2["tx_frames"] + p2["tx_errors"] == n
