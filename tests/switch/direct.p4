// A table with a direct counter and a direct meter (in packets): RED drops.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct metadata_t { bit<32> colour; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control V(inout headers_t hdr, inout metadata_t m) { apply { } }
control I(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) hits;
    direct_meter<bit<32>>(MeterType.packets) limit;
    action set_port(bit<9> port) { sm.egress_spec = port; limit.read(m.colour); }
    table fwd {
        key = { hdr.ethernet.dst: exact; }
        actions = { set_port; NoAction; }
        counters = hits;
        meters = limit;
        default_action = NoAction();
    }
    apply {
        fwd.apply();
        if (m.colour == 2) { mark_to_drop(sm); }
    }
}
control E(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout metadata_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
