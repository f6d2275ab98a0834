// The p4lang tutorials' ecn exercise, reduced: port 1 <-> port 2, egress
// marks CE on ECN-capable IPv4 packets enqueued behind ECN_THRESHOLD
// packets, and stamps the enq_qdepth it saw into ipv4.identification and
// the deq_qdepth (what is left behind, 0..63 in a 64-packet queue) into
// ipv4.diffserv, as the mri exercise records queue depths; counters of the
// UDP packets in and out.
#include <core.p4>
#include <v1model.p4>

const bit<19> ECN_THRESHOLD = 10;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<6> diffserv; bit<2> ecn; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset; bit<8> ttl;
    bit<8> protocol; bit<16> hdrChecksum; bit<32> srcAddr; bit<32> dstAddr;
}
struct metadata { }
struct headers { ethernet_t ethernet; ipv4_t ipv4; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(1, CounterType.packets) udp_in;
    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.protocol == 17) { udp_in.count(0); }
        if (standard_metadata.ingress_port == 1) {
            standard_metadata.egress_spec = 2;
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    counter(1, CounterType.packets) udp_out;
    apply {
        if (hdr.ipv4.isValid() && hdr.ipv4.protocol == 17) {
            udp_out.count(0);
            hdr.ipv4.identification = (bit<16>) standard_metadata.enq_qdepth;
            hdr.ipv4.diffserv = (bit<6>) standard_metadata.deq_qdepth;
            if (hdr.ipv4.ecn == 1 || hdr.ipv4.ecn == 2) {
                if (standard_metadata.enq_qdepth >= ECN_THRESHOLD) { hdr.ipv4.ecn = 3; }
            }
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.ecn, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
