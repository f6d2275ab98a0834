"""`p4scope run tcp-incast`: seed 001's TCP incast, in Mininet only (the
virtual-time engine has no TCP stacks)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..mininet import cli as mininet_cli
from ..mininet.shape import parse_size
from ..params import Mode, ParamError
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .job import IncastParams


def command(
    mode: Mode = typer.Option(Mode.mininet, "--mode",
                              help="mininet, the only mode of this run: the virtual-time engine "
                                   "has no TCP stacks."),
    senders: int = typer.Option(16, "--senders", help="Sending hosts, 1..64 (seed 001: 16)."),
    flows: int = typer.Option(16, "--flows", help="TCP flows per sender, 1..64 (seed 001: 16)."),
    flow_bytes: str = typer.Option("256K", "--flow-bytes", help="Bytes per flow, 1..64G; a comma list runs one job per size (seed 001: 200M..10G at 100GbE; scale to the link)."),
    link_bw: str = typer.Option("100M", "--link-bw", help="Rate of every host link (htb), 1k..400G."),
    receiver_bw: Optional[str] = typer.Option(None, "--receiver-bw", help="Rate of the receiver's link (default: --link-bw)."),
    queue_packets: int = typer.Option(200, "--queue-packets", help="Packets the receiver link's queue holds, 1..100000 (0: the kernel's default)."),
    window: str = typer.Option("256K", "--window", help="Socket buffer of every flow, 4K..64M (seed 001: 256KB TCP window)."),
    repeats: int = typer.Option(1, "--repeats", help="Jobs per size and switch, 1..100."),
    bin_ms: float = typer.Option(10.0, "--bin-ms", help="Bins of the aggregate rate at the receiver (ms), 1..1000."),
    switch: str = without_panel(mininet_cli.SWITCH), bmv2: bool = without_panel(mininet_cli.BMV2), results: Path = RESULTS,
    run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS, report: bool = REPORT,
) -> None:
    """TCP incast (seed 001), in Mininet only (root).

    Senders x flows to one receiver through the reference DUT; aggregate rate over
    time, flow and job completion times, queue telemetry alongside."""

    if mode is not Mode.mininet:
        mininet_cli.fail(f"--mode {mode.value}: tcp-incast needs real TCP stacks, so it runs in Mininet only "
              "(--mode mininet); the virtual-time engine has no TCP")
    try:
        p = IncastParams(
            senders=senders, flows=flows,
            flow_bytes=tuple(parse_size(x, "--flow-bytes") for x in flow_bytes.split(",") if x.strip()),
            link_bw=link_bw, receiver_bw=receiver_bw,
            queue_packets=queue_packets or None, window_bytes=parse_size(window, "--window"),
            repeats=repeats, bin_ms=bin_ms, kinds=mininet_cli.kinds_option(switch, bmv2)).check()
    except ParamError as e:
        mininet_cli.fail(str(e))
    from .mininet import execute_incast

    mininet_cli.execute_in_mininet("tcp-incast", execute_incast, p, results, run_id, progress, report)


