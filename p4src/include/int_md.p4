/*
 * p4scope: INT-MD (INT spec v2.1, embedded metadata) on the reference DUT:
 * source, transit and sink, over UDP (int_md_headers.p4 has the format).
 *
 *   IntMdParser   - UDP length/checksum; INT-MD behind UDP port
 *                   INT_MD_UDP_PORT: shim, header, the stack of earlier hops
 *   IntMdIngress  - the switch's role for the packet, from the controller's
 *                   tables: int_md_config (node id: INT-MD on at all),
 *                   int_md_watchlist (source: flows to start INT-MD on),
 *                   int_md_sink_ports (sink: egress ports leaving the INT
 *                   domain); starts the header (source), checks it
 *                   (transit), strips it and has it reported (sink)
 *   IntMdEgress   - pushes this hop's metadata (source and transit), keeps
 *                   the transmit byte counts behind tx utilisation
 *   IntMdReport   - the sink's report copy: Telemetry Report v2.0 whose
 *                   inner packet is the received IPv4 packet up to the end
 *                   of the INT-MD stack (InType 4), handed to
 *                   TelemetryReport (telemetry.p4) for the outer headers
 *
 * The sink reports each INT-MD packet twice, as Telemetry Report v2.0
 * allows: the stack of the hops before it (copy made at ingress, from the
 * packet as received: RepMdBits ports and ingress timestamp, the values it
 * cannot know there all-ones) and its own hop (the INT-XD postcard of
 * telemetry.p4, made at egress). Both carry the same ingress port and
 * timestamp; the collector joins them.
 *
 * Malformed INT-MD is forwarded without this hop's metadata and counted
 * (int_md_malformed, index INT_BAD_*): a shim length below 3 words or
 * beyond the packet, an INT-MD version other than 2, a remaining hop count
 * of 0 (the E bit is set), reserved instruction bits or a Hop ML that is
 * not the instruction bitmap's, a shim of another type or NPT. A sink
 * strips what its shim delimits (any version) and reports version 2 only.
 * Nothing here drops a packet, except a sink honouring the D bit.
 *
 * Only v1model metadata and BMv2 externs: timestamps in ns come from
 * p4scope_tm.p4 where the target fills them, else v1model's microsecond
 * clocks x 1000 (telemetry.p4's rule); buffer occupancy only from p4scope's
 * traffic manager (all-ones elsewhere, "not available" in the spec).
 * With no int_md_config entry the DUT forwards INT-MD packets unchanged.
 */
#ifndef _P4SCOPE_INT_MD_P4_
#define _P4SCOPE_INT_MD_P4_

#define INT_MD_FIELD_LIST 2
#define INT_MD_PORTS 512

struct int_md_metadata_t {
    bit<1>  present;        /* UDP to INT_MD_UDP_PORT */
    bit<1>  stack_ok;       /* the shim's length fits: stack parsed (or empty) */
    bit<1>  enabled;        /* int_md_config set */
    bit<32> node_id;
    bit<8>  util_shift;     /* tx utilisation over windows of 2^n ns */
    bit<1>  source;
    bit<1>  sink;
    bit<1>  push;           /* egress adds this hop's metadata */
    bit<1>  modified;       /* INT-MD bytes added, removed or changed */
    bit<1>  udp_checksum;   /* ... and the UDP checksum is in use: recompute */
    @field_list(INT_MD_FIELD_LIST) bit<16> report_inner;   /* report copy: inner bytes */
    @field_list(INT_MD_FIELD_LIST) bit<16> report_ingress_port;
    @field_list(INT_MD_FIELD_LIST) bit<16> report_egress_port;
    @field_list(INT_MD_FIELD_LIST) bit<64> report_ingress_ts_ns;
}

/* Words of metadata per hop that an instruction bitmap asks for. */
#define INT_MD_WORDS(ins) ((bit<5>)ins[15:15] + (bit<5>)ins[14:14] + (bit<5>)ins[13:13] \
    + (bit<5>)ins[12:12] + ((bit<5>)ins[11:11] << 1) + ((bit<5>)ins[10:10] << 1) \
    + ((bit<5>)ins[9:9] << 1) + (bit<5>)ins[8:8] + (bit<5>)ins[7:7] + (bit<5>)ins[0:0])

