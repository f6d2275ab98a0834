"""P4Runtime benchmark: table-write and read throughput of a switch.

    p4scope bench p4runtime [--entries N] [--batch B] [--single M] [--kind exact|lpm|ternary]
                            [--load N]
    p4scope bench p4runtime --address HOST:PORT --p4info F --json F   (any switch, e.g. BMv2)

Without --address it starts p4scope's switch in this process, on a free
loopback port, and programs a small built-in P4 program compiled by
p4scope. Reported, each the best of --repeat runs:

* over gRPC (server and client in this one process, loopback): entries/s
  for batched INSERT, MODIFY and DELETE, for one-entry Writes and for a
  wildcard Read of the whole table. The client is plain grpcio with
  finsy's stubs and builds its requests inside the timed loop, so the
  figures include protobuf encoding and decoding on both sides;
* without gRPC (in-process only): the same batched requests, built and
  serialized beforehand, handed to the switch's `Device.write` (with their
  bytes) / `Device.read`, as the gRPC handlers call them: the switch's own
  share of the work;
* the load of a --load-entry LPM table (mixed prefix lengths /32 to /48)
  over gRPC in batches of --batch: seconds, entries/s and the process's
  resident memory before and after (per entry; in-process only).

Next to wall-clock time, in-process figures give the process's CPU time
(every thread: client, gRPC, switch) and entries per CPU second, which a
machine busy with other work changes much less than the wall clock.
"""

from __future__ import annotations

import gc
import json
import queue
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

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

KINDS = ("exact", "lpm", "ternary")
CONNECT_TIMEOUT_S = 10.0
"""How long a switch at --address may take to accept the gRPC connection."""
CHANNEL_OPTIONS = [("grpc.max_metadata_size", 8 << 20),
                   ("grpc.max_receive_message_length", 256 << 20),
                   ("grpc.max_send_message_length", 256 << 20)]


@dataclass
class Result:
    what: str
    entries: int
    seconds: float
    cpu_seconds: Optional[float] = None
    """CPU time of this process meanwhile (all its threads: client and, in-process, server)."""

    @property
    def rate(self) -> float:
        return self.entries / self.seconds if self.seconds > 0 else float("inf")

    @property
    def cpu_rate(self) -> Optional[float]:
        """Entries per CPU second: what a machine shared with other work still shows."""
        if self.cpu_seconds is None:
            return None
        return self.entries / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")


@dataclass(frozen=True)
class Span:
    """Wall-clock and process CPU seconds of one timed operation."""
    wall: float
    cpu: float


def _timed(f) -> Span:
    w0, c0 = time.perf_counter(), time.process_time()
    f()
    return Span(time.perf_counter() - w0, time.process_time() - c0)


def _best(what: str, entries: int, spans: list[Span], cpu: bool = True) -> Result:
    """The best (smallest) wall-clock and CPU times of several runs."""
    return Result(what, entries, min(x.wall for x in spans),
                  min(x.cpu for x in spans) if cpu else None)


@dataclass
class LoadResult:
    """A table loaded from empty: time, and resident memory (None for a remote switch)."""
    entries: int
    seconds: float
    rss_before: Optional[int]
    rss_after: Optional[int]
    cpu_seconds: Optional[float] = None

    @property
    def rate(self) -> float:
        return self.entries / self.seconds if self.seconds > 0 else float("inf")

    @property
    def bytes_per_entry(self) -> Optional[float]:
        if self.rss_before is None or self.rss_after is None or not self.entries:
            return None
        return (self.rss_after - self.rss_before) / self.entries


@lru_cache(maxsize=1)
def _compile():
    """The built-in program's P4Info and JSON, compiled once for the
    option checks and every figure (its users only read them)."""
    from p4scope.compiler import compile_text

    r = compile_text(PROGRAM, "bench_p4runtime.p4")
    return r.p4info, json.dumps(r.bmv2_json).encode()


