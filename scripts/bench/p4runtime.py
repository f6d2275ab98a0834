"""P4Runtime benchmark: table-write and read throughput of a switch.

    p4scope bench p4runtime [--entries N] [--batch B] [--single M] [--kind exact|lpm|ternary]
    p4scope bench p4runtime --address HOST:PORT --p4info F --json F   (any switch, e.g. BMv2)

Without --address it starts p4scope's switch in this process, on a free
loopback port, and programs a small built-in P4 program compiled by
p4scope. Reported: entries/s for batched INSERT, MODIFY and DELETE, for
one-entry Writes, and for a wildcard Read of the whole table; each figure
is the best of --repeat runs. The client is plain grpcio with finsy's
stubs, so the numbers include protobuf encoding on both sides.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

PROGRAM = r"""
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control V(inout headers_t hdr, inout metadata_t m) { apply { } }
control I(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {
    action forward(bit<9> port) { sm.egress_spec = port; }
    table exact_t { key = { hdr.ethernet.dst: exact; } actions = { forward; NoAction; }
                    size = 1048576; }
    table lpm_t { key = { hdr.ethernet.src: lpm; } actions = { forward; NoAction; }
                  size = 1048576; }
    table ternary_t { key = { hdr.ethernet.src: ternary; } actions = { forward; NoAction; }
                      size = 1048576; }
    apply { exact_t.apply(); lpm_t.apply(); ternary_t.apply(); }
}
control E(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout metadata_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@dataclass
class Result:
    what: str
    entries: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.entries / self.seconds if self.seconds > 0 else float("inf")


def _compile():
    from p4scope.compiler import compile_text

    r = compile_text(PROGRAM, "bench_p4runtime.p4")
    return r.p4info, json.dumps(r.bmv2_json).encode()


class _Target:
    """A switch to measure: p4scope in-process, or a running one."""

    def __init__(self, address: Optional[str]):
        self.server = self.device = None
        if address is None:
            from p4scope.switch.device import Device, DeviceOptions
            from p4scope.switch.p4runtime.server import make_server

            self.device = Device(DeviceOptions())
            self.server, port = make_server(self.device, "127.0.0.1:0")
            address = f"127.0.0.1:{port}"
        self.address = address

    def close(self) -> None:
        if self.server is not None:
            self.server.stop(None)


def _entry(p4r, t, kind: str, i: int, port: int):
    te = p4r.TableEntry(table_id=t.preamble.id)
    fm = te.match.add(field_id=t.match_fields[0].id)
    v = (0x020000000000 + i).to_bytes(6, "big")
    if kind == "exact":
        fm.exact.value = v
    elif kind == "lpm":
        fm.lpm.value = v
        fm.lpm.prefix_len = 48
    else:
        fm.ternary.value = v
        fm.ternary.mask = b"\xff" * 6
        te.priority = 1 + (i % 1000)
    a = te.action.action
    a.action_id = next(x.id for x in t.action_refs if x.id != 21257015)  # forward
    a.params.add(param_id=1, value=bytes([port]))
    return te


def run_bench(address: Optional[str], entries: int, batch: int, single: int, kind: str,
              repeat: int, p4info_path: Optional[Path], json_path: Optional[Path],
              echo=print) -> list[Result]:
    import grpc
    from finsy.proto import p4i, p4r, p4r_grpc

    if p4info_path is not None:
        from p4scope.compiler.p4info_io import read_p4info
        p4info = read_p4info(p4info_path)
        device_config = json_path.read_bytes() if json_path else b""
    else:
        p4info, device_config = _compile()
    tables = [t for t in p4info.tables if t.match_fields and len(t.match_fields) == 1]
    want = {"exact": p4i.MatchField.EXACT, "lpm": p4i.MatchField.LPM,
            "ternary": p4i.MatchField.TERNARY}[kind]
    t = next((x for x in tables if x.match_fields[0].match_type == want), None)
    if t is None:
        raise SystemExit(f"the P4Info has no single-field {kind} table")
    target = _Target(address)
    channel = grpc.insecure_channel(target.address, options=[
        ("grpc.max_metadata_size", 8 << 20), ("grpc.max_receive_message_length", 256 << 20),
        ("grpc.max_send_message_length", 256 << 20)])
    stub = p4r_grpc.P4RuntimeStub(channel)
    import queue
    import threading
    q: queue.Queue = queue.Queue()
    q.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=0, election_id=p4r.Uint128(low=1))))

    def reqs():
        while True:
            item = q.get()
            if item is None:
                return
            yield item

    stream = stub.StreamChannel(reqs())
    next(stream)  # arbitration answer

    def drain():
        try:
            for _ in stream:
                pass
        except grpc.RpcError:
            pass  # closed at the end of the run

    threading.Thread(target=drain, daemon=True).start()
    results: list[Result] = []
    try:
        cfg = p4r.SetForwardingPipelineConfigRequest(
            device_id=0, election_id=p4r.Uint128(low=1),
            action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        cfg.config.p4info.CopyFrom(p4info)
        cfg.config.p4_device_config = device_config
        stub.SetForwardingPipelineConfig(cfg)
        ents = [_entry(p4r, t, kind, i, 1) for i in range(entries)]
        mods = [_entry(p4r, t, kind, i, 2) for i in range(entries)]

        def write_all(utype, items, size) -> float:
            t0 = time.perf_counter()
            for s in range(0, len(items), size):
                w = p4r.WriteRequest(device_id=0, election_id=p4r.Uint128(low=1))
                for te in items[s:s + size]:
                    w.updates.add(type=utype).entity.table_entry.CopyFrom(te)
                stub.Write(w)
            return time.perf_counter() - t0

        def best(f) -> float:
            return min(f() for _ in range(repeat))

        def cycle_batched():
            ti = write_all(p4r.Update.INSERT, ents, batch)
            tm = write_all(p4r.Update.MODIFY, mods, batch)
            rd = read_all()
            td = write_all(p4r.Update.DELETE, ents, batch)
            return ti, tm, rd, td

        def read_all() -> float:
            t0 = time.perf_counter()
            n = 0
            for resp in stub.Read(p4r.ReadRequest(device_id=0, entities=[p4r.Entity(
                    table_entry=p4r.TableEntry(table_id=t.preamble.id))])):
                n += len(resp.entities)
            assert n == entries, f"read {n} entries, expected {entries}"
            return time.perf_counter() - t0

        runs = [cycle_batched() for _ in range(repeat)]
        results.append(Result(f"INSERT, batches of {batch}", entries, min(r[0] for r in runs)))
        results.append(Result(f"MODIFY, batches of {batch}", entries, min(r[1] for r in runs)))
        results.append(Result(f"DELETE, batches of {batch}", entries, min(r[3] for r in runs)))
        results.append(Result("Read (wildcard, whole table)", entries, min(r[2] for r in runs)))
        few = ents[:single]
        fewd = ents[:single]

        def singles() -> float:
            dt = write_all(p4r.Update.INSERT, few, 1)
            write_all(p4r.Update.DELETE, fewd, batch)
            return dt

        results.append(Result("INSERT, one entry per Write", single, best(singles)))
    finally:
        q.put(None)
        channel.close()
        target.close()
    return results


def print_results(results: list[Result], echo=print) -> None:
    w = max(len(r.what) for r in results)
    echo(f"{'operation':<{w}}  {'entries':>8}  {'seconds':>8}  {'entries/s':>10}")
    for r in results:
        echo(f"{r.what:<{w}}  {r.entries:>8}  {r.seconds:>8.3f}  {r.rate:>10,.0f}")


def bench_p4runtime(
    entries: int = typer.Option(20000, "--entries", "-n", help="Entries written in batches."),
    batch: int = typer.Option(1000, "--batch", "-b", help="Updates per WriteRequest."),
    single: int = typer.Option(2000, "--single", help="Entries written one per WriteRequest."),
    kind: str = typer.Option("exact", "--kind", help="Table match kind: exact, lpm or ternary."),
    repeat: int = typer.Option(3, "--repeat", help="Runs per figure (the best is shown)."),
    address: Optional[str] = typer.Option(None, "--address",
                                          help="Measure a running switch (HOST:PORT) instead."),
    p4info: Optional[Path] = typer.Option(None, "--p4info", help="With --address: its P4Info."),
    json_file: Optional[Path] = typer.Option(None, "--json", help="With --address: its JSON."),
) -> None:
    """Table-write and read throughput over P4Runtime (entries/s)."""
    if kind not in ("exact", "lpm", "ternary"):
        raise typer.BadParameter("exact, lpm or ternary", param_hint="--kind")
    if address and not p4info:
        raise typer.BadParameter("--address needs --p4info (and --json)", param_hint="--p4info")
    where = address or "p4scope switch (in-process, loopback)"
    typer.echo(f"P4Runtime benchmark: {where}, {kind} table, {entries} entries, "
               f"batches of {batch}, best of {repeat}")
    print_results(run_bench(address, entries, batch, single, kind, repeat, p4info, json_file),
                  typer.echo)


if __name__ == "__main__":
    typer.run(bench_p4runtime)
