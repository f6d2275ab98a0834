/*
 * p4scope traffic-manager metadata: byte-level queue state for P4 programs.
 *
 * v1model's standard_metadata gives queue depth in packets only (enq_qdepth,
 * deq_qdepth) and time in queue in microseconds (deq_timedelta).  p4scope's
 * traffic manager also knows bytes and nanoseconds.  A program that wants
 * them puts this struct in its user metadata:
 *
 *     struct metadata_t { ...; p4scope_queue_metadata_t q; }
 *
 * Each field carries an @alias that p4c's BMv2 back end (and p4scope's)
 * turns into a BMv2 JSON field alias.  p4scope's engine writes the aliased
 * fields when it enqueues and dequeues a packet, exactly when it writes
 * enq_qdepth / deq_qdepth.  Real BMv2 does not know these aliases: the
 * program still loads and runs there, and the fields read 0, so a program
 * must treat 0 as "not available" (and fall back to the packet counts).
 *
 * Contract (all unsigned, saturating at the field's maximum):
 *   enq_qbytes       bytes already in the packet's egress queue when it was
 *                    enqueued (the byte counterpart of enq_qdepth)
 *   deq_qbytes       bytes left in that queue just after it was dequeued
 *                    (the byte counterpart of deq_qdepth)
 *   buffer_bytes     bytes held in the whole shared buffer when the packet
 *                    was enqueued (0 without a shared buffer)
 *   deq_timedelta_ns nanoseconds the packet spent in the queue
 *   ingress_timestamp_ns  nanoseconds since the switch started when the
 *                    packet arrived (the clock ingress_global_timestamp
 *                    counts in microseconds; virtual or wall clock)
 *   egress_timestamp_ns   the same clock when egress processing started
 */
#ifndef _P4SCOPE_TM_P4_
#define _P4SCOPE_TM_P4_

struct p4scope_queue_metadata_t {
    @alias("p4scope.enq_qbytes")       bit<32> enq_qbytes;
    @alias("p4scope.deq_qbytes")       bit<32> deq_qbytes;
    @alias("p4scope.buffer_bytes")     bit<32> buffer_bytes;
    @alias("p4scope.deq_timedelta_ns") bit<32> deq_timedelta_ns;
    @alias("p4scope.ingress_timestamp_ns") bit<64> ingress_timestamp_ns;
    @alias("p4scope.egress_timestamp_ns")  bit<64> egress_timestamp_ns;
}

#endif
