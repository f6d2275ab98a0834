"""The RFC 2889 full mesh in virtual time, timed: every port sends to every
other at the offered load, one trial, on the reference DUT through the
plug-in's own forwarding trial (`p4scope run rfc2889`'s full mesh at one
load, without the throughput search).

    .venv/bin/python -m p4scope.bench.rfc2889_mesh [--ports 32] [--size 64] [--us 1000]
        [--load 100] [--line-rate 100G]

The issue's figure is 32 x 100GbE, 64 B, one 1 ms trial at 100 %: it
prints the wall time of the trial (and of starting the switch), the
frames simulated and their rate, and the trial's loss.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from p4scope.experiments import testbed, traffic
from p4scope.experiments.params import default_profiles
from p4scope.experiments.rfc2889.context import Context
from p4scope.experiments.rfc2889.forwarding import sweep
from p4scope.experiments.rfc2889.measure import Rfc2889Measure, plan
from p4scope.experiments.rfc2889.params import Rfc2889Params
from p4scope.experiments.tester.virtual import VirtualTestbed
from p4scope.topologies.spec import parse_rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=32)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--us", type=float, default=1000.0, help="trial length, us of virtual time")
    ap.add_argument("--load", type=float, default=100.0, help="offered load, %% of line rate")
    ap.add_argument("--line-rate", default="100G")
    ap.add_argument("--program", type=Path, default=Path("p4src/dut.p4"))
    a = ap.parse_args()
    p = Rfc2889Params(sizes=(a.size,), ports=a.ports, rate_bps=float(parse_rate(a.line_rate,
                                                                                "--line-rate")),
                      tests=("full_mesh",), loads=(a.load,), trial_us=a.us).check()
    profile = default_profiles()["fair"]
    rows: list[pd.DataFrame] = []
    t0 = time.perf_counter()
    dut = testbed.compile_dut(a.program)
    with testbed.VirtualSwitch(dut, profile, 1, apply_profile=traffic.apply_profile) as vs:
        bed = VirtualTestbed(vs, p.rate_bps, profile)
        measure = Rfc2889Measure(bed, p, lambda table, df: rows.append(df))
        c = Context(bed, p, plan(p)[0], measure.store, lambda f: None)
        t1 = time.perf_counter()
        got = sweep(c, "full_mesh")[0]
        t2 = time.perf_counter()
    frames = got["tx_frames"]
    print(f"full mesh: {a.ports} ports x {p.rate_bps / 1e9:g} Gbit/s, {a.size} B, "
          f"{a.load:g} %, one {a.us:g} us trial ({a.ports * (a.ports - 1)} streams)")
    print(f"  start (compile, switch): {t1 - t0:.2f} s")
    print(f"  trial wall time:         {t2 - t1:.2f} s")
    print(f"  frames sent / received:  {frames} / {got['rx_frames']} "
          f"(loss {got['loss_pct']:.4f} %, {got['queued_at_end']} queued at the end)")
    print(f"  simulated:               {frames / (t2 - t1) / 1e6:.2f} Mframes/s of wall time")


if __name__ == "__main__":
    from . import as_script

    as_script(main)
