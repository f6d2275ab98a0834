"""`p4scope run lossless`: seed 001's lossy TCP beside lossless RoCEv2 on
the reference DUT in virtual time: an N:1 incast of both classes into one
egress, PFC off and on."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .. import virtual_cli
from ..params import ParamError
from ..run_options import PROGRESS, REPORT, RESULTS, RUN_ID, without_panel
from .params import ECN_MAX_BYTES, ECN_MIN_BYTES, HEADROOM_BYTES, LosslessParams

_D = LosslessParams()


def command(
        senders: int = typer.Option(_D.senders, "--senders", help="Sender ports 1..N, each "
                                    "with a lossy and a lossless flow (N:1 incast), 2..32."),
        egress: int = typer.Option(_D.egress, "--egress", help="The egress port both classes "
                                   "go to."),
        flow_frames: int = typer.Option(_D.flow_frames, "--flow-frames", help="Frames of each "
                                        "flow, 10..1,000,000."),
        lossy_size: int = typer.Option(_D.lossy_size, "--lossy-size", help="Lossy (TCP-like) "
                                       "frame size, B (FCS included)."),
        lossless_size: int = typer.Option(_D.lossless_size, "--lossless-size", help="Lossless "
                                          "(RoCEv2-like) frame size, B: 2110 is a 2048-byte "
                                          "RoCE MTU (seed 001) and its headers."),
        lossy_pct: float = typer.Option(_D.lossy_pct, "--lossy-pct", help="Each sender's lossy "
                                        "rate, % of line rate."),
        lossless_pct: float = typer.Option(_D.lossless_pct, "--lossless-pct", help="Each "
                                           "sender's lossless rate, % of line rate."),
        cnp_fps: float = typer.Option(_D.cnp_fps, "--cnp-fps", help="CNPs per second from port "
                                      "N+1 into the egress (priority 7, strict); 0: none."),
        pfc: str = typer.Option(",".join(_D.pfc), "--pfc", help="The cases: off, on or both."),
        xoff_bytes: int = typer.Option(_D.xoff_bytes, "--xoff-bytes", help="What a sender "
                                       "port's lossless priority may hold before the switch "
                                       "pauses it."),
        xon_bytes: int = typer.Option(_D.xon_bytes, "--xon-bytes", help="At or below this, the "
                                      "switch resumes it (not above --xoff-bytes)."),
        headroom_bytes: int = typer.Option(HEADROOM_BYTES, "--headroom-bytes", help="Buffer "
                                           "kept for each sender port's lossless priority for "
                                           "frames in flight when the pause goes out (default: "
                                           "seed 001's 4800 cells of 256 B over 32 ports)."),
        quanta: int = typer.Option(_D.quanta, "--quanta", help="Pause time an XOFF carries, in "
                                   "512-bit-time quanta, 1..65535."),
        ecn_min_bytes: int = typer.Option(ECN_MIN_BYTES, "--ecn-min-bytes", help="RED-like ECN "
                                          "on the lossless queue: marking starts (seed 001)."),
        ecn_max_bytes: int = typer.Option(ECN_MAX_BYTES, "--ecn-max-bytes", help="... every "
                                          "ECN-capable frame marked from here (seed 001)."),
        ecn_pmax: float = typer.Option(_D.ecn_pmax, "--ecn-pmax", help="Marking probability "
                                       "reached at --ecn-max-bytes, 0..1."),
        ignore_pause: bool = typer.Option(False, "--ignore-pause", help="Senders ignore the "
                                          "pause frames (what PFC prevents: the headroom "
                                          "overruns)."),
        buffer_mb: float = without_panel(virtual_cli.BUFFER), alpha: float = without_panel(virtual_cli.ALPHA),
        cell_bytes: int = without_panel(virtual_cli.CELL), seed: int = without_panel(virtual_cli.SEED),
        program: Path = without_panel(virtual_cli.PROGRAM), results: Path = RESULTS,
        run_id: Optional[str] = RUN_ID, progress: bool = PROGRESS, report: bool = REPORT,
        jobs: int = without_panel(virtual_cli.JOBS),
        cluster: Optional[str] = without_panel(virtual_cli.CLUSTER)) -> None:
    """A lossless class beside a lossy one (seed 001, TCP + RoCEv2): N senders each with a
    lossy TCP-like and a lossless RoCEv2-like flow into one egress, PFC off and on; loss per
    class, completion times, pause time per port."""
    from .run import execute

    try:
        p = LosslessParams(
            senders=senders, egress=egress, flow_frames=flow_frames, lossy_size=lossy_size,
            lossless_size=lossless_size, lossy_pct=lossy_pct, lossless_pct=lossless_pct,
            cnp_fps=cnp_fps, pfc=tuple(x.strip() for x in pfc.split(",") if x.strip()),
            xoff_bytes=xoff_bytes, xon_bytes=xon_bytes, headroom_bytes=headroom_bytes,
            quanta=quanta, ecn_min_bytes=ecn_min_bytes, ecn_max_bytes=ecn_max_bytes,
            ecn_pmax=ecn_pmax, obey_pause=not ignore_pause).check()
        base = virtual_cli.profiles("fair", buffer_mb, alpha, cell_bytes, seed)["fair"]
        p.check_profile(base)
    except ParamError as e:
        virtual_cli.fail(str(e))
    virtual_cli.run_to_end(lambda: execute(p, base, seed, results, run_id, program, progress, report,
                                 jobs=jobs, cluster=cluster,
                                 echo=lambda s: typer.echo(s, err=True)), program)
