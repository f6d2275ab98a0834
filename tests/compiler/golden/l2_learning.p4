// Golden test program: L2 learning switch with digests, counters, idle timeout.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t eth; }
struct meta_t { }
struct learn_t { bit<48> mac; bit<9> port; }

parser IngressParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control Bridge(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    counter(32, CounterType.packets) rx_packets;
    direct_counter(CounterType.bytes) dmac_bytes;
    action learn() { digest<learn_t>(1, { hdr.eth.src, sm.ingress_port }); }
    action known() { }
    @brief("Source MACs already learnt")
    table smac {
        key = { hdr.eth.src: exact @name("src_mac"); }
        actions = { learn; known; }
        default_action = learn();
        support_timeout = true;
        size = 4096;
    }
    action forward(bit<9> port) { sm.egress_spec = port; dmac_bytes.count(); }
    action flood() { sm.mcast_grp = 1; dmac_bytes.count(); }
    table dmac {
        key = { hdr.eth.dst: exact; }
        actions = { forward; @defaultonly flood; }
        const default_action = flood();
        counters = dmac_bytes;
    }
    apply {
        rx_packets.count((bit<32>)sm.ingress_port);
        smac.apply();
        dmac.apply();
    }
}
control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control Emit(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(IngressParser(), NoVerify(), Bridge(), NoEgress(), NoCompute(), Emit()) main;
