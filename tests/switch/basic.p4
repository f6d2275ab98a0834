// The switch tests' program: one table per match kind, a direct counter and
// idle timeout, an action profile and a selector, indexed counter, meter and
// register, a digest, multicast, and packet-in/packet-out controller headers.
// The P4Info comes from p4scope's compiler at test time; program.py holds
// the BMv2 JSON written to match it.
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

header probe_t {
    bit<32> addr;
    bit<16> flags;
    bit<8>  level;
    bit<8>  kind;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    probe_t      probe;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x88b5: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control VerifyImpl(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control IngressImpl(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) port_packets;
    meter(4, MeterType.bytes) rate_meter;
    register<bit<32>>(16) scratch;
    direct_counter(CounterType.packets_and_bytes) fwd_counter;
    action_profile(32w128) nh_profile;
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) ecmp_selector;

    action drop() {
        mark_to_drop(sm);
    }
    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action to_cpu() {
        sm.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = sm.ingress_port;
    }
    action flood(bit<16> group) {
        sm.mcast_grp = group;
    }
    action learn() {
        digest<learn_t>(1, {hdr.ethernet.src, sm.ingress_port});
    }
    action mirror(bit<9> port) {
        sm.egress_spec = port;
        clone(CloneType.I2E, 32w5);
    }

    table fwd {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; drop; to_cpu; flood; learn; mirror; NoAction; }
        counters = fwd_counter;
        support_timeout = true;
        default_action = NoAction();
        size = 1024;
    }
    table routes {
        key = { hdr.probe.addr: lpm; }
        actions = { forward; NoAction; }
        default_action = NoAction();
    }
    table acl {
        key = {
            hdr.probe.flags: ternary;
            hdr.probe.level: range;
            hdr.probe.kind: optional;
        }
        actions = { drop; NoAction; }
        default_action = NoAction();
    }
    table nexthop {
        key = { hdr.probe.level: exact; }
        actions = { forward; NoAction; }
        implementation = nh_profile;
    }
    table ecmp {
        key = {
            hdr.probe.addr: exact;
            hdr.probe.kind: selector;
        }
        actions = { forward; NoAction; }
        implementation = ecmp_selector;
    }
    table fixed_default {
        key = { hdr.ethernet.ether_type: exact; }
        actions = { drop; NoAction; }
        const default_action = NoAction();
    }

    apply {
        if (hdr.packet_out.isValid()) {
            if (hdr.packet_out.egress_port == CPU_PORT) {
                // loopback: a packet-out to the CPU port comes back as a packet-in
                hdr.packet_out.setInvalid();
                to_cpu();
            } else {
                sm.egress_spec = hdr.packet_out.egress_port;
                hdr.packet_out.setInvalid();
            }
        } else {
            fwd.apply();
            if (hdr.probe.isValid()) {
                routes.apply();
                acl.apply();
                nexthop.apply();
                ecmp.apply();
            }
            fixed_default.apply();
        }
    }
}

control EgressImpl(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    apply { }
}

control ComputeImpl(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.probe);
    }
}

V1Switch(ParserImpl(), VerifyImpl(), IngressImpl(), EgressImpl(), ComputeImpl(),
         DeparserImpl()) main;
