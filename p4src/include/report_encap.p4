/*
 * p4scope: the outer part of an INT Telemetry Report v2.0 (see
 * int_report.p4), built in egress on a report copy of a packet.
 *
 * The caller has filled report_md and its domain-specific block; this
 * control adds Ethernet/IPv4/UDP towards the collector and the group,
 * individual and main report headers, computes every length, numbers the
 * report and cuts the inner packet to the configured snap length (or to
 * inner_bytes when not 0; inner_type: its InType).
 *
 * The controller configures the collector by setting the default action of
 * `report_collector` (a keyless table): set_collector(...). Until it does,
 * report copies are dropped here, so a switch without a collector sends
 * nothing even if a clone session exists.
 */
#ifndef _P4SCOPE_REPORT_ENCAP_P4_
#define _P4SCOPE_REPORT_ENCAP_P4_

control ReportEncap(inout headers_t hdr, inout standard_metadata_t sm,
                    in bit<16> rep_md_bits, in bit<16> domain_id,
                    in bit<16> ds_md_bits, in bit<8> md_words,
                    in bit<1> dropped, in bit<1> congested, in bit<1> tracked,
                    in bit<4> inner_type, in bit<16> inner_bytes) {
    register<bit<32>>(1) report_seq;
    bit<16> snaplen = 0;

    action set_collector(bit<48> switch_mac, bit<48> collector_mac,
                         bit<32> switch_ip, bit<32> collector_ip,
                         bit<16> collector_udp_port, bit<32> node_id,
                         bit<16> snap_bytes) {
        hdr.report_ethernet.setValid();
        hdr.report_ethernet.dst_addr = collector_mac;
        hdr.report_ethernet.src_addr = switch_mac;
        hdr.report_ethernet.ether_type = ETHERTYPE_IPV4;
        hdr.report_ipv4.setValid();
        hdr.report_ipv4.version = 4;
        hdr.report_ipv4.ihl = 5;
        hdr.report_ipv4.dscp = 0;
        hdr.report_ipv4.ecn = 0;
        hdr.report_ipv4.flags = 2;          /* don't fragment */
        hdr.report_ipv4.frag_offset = 0;
        hdr.report_ipv4.ttl = 64;
        hdr.report_ipv4.protocol = IPPROTO_UDP;
        hdr.report_ipv4.src_addr = switch_ip;
        hdr.report_ipv4.dst_addr = collector_ip;
        hdr.report_udp.setValid();
        hdr.report_udp.src_port = 0;
        hdr.report_udp.dst_port = collector_udp_port;
        hdr.report_udp.checksum = 0;
        hdr.report_group.setValid();
        hdr.report_group.ver = REPORT_VERSION;
        hdr.report_group.hw_id = 0;
        hdr.report_group.node_id = node_id;
        snaplen = snap_bytes;
    }

    action no_collector() {
        mark_to_drop(sm);
    }

    table report_collector {
        key = { }
        actions = { set_collector; no_collector; }
        default_action = no_collector();
        size = 1;
    }

    apply {
        report_collector.apply();
        if (hdr.report_ipv4.isValid()) {
            /* the inner packet: at most snaplen bytes, whole words only */
            bit<16> inner = snaplen;
            if (sm.packet_length < (bit<32>)snaplen) {
                inner = (bit<16>)sm.packet_length;
            }
            if (inner_bytes != 0) {
                inner = inner_bytes;
            }
            inner = inner & 0xFFFC;
            bit<16> md_bytes = ((bit<16>)md_words) << 2;
            bit<16> after_udp = 20 + md_bytes + inner;

            bit<32> seq;
            report_seq.read(seq, 0);
            report_seq.write(0, seq + 1);
            hdr.report_group.seq_no = (bit<22>)seq;
            hdr.report_ipv4.identification = (bit<16>)seq;
            hdr.report_ipv4.total_len = 28 + after_udp;
            hdr.report_udp.length = 8 + after_udp;

            hdr.report_individual.setValid();
            hdr.report_individual.rep_type = REPORT_TYPE_INT;
            hdr.report_individual.in_type = inner_type;
            if (inner == 0) {
                hdr.report_individual.in_type = REPORT_INNER_NONE;
            }
            hdr.report_individual.report_length = (bit<8>)((8 + md_bytes + inner) >> 2);
            hdr.report_individual.md_length = md_words;
            hdr.report_individual.d = dropped;
            hdr.report_individual.q = congested;
            hdr.report_individual.f = tracked;
            hdr.report_individual.i = 0;
            hdr.report_individual.rsvd = 0;

            hdr.report_main.setValid();
            hdr.report_main.rep_md_bits = rep_md_bits;
            hdr.report_main.domain_id = domain_id;
            hdr.report_main.ds_md_bits = ds_md_bits;
            hdr.report_main.ds_md_status = 0;

            /* the copy leaves with exactly the report: packet_in (2 bytes)
             * first when it goes to the CPU port */
            bit<32> cut = (bit<32>)(REPORT_OUTER_BYTES + 20 + md_bytes + inner);
            if (sm.egress_port == CPU_PORT) {
                cut = cut + 2;
            }
            truncate(cut);
        }
    }
}

#endif