/* Every INT-MD field in wire order, for the UDP checksum's field list
 * (BMv2 leaves invalid headers' fields out of a checksum). */
#define INT_MD_CHECKSUM_FIELDS(h) \
    h.int_md.shim.int_type, h.int_md.shim.npt, h.int_md.shim.rsvd, h.int_md.shim.len, \
    h.int_md.shim.npt_field, \
    h.int_md.md.ver, h.int_md.md.d, h.int_md.md.e, h.int_md.md.m, h.int_md.md.rsvd, \
    h.int_md.md.hop_ml, h.int_md.md.remaining_hop_cnt, h.int_md.md.instructions, \
    h.int_md.md.domain_id, h.int_md.md.ds_instructions, h.int_md.md.ds_flags, \
    h.int_md.node_id.node_id, \
    h.int_md.l1_ports.ingress_port, h.int_md.l1_ports.egress_port, \
    h.int_md.hop_latency.latency_ns, \
    h.int_md.queue.queue_id, h.int_md.queue.occupancy, \
    h.int_md.ingress_ts.ns, h.int_md.egress_ts.ns, \
    h.int_md.l2_ports.ingress_port, h.int_md.l2_ports.egress_port, \
    h.int_md.tx_util.mbps, \
    h.int_md.buffer.buffer_id, h.int_md.buffer.occupancy, \
    h.int_md.checksum_complement.value, \
    h.int_md.stack.words

/* Called after the UDP ports (hdr.l4) of an IPv4 packet without options. */
parser IntMdParser(packet_in pkt, inout headers_t hdr, inout int_md_metadata_t im,
                   in bit<32> packet_length) {
    /* bytes after the UDP header (Ethernet 14 + IPv4 20 + UDP 8 before),
     * checked before every extract: a short packet is forwarded, never a
     * parser error */
    bit<32> room;
    bit<32> stack_bytes;

    state start {
        room = packet_length - 42;
        transition select(room[31:31]) {
            1: accept;
            default: parse_udp_tail;
        }
    }
    state parse_udp_tail {
        pkt.extract(hdr.udp);
        transition select(hdr.l4.dst_port) {
            INT_MD_UDP_PORT: int_md_present;
            default: accept;
        }
    }
    state int_md_present {
        im.present = 1;
        room = room - 16;
        transition select(room[31:31]) {
            1: accept;                          /* no room for shim + header */
            default: parse_shim;
        }
    }
    state parse_shim {
        pkt.extract(hdr.int_md.shim);
        transition select(hdr.int_md.shim.int_type, hdr.int_md.shim.npt) {
            (INT_TYPE_MD, INT_NPT_UDP_PORT): parse_md;
            default: accept;
        }
    }
    state parse_md {
        pkt.extract(hdr.int_md.md);
        stack_bytes = ((bit<32>)hdr.int_md.shim.len << 2) - 12;
        room = room - stack_bytes;
        transition select(stack_bytes[31:31], room[31:31], hdr.int_md.shim.len) {
            (1, _, _): accept;                  /* length below 3 words */
            (0, 1, _): accept;                  /* longer than the packet */
            (0, 0, 3): empty_stack;
            default: parse_stack;
        }
    }
    state empty_stack {
        im.stack_ok = 1;
        transition accept;
    }
    state parse_stack {
        pkt.extract(hdr.int_md.stack, stack_bytes << 3);
        im.stack_ok = 1;
        transition accept;
    }
}

