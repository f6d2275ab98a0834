"""Helpers for the BMv2 backend tests: a program skeleton, compilation,
and lookups in the produced JSON."""

from __future__ import annotations

from typing import Any, Optional

from p4scope.compiler import CompileError, compile_text

HEADERS = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t { bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
                bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
                bit<32> src; bit<32> dst; }
header h_t { bit<8> a; bit<8> b; int<8> s; bit<16> w; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; h_t h; }
struct metadata { bit<16> tag; bit<8> x; bool flag; }
"""

PARSER = """
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x800: parse_ipv4; 0x88b5: parse_h; default: accept; }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
    state parse_h { pkt.extract(hdr.h); transition accept; }
}
"""

REST = """
control VC(inout headers hdr, inout metadata meta) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.h); }
}
"""

EGRESS = "control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }\n"

MAIN = "V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;\n"


def program(ingress: str, *, extra: str = "", parser: str = PARSER, rest: str = REST,
            egress: str = EGRESS) -> str:
    """A whole v1model program around an `ingress` control."""
    return HEADERS + extra + parser + rest + egress + ingress + MAIN


def ingress(body: str, locals_: str = "") -> str:
    return ("control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {\n"
            + locals_ + "\n    apply {\n" + body + "\n    }\n}\n")


def compile_json(src: str) -> dict:
    return compile_text(src, "t.p4").bmv2_json  # type: ignore[return-value]


def compile_ingress(body: str, locals_: str = "", **kw) -> dict:
    return compile_json(program(ingress(body, locals_), **kw))


def errors(src: str) -> list[str]:
    try:
        compile_text(src, "t.p4")
    except CompileError as e:
        return [d.message for d in e.diagnostics]
    return []


# ------------------------------------------------------------- lookups


def pipeline(j: dict, name: str = "ingress") -> dict:
    return next(p for p in j["pipelines"] if p["name"] == name)


def table(j: dict, name: str, pipe: str = "ingress") -> dict:
    return next(t for t in pipeline(j, pipe)["tables"] if t["name"] == name)


def action(j: dict, name: str) -> dict:
    return next(a for a in j["actions"] if a["name"] == name)


def action_by_id(j: dict, aid: int) -> dict:
    return next(a for a in j["actions"] if a["id"] == aid)


def conditional(j: dict, name: str, pipe: str = "ingress") -> dict:
    return next(c for c in pipeline(j, pipe)["conditionals"] if c["name"] == name)


def node(j: dict, name: Optional[str], pipe: str = "ingress") -> Optional[dict]:
    if name is None:
        return None
    p = pipeline(j, pipe)
    for t in p["tables"]:
        if t["name"] == name:
            return t
    for c in p["conditionals"]:
        if c["name"] == name:
            return c
    raise KeyError(name)


def walk_primitives(j: dict, pipe: str = "ingress") -> list[dict]:
    """The primitives of the keyless tables met from init_table following
    base_default_next / false branches (straight-line programs)."""
    out: list[dict] = []
    name = pipeline(j, pipe)["init_table"]
    seen = set()
    while name is not None and name not in seen:
        seen.add(name)
        n = node(j, name, pipe)
        assert n is not None
        if "actions" in n:
            if not n["key"]:
                out.extend(action_by_id(j, n["default_entry"]["action_id"])["primitives"])
            name = n["base_default_next"]
        else:
            name = n["false_next"]
    return out


def scalars_field(j: dict, prefix: str) -> list:
    st = next(t for t in j["header_types"] if t["name"] == "scalars_0")
    return [f for f in st["fields"] if f[0].startswith(prefix)]


def strip(x: Any) -> Any:
    """The JSON without source_info, for comparisons."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "source_info"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def run_stf_on(src: str, stf: str):
    import json
    from p4scope.commands.stf import run_stf
    return run_stf(json.dumps(compile_json(src)), stf)
