/*
 * p4scope telemetry instrument: queue measurements of the reference DUT,
 * switched on and tuned by the controller through tables.
 *
 *   TelemetryIngress  - INT-XD flow watchlist (tel_watchlist); offered
 *                       load per (egress port, ingress port) (tel_offered).
 *   TelemetryEgress   - per packet: queue depth at enqueue and dequeue,
 *                       time in queue, delivered load per (egress port,
 *                       ingress port) (tel_delivered); per egress port with
 *                       a tel_port entry: an occupancy histogram
 *                       (tel_occupancy_hist), occupancy maxima per interval
 *                       (registers, exported as EVENT_INTERVAL reports) and
 *                       burst detection with a threshold and hysteresis
 *                       (EVENT_BURST_START / _PKT / _END reports for the
 *                       packets that leave while the burst lasts).
 *   TelemetryReport   - on the report copy: INT Telemetry Report v2.0 with
 *                       the DOMAIN_QUEUE block (int_report.p4).
 *
 * Everything a controller needs is readable on real BMv2 too: counters over
 * P4Runtime, registers through the reports they trigger (PI cannot read
 * registers; p4scope's switch can). Reports are egress-to-egress clones to
 * clone session TEL_REPORT_SESSION, which the controller points at the
 * collector's port (or the CPU port: the report then arrives as a
 * packet-in).
 *
 * Offered minus delivered per (egress, ingress) pair is what the traffic
 * manager dropped of each ingress port's traffic on that egress port.
 *
 * Egress runs when a packet is dequeued, so the queue is measured there
 * by what it holds at that instant: deq_qdepth / deq_qbytes, what is left
 * behind the leaving packet. Bursts start at the first dequeue that leaves
 * at least burst_threshold behind and end at the first that leaves less
 * than burst_end_threshold: both are seen when they happen, also when no
 * traffic follows a burst. Interval maxima take the queue just before the
 * dequeue (what is left plus the leaving packet): occupancy only grows
 * between two dequeues, so these are the true maxima, timed by the egress
 * clock at the dequeue that follows them. (The depth a packet found at
 * enqueue is seen only when it leaves, a queueing delay later, and under
 * per-ingress arbitration not in arrival order: a burst would never end
 * and its maxima would be late.) The histogram counts the depth each
 * packet found on arrival.
 *
 * Byte counts come from p4scope_tm.p4 (0 on real BMv2); a port configured
 * with bytes_mode = 1 measures depth in bytes, otherwise in packets.
 * Ports >= TEL_MAX_PORTS are not measured.
 */
#ifndef _P4SCOPE_TELEMETRY_P4_
#define _P4SCOPE_TELEMETRY_P4_

#include "p4scope_tm.p4"

#ifndef TEL_PORT_BITS
#define TEL_PORT_BITS 6
#endif
#define TEL_MAX_PORTS (1 << TEL_PORT_BITS)
#define TEL_PAIRS (1 << (2 * TEL_PORT_BITS))
#define TEL_HIST_BITS 4
#define TEL_HIST_BINS (1 << TEL_HIST_BITS)
#define TEL_FIELD_LIST 1

const bit<32> TEL_REPORT_SESSION = 500;

/* What a report copy needs from the packet it reports (preserved by the
 * egress-to-egress clone through field list TEL_FIELD_LIST). */
struct telemetry_metadata_t {
    bit<1> watch;                                   /* tel_watchlist hit */
    @field_list(TEL_FIELD_LIST) bit<8>  events;
    @field_list(TEL_FIELD_LIST) bit<8>  flags;
    @field_list(TEL_FIELD_LIST) bit<1>  congested;
    @field_list(TEL_FIELD_LIST) bit<1>  tracked;
    @field_list(TEL_FIELD_LIST) bit<16> ingress_port;
    @field_list(TEL_FIELD_LIST) bit<16> egress_port;
    @field_list(TEL_FIELD_LIST) bit<8>  qid;
    @field_list(TEL_FIELD_LIST) bit<32> enq_qdepth;
    @field_list(TEL_FIELD_LIST) bit<32> deq_qdepth;
    @field_list(TEL_FIELD_LIST) bit<32> enq_qbytes;
    @field_list(TEL_FIELD_LIST) bit<32> deq_qbytes;
    @field_list(TEL_FIELD_LIST) bit<32> buffer_bytes;
    @field_list(TEL_FIELD_LIST) bit<32> queue_time_ns;
    @field_list(TEL_FIELD_LIST) bit<32> hop_latency_ns;
    @field_list(TEL_FIELD_LIST) bit<64> ingress_ts_ns;
    @field_list(TEL_FIELD_LIST) bit<64> egress_ts_ns;
    @field_list(TEL_FIELD_LIST) bit<32> burst_id;
    @field_list(TEL_FIELD_LIST) bit<32> burst_pkts;
    @field_list(TEL_FIELD_LIST) bit<32> interval_max_pkts;
    @field_list(TEL_FIELD_LIST) bit<32> interval_max_bytes;
    @field_list(TEL_FIELD_LIST) bit<32> interval;
}

