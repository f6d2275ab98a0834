"""`p4scope run rfc2889`: the RFC 2889 suite against the reference DUT in
virtual time (--mode virtual, through a chain of switches with --chain N),
or against a DUT in Mininet with real traffic (--mode mininet, root: the
reference DUT in p4scope switch or BMv2, the Linux bridge, or a Mininet
switch class). Bad options, and options of the other mode, exit 2 naming
the option; a Mininet run exits 3 when this machine cannot run it."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer

from .. import mode_cli, virtual_cli
from ..mode_cli import MININET_PANEL
from ..params import Mode, ParamError, check_rate, parse_int_list
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID
from .params import (CHAIN_TESTS, LOADS, MAX_CHAIN, MODE_DEFAULTS, NOT_IN_MININET,
                     STANDARD_SIZES, TESTS, Rfc2889Params, parse_loads)

_V, _M = MODE_DEFAULTS["virtual"], MODE_DEFAULTS["mininet"]
LOADS_TEXT = ",".join(f"{x:g}" for x in LOADS)


def command(
        ctx: typer.Context,
        mode: Mode = virtual_cli.MODE,
        tests: Optional[str] = typer.Option(
            None, "--tests", show_default=False, help="Which tests (default: all; in Mininet "
            "all but " + ", ".join(NOT_IN_MININET) + "; through a chain: "
            + ", ".join(CHAIN_TESTS) + "): " + ", ".join(TESTS) + "."),
        sizes: str = typer.Option(",".join(map(str, STANDARD_SIZES)), "--sizes",
                                  help="Frame sizes (B, FCS included) of the forwarding, "
                                       "congestion, maximum forwarding rate and broadcast tests."),
        ports: Optional[int] = typer.Option(
            None, "--ports", show_default=False, help="The DUT's ports 1..N, 2..63 (congestion "
            "control needs 4, the address tests 3; default 4, in Mininet two per core of this "
            "machine, 4..16)."),
        line_rate: Optional[str] = typer.Option(
            None, "--line-rate", show_default=False, help="Every port's line rate (1M..400G, "
            "e.g. 1G, 10G, 100G; default 100G, in Mininet 10M: what the tester says a port is)."),
        loads: str = typer.Option(LOADS_TEXT, "--loads",
                                  help="The forwarding tests' offered loads, % of line rate per "
                                       "sending port."),
        tolerance: float = typer.Option(0.0, "--tolerance-pct", help="Loss a throughput trial "
                                        "may have, % (0: RFC 2889)."),
        resolution: float = typer.Option(1.0, "--resolution-pct", help="Throughput search "
                                         "resolution, % of line rate (0.001..10)."),
        trial_frames: Optional[int] = typer.Option(
            None, "--trial-frames", show_default=False, rich_help_panel=virtual_cli.VIRTUAL_PANEL,
            help="A trial lasts as long as a port takes to send this many frames at line rate "
                 "(default: an overload of one resolution step shows as 50 frames)."),
        trial_us: Optional[float] = typer.Option(None, "--trial-us", show_default=False,
                                                 rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                                 help="A trial's length in microseconds of "
                                                      "virtual time (instead of --trial-frames)."),
        dut_rate: float = typer.Option(100.0, "--dut-rate-pct", help="Shape the DUT's egress "
                                       "ports to this % of line rate (a DUT with a known limit)."),
        address_sizes: str = typer.Option("64", "--address-sizes", help="Frame sizes of the "
                                          "address caching and learning tests."),
        max_addresses: Optional[int] = typer.Option(
            None, "--max-addresses", show_default=False, help=f"Address caching: the largest "
            f"address count tried (1..1000000; default {_V['max_addresses']}, in Mininet "
            f"{_M['max_addresses']})."),
        learn_fps: Optional[float] = typer.Option(
            None, "--learn-fps", show_default=False, help=f"Address caching: the learning rate, "
            f"frames/s (default the seed's {_V['learn_fps']:g}, in Mininet {_M['learn_fps']:g})."),
        learning_addresses: str = typer.Option("100,500", "--learning-addresses",
                                               help="Address learning rate: the address counts."),
        learn_rate_max: float = typer.Option(10_000.0, "--learn-rate-max-fps",
                                             help="Address learning rate: the highest rate tried, "
                                                  "frames/s."),
        learn_rate_res: float = typer.Option(100.0, "--learn-rate-resolution-fps",
                                             help="Address learning rate: the search's "
                                                  "resolution, frames/s."),
        ageing_s: float = typer.Option(300.0, "--ageing-s", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                       help="The controller's MAC ageing time, s: the learnt "
                                            "entries' idle timeout, aged in virtual time; "
                                            "RFC 2889 asks for one longer than an address "
                                            "trial (2 x addresses / rate), a shorter one is "
                                            "refused."),
        ifg_bits: int = typer.Option(
            88, "--ifg-bits", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="Forward pressure: the gap "
            "the source keeps between frames, 8..95 bit (below Ethernet's 96: more than line "
            "rate)."),
        dut_ifg_bits: int = typer.Option(
            96, "--dut-ifg-bits", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="Forward pressure: the "
            "DUT's own transmit gap, a multiple of 8 bit (less than 96: a DUT that sends too "
            "fast, the test fails)."),
        dut_mtu: int = typer.Option(
            1500, "--dut-mtu", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="Errored frames: the MTU "
            "of the DUT's receiving port, 46..9198 B (its largest frame: MTU + 18)."),
        pass_errored: bool = typer.Option(
            False, "--pass-errored", rich_help_panel=virtual_cli.VIRTUAL_PANEL, help="Errored frames: the "
            "DUT's receiving port passes errored frames to the pipeline (the test fails)."),
        mac_table_size: Optional[int] = typer.Option(
            None, "--mac-table-size", show_default=False, rich_help_panel=virtual_cli.VIRTUAL_PANEL,
            help="Compile the DUT with this MAC table size (-DMAC_TABLE_SIZE; default: the "
                 "program's, 65536)."),
        chain: int = typer.Option(1, "--chain", rich_help_panel=virtual_cli.VIRTUAL_PANEL,
                                  help=f"Switches in a row, 1..{MAX_CHAIN}, the tester on the "
                                       "first and the last (seed 003's 4 layers): the "
                                       "forwarding tests through the chain and the latency per "
                                       "layer."),
        buffer_mb: float = virtual_cli.BUFFER, alpha: float = virtual_cli.ALPHA, cell_bytes: int = virtual_cli.CELL,
        seed: int = virtual_cli.SEED, program: Path = virtual_cli.PROGRAM,
        dut: str = typer.Option("p4scope", "--dut", rich_help_panel=MININET_PANEL,
                                help="The switch under test: p4scope (the reference DUT, "
                                     "learning through the controller), bmv2 (the same in "
                                     "simple_switch_grpc), bridge (the Linux bridge, learning "
                                     "in the kernel) or module:Class (a Mininet switch class; "
                                     "no address tests)."),
        trial_s: Optional[float] = typer.Option(
            None, "--trial-s", show_default=False, rich_help_panel=MININET_PANEL,
            help=f"Seconds a forwarding trial lasts, 0.05..60 (default {_M['trial_s']:g})."),
        results: Path = RESULTS, run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS,
        report: bool = REPORT,
        jobs: int = virtual_cli.JOBS,
        cluster: Optional[str] = virtual_cli.CLUSTER) -> None:
    """RFC 2889 (seed 003): forwarding in a full mesh and partial meshes 1:N and N:N,
    congestion control, maximum forwarding rate, address caching capacity and learning
    rate, broadcast forwarding rate and latency, with Xena-style Pass/Fail.

    --mode virtual (default): the reference DUT in virtual time (--chain N: through N
    of them in a row). --mode mininet (root): real traffic through --dut in Mininet."""
    mode_cli.refuse_other_mode(ctx, mode)
    try:
        p = Rfc2889Params.for_mode(
            mode.value, sizes=parse_int_list(sizes, "--sizes"), ports=ports,
            rate_bps=_float(check_rate(line_rate, "--line-rate")),
            tests=None if tests is None else tuple(t.strip() for t in tests.split(",")
                                                   if t.strip()),
            loads=parse_loads(loads), tolerance_pct=tolerance, resolution_pct=resolution,
            trial_frames=trial_frames, trial_us=trial_us, dut_rate_pct=dut_rate,
            address_sizes=parse_int_list(address_sizes, "--address-sizes"),
            max_addresses=max_addresses, learn_fps=learn_fps,
            learning_addresses=parse_int_list(learning_addresses, "--learning-addresses"),
            learn_rate_max_fps=learn_rate_max, learn_rate_resolution_fps=learn_rate_res,
            ageing_s=ageing_s, mac_table_size=mac_table_size, ifg_bits=ifg_bits,
            dut_ifg_bits=dut_ifg_bits, dut_mtu=dut_mtu, pass_errored=pass_errored, chain=chain,
            **({"dut": dut.strip(), "trial_s": trial_s} if mode is Mode.mininet else {})).check()
        if mode is Mode.virtual:
            profile = mode_cli.one_profile("fair", buffer_mb, alpha, cell_bytes, seed)
    except ParamError as e:
        virtual_cli.fail(str(e))
    from .run import execute, execute_mininet

    if mode is Mode.mininet:
        mode_cli.mininet_duts([p.dut], "rfc2889", _fail)
        virtual_cli.run_to_end(lambda: execute_mininet(p, results, run_id, progress, report,
                                                       echo=virtual_cli.echo))
        return
    virtual_cli.run_to_end(lambda: execute(p, profile, seed, results, run_id, program, progress,
                                           report, jobs=jobs, cluster=cluster,
                                           echo=virtual_cli.echo), program)


def _float(x: Optional[int]) -> Optional[float]:
    return None if x is None else float(x)


def _fail(msg: str, code: int) -> NoReturn:
    virtual_cli.fail(msg, code, "rfc2889")
