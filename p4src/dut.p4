/*
 * p4scope reference device under test: an L2/L3 switch.
 *
 *  - L2 bridging with learning: an unknown source MAC is sent to the
 *    controller as a digest; the controller installs it in smac (with an idle
 *    timeout for ageing) and dmac.
 *  - Unknown destination and broadcast frames are flooded through the
 *    multicast group the controller configures per ingress port.
 *  - L3 routing for frames addressed to the router MAC: LPM on the IPv4
 *    destination, next hops rewrite MACs and decrement the TTL; ECMP/LAG
 *    members are chosen by an action selector over the 5-tuple.
 *  - An ACL stage (permit, deny, DSCP rewrite) with priorities.
 *  - Per-port packet and byte counters at ingress and egress.
 *  - Packet-in/out through the CPU port.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"

struct metadata_t {
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
    bit<1>  is_routed;
}

parser DutParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
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
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.HeaderTooShort);
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IPPROTO_TCP): parse_l4;
            (0, IPPROTO_UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        meta.l4_src_port = hdr.l4.src_port;
        meta.l4_dst_port = hdr.l4.dst_port;
        transition accept;
    }
}

control DutVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control DutIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    counter(512, CounterType.packets_and_bytes) ingress_port_counter;

    action drop() {
        mark_to_drop(sm);
    }

    /* ---- L2 ---- */
    action learn() {
        digest<mac_learn_t>(1, { hdr.ethernet.src_addr, sm.ingress_port });
    }
    action known_source() { }
    table smac {
        key = { hdr.ethernet.src_addr: exact; }
        actions = { learn; known_source; }
        default_action = learn();
        support_timeout = true;
        size = 4096;
    }

    action forward(port_t port) {
        sm.egress_spec = port;
    }
    action flood(bit<16> group) {
        sm.mcast_grp = group;
    }
    table dmac {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { forward; flood; drop; }
        default_action = drop();
        size = 4096;
    }

    /* ---- L3 ---- */
    action set_routed() {
        meta.is_routed = 1;
    }
    table router_mac {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { set_routed; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    action set_next_hop(mac_addr_t dst_mac, mac_addr_t src_mac, port_t port) {
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ethernet.src_addr = src_mac;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action_selector(HashAlgorithm.crc16, 1024, 16) ecmp_selector;
    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr: lpm;
            hdr.ipv4.src_addr: selector;
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
            meta.l4_src_port: selector;
            meta.l4_dst_port: selector;
        }
        actions = { set_next_hop; drop; }
        /* BMv2 gives tables with an action selector no default action:
         * a miss is handled in the apply block. */
        implementation = ecmp_selector;
        size = 16384;
    }

    /* ---- ACL ---- */
    action permit() { }
    action deny() {
        mark_to_drop(sm);
    }
    action set_dscp(bit<6> dscp) {
        hdr.ipv4.dscp = dscp;
    }
    table acl {
        key = {
            sm.ingress_port: ternary;
            hdr.ethernet.ether_type: ternary;
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            hdr.ipv4.protocol: ternary;
            meta.l4_dst_port: range;
        }
        actions = { permit; deny; set_dscp; }
        default_action = permit();
        size = 1024;
    }

    action send_to_cpu() {
        sm.egress_spec = CPU_PORT;
    }

    apply {
        ingress_port_counter.count((bit<32>)sm.ingress_port);
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (sm.parser_error != error.NoError) {
            drop();
            exit;
        }
        smac.apply();
        router_mac.apply();
        if (meta.is_routed == 1 && hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            if (!ipv4_lpm.apply().hit) {
                drop();
            }
        } else {
            dmac.apply();
        }
        if (hdr.ipv4.isValid()) {
            acl.apply();
        }
    }
}

control DutEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    counter(512, CounterType.packets_and_bytes) egress_port_counter;

    apply {
        /* Do not send a flooded copy back where it came from. */
        if (sm.egress_rid != 0 && sm.egress_port == sm.ingress_port) {
            mark_to_drop(sm);
        } else {
            egress_port_counter.count((bit<32>)sm.egress_port);
            if (sm.egress_port == CPU_PORT) {
                hdr.packet_in.setValid();
                hdr.packet_in.ingress_port = sm.ingress_port;
            }
        }
    }
}

control DutComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control DutDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
    }
}

V1Switch(DutParser(), DutVerifyChecksum(), DutIngress(), DutEgress(),
         DutComputeChecksum(), DutDeparser()) main;
