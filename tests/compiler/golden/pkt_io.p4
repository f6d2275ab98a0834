// Golden test program: packet-in/out headers, registers, a parser value set,
// a serializable enum key, a translated new type and nested controls.
#include <core.p4>
#include <v1model.p4>

@p4runtime_translation("p4.org/p4scope/v1/port_t", 32)
type bit<9> port_id_t;
enum bit<16> EtherType { IPV4 = 0x0800, ARP = 0x0806 }

@controller_header("packet_in")
header packet_in_t { port_id_t ingress_port; bit<7> pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> pad; }
header ethernet_t { bit<48> dst; bit<48> src; EtherType ether_type; }
struct headers_t { packet_in_t pin; packet_out_t pout; ethernet_t eth; }
struct meta_t { bit<16> tag; }

parser IoParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    value_set<bit<16>>(4) special_types;
    state start {
        transition select(sm.ingress_port) { 255: parse_out; default: parse_eth; }
    }
    state parse_out { pkt.extract(hdr.pout); transition parse_eth; }
    state parse_eth {
        pkt.extract(hdr.eth);
        transition select((bit<16>)hdr.eth.ether_type) { special_types: accept; default: accept; }
    }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control Stats(inout headers_t hdr, inout standard_metadata_t sm) {
    register<bit<32>>(512) last_len;
    action note() { last_len.write((bit<32>)sm.ingress_port, sm.packet_length); }
    table by_type {
        key = { hdr.eth.ether_type: exact; }
        actions = { note; NoAction; }
    }
    apply { by_type.apply(); }
}
control IoIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Stats() stats;
    action to_cpu() { sm.egress_spec = 255; }
    action to_port(port_id_t port) { sm.egress_spec = (bit<9>)port; }
    table punt {
        key = { hdr.eth.dst: ternary; }
        actions = { to_cpu; to_port; }
        default_action = to_port((port_id_t)1);
    }
    apply {
        if (hdr.pout.isValid()) {
            sm.egress_spec = hdr.pout.egress_port;
            hdr.pout.setInvalid();
        } else {
            punt.apply();
            stats.apply(hdr, sm);
        }
    }
}
control IoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == 255) {
            hdr.pin.setValid();
            hdr.pin.ingress_port = (port_id_t)sm.ingress_port;
        }
    }
}
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control Emit(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.pin); pkt.emit(hdr.eth); } }
V1Switch(IoParser(), NoVerify(), IoIngress(), IoEgress(), NoCompute(), Emit()) main;
