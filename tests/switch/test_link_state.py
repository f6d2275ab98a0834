"""The daemon follows its interfaces' link state (root, veth): a port whose
interface goes down is down in the engine at once, so a selector group whose
members watch their ports (P4Runtime watch_port) sends every flow to the
member still up, and show_ports says which port is down; back up, the flows
spread again as before."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid

import pytest
from finsy.proto import p4r

from tests.switch import sw_program as program
from tests.switch.sw_client import Client, update
from tests.switch.sw_entities import action, probe, table_entry

from p4scope.switch.link_state import operstate_up

ADDR = 0x0A000001
DST = 0x02AAAAAAAAAA


@pytest.fixture
def three_veths(netns_ok):
    """Three veth pairs (switch side, host side), removed afterwards."""
    tag = uuid.uuid4().hex[:6]
    pairs = [(f"p4l{tag}a{i}", f"p4l{tag}b{i}") for i in range(3)]
    made = []
    try:
        for a, b in pairs:
            r = subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                               capture_output=True)
            if r.returncode:
                pytest.skip(f"cannot create veth pairs: {r.stderr.decode().strip()}")
            made.append(a)
            for n in (a, b):
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1"],
                               capture_output=True)
                subprocess.run(["ip", "link", "set", n, "up"], check=True)
        yield pairs
    finally:
        for a in made:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def _wait_state(name: str, up: bool) -> None:
    deadline = time.monotonic() + 3
    while operstate_up(name) != up:
        assert time.monotonic() < deadline, f"{name} never went {'up' if up else 'down'}"
        time.sleep(0.01)


def _listen(name: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
    s.bind((name, 0))
    s.setblocking(False)
    return s


def _count(s: socket.socket) -> int:
    n = 0
    while True:
        try:
            data = s.recv(2048)
        except BlockingIOError:
            return n
        n += data[:6] == DST.to_bytes(6, "big")


def _send_flows(tx: socket.socket, listeners, flows: int = 64) -> list[int]:
    """One probe per selector key (kind 0..flows-1); frames per listener."""
    for k in range(flows):
        tx.send(probe(DST, ADDR, kind=k))
    time.sleep(0.3)
    return [_count(s) for s in listeners]


def _wait_for(cond, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_port_going_down_moves_watched_members_at_once(three_veths, schema):
    from p4scope.switch.daemon import SwitchDaemon
    from p4scope.switch.options import parse_args

    (a0, b0), (a1, b1), (a2, b2) = three_veths
    o = parse_args(["-i", f"1@{a0}", "-i", f"2@{a1}", "-i", f"3@{a2}", "--no-p4",
                    "--thrift-port", "0", "--", "--grpc-server-addr", "127.0.0.1:0"])
    sw = SwitchDaemon(o)
    sw.start()
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    tx.bind((b0, 0))
    rx = [_listen(b1), _listen(b2)]
    try:
        c = Client(sw.address)
        c.arbitrate(1)
        c.set_pipeline(program.p4info(), program.json_text().encode())
        ap = schema.action_profiles.find("ecmp_selector").id
        for mid, port in ((1, 2), (2, 3)):
            c.write(update("insert", action_profile_member=p4r.ActionProfileMember(
                action_profile_id=ap, member_id=mid, action=action(schema, "forward", port=port))))
        grp = p4r.ActionProfileGroup(action_profile_id=ap, group_id=10)
        grp.members.add(member_id=1, weight=1, watch_port=b"\x02")
        grp.members.add(member_id=2, weight=1, watch_port=b"\x03")
        c.write(update("insert", action_profile_group=grp))
        te = table_entry(schema, "ecmp", {"hdr.probe.addr": ADDR})
        te.action.action_profile_group_id = 10
        c.write(update("insert", table_entry=te))

        both = _send_flows(tx, rx)
        assert both[0] > 0 and both[1] > 0 and sum(both) == 64, both

        subprocess.run(["ip", "link", "set", a1, "down"], check=True)
        _wait_state(a1, False)
        # the monitor wakes on the kernel's notification (moments later; a
        # loaded machine may take longer)
        _wait_for(lambda: sw.runtime_api.ports.list() == [(1, a0, True), (2, a1, False),
                                                         (3, a2, True)])
        one = _send_flows(tx, rx)
        assert one == [0, 64], one  # every flow on the member still up: none lost

        subprocess.run(["ip", "link", "set", a1, "up"], check=True)
        _wait_state(a1, True)
        _wait_for(lambda: sw.runtime_api.ports.list()[1] == (2, a1, True))
        again = _send_flows(tx, rx)
        # the same spread as before; the first frame sent by the port's socket
        # after it came back meets the kernel's pending ENETDOWN and is lost
        # (a send error, as BMv2's pcap send would have)
        refused = sw.device.dataplane.raw.rt_stats()["ports"][2]["tx_errors"]
        assert again[1] == both[1] and again[0] + refused == both[0] and refused <= 1, \
            (again, both, refused)
        # (a veth of the fixture may still come up after the daemon started:
        # that change is recorded too, and is not this test's)
        assert [(p, up) for _, p, up in sw.link_monitor.changes if p == 2] == \
            [(2, False), (2, True)]
        c.close()
    finally:
        tx.close()
        for s in rx:
            s.close()
        sw.stop()
