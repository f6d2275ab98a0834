"""A shaped link's queue as topologies.qdisc reads it: every frame offered
is either sent, queued or dropped once (htb counts its pfifo's drops as
its own: they are not added twice), read one interface at a time or
several with one `tc` call."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

pytestmark = pytest.mark.usefixtures("netns_ok")

FRAMES = 300
SETUP = """
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1
sysctl -q -w net.ipv6.conf.default.disable_ipv6=1
ip link add name qa type veth peer name qb
ip link set qa up
ip link set qb up
ip addr add 10.9.0.1/24 dev qa
ip neigh replace 10.9.0.2 lladdr 02:00:00:00:00:02 dev qa
tc qdisc add dev qa root handle 5: htb default 1
tc class add dev qa parent 5: classid 5:1 htb rate 1mbit
tc qdisc replace dev qa parent 5:1 handle 10: pfifo limit 5
"""
BLAST_AND_READ = f"""
import json, socket
from p4scope.topologies.qdisc import read_qdisc, read_qdiscs
before = read_qdisc("qa")
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range({FRAMES}):
    s.sendto(b"x" * 1000, ("10.9.0.2", 9))
print(json.dumps([before, read_qdisc("qa"), read_qdiscs(["qa", "qb", "gone"])]))
"""


def test_a_shaped_links_drops_are_counted_once():
    ns = f"p4q-{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in SETUP.strip().splitlines():
            subprocess.run(["ip", "netns", "exec", ns, *cmd.split()], check=True)
        r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", BLAST_AND_READ],
                           capture_output=True, text=True, timeout=60, check=True)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    before, one, several = json.loads(r.stdout)
    assert before[2] == 0
    backlog, qlen, drops, sent = one
    assert drops > FRAMES // 2  # 1 Mbit/s cannot take them: most are dropped
    assert sent - before[3] + qlen + drops == FRAMES, (before, one)
    assert qlen <= 5 and backlog >= qlen * 1000
    assert set(several) == {"qa", "qb"}  # an interface that is not there is left out
    assert several["qa"][2] == drops and several["qa"][3] >= sent  # the queue drains
