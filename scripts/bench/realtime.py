"""Benchmark: the engine's real-time loop between veth pairs, per-packet
traces off and on.

    .venv/bin/p4scope bench realtime [--seconds 3] [--size 64] [--rate max] [--repeats 3]

p4scope-trafgen sends one stream into the loop's port 1 (veth pairs in a
namespace made for the run and removed after it); the loop forwards it
with bench.engine's L2/L3 program (lpm route, next-hop MAC rewrite, TTL,
IPv4 checksum) to port 2, where the analyzer counts it. Each run has the
engine in a child process inside the namespace (it opens the interfaces by
name there). Traces "on" records every packet as `--log-console -L debug`
does; the records are taken and discarded, so the figure is the loop's
cost, not the cost of writing a log. Reported per mode (medians over the
repeats): the received rate, the loss, and the CPU time per forwarded
packet of the loop's threads (the loop and its sending thread, /proc
schedstat), which stays meaningful when other work shares the CPUs. Needs
root.
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import typer

MODES = ("off", "on")
PAIRS = [("rta0", "rta1"), ("rtb0", "rtb1")]


LOOP_THREADS = ("p4scope-rt", "p4scope-tx")  # the loop and its sending thread


def _loop_cpu_ns() -> int:
    """CPU time of this process's real-time loop and its sending thread."""
    total = 0
    for task in glob.glob(f"/proc/{os.getpid()}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                if f.read().strip() not in LOOP_THREADS:
                    continue
            with open(f"{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            continue
    return total


def _positive_number(text: str) -> bool:
    try:
        return 0 < float(text) < float("inf")
    except ValueError:
        return False


def _child(netns: str, mode: str, size: int, seconds: float, rate: str) -> dict:
    """One run, inside the namespace: engine, loop, traffic, figures."""
    import p4scope_dataplane as dp

    from p4scope.bench.engine import l2l3_json
    from p4scope.topologies import traffic as T

    e = dp.Engine(l2l3_json())
    e.table_add("ingress.ipv4_lpm", "ingress.set_nhop", [("lpm", 10 << 24, 24)], [0, 2])
    e.table_add("ingress.forward", "ingress.set_dmac", [0], [0x020000000002])
    e.rt_add_port(1, PAIRS[0][1])
    e.rt_add_port(2, PAIRS[1][1])
    e.rt_trace(packets=mode == "on", log=mode == "on")
    e.rt_start()
    taken = [0]
    stop = threading.Event()

    def drain() -> None:  # what the daemon's events thread does, minus the log
        while not stop.is_set():
            taken[0] += len(e.rt_take_traces(65536))
            time.sleep(0.005)

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    try:
        rx = T.start_receiver(netns, PAIRS[1][0], idle=1.0)
        stream = T.Stream(1, dst="02:00:00:00:00:01", ip_dst="10.0.0.2", size=size,
                          rate=rate if rate == "max" else float(rate))
        sent = T.send(netns, PAIRS[0][0], [stream], duration=seconds)
        (r,) = T.combine(sent, rx.result())
        cpu = _loop_cpu_ns()
        st = e.rt_stats()
    finally:
        stop.set()
        th.join()
        e.rt_stop()
    return {"mode": mode, "tx_pps": r.tx_pps, "rx_pps": r.rx_pps, "rx": r.rx_packets,
            "loss": r.loss_ratio, "cpu_ns_per_pkt": cpu / max(r.rx_packets, 1),
            "records": taken[0] + len(e.rt_take_traces(1 << 30)),
            "records_lost": st["traces_dropped"]}


def bench_realtime(
    seconds: float = typer.Option(3.0, min=0.1, max=3600, help="Seconds per run."),
    size: int = typer.Option(64, min=64, max=1518, help="Frame size (with FCS)."),
    rate: str = typer.Option("max", help='"max" or frames per second.'),
    repeats: int = typer.Option(3, min=1, max=50, help="Runs per mode (modes interleaved)."),
) -> None:
    """The real-time loop's rate and CPU per packet, traces off and on (root)."""
    if rate != "max" and not _positive_number(rate):
        raise typer.BadParameter(f"{rate!r}: give max or a number of frames per second above 0",
                                 param_hint="--rate")
    if os.geteuid() != 0:
        typer.echo("bench realtime needs root (a network namespace and raw sockets)", err=True)
        raise typer.Exit(2)
    from p4scope.topologies.vethlab import VethLab

    typer.echo(f"real-time loop, {size}-byte frames at {rate}, {seconds:g} s x {repeats} per mode; "
               f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    runs: dict[str, list[dict]] = {m: [] for m in MODES}
    with VethLab(PAIRS) as lab:
        for _ in range(repeats):
            for mode in MODES:
                argv = ["ip", "netns", "exec", lab.netns, sys.executable, "-m",
                        "p4scope.bench.realtime", "child", lab.netns, mode, str(size),
                        str(seconds), rate]
                p = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 120)
                if p.returncode != 0:
                    typer.echo(f"run failed: {p.stderr.strip()}", err=True)
                    raise typer.Exit(1)
                runs[mode].append(json.loads(p.stdout.strip().splitlines()[-1]))
    typer.echo(f"{'traces':<7} {'tx kpps':>8} {'rx kpps':>8} {'loss':>7} {'loop CPU ns/pkt':>16} "
               f"{'records':>9}  (per run: rx kpps / ns per packet)")
    for mode, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs)
               for k in ("tx_pps", "rx_pps", "loss", "cpu_ns_per_pkt", "records")}
        each = ", ".join(f"{r['rx_pps'] / 1e3:.0f}/{r['cpu_ns_per_pkt']:.0f}" for r in rs)
        typer.echo(f"{mode:<7} {med['tx_pps'] / 1e3:>8.1f} {med['rx_pps'] / 1e3:>8.1f} "
                   f"{100 * med['loss']:>6.2f}% {med['cpu_ns_per_pkt']:>16.0f} "
                   f"{med['records']:>9.0f}  ({each})")


def main() -> None:
    if sys.argv[1:2] == ["child"]:
        netns, mode, size, seconds, rate = sys.argv[2:7]
        print(json.dumps(_child(netns, mode, int(size), float(seconds), rate)))
        return
    typer.run(bench_realtime)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
