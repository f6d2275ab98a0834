// A two-port wire for Mininet tests and benchmarks: what enters port 1
// leaves on port 2 and the other way round; no tables, so no controller is
// needed. Compiles with p4scope compile and p4c-bm2-ss alike.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t { ethernet_t eth; }
struct meta_t { }

parser WireParser(packet_in pkt, out headers_t h, inout meta_t m,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition accept;
    }
}

control WireVerify(inout headers_t h, inout meta_t m) { apply { } }

control WireIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.ingress_port == 1) {
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 1;
        }
    }
}

control WireEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control WireCompute(inout headers_t h, inout meta_t m) { apply { } }

control WireDeparser(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); }
}

V1Switch(WireParser(), WireVerify(), WireIngress(), WireEgress(), WireCompute(),
         WireDeparser()) main;
