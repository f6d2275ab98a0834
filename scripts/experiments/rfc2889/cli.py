"""`p4scope run rfc2889`: the RFC 2889 suite against the reference DUT in
virtual time. Bad options exit 2 naming the option."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli as V
from ..params import ParamError, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import LOADS, STANDARD_SIZES, TESTS, Rfc2889Params, parse_loads


def _rate(text: str, option: str) -> int:
    from ...topologies.spec import TopologyError, parse_rate

    try:
        return parse_rate(text, option)
    except TopologyError as e:
        raise ParamError(str(e)) from None


def command(
        tests: str = typer.Option(",".join(TESTS), "--tests", help="Which tests: "
                                  + ", ".join(TESTS) + "."),
        sizes: str = typer.Option(",".join(map(str, STANDARD_SIZES)), "--sizes",
                                  help="Frame sizes (B, FCS included) of the forwarding, "
                                       "congestion, maximum forwarding rate and broadcast tests."),
        ports: int = typer.Option(4, "--ports", help="The DUT's ports 1..N, 2..63 (congestion "
                                  "control needs 4, the address tests 3)."),
        line_rate: str = typer.Option("100G", "--line-rate", help="Every port's line rate "
                                      "(1M..400G, e.g. 1G, 10G, 100G)."),
        loads: str = typer.Option(",".join(f"{x:g}" for x in LOADS), "--loads",
                                  help="The forwarding tests' offered loads, % of line rate per "
                                       "sending port."),
        tolerance: float = typer.Option(0.0, "--tolerance-pct", help="Loss a throughput trial "
                                        "may have, % (0: RFC 2889)."),
        resolution: float = typer.Option(1.0, "--resolution-pct", help="Throughput search "
                                         "resolution, % of line rate (0.001..10)."),
        trial_frames: Optional[int] = typer.Option(
            None, "--trial-frames", show_default=False, help="A trial lasts as long as a port "
            "takes to send this many frames at line rate (default: an overload of one resolution "
            "step shows as 50 frames)."),
        trial_us: Optional[float] = typer.Option(None, "--trial-us", show_default=False,
                                                 help="A trial's length in microseconds of "
                                                      "virtual time (instead of --trial-frames)."),
        dut_rate: float = typer.Option(100.0, "--dut-rate-pct", help="Shape the DUT's egress "
                                       "ports to this % of line rate (a DUT with a known limit)."),
        address_sizes: str = typer.Option("64", "--address-sizes", help="Frame sizes of the "
                                          "address caching and learning tests."),
        max_addresses: int = typer.Option(1024, "--max-addresses", help="Address caching: the "
                                          "largest address count tried (1..1000000)."),
        learn_fps: float = typer.Option(20.0, "--learn-fps", help="Address caching: the "
                                        "learning rate, frames/s (the seed's 20)."),
        learning_addresses: str = typer.Option("100,500", "--learning-addresses",
                                               help="Address learning rate: the address counts."),
        learn_rate_max: float = typer.Option(10_000.0, "--learn-rate-max-fps",
                                             help="Address learning rate: the highest rate tried, "
                                                  "frames/s."),
        learn_rate_res: float = typer.Option(100.0, "--learn-rate-resolution-fps",
                                             help="Address learning rate: the search's "
                                                  "resolution, frames/s."),
        ageing_s: float = typer.Option(300.0, "--ageing-s", help="The controller's MAC ageing "
                                       "time, s (longer than a trial: nothing ages in one)."),
        ifg_bits: int = typer.Option(88, "--ifg-bits", help="Forward pressure: the gap the "
                                     "source keeps between frames, 8..95 bit (below "
                                     "Ethernet's 96: more than line rate)."),
        dut_ifg_bits: int = typer.Option(96, "--dut-ifg-bits", help="Forward pressure: the "
                                         "DUT's own transmit gap, a multiple of 8 bit (less than "
                                         "96: a DUT that sends too fast, the test fails)."),
        dut_mtu: int = typer.Option(1500, "--dut-mtu", help="Errored frames: the MTU of the "
                                    "DUT's receiving port, 46..9198 B (its largest frame: MTU "
                                    "+ 18)."),
        pass_errored: bool = typer.Option(False, "--pass-errored", help="Errored frames: the "
                                          "DUT's receiving port passes errored frames to the "
                                          "pipeline (the test fails)."),
        mac_table_size: Optional[int] = typer.Option(
            None, "--mac-table-size", show_default=False, help="Compile the DUT with this MAC "
            "table size (-DMAC_TABLE_SIZE; default: the program's, 65536)."),
        buffer_mb: float = without_panel(V.BUFFER), alpha: float = without_panel(V.ALPHA),
        cell_bytes: int = without_panel(V.CELL), seed: int = without_panel(V.SEED),
        program: Path = without_panel(V.PROGRAM),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT) -> None:
    """RFC 2889 (seed 003): forwarding in a full mesh and partial meshes 1:N and N:N,
    congestion control, maximum forwarding rate, address caching capacity and learning
    rate, broadcast forwarding rate and latency, with Xena-style Pass/Fail, against the
    reference DUT in virtual time."""
    from .run import execute

    try:
        p = Rfc2889Params(
            sizes=parse_int_list(sizes, "--sizes"), ports=ports,
            rate_bps=float(_rate(line_rate, "--line-rate")),
            tests=tuple(t.strip() for t in tests.split(",") if t.strip()),
            loads=parse_loads(loads), tolerance_pct=tolerance, resolution_pct=resolution,
            trial_frames=trial_frames, trial_us=trial_us, dut_rate_pct=dut_rate,
            address_sizes=parse_int_list(address_sizes, "--address-sizes"),
            max_addresses=max_addresses, learn_fps=learn_fps,
            learning_addresses=parse_int_list(learning_addresses, "--learning-addresses"),
            learn_rate_max_fps=learn_rate_max, learn_rate_resolution_fps=learn_rate_res,
            ageing_s=ageing_s, mac_table_size=mac_table_size, ifg_bits=ifg_bits,
            dut_ifg_bits=dut_ifg_bits, dut_mtu=dut_mtu, pass_errored=pass_errored).check()
        profile = next(iter(V.profiles("fair", buffer_mb, alpha, cell_bytes, seed).values()))
    except ParamError as e:
        V.fail(str(e))
    V.run_to_end(lambda: execute(p, profile, seed, results, run_id, program, progress, report,
                                 echo=lambda s: typer.echo(s, err=True)), program)