def rss_bytes() -> int:
    """This process's resident set size (Linux /proc)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _program(p4info_path: Optional[Path], json_path: Optional[Path]):
    if p4info_path is not None:
        from p4scope.compiler.p4info_io import read_p4info
        return read_p4info(p4info_path), json_path.read_bytes() if json_path else b""
    return _compile()


def _table(p4info, kind: str):
    from finsy.proto import p4i

    want = {"exact": p4i.MatchField.EXACT, "lpm": p4i.MatchField.LPM,
            "ternary": p4i.MatchField.TERNARY}[kind]
    t = next((x for x in p4info.tables if len(x.match_fields) == 1
              and x.match_fields[0].match_type == want), None)
    if t is None:
        raise SystemExit(f"the P4Info has no single-field {kind} table")
    return t


def _forward_id(t) -> int:
    return next(x.id for x in t.action_refs if x.id != 21257015)  # forward, not NoAction


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
    a.action_id = _forward_id(t)
    a.params.add(param_id=1, value=bytes([port]))
    return te


def _prefix_request(p4r, t, start: int, stop: int):
    """The WriteRequest inserting entries start..stop-1 of the LPM load:
    prefix lengths /32 to /48, all distinct (each a copy of one template
    update with its prefix and port set, as a careful client builds them)."""
    template = p4r.Update(type=p4r.Update.INSERT)
    te = template.entity.table_entry
    te.table_id = t.preamble.id
    te.match.add(field_id=t.match_fields[0].id).lpm.prefix_len = 48
    te.action.action.action_id = _forward_id(t)
    te.action.action.params.add(param_id=1, value=b"\x01")
    w = p4r.WriteRequest(device_id=0, election_id=p4r.Uint128(low=1))
    updates = w.updates
    for i in range(start, stop):
        plen = 32 + i % 17
        u = updates.add()
        u.CopyFrom(template)
        te = u.entity.table_entry
        lpm = te.match[0].lpm
        lpm.value = ((0x02000000 + i) << (48 - plen)).to_bytes(6, "big")
        lpm.prefix_len = plen
        te.action.action.params[0].value = bytes([1 + i % 8])
    return w


class Unreachable(Exception):
    """No P4Runtime server answered at the address."""


class _Session:
    """A primary P4Runtime client of a switch (started here when no address
    is given) with the pipeline set."""

    def __init__(self, address: Optional[str], p4info, device_config: bytes):
        import grpc
        from finsy.proto import p4r, p4r_grpc

        self.server = None
        if address is None:
            from p4scope.switch.device import Device, DeviceOptions
            from p4scope.switch.p4runtime.server import make_server

            self.server, port = make_server(Device(DeviceOptions()), "127.0.0.1:0")
            address = f"127.0.0.1:{port}"
        self.address = address
        self.channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self._q: queue.Queue = queue.Queue()
        try:
            grpc.channel_ready_future(self.channel).result(timeout=CONNECT_TIMEOUT_S)
        except grpc.FutureTimeoutError:
            self.close()
            raise Unreachable(f"no gRPC server answered at {address} within "
                              f"{CONNECT_TIMEOUT_S:g} s") from None
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self._q.put(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
            device_id=0, election_id=p4r.Uint128(low=1))))
        try:
            stream = self.stub.StreamChannel(iter(self._q.get, None))
            next(stream)  # arbitration answer
        except BaseException:
            self.close()
            raise

        def drain():
            try:
                for _ in stream:
                    pass
            except grpc.RpcError:
                pass  # closed at the end of the run

        threading.Thread(target=drain, daemon=True).start()
        try:
            cfg = p4r.SetForwardingPipelineConfigRequest(
                device_id=0, election_id=p4r.Uint128(low=1),
                action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
            cfg.config.p4info.CopyFrom(p4info)
            cfg.config.p4_device_config = device_config
            self.stub.SetForwardingPipelineConfig(cfg)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._q.put(None)
        self.channel.close()
        if self.server is not None:
            self.server.stop(None)


def _write_request(p4r, utype, items):
    w = p4r.WriteRequest(device_id=0, election_id=p4r.Uint128(low=1))
    for te in items:
        w.updates.add(type=utype).entity.table_entry.CopyFrom(te)
    return w


def _read_request(p4r, t):
    return p4r.ReadRequest(device_id=0, entities=[p4r.Entity(
        table_entry=p4r.TableEntry(table_id=t.preamble.id))])


def _batched_cycles(write_all, read_all, ents, mods, batch: int, repeat: int, tag: str,
                    cpu: bool = True) -> list[Result]:
    """Best times of INSERT, MODIFY, Read, DELETE cycles as Results."""
    from finsy.proto import p4r

    runs = []
    for _ in range(repeat):
        ti = _timed(lambda: write_all(p4r.Update.INSERT, ents, batch))
        tm = _timed(lambda: write_all(p4r.Update.MODIFY, mods, batch))
        rd = _timed(read_all)
        td = _timed(lambda: write_all(p4r.Update.DELETE, ents, batch))
        runs.append((ti, tm, rd, td))
    n = len(ents)
    return [_best(f"INSERT, batches of {batch}{tag}", n, [r[0] for r in runs], cpu),
            _best(f"MODIFY, batches of {batch}{tag}", n, [r[1] for r in runs], cpu),
            _best(f"DELETE, batches of {batch}{tag}", n, [r[3] for r in runs], cpu),
            _best(f"Read (wildcard, whole table){tag}", n, [r[2] for r in runs], cpu)]


def run_bench(address: Optional[str], entries: int, batch: int, single: int, kind: str,
              repeat: int, p4info_path: Optional[Path], json_path: Optional[Path],
              echo=print) -> list[Result]:
    """The gRPC figures: batched INSERT, MODIFY, DELETE, the wildcard Read and
    one-entry INSERTs (requests built inside the timed loop)."""
    from finsy.proto import p4r

    p4info, device_config = _program(p4info_path, json_path)
    t = _table(p4info, kind)
    s = _Session(address, p4info, device_config)
    try:
        ents = [_entry(p4r, t, kind, i, 1) for i in range(entries)]
        mods = [_entry(p4r, t, kind, i, 2) for i in range(entries)]

        def write_all(utype, items, size) -> None:
            for i in range(0, len(items), size):
                s.stub.Write(_write_request(p4r, utype, items[i:i + size]))

        def read_all() -> None:
            n = sum(len(resp.entities) for resp in s.stub.Read(_read_request(p4r, t)))
            assert n == entries, f"read {n} entries, expected {entries}"

        local = address is None
        results = _batched_cycles(write_all, read_all, ents, mods, batch, repeat, "", local)
        few = ents[:single]

        def singles() -> Span:
            span = _timed(lambda: write_all(p4r.Update.INSERT, few, 1))
            write_all(p4r.Update.DELETE, few, batch)
            return span

        results.append(_best("INSERT, one entry per Write", single,
                             [singles() for _ in range(repeat)], local))
    finally:
        s.close()
    return results


def run_direct(entries: int, batch: int, kind: str, repeat: int) -> list[Result]:
    """The switch's own share: the batched cycle handed to `Device.write` and
    `Device.read` in this process (no gRPC, requests built beforehand)."""
    from finsy.proto import p4r
    from p4scope.switch.device import Device, DeviceOptions
    from p4scope.switch.p4runtime.arbitration import Connection

    p4info, device_config = _compile()
    t = _table(p4info, kind)
    dev = Device(DeviceOptions())
    conn = Connection(lambda msg: None, "bench")
    dev.stream_request(conn, p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(
        device_id=0, election_id=p4r.Uint128(low=1))))
    cfg = p4r.SetForwardingPipelineConfigRequest(
        device_id=0, election_id=p4r.Uint128(low=1),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
    cfg.config.p4info.CopyFrom(p4info)
    cfg.config.p4_device_config = device_config
    dev.set_pipeline(cfg)
    ents = [_entry(p4r, t, kind, i, 1) for i in range(entries)]
    mods = [_entry(p4r, t, kind, i, 2) for i in range(entries)]
    built: dict = {}

    def requests(utype, items, size):
        """The Writes and their bytes, as the gRPC server hands them to the device."""
        key = (utype, id(items), size)
        if key not in built:
            reqs = [_write_request(p4r, utype, items[i:i + size])
                    for i in range(0, len(items), size)]
            built[key] = [(w, w.SerializeToString()) for w in reqs]
        return built[key]

    for utype, items in ((p4r.Update.INSERT, ents), (p4r.Update.MODIFY, mods),
                         (p4r.Update.DELETE, ents)):
        requests(utype, items, batch)
    rr = _read_request(p4r, t)

    def write_all(utype, items, size) -> None:
        for w, wire in requests(utype, items, size):
            if dev.write(w, wire) is not None:
                raise AssertionError("a batched write failed")

    def read_all() -> None:
        n = sum(len(resp.entities) for resp in dev.read(rr))
        assert n == entries, f"read {n} entries, expected {entries}"

    return _batched_cycles(write_all, read_all, ents, mods, batch, repeat, " (Device, no gRPC)")


def run_lpm_load(address: Optional[str], entries: int, batch: int,
                 p4info_path: Optional[Path] = None,
                 json_path: Optional[Path] = None) -> LoadResult:
    """Loads `entries` LPM entries into an empty table over gRPC, each batch
    built just before its Write (so the client holds one batch at a time)."""
    from finsy.proto import p4r

    p4info, device_config = _program(p4info_path, json_path)
    t = _table(p4info, "lpm")
    s = _Session(address, p4info, device_config)
    local = address is None
    try:
        gc.collect()
        before = rss_bytes() if local else None

        def load() -> None:
            for start in range(0, entries, batch):
                s.stub.Write(_prefix_request(p4r, t, start, min(entries, start + batch)))

        span = _timed(load)
        gc.collect()
        after = rss_bytes() if local else None
    finally:
        s.close()
    return LoadResult(entries, span.wall, before, after, span.cpu if local else None)


def print_results(results: list[Result], echo=print) -> None:
    w = max(len(r.what) for r in results)
    echo(f"{'operation':<{w}}  {'entries':>8}  {'seconds':>8}  {'entries/s':>10}  "
         f"{'CPU s':>7}  {'entries/CPU-s':>13}")
    for r in results:
        cpu = (f"  {r.cpu_seconds:>7.3f}  {r.cpu_rate:>13,.0f}" if r.cpu_seconds is not None
               else f"  {'-':>7}  {'-':>13}")
        echo(f"{r.what:<{w}}  {r.entries:>8}  {r.seconds:>8.3f}  {r.rate:>10,.0f}{cpu}")


def print_load(r: LoadResult, echo=print) -> None:
    cpu = f", {r.cpu_seconds:.1f} s of CPU" if r.cpu_seconds is not None else ""
    echo(f"LPM table load: {r.entries:,} entries in {r.seconds:.1f} s ({r.rate:,.0f} entries/s"
         f"{cpu})")
    if r.bytes_per_entry is None:
        echo("  memory: not measured (the switch runs in another process)")
    else:
        echo(f"  resident memory: {r.rss_before / 2**20:,.0f} MiB before, "
             f"{r.rss_after / 2**20:,.0f} MiB after: {r.bytes_per_entry:,.0f} bytes per entry "
             "(switch and engine; the client holds one batch)")


def _check_address(text: str) -> str:
    """HOST:PORT (a [v6] host in brackets); BadParameter naming --address."""
    u = urlsplit("//" + text)
    try:
        port = u.port
    except ValueError:
        port = None
    if not u.hostname or port is None or not 1 <= port <= 65535 or u.path or u.query \
            or u.fragment or u.username:
        raise typer.BadParameter(f"{text!r}: expected HOST:PORT (e.g. 127.0.0.1:9559)",
                                 param_hint="--address")
    return text


def _check_sizes(p4info, kind: str, entries: int, load: int) -> None:
    """The entries fit the tables the P4Info declares (BadParameter naming
    the option that asks for more)."""
    for option, n, k in (("--entries", entries, kind), ("--load", load, "lpm")):
        if n:
            try:
                size = _table(p4info, k).size
            except SystemExit as e:
                raise typer.BadParameter(str(e), param_hint=option) from None
            if size and n > size:
                raise typer.BadParameter(f"{n:,} entries: the {k} table holds {size:,}",
                                         param_hint=option)


def bench_p4runtime(
    entries: int = typer.Option(20000, "--entries", "-n", min=1,
                                help="Entries written in batches."),
    batch: int = typer.Option(1000, "--batch", "-b", min=1, help="Updates per WriteRequest."),
    single: int = typer.Option(2000, "--single", min=0,
                               help="Entries written one per WriteRequest."),
    kind: str = typer.Option("exact", "--kind", help="Table match kind: exact, lpm or ternary."),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Runs per figure (the best is shown)."),
    load: int = typer.Option(1_000_000, "--load", min=0,
                             help="Entries of the LPM table load (0: no load)."),
    address: Optional[str] = typer.Option(None, "--address",
                                          help="Measure a running switch (HOST:PORT) instead."),
    p4info: Optional[Path] = typer.Option(None, "--p4info", help="With --address: its P4Info."),
    json_file: Optional[Path] = typer.Option(None, "--json", help="With --address: its JSON."),
) -> None:
    """Table-write and read throughput over P4Runtime (entries/s), and a large LPM load."""
    import grpc

    if kind not in KINDS:
        raise typer.BadParameter("exact, lpm or ternary", param_hint="--kind")
    if address is None:
        for option, given in (("--p4info", p4info), ("--json", json_file)):
            if given is not None:
                raise typer.BadParameter("only with --address (the switch started here runs "
                                         "the built-in program)", param_hint=option)
    else:
        _check_address(address)
        if not p4info:
            raise typer.BadParameter("--address needs --p4info (and --json)",
                                     param_hint="--p4info")
    if json_file is not None and not json_file.is_file():
        raise typer.BadParameter(f"{json_file}: no such file", param_hint="--json")
    from google.protobuf import json_format, message, text_format

    try:
        program, _ = _program(p4info, None)
    except (OSError, ValueError, message.Error, json_format.Error, text_format.Error) as e:
        raise typer.BadParameter(f"{p4info}: {e}", param_hint="--p4info") from None
    _check_sizes(program, kind, entries, load)
    where = address or "p4scope switch (in-process, loopback)"
    typer.echo(f"P4Runtime benchmark: {where}, {kind} table, {entries} entries, "
               f"batches of {batch}, best of {repeat}")
    try:
        results = run_bench(address, entries, batch, single, kind, repeat, p4info, json_file)
        if address is None:
            results += run_direct(entries, batch, kind, repeat)
        print_results(results, typer.echo)
        if load:
            print_load(run_lpm_load(address, load, batch, p4info, json_file), typer.echo)
    except Unreachable as e:
        typer.echo(f"p4scope bench p4runtime: --address: {e}", err=True)
        raise typer.Exit(1) from None
    except grpc.RpcError as e:
        typer.echo(f"p4scope bench p4runtime: the switch at {where} answered "
                   f"{e.code().name}: {e.details()}", err=True)
        raise typer.Exit(1) from None


if __name__ == "__main__":
    from . import as_script

    as_script(lambda: typer.run(bench_p4runtime))
