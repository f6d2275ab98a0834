"""The RFC 2889 cases and how each is measured on the tester: one case is
one test at one frame size (an address-learning case also at one address
count). Every trial is stored the moment it ends (rfc2889_trials, the
address trials in rfc2889_address_trials), so Ctrl-C keeps them; a case's
answer is one row of rfc2889_results."""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from ..runner import Case, Tables, Tick
from ..tester.search import throughput_trials
from . import EXPERIMENT, address, broadcast, forwarding, layers
from .context import Context
from .errored import errored_frames
from .pressure import forward_pressure
from .params import TESTS, Rfc2889Params
from .topology import MESHES

Store = Callable[[str, pd.DataFrame], None]


def _case(test: str, size: int, label: str, weight: float, **extra: Any) -> Case:
    tail = "".join(f"/{v}" for v in extra.values())
    # the maximum forwarding rate reads the full mesh's trials of its size
    chain = f"mesh {size}" if test in ("full_mesh", "max_forwarding_rate") else None
    return Case(f"{EXPERIMENT}/{test}/{size}{tail}", EXPERIMENT, label,
                {"test": test, "size": size, **extra}, weight=weight, chain=chain)


def plan(p: Rfc2889Params) -> list[Case]:
    """Test by test in TESTS order (the full mesh before the maximum
    forwarding rate, which reads its trials), size by size; through a
    chain, then the latency per layer. Weights follow the trials a case
    runs and its ports."""
    search = throughput_trials(p.resolution_pct)
    cases = []
    for test in (t for t in TESTS if t in p.tests):
        if test == "address_caching":
            cases += [_case(test, s, f"RFC 2889 address caching capacity {s} B", 8.0)
                      for s in p.address_sizes]
        elif test == "address_learning":
            cases += [_case(test, s, f"RFC 2889 address learning rate {s} B, {n} addresses",
                            float(search), addresses=n)
                      for s in p.address_sizes for n in p.learning_addresses]
        else:
            trials = {"congestion_control": 1, "max_forwarding_rate": 1,
                      "broadcast": search, "forward_pressure": 1,
                      "errored_frames": len(p.loads)}.get(test, len(p.loads) + search)
            cases += [_case(test, s, f"RFC 2889 {test.replace('_', ' ')} {s} B",
                            float(trials * p.ports)) for s in p.sizes]
    if p.chain > 1:
        cases.append(layers.case(p))
    return cases


class Rfc2889Measure:
    """The measure function of a run: `measure(case, tick) -> tables`."""

    def __init__(self, bed: Any, p: Rfc2889Params, store: Store):
        self.bed, self.p, self.store = bed, p, store
        self.full_mesh_rows: dict[int, list[dict[str, Any]]] = {}
        # every port at the line rate (the engine's ports run at 100G unless
        # told), or at the DUT's configured share of it; a Mininet DUT's
        # ports are what they are unless shaped (in frames/s: per size)
        if bed.name != "mininet":
            bed.shape_ports(p.port_list, p.dut_rate_pct, 64)

    def __call__(self, case: Case, tick: Tick) -> Tables:
        test = case.params["test"]
        if test == layers.TEST:
            return layers.measure(self.bed, self.p, case, tick)
        c = Context(self.bed, self.p, case, self.store, tick)
        if self.bed.name == "mininet" and self.p.dut_rate_pct < 100.0:
            self.bed.shape_ports(self.p.port_list, self.p.dut_rate_pct, c.size)
        if test in MESHES:
            tables, rows = forwarding.mesh(c)
            if test == "full_mesh":
                self.full_mesh_rows[c.size] = rows
            return tables
        if test == "max_forwarding_rate":
            return forwarding.max_forwarding_rate(c, self.full_mesh_rows.get(c.size))
        if test == "congestion_control":
            return forwarding.congestion_control(c)
        if test == "broadcast":
            return broadcast.broadcast(c)
        if test == "address_caching":
            return address.caching(c)
        if test == "address_learning":
            return address.learning_rate(c)
        if test == "forward_pressure":
            return forward_pressure(c)
        if test == "errored_frames":
            return errored_frames(c)
        raise ValueError(f"no RFC 2889 test {test!r}")
