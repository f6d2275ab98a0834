/*
 * p4scope: INT Telemetry Report v2.0 headers (P4.org Applications WG,
 * "Telemetry Report Format Specification" v2.0) and p4scope's own
 * domain-specific metadata blocks.
 *
 * A report leaves the switch as one UDP datagram:
 *
 *   Ethernet | IPv4 | UDP(dst = collector port)
 *   | report group header     (8 B: ver 2, hw_id, seq, node id)
 *   | individual report header (4 B: RepType 1 = INT, InType, lengths, D/Q/F/I)
 *   | individual report main   (8 B: RepMdBits, domain id, DSMdBits, DSMdStatus)
 *   | baseline metadata        (RepMdBits, see REPORT_MD_BITS)
 *   | domain-specific metadata (one of the p4scope blocks below)
 *   | the first bytes of the packet the report is about (InType 3, Ethernet)
 *
 * Lengths are in 4-byte words; the inner packet is cut to a multiple of 4
 * bytes, so Report Length covers the whole report exactly.  Timestamps are
 * nanoseconds (v1model's microsecond clocks times 1000 where the target
 * gives nothing finer); queue occupancy in the baseline metadata is in
 * packets (enq_qdepth); bytes are in the domain-specific block.
 */
#ifndef _P4SCOPE_INT_REPORT_P4_
#define _P4SCOPE_INT_REPORT_P4_

const bit<4>  REPORT_VERSION       = 2;
const bit<4>  REPORT_TYPE_INT      = 1;
const bit<4>  REPORT_INNER_NONE    = 0;
const bit<4>  REPORT_INNER_ETHERNET = 3;
const bit<4>  REPORT_INNER_IPV4    = 4;

/* RepMdBits (bit 0 is the most significant): bit 1 ingress/egress port ids,
 * bit 2 hop latency, bit 3 queue id + occupancy, bit 4 ingress timestamp,
 * bit 5 egress timestamp. 28 bytes = 7 words. */
const bit<16> REPORT_MD_BITS  = 0x7C00;
const bit<8>  REPORT_MD_WORDS = 7;

/* p4scope's INT domains: the queue instrument of the reference DUT and the
 * in-path tap. Each has a fixed block of domain-specific metadata. */
const bit<16> DOMAIN_QUEUE = 0x5051;   /* "PQ" */
const bit<16> DOMAIN_TAP   = 0x5054;   /* "PT" */
const bit<16> QUEUE_DS_BITS  = 0xFFF0; /* 12 words */
const bit<8>  QUEUE_DS_WORDS = 12;
const bit<16> TAP_DS_BITS    = 0xFF00; /* 8 words */
const bit<8>  TAP_DS_WORDS   = 8;

/* Why a report was sent: the event bits of a domain-specific block (one
 * report may carry several). */
const bit<8> EVENT_POSTCARD    = 0x01; /* INT-XD postcard of a watched flow */
const bit<8> EVENT_BURST_START = 0x02; /* queue crossed the burst threshold */
const bit<8> EVENT_BURST_PKT   = 0x04; /* enqueued while the burst lasts */
const bit<8> EVENT_BURST_END   = 0x08; /* queue fell below the low threshold */
const bit<8> EVENT_INTERVAL    = 0x10; /* occupancy maxima of an interval */
const bit<8> EVENT_TAP         = 0x20; /* tap sample: cumulative counts */

/* Bytes after the outer UDP header and before the inner packet: group 8 +
 * individual 4 + main 8 + baseline 28 + domain-specific block. */
const bit<16> REPORT_QUEUE_HDR_BYTES = 48 + 48;
const bit<16> REPORT_TAP_HDR_BYTES   = 48 + 32;
/* Outer Ethernet + IPv4 + UDP. */
const bit<16> REPORT_OUTER_BYTES = 14 + 20 + 8;

header report_ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header report_ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header report_udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

/* Telemetry Report Group Header (8 bytes). */
header report_group_t {
    bit<4>  ver;
    bit<6>  hw_id;
    bit<22> seq_no;
    bit<32> node_id;
}

/* Individual Report Header (4 bytes). */
header report_individual_t {
    bit<4> rep_type;
    bit<4> in_type;
    bit<8> report_length;   /* words after this header */
    bit<8> md_length;       /* words of baseline + domain-specific metadata */
    bit<1> d;               /* dropped */
    bit<1> q;               /* congested queue */
    bit<1> f;               /* tracked flow */
    bit<1> i;               /* intermediate */
    bit<4> rsvd;
}

/* Individual Report Main Contents for RepType INT (8 bytes). */
header report_main_t {
    bit<16> rep_md_bits;
    bit<16> domain_id;
    bit<16> ds_md_bits;
    bit<16> ds_md_status;
}

/* Baseline metadata for REPORT_MD_BITS (28 bytes). */
header report_md_t {
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<32> hop_latency_ns;
    bit<8>  queue_id;
    bit<24> queue_occupancy;    /* packets, at enqueue */
    bit<64> ingress_ts_ns;
    bit<64> egress_ts_ns;
}

/* DOMAIN_QUEUE block (48 bytes). */
header report_queue_ds_t {
    bit<8>  events;             /* EVENT_* bits */
    bit<8>  flags;              /* bit 0: byte counts are valid (p4scope TM) */
    bit<16> frame_bytes;        /* length of the reported packet */
    bit<32> enq_qdepth;         /* packets in the queue ahead of this one */
    bit<32> deq_qdepth;         /* packets left behind at dequeue */
    bit<32> enq_qbytes;
    bit<32> deq_qbytes;
    bit<32> buffer_bytes;
    bit<32> queue_time_ns;      /* time this packet spent in the queue */
    bit<32> burst_id;           /* per egress port, counts bursts from 1 */
    bit<32> burst_pkts;         /* packets of this burst so far, this one included */
    bit<32> interval_max_pkts;  /* EVENT_INTERVAL: maxima of interval `interval` */
    bit<32> interval_max_bytes;
    bit<32> interval;           /* interval number: egress time >> shift (us) */
}

/* DOMAIN_TAP block (32 bytes): cumulative counts of both directions at the
 * moment the sampled packet crossed the tap. */
header report_tap_ds_t {
    bit<8>  event;
    bit<8>  direction;          /* 0: towards the DUT, 1: from the DUT */
    bit<16> reserved;
    bit<64> bytes_to_dut;
    bit<64> bytes_from_dut;
    bit<32> pkts_to_dut;
    bit<32> pkts_from_dut;
    bit<32> frame_bytes;        /* length of the sampled frame */
}

#endif