control IntMdIngress(inout headers_t hdr, inout int_md_metadata_t im,
                     inout standard_metadata_t sm, inout bit<1> postcard,
                     in bit<16> l4_src_port, in bit<16> l4_dst_port,
                     in p4scope_queue_metadata_t q) {
    /* INT-MD packets forwarded without this hop's metadata, by reason */
    counter(8, CounterType.packets) int_md_malformed;

    bit<8>  source_hops = 0;
    bit<16> source_instructions = 0;

    /* INT-MD on this switch, and its node id in the metadata it adds;
     * util_window_log2_ns: tx utilisation averaged over 2^n ns */
    action int_md_node(bit<32> node_id, bit<8> util_window_log2_ns) {
        im.enabled = 1;
        im.node_id = node_id;
        im.util_shift = util_window_log2_ns;
    }
    action int_md_off() { }
    table int_md_config {
        key = { }
        actions = { int_md_node; int_md_off; }
        default_action = int_md_off();
        size = 1;
    }

    /* Source: UDP flows that enter the INT domain here get the INT-MD
     * header with `instructions` and at most `max_hops` hops of metadata
     * (this one included). */
    action int_md_source(bit<8> max_hops, bit<16> instructions) {
        im.source = 1;
        source_hops = max_hops;
        source_instructions = instructions & ~INT_INS_RESERVED;
    }
    table int_md_watchlist {
        key = {
            sm.ingress_port: ternary;
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            l4_src_port: range @name("l4_src_port");
            l4_dst_port: range @name("l4_dst_port");
        }
        actions = { int_md_source; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    /* Sink: egress ports where packets leave the INT domain. */
    action int_md_sink() {
        im.sink = 1;
    }
    table int_md_sink_ports {
        key = { sm.egress_spec: exact @name("egress_port"); }
        actions = { int_md_sink; NoAction; }
        default_action = NoAction();
        size = INT_MD_PORTS;
    }

    apply {
        bit<32> bad = 0;
        /* the clock of telemetry.p4's reports: ns, or BMv2's us x 1000 */
        bit<64> ingress_ts_ns = q.ingress_timestamp_ns;
        if (ingress_ts_ns == 0) {
            ingress_ts_ns = (bit<64>)sm.ingress_global_timestamp * 1000;
        }
        int_md_config.apply();
        if (im.enabled == 1 && hdr.udp.isValid()) {
            if (sm.mcast_grp == 0) {
                int_md_sink_ports.apply();
            }
            if (im.present == 0) {
                /* a source that is also the sink adds nothing */
                if (im.sink == 0) {
                    int_md_watchlist.apply();
                }
                if (im.source == 1) {
                    bit<5> words = INT_MD_WORDS(source_instructions);
                    hdr.int_md.shim.setValid();
                    hdr.int_md.shim.int_type = INT_TYPE_MD;
                    hdr.int_md.shim.npt = INT_NPT_UDP_PORT;
                    hdr.int_md.shim.rsvd = 0;
                    hdr.int_md.shim.len = 3;
                    hdr.int_md.shim.npt_field = hdr.l4.dst_port;
                    hdr.l4.dst_port = INT_MD_UDP_PORT;
                    hdr.int_md.md.setValid();
                    hdr.int_md.md.ver = INT_VERSION;
                    hdr.int_md.md.d = 0;
                    hdr.int_md.md.e = 0;
                    hdr.int_md.md.m = 0;
                    hdr.int_md.md.rsvd = 0;
                    hdr.int_md.md.hop_ml = words;
                    hdr.int_md.md.remaining_hop_cnt = source_hops;
                    hdr.int_md.md.instructions = source_instructions;
                    hdr.int_md.md.domain_id = 0;
                    hdr.int_md.md.ds_instructions = 0;
                    hdr.int_md.md.ds_flags = 0;
                    hdr.ipv4.total_len = hdr.ipv4.total_len + 16;
                    hdr.udp.length = hdr.udp.length + 16;
                    if (source_hops != 0) {
                        hdr.int_md.md.remaining_hop_cnt = source_hops - 1;
                        im.push = 1;
                    }
                    im.modified = 1;
                }
            } else if (!hdr.int_md.shim.isValid()) {
                bad = INT_BAD_LENGTH;
            } else if (!hdr.int_md.md.isValid()) {
                bad = INT_NOT_MD;
            } else if (im.stack_ok == 0) {
                bad = INT_BAD_LENGTH;
            } else if (im.sink == 1) {
                /* report (version 2 only), then strip what the shim delimits */
                if (hdr.int_md.md.ver == INT_VERSION) {
                    im.report_inner = 32 + ((bit<16>)hdr.int_md.shim.len << 2);
                    im.report_ingress_port = (bit<16>)sm.ingress_port;
                    im.report_egress_port = (bit<16>)sm.egress_spec;
                    im.report_ingress_ts_ns = ingress_ts_ns;
                    clone_preserving_field_list(CloneType.I2E, TEL_REPORT_SESSION,
                                                INT_MD_FIELD_LIST);
                    postcard = 1;               /* this hop's own report */
                    if (hdr.int_md.md.d == 1) {
                        mark_to_drop(sm);
                    }
                } else {
                    bad = INT_BAD_VERSION;
                }
                bit<16> int_bytes = ((bit<16>)hdr.int_md.shim.len << 2) + 4;
                hdr.ipv4.total_len = hdr.ipv4.total_len - int_bytes;
                hdr.udp.length = hdr.udp.length - int_bytes;
                hdr.l4.dst_port = hdr.int_md.shim.npt_field;
                hdr.int_md.shim.setInvalid();
                hdr.int_md.md.setInvalid();
                hdr.int_md.stack.setInvalid();
                im.modified = 1;
            } else if (hdr.int_md.md.ver != INT_VERSION) {
                bad = INT_BAD_VERSION;
            } else if (hdr.int_md.md.remaining_hop_cnt == 0) {
                bad = INT_HOPS_EXHAUSTED;
                if (hdr.int_md.md.e == 0) {
                    hdr.int_md.md.e = 1;
                    im.modified = 1;
                }
            } else if ((hdr.int_md.md.instructions & INT_INS_RESERVED) != 0
                       || hdr.int_md.md.hop_ml != INT_MD_WORDS(hdr.int_md.md.instructions)) {
                bad = INT_BAD_INSTRUCTIONS;
            } else {
                hdr.int_md.md.remaining_hop_cnt = hdr.int_md.md.remaining_hop_cnt - 1;
                im.push = 1;
                im.modified = 1;
            }
            if (bad != 0) {
                int_md_malformed.count(bad);
            }
            if (im.modified == 1 && hdr.udp.checksum != 0) {
                im.udp_checksum = 1;
            }
        }
    }
}

control IntMdEgress(inout headers_t hdr, in int_md_metadata_t im,
                    in standard_metadata_t sm, in telemetry_metadata_t tel,
                    in p4scope_queue_metadata_t q, in bit<16> lag_id) {
    /* Per egress port: the window (egress time >> util_shift) whose bytes
     * int_tx_bytes counts, and the bytes of the window before it. */
    register<bit<32>>(INT_MD_PORTS) int_tx_window;
    register<bit<32>>(INT_MD_PORTS) int_tx_bytes;
    register<bit<32>>(INT_MD_PORTS) int_tx_last_bytes;

    apply {
        if (im.enabled == 1) {
            bit<32> port = (bit<32>)sm.egress_port;
            bit<32> now_win = (bit<32>)(tel.egress_ts_ns >> im.util_shift);
            bit<32> win;
            bit<32> sent;
            bit<32> last;
            int_tx_window.read(win, port);
            int_tx_bytes.read(sent, port);
            int_tx_last_bytes.read(last, port);
            if (now_win != win) {
                if (now_win == win + 1) {
                    last = sent;
                } else {
                    last = 0;
                }
                sent = 0;
                int_tx_window.write(port, now_win);
                int_tx_last_bytes.write(port, last);
            }
            int_tx_bytes.write(port, sent + sm.packet_length);

            if (im.push == 1) {
                bit<16> ins = hdr.int_md.md.instructions;
                if ((ins & INT_INS_NODE_ID) != 0) {
                    hdr.int_md.node_id.setValid();
                    hdr.int_md.node_id.node_id = im.node_id;
                }
                if ((ins & INT_INS_L1_PORTS) != 0) {
                    hdr.int_md.l1_ports.setValid();
                    hdr.int_md.l1_ports.ingress_port = (bit<16>)sm.ingress_port;
                    hdr.int_md.l1_ports.egress_port = (bit<16>)sm.egress_port;
                }
                if ((ins & INT_INS_HOP_LATENCY) != 0) {
                    hdr.int_md.hop_latency.setValid();
                    hdr.int_md.hop_latency.latency_ns = tel.hop_latency_ns;
                }
                if ((ins & INT_INS_QUEUE) != 0) {
                    hdr.int_md.queue.setValid();
                    hdr.int_md.queue.queue_id = tel.qid;
                    hdr.int_md.queue.occupancy = (bit<24>)tel.enq_qdepth;
                }
                if ((ins & INT_INS_INGRESS_TS) != 0) {
                    hdr.int_md.ingress_ts.setValid();
                    hdr.int_md.ingress_ts.ns = tel.ingress_ts_ns;
                }
                if ((ins & INT_INS_EGRESS_TS) != 0) {
                    hdr.int_md.egress_ts.setValid();
                    hdr.int_md.egress_ts.ns = tel.egress_ts_ns;
                }
                if ((ins & INT_INS_L2_PORTS) != 0) {
                    /* logical ports: a LAG as 0x10000 + its id */
                    hdr.int_md.l2_ports.setValid();
                    hdr.int_md.l2_ports.ingress_port = (bit<32>)sm.ingress_port;
                    hdr.int_md.l2_ports.egress_port = (bit<32>)sm.egress_port;
                    if (lag_id != 0) {
                        hdr.int_md.l2_ports.egress_port = 0x10000 | (bit<32>)lag_id;
                    }
                }
                if ((ins & INT_INS_TX_UTIL) != 0) {
                    /* Mb/s over the last whole window: bits per 2^shift ns x 1000 */
                    bit<64> mbps = ((bit<64>)last * 8000) >> im.util_shift;
                    hdr.int_md.tx_util.setValid();
                    hdr.int_md.tx_util.mbps = 0xFFFFFFFE;
                    if (mbps < 0xFFFFFFFE) {
                        hdr.int_md.tx_util.mbps = (bit<32>)mbps;
                    }
                }
                if ((ins & INT_INS_BUFFER) != 0) {
                    /* bytes in the shared buffer: p4scope's TM only */
                    hdr.int_md.buffer.setValid();
                    hdr.int_md.buffer.buffer_id = 0xFF;
                    hdr.int_md.buffer.occupancy = 0xFFFFFF;
                    if (q.egress_timestamp_ns != 0) {
                        hdr.int_md.buffer.buffer_id = 0;
                        hdr.int_md.buffer.occupancy = 0xFFFFFE;
                        if (tel.buffer_bytes < 0xFFFFFE) {
                            hdr.int_md.buffer.occupancy = (bit<24>)tel.buffer_bytes;
                        }
                    }
                }
                if ((ins & INT_INS_CHECKSUM_COMPLEMENT) != 0) {
                    /* the UDP checksum itself is updated instead */
                    hdr.int_md.checksum_complement.setValid();
                    hdr.int_md.checksum_complement.value = 0xFFFFFFFF;
                }
                bit<16> added = (bit<16>)hdr.int_md.md.hop_ml << 2;
                hdr.int_md.shim.len = hdr.int_md.shim.len + (bit<8>)hdr.int_md.md.hop_ml;
                hdr.ipv4.total_len = hdr.ipv4.total_len + added;
                hdr.udp.length = hdr.udp.length + added;
            }
        }
    }
}

/* On the sink's report copy (instance INGRESS_CLONE): what the report's
 * baseline metadata can say at the sink's ingress, as TelemetryReport takes
 * it; all-ones: not available. */
control IntMdReport(inout headers_t hdr, in int_md_metadata_t im,
                    inout telemetry_metadata_t tel) {
    apply {
        hdr.ethernet.setInvalid();              /* inner packet: from IPv4 */
        tel.ingress_port = im.report_ingress_port;
        tel.egress_port = im.report_egress_port;
        tel.hop_latency_ns = 0xFFFFFFFF;
        tel.qid = 0xFF;
        tel.enq_qdepth = 0xFFFFFF;
        tel.ingress_ts_ns = im.report_ingress_ts_ns;
        tel.egress_ts_ns = 0xFFFFFFFFFFFFFFFF;
        tel.tracked = 1;
    }
}

#endif
