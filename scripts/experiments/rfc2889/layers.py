"""Seed 003's latency per layer next to the suite through a chain: for k =
1..N, a chain of k reference DUTs (fabric.chain, the tester on its first
and last switch, links at the run's line rate), one stream each way at
LOAD_PCT of line rate per frame size: the tester's latency and jitter per
layer (chain_latency.tester_rows), each hop's residence from its switch's
ground truth for the longest chain (chain_latency.hop_table), and how far
the tester's latency is from the hops and wires added up (it must be
within a frame time: chain_latency.sum_check)."""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from ..chain_latency import hop_table, run_chain, sum_check, tester_rows
from ..fabric import chain
from ..params import Profile
from ..runner import Case, Tables, Tick
from . import EXPERIMENT
from .params import Rfc2889Params

TEST = "layer_latency"
LOAD_PCT = 50.0
"""Each direction's load through a chain, % of line rate (chain_latency's)."""
FRAMES = 1000
"""Frames per direction, layer and size."""


def case(p: Rfc2889Params) -> Case:
    """The one case of a chain run that measures every layer and size."""
    return Case(f"{EXPERIMENT}/{TEST}", EXPERIMENT,
                f"seed 003 latency per layer, chains of 1..{p.chain}",
                {"test": TEST, "layers": p.chain}, weight=float(p.chain * len(p.sizes)))


def at_rate(rate_bps: float) -> Callable[[Any, Profile], None]:
    """A fresh engine's traffic manager with `rate_bps` on every port (the
    chain's links run at the ports' rate)."""
    def apply(engine: Any, profile: Profile) -> None:
        engine.tm_configure(profile.tm_config(rate_bps))

    return apply


def measure(bed: Any, p: Rfc2889Params, c: Case, tick: Tick) -> Tables:
    """Every layer 1..p.chain, every size of the run (see the module doc);
    `bed` is the run's chain.ChainTestbed (its program, profile, seed and
    link delay)."""
    rows, hops = [], []
    steps, done = p.chain * len(p.sizes), 0
    for k in range(1, p.chain + 1):
        with chain(bed.program, k, bed.profile, delay_ns=bed.delay_ns, seed=bed.seed,
                   apply_profile=at_rate(p.rate_bps)) as vf:
            for size in p.sizes:
                run = run_chain(vf, size, LOAD_PCT, FRAMES, rate_bps=p.rate_bps)
                diff = sum_check(run)["difference_ns"].abs()
                rows.append(tester_rows(run).assign(load_pct=LOAD_PCT,
                                                    hops_sum_max_diff_ns=float(diff.max())))
                if k == p.chain:
                    hops.append(hop_table(run))
                done += 1
                tick(done / steps)
    return {"rfc2889_layers": pd.concat(rows, ignore_index=True).assign(case_id=c.case_id),
            "rfc2889_hops": pd.concat(hops, ignore_index=True).assign(case_id=c.case_id)}


def hops_shown(hops: pd.DataFrame) -> pd.DataFrame:
    """The longest chain's hops as the report shows them (ns)."""
    cols = {"frame_size": "Frame Size (B)", "direction": "Direction", "hop": "Hop",
            "residence_min_ns": "Residence min (ns)", "residence_avg_ns": "Residence avg (ns)",
            "residence_max_ns": "Residence max (ns)", "wire_in_ns": "Wire in (ns)"}
    return hops[list(cols)].rename(columns=cols).round(2)
