"""The collector's cost per case: a microburst case's capture of INT
reports (a report per burst packet, 10^5 of them at 64 bytes) parsed into
columns, collected, turned into the collector's tables and read as the
instrument's series, as every microburst case of the main job does after
its engine run.

    .venv/bin/python -m p4scope.bench.collector [--size 64] [--repeat 7]

Measures one 2:1 case of the reference DUT (the main job's first) to get
its capture, then times each stage on it; prints the median of --repeat
runs per stage, in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

STAGES = ("parse", "collect", "tables", "instrument")


def capture(size: int):
    """The collector port's frames of the main job's first 2:1 microburst
    case with `size`-byte frames (a FrameBlock)."""
    from p4scope.experiments import measure, testbed, traffic
    from p4scope.experiments.microburst import plan as mbx
    from p4scope.experiments.microburst import virtual as mbv
    from p4scope.experiments.microburst.params import MicroburstParams
    from p4scope.experiments.params import default_profiles

    profile = default_profiles()["fair"]
    case = mbx.plan(MicroburstParams(sizes_2to1=(size,), sizes_4to1=()), {"fair": profile})[0]
    caught = []
    real = measure.collector_view

    def keep(tr):
        caught.append(tr.output_block(testbed.COLLECTOR_PORT)[1])
        return real(tr)

    measure.collector_view = keep
    try:
        with testbed.VirtualSwitch(testbed.compile_dut(), profile, 1,
                                   apply_profile=traffic.apply_profile) as vs:
            mbv.measure_burst(vs, profile, case, lambda _: None)
    finally:
        measure.collector_view = real
    return caught[0]


def stages(block) -> dict[str, Callable[[], object]]:
    """Each stage as a call, on what the stage before it gives."""
    from p4scope.control.apps.capture import CapturedReports
    from p4scope.control.report_columns import parse_report_frames
    from p4scope.experiments import instrument, measure, testbed

    cols = parse_report_frames(block, testbed.COLLECTOR_UDP)
    cap = CapturedReports(cols)
    return {
        "parse": lambda: parse_report_frames(block, testbed.COLLECTOR_UDP),
        "collect": lambda: CapturedReports(cols),
        "tables": cap.tables,
        "instrument": lambda: instrument.from_collector("bench", cap, measure.INTERVAL_LOG2_US),
    }


def median_ms(f: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m p4scope.bench.collector", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=64, help="frame size of the burst (bytes)")
    ap.add_argument("--repeat", type=int, default=7, help="runs per stage (median)")
    args = ap.parse_args(argv)
    if args.size < 64:
        ap.error(f"--size {args.size}: a frame is at least 64 bytes")
    if args.repeat < 1:
        ap.error(f"--repeat {args.repeat}: at least 1")
    block = capture(args.size)
    print(f"capture of a 2:1 microburst of {args.size}-byte frames: {len(block):,} report frames")
    ms = {name: median_ms(f, args.repeat) for name, f in stages(block).items()}
    for name, v in ms.items():
        print(f"  {name:11s} {v:7.1f} ms")
    case = ms["parse"] + ms["collect"] + ms["instrument"]
    print(f"  a case's: {case:.1f} ms (parse, collect, instrument; the instrument reads the tables)")


if __name__ == "__main__":
    main()
