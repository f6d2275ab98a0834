/*
 * p4scope: INT-MD headers (P4.org Applications WG, "In-band Network
 * Telemetry (INT) Dataplane Specification" v2.1), carried over UDP.
 *
 * Encapsulation: INT over UDP with the destination-port convention (spec
 * section "INT over TCP/UDP", option 1, NPT = 1): the source puts the shim
 * and the INT-MD header between the UDP header and the UDP payload, moves
 * the packet's UDP destination port into the shim and writes
 * INT_MD_UDP_PORT there; the sink puts it back and removes everything
 * between the UDP header and the payload. -DINT_MD_UDP_PORT=N picks the
 * port (the spec leaves it to the deployment: IANA has assigned none).
 *
 *   UDP(dst = INT_MD_UDP_PORT) | shim (4 B: type 1, NPT 1, length, port)
 *   | INT-MD header (12 B: ver 2, D E M, Hop ML, remaining hop count,
 *     instruction bitmap, domain id, DS instruction, DS flags)
 *   | metadata stack (newest hop first, Hop ML words each) | UDP payload
 *
 * The shim's length counts the INT-MD header and the stack in 4-byte
 * words (not the shim itself).
 */
#ifndef _P4SCOPE_INT_MD_HEADERS_P4_
#define _P4SCOPE_INT_MD_HEADERS_P4_

#ifndef INT_MD_UDP_PORT
#define INT_MD_UDP_PORT 32767
#endif

const bit<4> INT_TYPE_MD      = 1;   /* shim type: INT-MD header follows */
const bit<2> INT_NPT_UDP_PORT = 1;   /* shim: original UDP destination port kept */
const bit<4> INT_VERSION      = 2;

/* Instruction bitmap (bit 0 = MSB) and the metadata each bit asks for. */
const bit<16> INT_INS_NODE_ID     = 0x8000;  /* 4 B */
const bit<16> INT_INS_L1_PORTS    = 0x4000;  /* 2 + 2 B: ingress, egress port */
const bit<16> INT_INS_HOP_LATENCY = 0x2000;  /* 4 B, ns */
const bit<16> INT_INS_QUEUE       = 0x1000;  /* 1 B queue id + 3 B occupancy (packets) */
const bit<16> INT_INS_INGRESS_TS  = 0x0800;  /* 8 B, ns */
const bit<16> INT_INS_EGRESS_TS   = 0x0400;  /* 8 B, ns */
const bit<16> INT_INS_L2_PORTS    = 0x0200;  /* 4 + 4 B: logical ingress, egress */
const bit<16> INT_INS_TX_UTIL     = 0x0100;  /* 4 B, Mb/s */
const bit<16> INT_INS_BUFFER      = 0x0080;  /* 1 B buffer id + 3 B occupancy (bytes) */
const bit<16> INT_INS_RESERVED    = 0x007E;  /* bits 9..14 */
const bit<16> INT_INS_CHECKSUM_COMPLEMENT = 0x0001;  /* 4 B */

/* Why an INT-MD packet was forwarded without this hop's metadata
 * (int_md_malformed counter index). */
const bit<32> INT_BAD_LENGTH       = 1;  /* shim length < 3 words or past the packet */
const bit<32> INT_BAD_VERSION      = 2;  /* INT-MD header version is not 2 */
const bit<32> INT_HOPS_EXHAUSTED   = 3;  /* remaining hop count 0: E bit set */
const bit<32> INT_BAD_INSTRUCTIONS = 4;  /* reserved bits, or Hop ML not the bitmap's */
const bit<32> INT_NOT_MD           = 5;  /* shim of another type or NPT */

/* UDP length and checksum: what follows hdr.l4 (the ports) in UDP. */
header udp_tail_t {
    bit<16> length;
    bit<16> checksum;
}

header int_shim_t {
    bit<4>  int_type;
    bit<2>  npt;
    bit<2>  rsvd;
    bit<8>  len;            /* words of INT-MD header + stack */
    bit<16> npt_field;      /* NPT 1: the original UDP destination port */
}

header int_md_header_t {
    bit<4>  ver;
    bit<1>  d;              /* sink discards the packet */
    bit<1>  e;              /* a hop found no remaining hop count */
    bit<1>  m;              /* MTU exceeded */
    bit<12> rsvd;
    bit<5>  hop_ml;         /* words each hop adds */
    bit<8>  remaining_hop_cnt;
    bit<16> instructions;
    bit<16> domain_id;
    bit<16> ds_instructions;
    bit<16> ds_flags;
}

/* One hop's metadata: one header per instruction bit, emitted in bit order. */
header int_node_id_t     { bit<32> node_id; }
header int_l1_ports_t    { bit<16> ingress_port; bit<16> egress_port; }
header int_hop_latency_t { bit<32> latency_ns; }
header int_queue_t       { bit<8> queue_id; bit<24> occupancy; }
header int_timestamp_t   { bit<64> ns; }
header int_l2_ports_t    { bit<32> ingress_port; bit<32> egress_port; }
header int_tx_util_t     { bit<32> mbps; }
header int_buffer_t      { bit<8> buffer_id; bit<24> occupancy; }
header int_word_t        { bit<32> value; }

/* The metadata of earlier hops, as one block: at most 252 words (shim
 * length 255 less the INT-MD header's 3). */
header int_stack_t {
    varbit<8064> words;
}

struct int_md_headers_t {
    int_shim_t        shim;
    int_md_header_t   md;
    int_node_id_t     node_id;
    int_l1_ports_t    l1_ports;
    int_hop_latency_t hop_latency;
    int_queue_t       queue;
    int_timestamp_t   ingress_ts;
    int_timestamp_t   egress_ts;
    int_l2_ports_t    l2_ports;
    int_tx_util_t     tx_util;
    int_buffer_t      buffer;
    int_word_t        checksum_complement;
    int_stack_t       stack;
}

#endif
