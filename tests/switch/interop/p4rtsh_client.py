"""Drives a P4Runtime switch with p4runtime-shell (an independent client).

Run by the interop test with p4runtime-shell's own interpreter (it pins an
old protobuf, so it cannot share p4scope's venv):

    python p4rtsh_client.py ADDR P4INFO_TXT JSON

Prints one "ok <step>" line per step; any failure raises (exit status 1).
"""

import os
import sys
import time
import traceback

import p4runtime_sh.shell as sh


def main(addr, p4info, json_path):
    sh.setup(device_id=0, grpc_addr=addr, election_id=(0, 1),
             config=sh.FwdPipeConfig(p4info, json_path), verbose=False)
    print("ok setup", flush=True)

    te = sh.TableEntry("IngressImpl.fwd")(action="IngressImpl.forward")
    te.match["hdr.ethernet.dst"] = "00:00:00:00:00:05"
    te.action["port"] = "2"
    te.insert()
    got = list(sh.TableEntry("IngressImpl.fwd").read())
    assert len(got) == 1 and got[0].action["port"].value == b"\x02", got
    print("ok insert/read", flush=True)
    te.action["port"] = "3"
    te.modify()
    got = list(sh.TableEntry("IngressImpl.fwd").read())
    assert got[0].action["port"].value == b"\x03", got
    print("ok modify", flush=True)

    acl = sh.TableEntry("IngressImpl.acl")(action="IngressImpl.drop")
    acl.match["hdr.probe.flags"] = "0x1&&&0xff"
    acl.match["hdr.probe.level"] = "10..20"
    acl.priority = 7
    acl.insert()
    (a,) = list(sh.TableEntry("IngressImpl.acl").read())
    assert a.priority == 7
    acl.delete()
    print("ok ternary/range", flush=True)

    route = sh.TableEntry("IngressImpl.routes")(action="IngressImpl.forward")
    route.match["hdr.probe.addr"] = "10.0.0.0/8"
    route.action["port"] = "4"
    route.insert()
    print("ok lpm", flush=True)

    c = sh.CounterEntry("IngressImpl.port_packets")
    c.index = 3
    c.packet_count = 5
    c.byte_count = 500
    c.modify()
    cells = list(sh.CounterEntry("IngressImpl.port_packets").read())
    assert len(cells) == 8
    cr = next(x for x in cells if x.index == 3)
    assert cr.packet_count == 5 and cr.byte_count == 500
    print("ok counters", flush=True)

    dc = sh.DirectCounterEntry("IngressImpl.fwd_counter")
    got = list(dc.read())
    assert len(got) == 1
    print("ok direct counters", flush=True)

    sh.MulticastGroupEntry(7).add(2, 1).add(3, 1).insert()
    (g,) = list(sh.MulticastGroupEntry(7).read())
    assert len(g.replicas) == 2
    print("ok multicast", flush=True)

    pin = sh.PacketIn()
    p = sh.PacketOut(b"\x00\x00\x00\x00\x00\x09" + b"\x00" * 6 + b"\x08\x00" + b"x" * 46)
    p.metadata["egress_port"] = "255"
    p.metadata["_pad"] = "0"
    p.send()
    msgs = list(pin.sniff(timeout=3))
    assert msgs and msgs[0].packet.payload[:6] == b"\x00\x00\x00\x00\x00\x09", msgs
    print("ok packet-out/packet-in", flush=True)

    te.delete()
    assert list(sh.TableEntry("IngressImpl.fwd").read()) == []
    print("ok delete", flush=True)
    sh.teardown()
    time.sleep(0.1)
    print("ok teardown", flush=True)


if __name__ == "__main__":
    code = 0
    try:
        main(*sys.argv[1:4])
    except BaseException:
        traceback.print_exc()
        code = 1
        try:
            sh.teardown()
        except Exception:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # p4runtime-shell's stream thread is not a daemon
