// p4scope: the v1model architecture (BMv2 simple_switch).
//
// Declaration-compatible with p4c's v1model.p4: the same names, parameter
// names, directions and types, the same order of members, and the same
// annotations, because they are observable: @name/@metadata/@alias on
// standard_metadata_t shape the BMv2 JSON (field_aliases), @deprecated
// texts appear in warnings, @pure/@noSideEffects steer optimisations.
//
// V1MODEL_VERSION selects the interface: 20180101 (the default) uses bit<9>
// ports and bit<32> indices; 20200408 or later adds PortId_t and gives
// counter, meter and register a type parameter I for their index.

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

match_kind {
    range,
    optional,   // exact match or wildcard
    selector    // member selection in an action_selector
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

// Per-packet intrinsic metadata of simple_switch.  Fields carrying @alias
// are stored by BMv2 under the aliased name.
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t    ingress_port;
    PortId_t    egress_spec;
    PortId_t    egress_port;
#else
    bit<9>      ingress_port;
    bit<9>      egress_spec;
    bit<9>      egress_port;
#endif
    bit<32>     instance_type;
    bit<32>     packet_length;
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;          // multicast group, 0 = none
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;         // replication id of a multicast copy
    bit<1>  checksum_error;     // 1 if verify_checksum found a mismatch
    error   parser_error;
    @alias("intrinsic_metadata.priority")
    bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

// An array of `size` counters, updated by count(index) and read by the
// control plane.  An out-of-range index updates nothing.
#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

// One counter per entry of the table whose `counters` property names it;
// counting happens on every hit, count() is optional.
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

// An array of `size` two-rate three-colour meters.  execute_meter writes
// the colour (GREEN 0, YELLOW 1, RED 2) to result, a bit<W> with W >= 2.
#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

// One meter per entry of the table whose `meters` property names it;
// read() gives the colour of the entry that matched.
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

// An array of `size` values of type T, readable and writable by the data
// plane.  Reads at an out-of-range index give an unspecified value; writes
// there do nothing.
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

// Table implementation: entries refer to shared action members.
extern action_profile {
    action_profile(bit<32> size);
}

// result = a uniformly random value in [lo, hi].
extern void random<T>(out T result, in T lo, in T hi);

// Send `data` (its value at the time of the call) to the control plane as
// a digest message.  Ingress only; BMv2 ignores receiver.
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

// Set egress_spec to the drop port and mcast_grp to 0.
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

// result = base + (hash of data % max), or base when max is 0.
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

// Table implementation: an action profile whose group member is chosen by
// a hash of the selector key fields.
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

// VerifyChecksum control only: when condition holds and the checksum of
// data differs from `checksum`, standard_metadata.checksum_error becomes 1.
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

// ComputeChecksum control only: when condition holds, checksum = the
// checksum of data.
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// As the two above, with the unparsed payload appended to data.
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

// Clone the packet to a clone session, keeping no user metadata.
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);

// Ingress only: process the original packet again from the parser, keeping
// the user metadata fields annotated @field_list(index).
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

// Egress only: send the deparsed packet back to the parser, keeping the
// user metadata fields annotated @field_list(index).
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

// Clone the packet to a clone session (I2E in ingress, E2E in egress),
// keeping the user metadata fields annotated @field_list(index).
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

// Send at most `length` bytes of the packet.
extern void truncate(in bit<32> length);

// On simple_switch a false check logs the place and stops the switch;
// compiling with --ndebug removes them.  assume() is assert() for targets,
// a hint for verification tools.
extern void assert(in bool check);
extern void assume(in bool check);

// Log a message; "{}" in msg is replaced by the next element of data.
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

// The architecture: H is the struct of headers, M the user metadata struct.
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif  // _V1_MODEL_P4_
