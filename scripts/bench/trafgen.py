"""Benchmark: packets per second of p4scope-trafgen across one veth pair.

    .venv/bin/p4scope bench trafgen [--seconds 3] [--sizes 64,512,1518] [--batch 64]
    .venv/bin/python -m p4scope.bench.trafgen

For each frame size, the generator sends as fast as it can for a few
seconds from one end of a veth pair (in a namespace made for the run and
removed after it), first with nothing reading the other end ("send only":
the peer's stack drops the frames), then with the analyzer on it ("send +
analyze": what a stream through a switch can reach at most on this
machine). Needs root.
"""

from __future__ import annotations

import os
from typing import List

import typer

from p4scope.topologies import traffic
from p4scope.topologies.vethlab import VethLab


def _row(label: str, size: int, sent: dict, recv: dict | None) -> str:
    tx_pps = sent["tx_packets"] / sent["elapsed_s"]
    gbps = tx_pps * (size - 4) * 8 / 1e9
    if recv is None:
        return f"{label:<15} {size:>6} {tx_pps / 1e3:>10.0f} {'-':>10} {gbps:>8.2f} {'-':>9} {'-':>9}"
    (r,) = traffic.combine(sent, recv)
    drops = recv["ring"]["drops"]
    return (f"{label:<15} {size:>6} {tx_pps / 1e3:>10.0f} {r.rx_pps / 1e3:>10.0f} {gbps:>8.2f} "
            f"{100 * r.loss_ratio:>8.2f}% {drops:>9}")


def _sizes(text: str) -> List[int]:
    """--sizes as integers (the lab's veths carry packets of up to 9500 bytes)."""
    from p4scope.experiments.params import ParamError, parse_int_list

    try:
        out = list(parse_int_list(text, "--sizes"))
    except ParamError as e:
        raise typer.BadParameter(str(e)) from None  # it names --sizes
    if any(not 64 <= s <= 9518 for s in out):
        raise typer.BadParameter(f"{text!r}: give frame sizes of 64..9518 bytes, comma-separated",
                                 param_hint="--sizes")
    return out


def bench_trafgen(
    seconds: float = typer.Option(3.0, min=0.1, max=3600, help="Seconds per measurement."),
    sizes: str = typer.Option("64,512,1518", help="Frame sizes (with FCS), comma-separated, "
                                                  "64..9518."),
    batch: int = typer.Option(64, min=1, max=1024, help="Frames per sendmmsg call."),
    qdisc_bypass: bool = typer.Option(False, help="Send with PACKET_QDISC_BYPASS."),
) -> None:
    """Packets/s of the traffic generator across a veth pair (root)."""
    if os.geteuid() != 0:
        typer.echo("bench trafgen needs root (a network namespace and raw sockets)", err=True)
        raise typer.Exit(2)
    size_list = _sizes(sizes)
    typer.echo(f"p4scope-trafgen across a veth pair: {seconds:g} s each, batch {batch}"
               f"{', qdisc bypass' if qdisc_bypass else ''}; {os.cpu_count()} CPUs, "
               f"load {os.getloadavg()[0]:.2f}")
    typer.echo(f"{'mode':<15} {'size':>6} {'tx kpps':>10} {'rx kpps':>10} {'tx Gb/s':>8} "
               f"{'loss':>9} {'ring drop':>9}")
    with VethLab([("tga", "tgb")], mtu=9500) as lab:
        for size in size_list:
            # unicast to an address the peer does not own: its stack drops the
            # frames at once, as a switch port's stack does
            stream = [traffic.Stream(1, dst="02:00:00:00:00:02", size=size, rate="max")]
            sent = traffic.send(lab.netns, "tga", stream, duration=seconds, batch=batch,
                          qdisc_bypass=qdisc_bypass)
            typer.echo(_row("send only", size, sent, None))
            rx = traffic.start_receiver(lab.netns, "tgb", idle=0.5)
            sent = traffic.send(lab.netns, "tga", stream, duration=seconds, batch=batch,
                          qdisc_bypass=qdisc_bypass)
            typer.echo(_row("send + analyze", size, sent, rx.result()))


def main() -> None:
    typer.run(bench_trafgen)


if __name__ == "__main__":
    from . import as_script

    as_script(main)
