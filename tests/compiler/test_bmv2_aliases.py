"""BMv2 field aliases: standard_metadata's queueing/intrinsic aliases, and
@alias on user metadata (the p4scope_tm.p4 contract the engine fills)."""

from pathlib import Path

from p4scope.compiler.driver import compile_text

TM = Path(__file__).parents[2] / "p4src" / "include"

PROGRAM = """#include <core.p4>
#include <v1model.p4>
#include "p4scope_tm.p4"
header h_t { bit<32> a; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; p4scope_queue_metadata_t q; }
parser P(packet_in pkt, out hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control C(inout hs_t hdr, inout m_t m) { apply { } }
control I(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout hs_t hdr, inout m_t m, inout standard_metadata_t sm) {
    apply { hdr.h.a = m.q.enq_qbytes; }
}
control D(packet_out pkt, in hs_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), C(), I(), E(), C(), D()) main;
"""


def aliases():
    result = compile_text(PROGRAM, "alias.p4", [str(TM)], backends=("bmv2",))
    return {name: tuple(target) for name, target in result.bmv2_json["field_aliases"]}


def test_standard_metadata_aliases_are_kept():
    a = aliases()
    assert a["queueing_metadata.enq_qdepth"] == ("standard_metadata", "enq_qdepth")
    assert a["intrinsic_metadata.mcast_grp"] == ("standard_metadata", "mcast_grp")


def test_user_metadata_aliases_point_at_their_scalars():
    result = compile_text(PROGRAM, "alias.p4", [str(TM)], backends=("bmv2",))
    js = result.bmv2_json
    a = {name: tuple(target) for name, target in js["field_aliases"]}
    for name in ("enq_qbytes", "deq_qbytes", "buffer_bytes", "deq_timedelta_ns"):
        header, field = a[f"p4scope.{name}"]
        htype = next(h["header_type"] for h in js["headers"] if h["name"] == header)
        fields = next(t["fields"] for t in js["header_types"] if t["name"] == htype)
        assert [f for f in fields if f[0] == field and f[1] == 32], (name, field)
