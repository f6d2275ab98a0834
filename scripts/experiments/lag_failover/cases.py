"""What both modes' runs share: the clients' flows, the cases planned, the
parameters recorded in run.json, and measuring a case (`TrunkMeasure`:
the iterations, the rows they add up to, a policy the DUT cannot do); a
mode's subclass runs the trials (measure.py, mininet_measure.py).

    lag-failover/throughput/<policy>/<n>clients           every client at
        --client-load-pct: what the trunk carries
    lag-failover/failover/<policy>/<n>clients/<mode>      the seed's schedule
        under a load one member can carry, failover by the controller or
        in the data plane
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict
from typing import Any, Callable, Generic, TypeVar

import numpy as np
import pandas as pd

from ..runner import Case, Tables, Tick
from . import EXPERIMENT
from .params import TrunkParams
from .policies import POLICIES

Store = Callable[[str, pd.DataFrame], None]
P = TypeVar("P", bound=TrunkParams)
TTCP_PORT = 5001
EPHEMERAL = (32768, 60999)


def plan(p: TrunkParams) -> list[Case]:
    """Per policy and client count: the throughput case, then the failover
    cases (a partial run has whole policies); weights from the mode's
    parameters."""
    cases = []
    for policy in p.policies:
        ok = POLICIES[policy].supported
        for n in p.clients:
            base = {"policy": policy, "clients": n}
            cases.append(Case(f"{EXPERIMENT}/throughput/{policy}/{n}clients", EXPERIMENT,
                              f"lag-failover throughput, {policy}, {n} clients",
                              {"test": "throughput", **base},
                              weight=p.throughput_weight(n) if ok else 0.01))
            for mode in p.failover:
                cases.append(Case(
                    f"{EXPERIMENT}/failover/{policy}/{n}clients/{mode}", EXPERIMENT,
                    f"lag-failover {mode} failover, {policy}, {n} clients",
                    {"test": "failover", **base, "failover": mode},
                    weight=p.failover_weight if ok else 0.01))
    return cases


def client_mac(seed: int, client: int) -> int:
    """A client's MAC address: locally administered, the rest drawn from
    the run's seed, as distinct hosts' addresses are (sequential MACs make
    a CRC hash of them take the same member: CRC is linear in its input)."""
    rng = np.random.default_rng([int(seed) & (2**63 - 1), client, 7])
    return 0x02_00_00_00_00_00 | int(rng.integers(0, 2**40))


def source_ports(seed: int, iteration: int, n: int) -> list[int]:
    """The clients' UDP source ports in an iteration (Linux's ephemeral range)."""
    rng = np.random.default_rng([int(seed) & (2**63 - 1), iteration, 4])
    return [int(x) for x in rng.integers(EPHEMERAL[0], EPHEMERAL[1] + 1, size=n)]


def run_parameters(p: TrunkParams, seed: int, time_key: str,
                   server: dict[str, Any]) -> dict[str, Any]:
    """run.json's parameters.lag_failover: the parameters, the schedule
    (each event's time under `time_key`), the policies, the server, the
    clients' MACs."""
    return {**asdict(p), "events": [{"event": e, "member": port, "up": up, time_key: t}
                                    for e, port, up, t in p.events()],
            "policies_detail": {n: {"label": POLICIES[n].label, "defines": POLICIES[n].defines,
                                    "why_not": POLICIES[n].why_not} for n in p.policies},
            "server": server,
            "client_macs": {c: f"{client_mac(seed, c):012x}"
                            for c in p.client_ports(max(p.clients))}}


def _iteration_tick(tick: Tick, i: int, k: int) -> Tick:
    """Iteration i of k's progress as a share of its case's."""
    return lambda f: tick((i + f) / k)


class TrunkMeasure(ABC, Generic[P]):
    """measure(case, tick) -> tables, on `bed` (the mode's testbed)."""

    def __init__(self, bed: Any, p: P, seed: int, store: Store):
        self.bed, self.p, self.seed, self.store = bed, p, seed, store

    # ----- the trials, a mode's own -----------------------------------------------

    @abstractmethod
    def throughput_trial(self, case: Case, iteration: int) -> dict[str, Any]:
        """One iteration's lag_failover_trials row (stored)."""

    @abstractmethod
    def failover_trial(self, case: Case, iteration: int, tick: Tick) -> list[dict[str, Any]]:
        """One iteration's lag_failover_events rows (stored)."""

    def _outage_cols(self, trials: pd.DataFrame, event: pd.DataFrame) -> dict[str, Any]:
        """A mode's columns of an event's lag_failover_outage row (those it
        shares with the common ones replace them in place)."""
        return {}

    # ----- rows -------------------------------------------------------------------------

    def _key(self, case: Case, iteration: int) -> dict[str, Any]:
        prm = case.params
        return {"case_id": case.case_id, "test": prm["test"], "policy": prm["policy"],
                "clients": int(prm["clients"]), "failover": prm.get("failover", ""),
                "iteration": iteration + 1}

    def _case_cols(self, case: Case) -> dict[str, Any]:
        prm = case.params
        pol = POLICIES[prm["policy"]]
        return {"case_id": case.case_id, "experiment": EXPERIMENT, "policy": pol.name,
                "policy_label": pol.label, "clients": int(prm["clients"]),
                **({"failover": prm["failover"]} if "failover" in prm else {}),
                "frame_size": self.p.frame_size}

    def _throughput_row(self, key: dict[str, Any], per: dict[int, float], n: int,
                        used_gbps: float, **rest: Any) -> dict[str, Any]:
        """A throughput trial's row from the Gbit/s each member carried
        (`per`, stored as lag_failover_members); a member carrying more than
        `used_gbps` counts as used."""
        p = self.p
        self.store("lag_failover_members", pd.DataFrame([
            {**key, "member": m, "gbps": g, "utilization_pct": 100.0 * g * 1e9 / p.rate_bps}
            for m, g in per.items()]))
        return {**key, "offered_gbps": n * p.client_load_pct / 100.0 * p.rate_bps / 1e9,
                "trunk_gbps": sum(per.values()), "busiest_member_gbps": max(per.values()),
                "idlest_member_gbps": min(per.values()),
                "members_used": sum(g > used_gbps for g in per.values()), **rest}

    # ----- a case -----------------------------------------------------------------------

    def throughput(self, case: Case, tick: Tick) -> Tables:
        rows = []
        for i in range(self.p.iterations):
            rows.append(self.throughput_trial(case, i))
            tick((i + 1) / self.p.iterations)
        r = pd.DataFrame(rows)
        return {"lag_failover_throughput": pd.DataFrame([{
            **self._case_cols(case), "supported": True, "note": "",
            "iterations": len(r), "offered_gbps": float(r["offered_gbps"].iloc[0]),
            "trunk_gbps": float(r["trunk_gbps"].mean()),
            "trunk_min_gbps": float(r["trunk_gbps"].min()),
            "trunk_max_gbps": float(r["trunk_gbps"].max()),
            "busiest_member_gbps": float(r["busiest_member_gbps"].mean()),
            "idlest_member_gbps": float(r["idlest_member_gbps"].mean()),
            "members_used": float(r["members_used"].mean()),
            "capacity_gbps": len(self.p.members) * self.p.rate_bps / 1e9,
            "placement": r["placement"].iloc[0]}])}

    def failover(self, case: Case, tick: Tick) -> Tables:
        k = self.p.iterations
        rows: list[dict[str, Any]] = []
        for i in range(k):
            rows += self.failover_trial(case, i, _iteration_tick(tick, i, k))
        r = pd.DataFrame(rows)
        out = []
        for label, g in r.groupby("event", sort=False):
            out.append({**self._case_cols(case), "supported": True, "note": "",
                        "event": label, "member": int(g["member"].iloc[0]),
                        "up": bool(g["up"].iloc[0]), "event_ns": int(g["event_ns"].iloc[0]),
                        "iterations": len(g), "lost_frames": float(g["lost_frames"].mean()),
                        "lost_min": int(g["lost_frames"].min()),
                        "lost_max": int(g["lost_frames"].max()),
                        "outage_ns": float(g["outage_ns"].mean()),
                        "recovery_ns": float(g["recovery_ns"].mean()),
                        "recovery_max_ns": float(g["recovery_ns"].max()),
                        **self._outage_cols(r, g)})
        return {"lag_failover_outage": pd.DataFrame(out)}

    def __call__(self, case: Case, tick: Tick) -> Tables:
        pol = POLICIES[case.params["policy"]]
        test = case.params["test"]
        if not pol.supported:
            table = "lag_failover_throughput" if test == "throughput" else "lag_failover_outage"
            return {table: pd.DataFrame([{**self._case_cols(case), "supported": False,
                                          "note": f"not on the reference DUT: {pol.why_not}"}])}
        return self.throughput(case, tick) if test == "throughput" else self.failover(case, tick)
