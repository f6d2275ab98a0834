// A parser value set: ethertypes in the set are parsed as a tag.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header tag_t { bit<8> port; }
struct headers_t { ethernet_t ethernet; tag_t tag; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tagged;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            tagged: parse_tag;
            default: accept;
        }
    }
    state parse_tag { pkt.extract(hdr.tag); transition accept; }
}
control V(inout headers_t hdr, inout metadata_t m) { apply { } }
control I(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    apply {
        if (hdr.tag.isValid()) { sm.egress_spec = (bit<9>)hdr.tag.port; }
        else { sm.egress_spec = 1; }
    }
}
control E(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout metadata_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.tag); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
