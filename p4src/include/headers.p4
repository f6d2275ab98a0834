/* p4scope: protocol headers and metadata shared by the p4src/ programs. */
#ifndef _P4SCOPE_HEADERS_P4_
#define _P4SCOPE_HEADERS_P4_

#include "int_report.p4"
#include "int_md_headers.p4"

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<9>  port_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_TCP = 6;
const bit<8>  IPPROTO_UDP = 17;
const port_t  CPU_PORT = 255;

/* standard_metadata.instance_type values of simple_switch */
const bit<32> INSTANCE_NORMAL        = 0;
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE  = 2;
const bit<32> INSTANCE_REPLICATION   = 5;

/* Malformed IPv4 headers (the parser's own errors are core.p4's). */
error { BadIPv4Header }

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

/* The first 4 bytes of TCP and UDP: enough for a 5-tuple. */
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

@controller_header("packet_in")
header packet_in_t {
    port_t  ingress_port;
    bit<7>  _pad;
}

@controller_header("packet_out")
header packet_out_t {
    port_t  egress_port;
    bit<7>  _pad;
}

/* Emitted in this order: packet_in, the telemetry report headers (valid
 * only on report copies), then the packet's own headers. */
struct headers_t {
    packet_out_t        packet_out;
    packet_in_t         packet_in;
    report_ethernet_t   report_ethernet;
    report_ipv4_t       report_ipv4;
    report_udp_t        report_udp;
    report_group_t      report_group;
    report_individual_t report_individual;
    report_main_t       report_main;
    report_md_t         report_md;
    report_queue_ds_t   report_queue_ds;
    report_tap_ds_t     report_tap_ds;
    ethernet_t          ethernet;
    ipv4_t              ipv4;
    l4_ports_t          l4;
    udp_tail_t          udp;        /* UDP only */
    int_md_headers_t    int_md;     /* INT-MD over UDP (int_md.p4) */
}

/* Digest sent to the controller when a source MAC is not known yet. */
struct mac_learn_t {
    mac_addr_t src_addr;
    port_t     ingress_port;
}

#endif
