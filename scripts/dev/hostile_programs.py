"""The programs the hostile pass runs: a small v1model program (probe.p4)
with controller headers, one table, a counter and a register, whose
ingress sends every packet-out straight back to the controller, so a
packet-out that should have been dropped is seen if it is not; and the
reference DUT (p4src/dut.p4)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DUT = REPO / "p4src" / "dut.p4"
CPU_PORT = 255

PROBE_P4 = """\
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }

@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src; bit<32> dst;
}
header ipv4_options_t { varbit<320> options; }
header l4_t { bit<16> sport; bit<16> dport; }

struct headers_t {
    packet_out_t packet_out;
    packet_in_t packet_in;
    ethernet_t ethernet;
    vlan_t[2] vlan;
    ipv4_t ipv4;
    ipv4_options_t ipv4_options;
    l4_t l4;
}
struct meta_t { }

parser ProbeParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out { pkt.extract(hdr.packet_out); transition accept; }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x8100: parse_vlan;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) {
            0x8100: parse_vlan;
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.ParserInvalidArgument);
        pkt.extract(hdr.ipv4_options, (bit<32>)(((bit<16>)hdr.ipv4.ihl - 5) * 32));
        transition select(hdr.ipv4.protocol) {
            6: parse_l4;
            17: parse_l4;
            default: accept;
        }
    }
    state parse_l4 { pkt.extract(hdr.l4); transition accept; }
}

control ProbeVerify(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control ProbeIngress(inout headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_packets;
    register<bit<32>>(16) scratch;

    action forward(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }

    table fwd {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; drop; NoAction; }
        default_action = drop();
        size = 1024;
    }
    table acl {
        key = { hdr.ethernet.src: ternary; hdr.ethernet.ether_type: range; }
        actions = { drop; NoAction; }
        default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            // echo: every packet-out goes back to the controller
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = hdr.packet_out.egress_port;
            hdr.packet_in._pad = 0;
            hdr.packet_out.setInvalid();
            sm.egress_spec = CPU_PORT;
        } else {
            port_packets.count((bit<32>)sm.ingress_port[2:0]);
            scratch.write(0, (bit<32>)sm.packet_length);
            fwd.apply();
            acl.apply();
        }
    }
}

control ProbeEgress(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t sm) { apply { } }

control ProbeCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control ProbeDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.l4);
    }
}

V1Switch(ProbeParser(), ProbeVerify(), ProbeIngress(), ProbeEgress(), ProbeCompute(),
         ProbeDeparser()) main;
"""

# A valid v1model program that does nothing: the base of the compiler's
# hostile sources (the declarations under test go before it).
EMPTY_V1MODEL = """\
#include <core.p4>
#include <v1model.p4>
struct h_t { }
struct m_t { }
parser P(packet_in pkt, out h_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control C(inout h_t hdr, inout m_t m) { apply { } }
control I(inout h_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in h_t hdr) { apply { } }
V1Switch(P(), C(), I(), I(), C(), D()) main;
"""


@dataclass(frozen=True)
class Compiled:
    json_text: str
    p4info_bytes: bytes

    @property
    def doc(self) -> dict[str, Any]:
        return json.loads(self.json_text)

    def p4info(self):
        """A fresh P4Info message."""
        from finsy.proto import p4i
        msg = p4i.P4Info()
        msg.ParseFromString(self.p4info_bytes)
        return msg


@lru_cache(maxsize=None)
def probe_program() -> Compiled:
    """probe.p4 compiled by p4scope."""
    from p4scope.compiler import compile_text
    r = compile_text(PROBE_P4, "probe.p4")
    return Compiled(json.dumps(r.bmv2_json), r.p4info.SerializeToString())


@lru_cache(maxsize=None)
def dut_program() -> Compiled:
    """The reference DUT compiled by p4scope."""
    from p4scope.compiler import compile_file
    r = compile_file(DUT, [str(DUT.parent / "include")])
    return Compiled(json.dumps(r.bmv2_json), r.p4info.SerializeToString())


def warm_compiler() -> None:
    """Import and build what every compilation needs (the grammar's
    parser), so forked command lines do not pay for it each."""
    from p4scope.compiler import compile_text
    from p4scope.compiler.preprocess import clear_cache
    compile_text(EMPTY_V1MODEL, "warm.p4")
    clear_cache()


def by_name(items, name: str):
    """The P4Info entity (table, action, ...) whose name ends with `name`."""
    for it in items:
        if it.preamble.name == name or it.preamble.name.endswith("." + name):
            return it
    raise KeyError(name)
