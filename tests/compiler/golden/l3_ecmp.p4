// Golden test program: L3 routing with LPM, an ECMP action selector, meters
// and an ACL with ternary and range keys and constant entries.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
    bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
    bit<32> src; bit<32> dst;
}
struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { bit<16> l4_dport; bit<2> color; }

parser L3Parser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}
control NoVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control Router(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    meter(64, MeterType.bytes) port_meter;
    direct_meter<bit<2>>(MeterType.packets) acl_meter;
    action drop() { mark_to_drop(sm); }
    action set_nhop(bit<48> dmac, bit<9> port) {
        hdr.eth.dst = dmac;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table routes {
        key = {
            hdr.ipv4.dst: lpm;
            hdr.ipv4.src: selector;
            hdr.ipv4.proto: selector;
        }
        actions = { set_nhop; drop; }
        default_action = drop();
        @name("ecmp") implementation = action_selector(HashAlgorithm.crc32, 256, 16);
        size = 2048;
    }
    action permit() { acl_meter.read(meta.color); }
    action deny() { acl_meter.read(meta.color); mark_to_drop(sm); }
    table acl {
        key = {
            hdr.ipv4.src: ternary;
            hdr.ipv4.proto: exact;
            meta.l4_dport: range;
        }
        actions = { permit; deny; }
        default_action = permit();
        meters = acl_meter;
        const entries = {
            (0x0a000000 &&& 0xff000000, 6, 22 .. 23): deny();
            (_, 17, _): permit();
        }
    }
    apply {
        if (hdr.ipv4.isValid()) {
            routes.apply();
            acl.apply();
            port_meter.execute_meter((bit<32>)sm.egress_spec, meta.color);
        }
    }
}
control NoEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control Emit(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); }
}
V1Switch(L3Parser(), NoVerify(), Router(), NoEgress(), NoCompute(), Emit()) main;
