"""Packets per second of the engine on one core: an L2/L3 program (Ethernet,
IPv4; an lpm route table and an exact MAC-rewrite table with a few hundred
entries each; TTL decrement and IPv4 checksum update), in-process ports.

    .venv/bin/python -m p4scope.bench.engine [--entries 300] [--packets 1000000] [--repeats 5]

Prints the rate with packets handed over in batches from Rust (engine
only): the median of --repeats runs of --packets each, with the best and
the worst (a shared machine's speed moves from run to run); then the rate
through Engine.process from Python (with the per-packet conversion cost).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import p4scope_dataplane as dp

STD = [["ingress_port", 9, False], ["egress_spec", 9, False], ["egress_port", 9, False],
       ["instance_type", 32, False], ["packet_length", 32, False], ["enq_timestamp", 32, False],
       ["enq_qdepth", 19, False], ["deq_timedelta", 32, False], ["deq_qdepth", 19, False],
       ["ingress_global_timestamp", 48, False], ["egress_global_timestamp", 48, False],
       ["mcast_grp", 16, False], ["egress_rid", 16, False], ["checksum_error", 1, False],
       ["parser_error", 32, False], ["priority", 3, False], ["_padding", 3, False]]
IPV4 = [["version", 4, False], ["ihl", 4, False], ["diffserv", 8, False], ["totalLen", 16, False],
        ["identification", 16, False], ["flags", 3, False], ["fragOffset", 13, False],
        ["ttl", 8, False], ["protocol", 8, False], ["hdrChecksum", 16, False],
        ["srcAddr", 32, False], ["dstAddr", 32, False]]


def F(h, f):
    return {"type": "field", "value": [h, f]}


def X(op, l, r):
    return {"type": "expression", "value": {"op": op, "left": l, "right": r}}


def H(v):
    return {"type": "hexstr", "value": hex(v)}


def P(i):
    return {"type": "runtime_data", "value": i}


def A(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def l2l3_json() -> str:
    actions = [
        {"name": "ingress.set_nhop", "id": 0,
         "runtime_data": [{"name": "nhop", "bitwidth": 32}, {"name": "port", "bitwidth": 9}],
         "primitives": [A(F("scalars", "nhop"), P(0)), A(F("standard_metadata", "egress_spec"), P(1)),
                        A(F("ipv4", "ttl"), X("&", X("+", F("ipv4", "ttl"), H(0xFF)), H(0xFF)))]},
        {"name": "ingress.drop", "id": 1, "runtime_data": [],
         "primitives": [{"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]},
        {"name": "ingress.set_dmac", "id": 2, "runtime_data": [{"name": "dmac", "bitwidth": 48}],
         "primitives": [A(F("ethernet", "srcAddr"), F("ethernet", "dstAddr")),
                        A(F("ethernet", "dstAddr"), P(0))]},
    ]
    tables = [
        {"name": "ingress.ipv4_lpm", "id": 0, "key": [{"match_type": "lpm", "name": "hdr.ipv4.dstAddr",
                                                       "target": ["ipv4", "dstAddr"], "mask": None}],
         "match_type": "lpm", "type": "simple", "max_size": 4096, "with_counters": False,
         "support_timeout": False, "direct_meters": None, "action_ids": [0, 1],
         "actions": ["ingress.set_nhop", "ingress.drop"], "base_default_next": "ingress.forward",
         "next_tables": {"ingress.set_nhop": "ingress.forward", "ingress.drop": "ingress.forward"},
         "default_entry": {"action_id": 1, "action_const": False, "action_data": [], "action_entry_const": False}},
        {"name": "ingress.forward", "id": 1, "key": [{"match_type": "exact", "name": "meta.nhop",
                                                      "target": ["scalars", "nhop"], "mask": None}],
         "match_type": "exact", "type": "simple", "max_size": 4096, "with_counters": False,
         "support_timeout": False, "direct_meters": None, "action_ids": [2, 1],
         "actions": ["ingress.set_dmac", "ingress.drop"], "base_default_next": None,
         "next_tables": {"ingress.set_dmac": None, "ingress.drop": None},
         "default_entry": {"action_id": 1, "action_const": False, "action_data": [], "action_entry_const": False}},
    ]
    cond = {"name": "node_1", "id": 0, "expression": X("d2b", None, F("ipv4", "$valid$")),
            "true_next": "ingress.ipv4_lpm", "false_next": None}
    doc = {
        "header_types": [{"name": "standard_metadata", "id": 0, "fields": STD},
                         {"name": "scalars_0", "id": 1, "fields": [["nhop", 32, False]]},
                         {"name": "ethernet_t", "id": 2, "fields": [["dstAddr", 48, False], ["srcAddr", 48, False],
                                                                    ["etherType", 16, False]]},
                         {"name": "ipv4_t", "id": 3, "fields": IPV4}],
        "headers": [{"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": True},
                    {"name": "scalars", "id": 1, "header_type": "scalars_0", "metadata": True},
                    {"name": "ethernet", "id": 2, "header_type": "ethernet_t", "metadata": False},
                    {"name": "ipv4", "id": 3, "header_type": "ipv4_t", "metadata": False}],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            {"name": "start", "id": 0, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}],
             "transition_key": [F("ethernet", "etherType")],
             "transitions": [{"type": "hexstr", "value": "0x0800", "mask": None, "next_state": "parse_ipv4"},
                             {"type": "default", "value": None, "mask": None, "next_state": None}]},
            {"name": "parse_ipv4", "id": 1, "parser_ops": [{"op": "extract", "parameters": [{"type": "regular", "value": "ipv4"}]}],
             "transition_key": [], "transitions": [{"type": "default", "value": None, "mask": None, "next_state": None}]}]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["ethernet", "ipv4"]}],
        "calculations": [{"name": "calc", "id": 0, "algo": "csum16",
                          "input": [F("ipv4", f[0]) for f in IPV4 if f[0] != "hdrChecksum"]}],
        "checksums": [{"name": "cksum", "id": 0, "target": ["ipv4", "hdrChecksum"], "type": "generic",
                       "calculation": "calc", "verify": False, "update": True,
                       "if_cond": X("d2b", None, F("ipv4", "$valid$"))}],
        "actions": actions,
        "pipelines": [{"name": "ingress", "id": 0, "init_table": "node_1", "tables": tables, "conditionals": [cond]},
                      {"name": "egress", "id": 1, "init_table": None, "tables": [], "conditionals": []}],
    }
    return json.dumps(doc)


def packet(dst_ip: int) -> bytes:
    eth = bytes.fromhex("00000000000a00000000000b0800")
    ip = bytes([0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0]) + bytes([10, 0, 0, 1]) + dst_ip.to_bytes(4, "big")
    return eth + ip + bytes(26)


def l2l3_engine(entries: int) -> tuple[dp.Engine, list[tuple[int, bytes]]]:
    """The program with `entries` routes and next hops, warmed up, and the
    packets that cycle over them: (engine, [(port, bytes)])."""
    e = dp.Engine(l2l3_json())
    for i in range(entries):
        e.table_add("ingress.ipv4_lpm", "ingress.set_nhop", [("lpm", (10 << 24) | (i << 8), 24)], [i, 1 + i % 8])
        e.table_add("ingress.forward", "ingress.set_dmac", [i], [0x020000000000 + i])
    pkts = [(0, packet((10 << 24) | (i << 8) | 5)) for i in range(entries)]
    # warm up and check that everything is forwarded
    assert e.process_repeat(pkts, 1) == len(pkts)
    return e, pkts


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m p4scope.bench.engine",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=300,
                    help="routes and next hops, 1..4096 (default 300; the packets cycle over them)")
    ap.add_argument("--packets", type=int, default=1_000_000, help="packets a run (default 1000000)")
    ap.add_argument("--repeats", type=int, default=5, help="runs of --packets, 1..100 (default 5)")
    ap.add_argument("--write-json", metavar="FILE",
                    help="write the program's BMv2 JSON (for dataplane/examples/bench_engine.rs) and stop")
    args = ap.parse_args()
    if not 1 <= args.repeats <= 100:
        ap.error(f"--repeats {args.repeats}: must be an integer in 1..100")
    if not 1 <= args.entries <= 4096:  # the tables' size
        ap.error(f"--entries {args.entries}: must be an integer in 1..4096")
    if args.packets < 1:
        ap.error(f"--packets {args.packets}: at least 1")
    if args.write_json:
        with open(args.write_json, "w", encoding="utf-8") as f:
            f.write(l2l3_json())
        return
    e, pkts = l2l3_engine(args.entries)
    reps = max(1, args.packets // len(pkts))
    rates = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        n = e.process_repeat(pkts, reps)
        rates.append(n / (time.perf_counter() - t0))
    mid, best, worst = statistics.median(rates), max(rates), min(rates)
    print(f"engine (batches in Rust): {mid:,.0f} packets/s, {1e9 / mid:.0f} ns/packet, the median "
          f"of {len(rates)} runs (best {best:,.0f}, {1e9 / best:.0f} ns; worst {worst:,.0f}, "
          f"{1e9 / worst:.0f} ns; {n} packets a run, {args.entries} routes, {args.entries} next "
          f"hops, 1 core)")
    batch = [(p, d, 0) for p, d in pkts]
    t0 = time.perf_counter()
    m = 0
    for _ in range(max(1, reps // 4)):
        m += len(e.process(batch))
    dt = time.perf_counter() - t0
    print(f"through Engine.process from Python: {m / dt:,.0f} packets/s, {dt * 1e9 / m:.0f} ns/packet")


if __name__ == "__main__":
    from . import as_script

    as_script(main)
