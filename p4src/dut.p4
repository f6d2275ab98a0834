/*
 * p4scope reference device under test: an L2/L3 switch that is also the
 * telemetry instrument (include/telemetry.p4).
 *
 *  - Errored frames are filtered as a switch does: parser errors (truncated
 *    or malformed headers), bad IPv4 header checksums, and frames shorter or
 *    longer than the ingress port allows (port_config; by default 60..9212
 *    bytes, i.e. 64..9216 with the FCS the software switch never sees).
 *  - L2 bridging with learning: a frame from an unknown source MAC, or from
 *    a known one on another port (station move), is reported to the
 *    controller as a mac_learn_t digest; the controller installs smac (with
 *    an idle timeout: ageing) and dmac entries.
 *  - Unknown destinations and broadcast are flooded to the ingress port's
 *    multicast group (port_config); a flooded copy never goes back out of
 *    its ingress port.
 *  - A bridged frame whose destination was learnt on its ingress port is
 *    filtered (IEEE 802.1Q's forwarding process never transmits a frame on
 *    the port it was received on): in a fabric, a frame flooded to a switch
 *    that knows the destination behind the sender would otherwise come back
 *    and be learnt there. Routed frames may leave by their ingress port.
 *  - L3 routing for frames to a router MAC: LPM on the IPv4 destination;
 *    next hops (action selector members) rewrite the MACs, decrement the
 *    TTL and pick a port or a LAG. TTL <= 1 is dropped.
 *  - LAG and ECMP: action selectors over a 5-tuple hash (lag_select for
 *    LAG members, the ipv4_lpm selector for ECMP next hops).
 *  - ACL (ternary/range, priorities): permit, deny, DSCP rewrite; per-rule
 *    hit counters.
 *  - Traffic class from the DSCP (traffic_class): the egress queue, which
 *    the traffic manager's PFC and strict-priority settings refer to.
 *  - Counters per ingress port, per egress port, and of drops per (reason,
 *    ingress port): index reason << 9 | port, reasons DROP_* below.
 *  - Packet-in/out through the CPU port.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/report_encap.p4"
#include "include/telemetry.p4"
#include "include/int_md.p4"

/* Drop reasons (drop_counter index = reason << 9 | ingress port). */
const bit<4> DROP_NONE       = 0;
const bit<4> DROP_UNDERSIZE  = 1;
const bit<4> DROP_OVERSIZE   = 2;
const bit<4> DROP_PARSER     = 3;
const bit<4> DROP_CHECKSUM   = 4;
const bit<4> DROP_TTL        = 5;
const bit<4> DROP_NO_ROUTE   = 6;
const bit<4> DROP_ACL        = 7;
const bit<4> DROP_L2         = 8;
const bit<4> DROP_NO_FLOOD   = 9;
const bit<4> DROP_LAG        = 10;
const bit<4> DROP_SAME_PORT  = 11;

/* LAG hashing is fixed when the program is compiled (v1model has no
 * run-time choice of a selector's algorithm or fields): -DLAG_HASH=crc16
 * (or csum16, xor16, identity) picks the algorithm, -DLAG_HASH_LAYER2_3
 * leaves the L4 ports out of the key. Seed 004's trunking policies key it
 * on fewer fields: -DLAG_POLICY_IP_DST (the IPv4 destination only),
 * -DLAG_POLICY_SRC (the source MAC and IPv4 addresses), -DLAG_POLICY_MAC
 * (the two MAC addresses). */
#ifndef LAG_HASH
#define LAG_HASH crc32
#endif

/* The MAC table (smac and dmac, one entry each per learnt address) holds
 * MAC_TABLE_SIZE addresses: -DMAC_TABLE_SIZE=N for a smaller or larger one. */
#ifndef MAC_TABLE_SIZE
#define MAC_TABLE_SIZE 65536
#endif

struct l2_metadata_t {
    bit<1>  src_known;
    port_t  src_port;
    bit<16> flood_group;
    bit<1>  flooded;
    bit<1>  bridged;
    bit<16> lag_id;
}

struct metadata_t {
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
    bit<1>  is_routed;
    bit<4>  drop_reason;
    bit<16> min_frame;
    bit<16> max_frame;
    l2_metadata_t l2;
    telemetry_metadata_t tel;
    int_md_metadata_t int_md;
    p4scope_queue_metadata_t q;
}

parser DutParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t sm) {
    IntMdParser() int_md_parser;

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
        verify(hdr.ipv4.version == 4, error.BadIPv4Header);
        verify(hdr.ipv4.ihl >= 5, error.BadIPv4Header);
        /* options are forwarded unparsed; no L4 ports behind them */
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IPPROTO_TCP): parse_l4;
            (5, 0, IPPROTO_UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        pkt.extract(hdr.l4);
        meta.l4_src_port = hdr.l4.src_port;
        meta.l4_dst_port = hdr.l4.dst_port;
        transition select(hdr.ipv4.protocol) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        int_md_parser.apply(pkt, hdr, meta.int_md, sm.packet_length);
        transition accept;
    }
}

control DutVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
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
    counter(8192, CounterType.packets_and_bytes) drop_counter;
    direct_counter(CounterType.packets_and_bytes) acl_counter;

    TelemetryIngress() telemetry;
    IntMdIngress() int_md;

    action drop() {
        meta.drop_reason = DROP_L2;
    }

    /* ---- per ingress port ---- */
    action set_port_config(bit<16> flood_group, bit<16> min_frame, bit<16> max_frame) {
        meta.l2.flood_group = flood_group;
        meta.min_frame = min_frame;
        meta.max_frame = max_frame;
    }
    table port_config {
        key = { sm.ingress_port: exact; }
        actions = { set_port_config; }
        default_action = set_port_config(1, 60, 9212);
        size = 512;
    }

    /* ---- L2 ---- */
    action smac_hit(port_t port) {
        meta.l2.src_known = 1;
        meta.l2.src_port = port;
    }
    action smac_miss() {
        meta.l2.src_known = 0;
    }
    table smac {
        key = { hdr.ethernet.src_addr: exact; }
        actions = { smac_hit; smac_miss; }
        default_action = smac_miss();
        support_timeout = true;
        size = MAC_TABLE_SIZE;
    }

    action forward(port_t port) {
        sm.egress_spec = port;
    }
    action forward_lag(bit<16> lag_id) {
        meta.l2.lag_id = lag_id;
    }
    action flood() {
        sm.mcast_grp = meta.l2.flood_group;
        meta.l2.flooded = 1;
    }
    action flood_group(bit<16> group) {
        sm.mcast_grp = group;
        meta.l2.flooded = 1;
    }
    table dmac {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { forward; forward_lag; flood_group; drop; flood; }
        default_action = flood();
        size = MAC_TABLE_SIZE;
    }

    /* LAG members: one action selector group per LAG. */
    action set_egress_port(port_t port) {
        sm.egress_spec = port;
    }
    action_selector(HashAlgorithm.LAG_HASH, 1024, 16) lag_selector;
    table lag_select {
        key = {
            meta.l2.lag_id: exact;
#if defined(LAG_POLICY_IP_DST)
            hdr.ipv4.dst_addr: selector;
#elif defined(LAG_POLICY_SRC)
            hdr.ethernet.src_addr: selector;
            hdr.ipv4.src_addr: selector;
#elif defined(LAG_POLICY_MAC)
            hdr.ethernet.dst_addr: selector;
            hdr.ethernet.src_addr: selector;
#else
            hdr.ethernet.dst_addr: selector;
            hdr.ethernet.src_addr: selector;
            hdr.ipv4.src_addr: selector;
            hdr.ipv4.dst_addr: selector;
            hdr.ipv4.protocol: selector;
#ifndef LAG_HASH_LAYER2_3
            meta.l4_src_port: selector;
            meta.l4_dst_port: selector;
#endif
#endif
        }
        actions = { set_egress_port; }
        implementation = lag_selector;
        size = 256;
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
    action set_next_hop_lag(mac_addr_t dst_mac, mac_addr_t src_mac, bit<16> lag_id) {
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ethernet.src_addr = src_mac;
        meta.l2.lag_id = lag_id;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action route_drop() {
        meta.drop_reason = DROP_NO_ROUTE;
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
        actions = { set_next_hop; set_next_hop_lag; route_drop; }
        /* BMv2 gives tables with an action selector no default action:
         * a miss is handled in the apply block. */
        implementation = ecmp_selector;
        size = 16384;
    }

    /* ---- ACL ---- */
    action permit() {
        acl_counter.count();
    }
    action deny() {
        acl_counter.count();
        meta.drop_reason = DROP_ACL;
    }
    action set_dscp(bit<6> dscp) {
        acl_counter.count();
        hdr.ipv4.dscp = dscp;
    }
    table acl {
        key = {
            sm.ingress_port: ternary;
            hdr.ethernet.ether_type: ternary;
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            hdr.ipv4.protocol: ternary;
            hdr.ipv4.dscp: ternary;
            meta.l4_src_port: range;
            meta.l4_dst_port: range;
        }
        actions = { permit; deny; set_dscp; }
        default_action = permit();
        counters = acl_counter;
        size = 1024;
    }

    /* ---- QoS: the traffic class (egress queue, and the priority PFC
     * pauses) from the DSCP the frame leaves with; none: class 0 ---- */
    action set_traffic_class(bit<3> tc) {
        sm.priority = tc;
    }
    table traffic_class {
        key = { hdr.ipv4.dscp: exact; }
        actions = { set_traffic_class; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        ingress_port_counter.count((bit<32>)sm.ingress_port);
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }

        /* errored frames */
        port_config.apply();
        if (sm.parser_error != error.NoError) {
            meta.drop_reason = DROP_PARSER;
        } else if (sm.checksum_error == 1) {
            meta.drop_reason = DROP_CHECKSUM;
        } else if (sm.packet_length < (bit<32>)meta.min_frame) {
            meta.drop_reason = DROP_UNDERSIZE;
        } else if (sm.packet_length > (bit<32>)meta.max_frame) {
            meta.drop_reason = DROP_OVERSIZE;
        }

        if (meta.drop_reason == DROP_NONE) {
            /* learning: unknown source, or a known one that moved */
            smac.apply();
            if (meta.l2.src_known == 0 || meta.l2.src_port != sm.ingress_port) {
                digest<mac_learn_t>(1, { hdr.ethernet.src_addr, sm.ingress_port });
            }

            router_mac.apply();
            if (meta.is_routed == 1 && hdr.ipv4.isValid()) {
                if (hdr.ipv4.ttl <= 1) {
                    meta.drop_reason = DROP_TTL;
                } else if (!ipv4_lpm.apply().hit) {
                    meta.drop_reason = DROP_NO_ROUTE;
                }
            } else {
                meta.l2.bridged = 1;
                dmac.apply();
                if (meta.l2.flooded == 1 && sm.mcast_grp == 0) {
                    meta.drop_reason = DROP_NO_FLOOD;
                }
            }
        }
        if (meta.drop_reason == DROP_NONE && meta.l2.lag_id != 0) {
            if (!lag_select.apply().hit) {
                meta.drop_reason = DROP_LAG;
            }
        }
        if (meta.drop_reason == DROP_NONE && meta.l2.bridged == 1 && meta.l2.flooded == 0
                && sm.egress_spec == sm.ingress_port) {
            meta.drop_reason = DROP_SAME_PORT;
        }
        if (meta.drop_reason == DROP_NONE && hdr.ipv4.isValid()) {
            acl.apply();
            traffic_class.apply();
        }

        if (meta.drop_reason != DROP_NONE) {
            drop_counter.count(((bit<32>)meta.drop_reason << 9) | (bit<32>)sm.ingress_port);
            mark_to_drop(sm);
        } else {
            telemetry.apply(hdr, meta.tel, sm, meta.l4_src_port, meta.l4_dst_port);
            int_md.apply(hdr, meta.int_md, sm, meta.tel.watch, meta.l4_src_port,
                         meta.l4_dst_port, meta.q);
        }
    }
}

control DutEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    counter(512, CounterType.packets_and_bytes) egress_port_counter;

    TelemetryEgress() telemetry;
    TelemetryReport() report;
    IntMdEgress() int_md;
    IntMdReport() int_md_report;

    apply {
        if (sm.instance_type == INSTANCE_EGRESS_CLONE
                || sm.instance_type == INSTANCE_INGRESS_CLONE) {
            /* a telemetry report copy (ingress clones: an INT-MD sink's) */
            hdr.packet_in.setInvalid();
            if (sm.instance_type == INSTANCE_INGRESS_CLONE) {
                int_md_report.apply(hdr, meta.int_md, meta.tel);
            }
            report.apply(hdr, meta.tel, sm, meta.int_md.report_inner);
        } else {
            /* a flooded copy never goes back where it came from */
            if (meta.l2.flooded == 1 && sm.egress_port == sm.ingress_port) {
                mark_to_drop(sm);
                exit;
            }
            telemetry.apply(hdr, meta.tel, sm, meta.q);
            int_md.apply(hdr, meta.int_md, sm, meta.tel, meta.q, meta.l2.lag_id);
        }
        egress_port_counter.count((bit<32>)sm.egress_port);
        if (sm.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
        }
    }
}

control DutComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
        update_checksum(hdr.report_ipv4.isValid(),
            { hdr.report_ipv4.version, hdr.report_ipv4.ihl, hdr.report_ipv4.dscp,
              hdr.report_ipv4.ecn, hdr.report_ipv4.total_len,
              hdr.report_ipv4.identification, hdr.report_ipv4.flags,
              hdr.report_ipv4.frag_offset, hdr.report_ipv4.ttl,
              hdr.report_ipv4.protocol, hdr.report_ipv4.src_addr,
              hdr.report_ipv4.dst_addr },
            hdr.report_ipv4.hdr_checksum, HashAlgorithm.csum16);
        /* UDP after INT-MD changed it (unless its checksum is 0: unused) */
        update_checksum_with_payload(meta.int_md.udp_checksum == 1,
            { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, 8w0, hdr.ipv4.protocol,
              hdr.udp.length, hdr.l4.src_port, hdr.l4.dst_port, hdr.udp.length,
              INT_MD_CHECKSUM_FIELDS(hdr) },
            hdr.udp.checksum, HashAlgorithm.csum16);
    }
}

control DutDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.report_ethernet);
        pkt.emit(hdr.report_ipv4);
        pkt.emit(hdr.report_udp);
        pkt.emit(hdr.report_group);
        pkt.emit(hdr.report_individual);
        pkt.emit(hdr.report_main);
        pkt.emit(hdr.report_md);
        pkt.emit(hdr.report_queue_ds);
        pkt.emit(hdr.report_tap_ds);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.l4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.int_md);
    }
}

V1Switch(DutParser(), DutVerifyChecksum(), DutIngress(), DutEgress(),
         DutComputeChecksum(), DutDeparser()) main;
