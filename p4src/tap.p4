/*
 * p4scope in-path tap: a wire between a traffic source and another device
 * under test, counting and timestamping both directions so that the other
 * DUT's buffer occupancy over time is bytes_to_dut - bytes_from_dut.
 *
 *   tester --(port a)-- TAP --(port b)--> DUT --(port c)-- TAP --(port d)--> tester
 *
 * tap_ports says for each ingress port where its frames go and in which
 * direction they count: 0 = towards the DUT (a -> b), 1 = from the DUT
 * (c -> d). Frames of ports without an entry are dropped.
 *
 * Counts: tap_frames (per direction) and tap_port_frames (per ingress port)
 * are P4Runtime counters; the cumulative bytes/packets of both directions
 * also live in registers, so that a sample can carry both at one instant.
 *
 * Samples: with tap_config set (keyless table, default action
 * tap_sampling), the first frame of every 2^n microsecond interval of each
 * direction, or every frame, is cloned to clone session TAP_REPORT_SESSION
 * and leaves as an INT Telemetry Report v2.0 with the DOMAIN_TAP block:
 * both directions' cumulative counts at that frame's arrival, with its
 * ingress timestamp. The collector (report_collector, as in the DUT) is
 * configured the same way.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/p4scope_tm.p4"
#include "include/report_encap.p4"

const bit<32> TAP_REPORT_SESSION = 500;
#define TAP_FIELD_LIST 1

struct tap_metadata_t {
    @field_list(TAP_FIELD_LIST) bit<8>  direction;
    @field_list(TAP_FIELD_LIST) bit<16> ingress_port;
    @field_list(TAP_FIELD_LIST) bit<16> egress_port;
    @field_list(TAP_FIELD_LIST) bit<64> ingress_ts_ns;
    @field_list(TAP_FIELD_LIST) bit<64> bytes_to_dut;
    @field_list(TAP_FIELD_LIST) bit<64> bytes_from_dut;
    @field_list(TAP_FIELD_LIST) bit<32> pkts_to_dut;
    @field_list(TAP_FIELD_LIST) bit<32> pkts_from_dut;
    @field_list(TAP_FIELD_LIST) bit<32> frame_bytes;
}

struct metadata_t {
    tap_metadata_t tap;
    p4scope_queue_metadata_t q;  /* the engine's ns clock; 0 on BMv2 */
}

parser TapParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control TapVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control TapIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t sm) {
    counter(2, CounterType.packets_and_bytes) tap_frames;
    counter(512, CounterType.packets_and_bytes) tap_port_frames;
    register<bit<64>>(2) tap_bytes;
    register<bit<32>>(2) tap_pkts;
    /* per direction: number + 1 of the interval last sampled */
    register<bit<32>>(2) tap_sample_interval;

    bit<1> sampling = 0;
    bit<1> every_frame = 0;
    bit<8> interval_shift = 0;

    action tap_forward(port_t out_port, bit<8> direction) {
        sm.egress_spec = out_port;
        meta.tap.direction = direction;
    }
    action tap_drop() {
        mark_to_drop(sm);
    }
    table tap_ports {
        key = { sm.ingress_port: exact; }
        actions = { tap_forward; tap_drop; }
        default_action = tap_drop();
        size = 64;
    }

    action tap_sampling(bit<1> all_frames, bit<8> interval_log2_us) {
        sampling = 1;
        every_frame = all_frames;
        interval_shift = interval_log2_us;
    }
    action tap_no_sampling() { }
    table tap_config {
        key = { }
        actions = { tap_sampling; tap_no_sampling; }
        default_action = tap_no_sampling();
        size = 1;
    }

    apply {
        tap_port_frames.count((bit<32>)sm.ingress_port);
        if (tap_ports.apply().hit) {
            bit<32> dir = (bit<32>)meta.tap.direction & 1;
            meta.tap.direction = (bit<8>)dir;
            tap_frames.count(dir);

            bit<64> b0;
            bit<64> b1;
            bit<32> p0;
            bit<32> p1;
            tap_bytes.read(b0, 0);
            tap_bytes.read(b1, 1);
            tap_pkts.read(p0, 0);
            tap_pkts.read(p1, 1);
            if (dir == 0) {
                b0 = b0 + (bit<64>)sm.packet_length;
                p0 = p0 + 1;
                tap_bytes.write(0, b0);
                tap_pkts.write(0, p0);
            } else {
                b1 = b1 + (bit<64>)sm.packet_length;
                p1 = p1 + 1;
                tap_bytes.write(1, b1);
                tap_pkts.write(1, p1);
            }
            meta.tap.bytes_to_dut = b0;
            meta.tap.bytes_from_dut = b1;
            meta.tap.pkts_to_dut = p0;
            meta.tap.pkts_from_dut = p1;
            meta.tap.frame_bytes = sm.packet_length;
            meta.tap.ingress_port = (bit<16>)sm.ingress_port;
            meta.tap.egress_port = (bit<16>)sm.egress_spec;
            meta.tap.ingress_ts_ns = meta.q.ingress_timestamp_ns;
            if (meta.tap.ingress_ts_ns == 0) {
                meta.tap.ingress_ts_ns = (bit<64>)sm.ingress_global_timestamp * 1000;
            }

            tap_config.apply();
            if (sampling == 1) {
                bit<1> sample = every_frame;
                bit<32> now_iv = (bit<32>)(sm.ingress_global_timestamp >> interval_shift) + 1;
                bit<32> last_iv;
                tap_sample_interval.read(last_iv, dir);
                if (now_iv != last_iv) {
                    sample = 1;
                    tap_sample_interval.write(dir, now_iv);
                }
                if (sample == 1) {
                    clone_preserving_field_list(CloneType.I2E, TAP_REPORT_SESSION, TAP_FIELD_LIST);
                }
            }
        }
    }
}

control TapEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t sm) {
    ReportEncap() encap;

    apply {
        if (sm.instance_type == INSTANCE_INGRESS_CLONE) {
            hdr.report_md.setValid();
            hdr.report_md.ingress_port = meta.tap.ingress_port;
            hdr.report_md.egress_port = meta.tap.egress_port;
            hdr.report_md.hop_latency_ns = 0;
            hdr.report_md.queue_id = 0;
            hdr.report_md.queue_occupancy = 0;
            hdr.report_md.ingress_ts_ns = meta.tap.ingress_ts_ns;
            hdr.report_md.egress_ts_ns = meta.tap.ingress_ts_ns;

            hdr.report_tap_ds.setValid();
            hdr.report_tap_ds.event = EVENT_TAP;
            hdr.report_tap_ds.direction = meta.tap.direction;
            hdr.report_tap_ds.reserved = 0;
            hdr.report_tap_ds.bytes_to_dut = meta.tap.bytes_to_dut;
            hdr.report_tap_ds.bytes_from_dut = meta.tap.bytes_from_dut;
            hdr.report_tap_ds.pkts_to_dut = meta.tap.pkts_to_dut;
            hdr.report_tap_ds.pkts_from_dut = meta.tap.pkts_from_dut;
            hdr.report_tap_ds.frame_bytes = meta.tap.frame_bytes;

            encap.apply(hdr, sm, REPORT_MD_BITS, DOMAIN_TAP, TAP_DS_BITS,
                        REPORT_MD_WORDS + TAP_DS_WORDS, 0, 0, 0, REPORT_INNER_ETHERNET, 0);
        }
    }
}

control TapComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.report_ipv4.isValid(),
            { hdr.report_ipv4.version, hdr.report_ipv4.ihl, hdr.report_ipv4.dscp,
              hdr.report_ipv4.ecn, hdr.report_ipv4.total_len,
              hdr.report_ipv4.identification, hdr.report_ipv4.flags,
              hdr.report_ipv4.frag_offset, hdr.report_ipv4.ttl,
              hdr.report_ipv4.protocol, hdr.report_ipv4.src_addr,
              hdr.report_ipv4.dst_addr },
            hdr.report_ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control TapDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.report_ethernet);
        pkt.emit(hdr.report_ipv4);
        pkt.emit(hdr.report_udp);
        pkt.emit(hdr.report_group);
        pkt.emit(hdr.report_individual);
        pkt.emit(hdr.report_main);
        pkt.emit(hdr.report_md);
        pkt.emit(hdr.report_tap_ds);
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(TapParser(), TapVerifyChecksum(), TapIngress(), TapEgress(),
         TapComputeChecksum(), TapDeparser()) main;