control TelemetryIngress(inout headers_t hdr, inout telemetry_metadata_t tel,
                         inout standard_metadata_t sm,
                         in bit<16> l4_src_port, in bit<16> l4_dst_port) {
    /* Unicast traffic each ingress port offers each egress port, counted
     * after the forwarding decision, before the traffic manager. Index:
     * egress_port << TEL_PORT_BITS | ingress_port. */
    counter(TEL_PAIRS, CounterType.packets_and_bytes) tel_offered;

    action watch() {
        tel.watch = 1;
    }

    /* INT-XD flow watchlist: every packet of a matching flow leaves a
     * postcard (EVENT_POSTCARD report) at egress. */
    table tel_watchlist {
        key = {
            sm.ingress_port: ternary;
            hdr.ipv4.src_addr: ternary;
            hdr.ipv4.dst_addr: ternary;
            hdr.ipv4.protocol: ternary;
            l4_src_port: range @name("l4_src_port");
            l4_dst_port: range @name("l4_dst_port");
        }
        actions = { watch; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        if (hdr.ipv4.isValid()) {
            tel_watchlist.apply();
        }
        if (sm.mcast_grp == 0 && sm.egress_spec < TEL_MAX_PORTS
                && sm.ingress_port < TEL_MAX_PORTS) {
            tel_offered.count(((bit<32>)sm.egress_spec << TEL_PORT_BITS)
                              | (bit<32>)sm.ingress_port);
        }
    }
}

control TelemetryEgress(inout headers_t hdr, inout telemetry_metadata_t tel,
                        inout standard_metadata_t sm,
                        in p4scope_queue_metadata_t q) {
    /* Traffic that left each egress port, by ingress port (same index as
     * tel_offered). */
    counter(TEL_PAIRS, CounterType.packets_and_bytes) tel_delivered;
    /* Depth seen by each enqueued packet: index egress_port << TEL_HIST_BITS
     * | bin, bin = depth >> histogram_shift, the last bin open-ended. */
    counter(TEL_MAX_PORTS * TEL_HIST_BINS, CounterType.packets_and_bytes) tel_occupancy_hist;
    /* Bursts detected per egress port, and reports sent per egress port. */
    counter(TEL_MAX_PORTS, CounterType.packets) tel_bursts;
    counter(TEL_MAX_PORTS, CounterType.packets_and_bytes) tel_reports;

    /* Per egress port: interval number + 1 of the current interval (0:
     * none yet), its maxima, the last burst id, packets in the current
     * burst (0: no burst), egress times (ns) of the dequeues that started
     * the last burst and ended the last ended one. */
    register<bit<32>>(TEL_MAX_PORTS) tel_interval_id;
    register<bit<32>>(TEL_MAX_PORTS) tel_interval_max_pkts;
    register<bit<32>>(TEL_MAX_PORTS) tel_interval_max_bytes;
    register<bit<32>>(TEL_MAX_PORTS) tel_burst_id;
    register<bit<32>>(TEL_MAX_PORTS) tel_burst_pkts;
    register<bit<64>>(TEL_MAX_PORTS) tel_burst_start_ns;
    register<bit<64>>(TEL_MAX_PORTS) tel_burst_end_ns;

    bit<1>  bytes_mode = 0;
    bit<32> burst_on = 0;
    bit<32> burst_off = 0;
    bit<8>  hist_shift = 0;
    bit<8>  interval_shift = 0;
    bit<1>  interval_reports = 0;
    bit<1>  burst_pkt_reports = 0;

    /* burst_threshold 0 switches burst detection off; a burst lasts while
     * dequeues leave >= burst_end_threshold behind. interval_log2_us:
     * intervals of 2^n microseconds of the egress clock. */
    action tel_port_config(bit<1> depth_in_bytes, bit<32> burst_threshold,
                           bit<32> burst_end_threshold, bit<8> histogram_shift,
                           bit<8> interval_log2_us, bit<1> report_intervals,
                           bit<1> report_burst_packets) {
        bytes_mode = depth_in_bytes;
        burst_on = burst_threshold;
        burst_off = burst_end_threshold;
        hist_shift = histogram_shift;
        interval_shift = interval_log2_us;
        interval_reports = report_intervals;
        burst_pkt_reports = report_burst_packets;
    }

    action tel_port_off() { }

    table tel_port {
        key = { sm.egress_port: exact; }
        actions = { tel_port_config; tel_port_off; }
        default_action = tel_port_off();
        size = TEL_MAX_PORTS;
    }

    apply {
        bit<32> port = (bit<32>)sm.egress_port;
        bit<32> in_port = (bit<32>)sm.ingress_port;
        bool measured = port < TEL_MAX_PORTS;
        if (measured && in_port < TEL_MAX_PORTS) {
            tel_delivered.count((port << TEL_PORT_BITS) | in_port);
        }

        tel.ingress_port = (bit<16>)sm.ingress_port;
        tel.egress_port = (bit<16>)sm.egress_port;
        tel.qid = (bit<8>)sm.priority;
        tel.enq_qdepth = (bit<32>)sm.enq_qdepth;
        tel.deq_qdepth = (bit<32>)sm.deq_qdepth;
        tel.enq_qbytes = q.enq_qbytes;
        tel.deq_qbytes = q.deq_qbytes;
        tel.buffer_bytes = q.buffer_bytes;
        tel.queue_time_ns = q.deq_timedelta_ns;
        if (tel.queue_time_ns == 0) {
            tel.queue_time_ns = sm.deq_timedelta * 1000;
        }
        /* nanoseconds from p4scope's engine; BMv2 leaves them 0 and the
         * microsecond clocks of v1model stand in */
        tel.ingress_ts_ns = q.ingress_timestamp_ns;
        if (tel.ingress_ts_ns == 0) {
            tel.ingress_ts_ns = (bit<64>)sm.ingress_global_timestamp * 1000;
        }
        tel.egress_ts_ns = q.egress_timestamp_ns;
        if (tel.egress_ts_ns == 0) {
            tel.egress_ts_ns = (bit<64>)sm.egress_global_timestamp * 1000;
        }
        tel.hop_latency_ns = (bit<32>)(tel.egress_ts_ns - tel.ingress_ts_ns);
        tel.events = 0;
        if (tel.watch == 1) {
            tel.events = EVENT_POSTCARD;
            tel.tracked = 1;
        }

        if (measured) {
            if (tel_port.apply().hit) {
                tel.flags = (bit<8>)bytes_mode;
                /* depth found on arrival (histogram), depth left behind
                 * (bursts), occupancy just before this dequeue (maxima);
                 * byte counts are 0 without p4scope_tm.p4's aliases, so
                 * held_bytes is then the packet's own length */
                bit<32> arrived = tel.enq_qdepth;
                bit<32> left = tel.deq_qdepth;
                if (bytes_mode == 1) {
                    arrived = tel.enq_qbytes;
                    left = tel.deq_qbytes;
                }
                bit<32> held_pkts = tel.deq_qdepth + 1;
                bit<32> held_bytes = tel.deq_qbytes + sm.packet_length;

                /* occupancy histogram */
                bit<32> bin = arrived >> hist_shift;
                if (bin >= TEL_HIST_BINS) {
                    bin = TEL_HIST_BINS - 1;
                }
                tel_occupancy_hist.count((port << TEL_HIST_BITS) | bin);

                /* occupancy maxima per interval; an interval is reported by
                 * the first packet of a later one */
                bit<32> now_iv = (bit<32>)(sm.egress_global_timestamp >> interval_shift) + 1;
                bit<32> cur_iv;
                bit<32> max_pkts;
                bit<32> max_bytes;
                tel_interval_id.read(cur_iv, port);
                tel_interval_max_pkts.read(max_pkts, port);
                tel_interval_max_bytes.read(max_bytes, port);
                if (now_iv != cur_iv) {
                    if (interval_reports == 1 && cur_iv != 0) {
                        tel.events = tel.events | EVENT_INTERVAL;
                        tel.interval_max_pkts = max_pkts;
                        tel.interval_max_bytes = max_bytes;
                        tel.interval = cur_iv - 1;
                    }
                    tel_interval_id.write(port, now_iv);
                    max_pkts = held_pkts;
                    max_bytes = held_bytes;
                } else {
                    if (held_pkts > max_pkts) {
                        max_pkts = held_pkts;
                    }
                    if (held_bytes > max_bytes) {
                        max_bytes = held_bytes;
                    }
                }
                tel_interval_max_pkts.write(port, max_pkts);
                tel_interval_max_bytes.write(port, max_bytes);

                /* burst detection */
                if (burst_on != 0) {
                    bit<32> id;
                    bit<32> n;
                    tel_burst_id.read(id, port);
                    tel_burst_pkts.read(n, port);
                    bit<8> burst_events = 0;
                    if (n == 0) {
                        if (left >= burst_on) {
                            id = id + 1;
                            n = 1;
                            burst_events = EVENT_BURST_START | EVENT_BURST_PKT;
                            tel_bursts.count(port);
                            tel_burst_start_ns.write(port, tel.egress_ts_ns);
                        }
                        tel.burst_pkts = n;
                    } else if (left < burst_off) {
                        burst_events = EVENT_BURST_END;
                        tel.burst_pkts = n;
                        n = 0;
                        tel_burst_end_ns.write(port, tel.egress_ts_ns);
                    } else {
                        n = n + 1;
                        burst_events = EVENT_BURST_PKT;
                        tel.burst_pkts = n;
                    }
                    if (burst_pkt_reports == 0) {
                        /* start and end only */
                        burst_events = burst_events & (EVENT_BURST_START | EVENT_BURST_END);
                    }
                    tel_burst_id.write(port, id);
                    tel_burst_pkts.write(port, n);
                    tel.burst_id = id;
                    if (burst_events != 0) {
                        tel.events = tel.events | burst_events;
                        tel.congested = 1;
                    }
                }
            }
        }

        if (tel.events != 0) {
            if (measured) {
                tel_reports.count(port);
            }
            clone_preserving_field_list(CloneType.E2E, TEL_REPORT_SESSION, TEL_FIELD_LIST);
        }
    }
}

/* On the report copy (instance type EGRESS_CLONE; an INT-MD sink's
 * INGRESS_CLONE, int_md_inner != 0: see int_md.p4). */
control TelemetryReport(inout headers_t hdr, in telemetry_metadata_t tel,
                        inout standard_metadata_t sm, in bit<16> int_md_inner) {
    ReportEncap() encap;

    apply {
        hdr.report_md.setValid();
        hdr.report_md.ingress_port = tel.ingress_port;
        hdr.report_md.egress_port = tel.egress_port;
        hdr.report_md.hop_latency_ns = tel.hop_latency_ns;
        hdr.report_md.queue_id = tel.qid;
        hdr.report_md.queue_occupancy = (bit<24>)tel.enq_qdepth;
        hdr.report_md.ingress_ts_ns = tel.ingress_ts_ns;
        hdr.report_md.egress_ts_ns = tel.egress_ts_ns;

        hdr.report_queue_ds.setValid();
        hdr.report_queue_ds.events = tel.events;
        hdr.report_queue_ds.flags = tel.flags;
        hdr.report_queue_ds.frame_bytes = (bit<16>)sm.packet_length;
        hdr.report_queue_ds.enq_qdepth = tel.enq_qdepth;
        hdr.report_queue_ds.deq_qdepth = tel.deq_qdepth;
        hdr.report_queue_ds.enq_qbytes = tel.enq_qbytes;
        hdr.report_queue_ds.deq_qbytes = tel.deq_qbytes;
        hdr.report_queue_ds.buffer_bytes = tel.buffer_bytes;
        hdr.report_queue_ds.queue_time_ns = tel.queue_time_ns;
        hdr.report_queue_ds.burst_id = tel.burst_id;
        hdr.report_queue_ds.burst_pkts = tel.burst_pkts;
        hdr.report_queue_ds.interval_max_pkts = tel.interval_max_pkts;
        hdr.report_queue_ds.interval_max_bytes = tel.interval_max_bytes;
        hdr.report_queue_ds.interval = tel.interval;

        /* an INT-MD sink's report: no domain block; inner packet: the IPv4
         * packet up to the end of its INT-MD stack, int_md_inner bytes */
        bit<16> domain = DOMAIN_QUEUE;
        bit<16> ds_bits = QUEUE_DS_BITS;
        bit<8> md_words = REPORT_MD_WORDS + QUEUE_DS_WORDS;
        bit<4> inner_type = REPORT_INNER_ETHERNET;
        if (int_md_inner != 0) {
            hdr.report_queue_ds.setInvalid();
            domain = 0;
            ds_bits = 0;
            md_words = REPORT_MD_WORDS;
            inner_type = REPORT_INNER_IPV4;
        }
        encap.apply(hdr, sm, REPORT_MD_BITS, domain, ds_bits, md_words, 0, tel.congested,
                    tel.tracked, inner_type, int_md_inner);
    }
}

#endif
