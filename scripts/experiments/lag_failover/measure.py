"""Planning and measuring the trunk cases on the embedded switch.

    lag-failover/throughput/<policy>/<n>clients           every client at
        --client-load-pct for --throughput-us: what the trunk carries
    lag-failover/failover/<policy>/<n>clients/<mode>      the seed's schedule
        (each member pulled and restored in turn) under a load one member
        can carry, failover by the controller or in the data plane

Each trial starts from a fresh engine: the controller (over P4Runtime, the
testbed's setup_switch hook) writes the clients' smac entries (client c:
port c, IPv4 10.0.0.c, a MAC drawn from the seed), LAG 1 over
the member ports (control/apps/lag.py; with data-plane failover each
member watches its own port) and the server's dmac entry (forward_lag).
The DUT is compiled once per policy (policies.py); a policy the DUT cannot
do gives a row saying why and no trial. Iteration i gives every client a
new UDP source port (a seed per iteration), the same in every case, so
cases compare flow for flow. The link events are scheduled in the engine;
the controller hears of each and rewrites the LAG group `reaction_us`
later (controller.py).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..runner import Case, Tables, Tick
from ..testbed import compile_dut, host_ip
from . import EXPERIMENT
from . import analysis
from .controller import LinkController
from .params import LagFailoverParams
from .policies import POLICIES

Store = Callable[[str, pd.DataFrame], None]
LAG_ID = 1
SERVER_MAC, SERVER_IP = 0x02_00_00_00_01_00, 0x0A_00_01_00
"""The server behind the trunk (10.0.1.0, 02:00:00:00:01:00)."""
TTCP_PORT = 5001
EPHEMERAL = (32768, 60999)


def plan(p: LagFailoverParams) -> list[Case]:
    """Per policy and client count: the throughput case, then the failover
    cases (a partial run has whole policies)."""
    cases = []
    for policy in p.policies:
        ok = POLICIES[policy].supported
        for n in p.clients:
            base = {"policy": policy, "clients": n}
            cases.append(Case(f"{EXPERIMENT}/throughput/{policy}/{n}clients", EXPERIMENT,
                              f"lag-failover throughput, {policy}, {n} clients",
                              {"test": "throughput", **base},
                              weight=p.iterations * n * p.throughput_us / 200 if ok else 0.01))
            for mode in p.failover:
                cases.append(Case(
                    f"{EXPERIMENT}/failover/{policy}/{n}clients/{mode}", EXPERIMENT,
                    f"lag-failover {mode} failover, {policy}, {n} clients",
                    {"test": "failover", **base, "failover": mode},
                    weight=p.iterations * p.failover_ns / 600_000 if ok else 0.01))
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


class LagFailoverMeasure:
    """measure(case, tick) -> tables, on `bed` (the virtual testbed)."""

    def __init__(self, bed: Any, p: LagFailoverParams, seed: int, program: Any, store: Store):
        self.bed, self.vs, self.p, self.seed, self.store = bed, bed.vs, p, seed, store
        self.source = program
        self.programs = {"l2-l4": bed.vs.program}
        """policy -> the DUT compiled for it (the shipped DUT is the run's own)."""

    # ----- one trial ------------------------------------------------------------------

    def _program(self, policy: str) -> Any:
        if policy not in self.programs:
            self.programs[policy] = compile_dut(self.source, POLICIES[policy].defines)
        return self.programs[policy]

    def _reset(self, policy: str, n: int, watch: bool) -> Any:
        """A fresh engine with the policy's DUT, configured by the controller;
        returns its Lags (the controller's handle on the LAG)."""
        p = self.p
        made: dict[str, Any] = {}

        def write(sw: Any) -> None:
            from p4scope.control.apps.lag import Lags

            sw.insert([sw.table("smac").entry({"hdr.ethernet.src_addr": client_mac(self.seed, c)},
                                              "smac_hit", port=c) for c in p.client_ports(n)])
            lags = Lags(sw, watch_ports=watch)
            lags.create(LAG_ID, list(p.members))
            sw.insert([sw.table("dmac").entry({"hdr.ethernet.dst_addr": SERVER_MAC},
                                              "forward_lag", lag_id=LAG_ID)])
            made["lags"] = lags

        self.vs.program = self._program(policy)
        self.vs.setup_switch = write
        self.vs.reset(self.bed.profile, [], {})
        return made["lags"]

    def _streams(self, e: Any, n: int, pct: float, duration_ns: int,
                 iteration: int) -> list[analysis.SentStream]:
        """Every client sends to the server at `pct` of its line rate, the
        clients' frames spread over one frame interval."""
        p = self.p
        slot = analysis.slot_ps(p.frame_size, pct, p.rate_bps)
        out = []
        for i, (c, sport) in enumerate(zip(p.client_ports(n),
                                           source_ports(self.seed, iteration, n))):
            start = round(i * slot / 1000 / n)
            sid = e.add_stream(c, size=p.frame_size, rate_pct=pct, line_rate_bps=p.rate_bps,
                               start_ns=start, duration_ns=duration_ns - start,
                               name=f"client {c}", dst_mac=SERVER_MAC, dst_ip=SERVER_IP,
                               src_mac=client_mac(self.seed, c), src_ip=host_ip(c), sport=sport,
                               dport=TTCP_PORT)
            out.append(analysis.SentStream(int(sid), start, slot, 0))
        return out

    def _finish(self, e: Any, sent: list[analysis.SentStream]) -> tuple[list[analysis.SentStream], dict, dict]:
        rows = {int(r["stream"]): r for r in e.stream_stats()}
        sent = [analysis.SentStream(s.sid, s.start_ns, s.slot_ps, int(rows[s.sid]["tx_frames"]))
                for s in sent]
        rec = {k: np.asarray(v) for k, v in e.rx_records().items()}
        drops = {int(k): v for k, v in e.link_drop_stats().items()}
        e.record_rx(False)
        return sent, rec, drops

    def _key(self, case: Case, iteration: int) -> dict[str, Any]:
        prm = case.params
        return {"case_id": case.case_id, "test": prm["test"], "policy": prm["policy"],
                "clients": int(prm["clients"]), "failover": prm.get("failover", ""),
                "iteration": iteration + 1}

    def _placement(self, rec: dict, sent: list[analysis.SentStream], n: int, before: int) -> str:
        """'11:1,2 12:3': which member carried which client."""
        on = analysis.member_of_streams(rec, [s.sid for s in sent], before)
        by: dict[int, list[str]] = {}
        for s, c in zip(sent, self.p.client_ports(n)):
            by.setdefault(on[s.sid], []).append(str(c))
        return " ".join(f"{m}:{','.join(cs)}" for m, cs in sorted(by.items()))

    # ----- throughput -------------------------------------------------------------------

    def throughput_trial(self, case: Case, iteration: int) -> dict[str, Any]:
        p = self.p
        n = int(case.params["clients"])
        self._reset(case.params["policy"], n, watch=False)
        dur = round(p.throughput_us * 1000)
        with self.vs.locked() as e:
            sent = self._streams(e, n, p.client_load_pct, dur, iteration)
            e.record_rx(True)
            e.run(until_ns=dur)
            sent, rec, _ = self._finish(e, sent)
        t0 = round(p.warmup_us * 1000)
        per = analysis.member_gbps(rec, p.members, t0, dur)
        key = self._key(case, iteration)
        offered = n * p.client_load_pct / 100.0 * p.rate_bps / 1e9
        self.store("lag_failover_members", pd.DataFrame([
            {**key, "member": m, "gbps": g, "utilization_pct": 100.0 * g * 1e9 / p.rate_bps}
            for m, g in per.items()]))
        row = {**key, "offered_gbps": offered, "trunk_gbps": sum(per.values()),
               "busiest_member_gbps": max(per.values()),
               "idlest_member_gbps": min(per.values()),
               "members_used": sum(g > 0 for g in per.values()),
               "placement": self._placement(rec, sent, n, dur + 1),
               "tx_frames": sum(s.frames for s in sent), "rx_frames": int(len(rec["seq"]))}
        self.store("lag_failover_trials", pd.DataFrame([row]))
        return row

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

    # ----- failover ---------------------------------------------------------------------

    def failover_trial(self, case: Case, iteration: int, tick: Tick) -> list[dict[str, Any]]:
        p = self.p
        n, mode = int(case.params["clients"]), case.params["failover"]
        lags = self._reset(case.params["policy"], n, watch=mode == "dataplane")
        end = p.failover_ns
        events = p.events()
        with self.vs.locked() as e:
            sent = self._streams(e, n, p.failover_load_pct / n, end, iteration)
            e.record_rx(True)
            for _, port, up, t in events:
                e.schedule_port_status(port, up, t)
        ctrl = LinkController(self.vs, lags.link_changed, p.reaction_ns)
        ctrl.run_until(end, tick)
        guard = analysis.guard_ns(p.frame_size, p.rate_bps)
        ctrl.run_until(end + guard)
        with self.vs.locked() as e:
            sent, rec, drops = self._finish(e, sent)
        offered_fps = sum(s.fps for s in sent)
        lost = analysis.lost_send_times(sent, rec)
        interval = max(s.slot_ps for s in sent) / 1000  # one client's frame interval
        before, per = analysis.per_event(lost, [t for *_, t in events], guard, offered_fps, interval)
        acted = {(r.port, r.up, r.event_ns): r.acted_ns for r in ctrl.reactions}
        key = self._key(case, iteration)
        placement = self._placement(rec, sent, n, events[0][3])
        rows = []
        for (label, port, up, t), loss in zip(events, per):
            d = drops.get(port, {})
            rows.append({**key, "event": label, "member": port, "up": up, "event_ns": t,
                         "lost_frames": loss.lost, "outage_ns": loss.outage_ns,
                         "recovery_ns": loss.recovery_ns,
                         "controller_acted_ns": acted.get((port, up, t), np.nan),
                         "member_tx_down": int(d.get("tx_down", 0)) if not up else 0})
        self.store("lag_failover_events", pd.DataFrame(rows))
        self.store("lag_failover_trials", pd.DataFrame([{
            **key, "offered_gbps": p.failover_load_pct / 100.0 * p.rate_bps / 1e9,
            "offered_fps": offered_fps, "tx_frames": sum(s.frames for s in sent),
            "rx_frames": int(len(rec["seq"])), "lost_frames": int(len(lost)),
            "lost_before_events": before, "placement": placement,
            "tx_down": sum(int(d["tx_down"]) for d in drops.values()),
            "reactions": len(ctrl.reactions)}]))
        if iteration == 0:
            s = analysis.series(rec, p.members, end, p.bin_ns)
            self.store("lag_failover_series", pd.DataFrame(s).assign(
                **{k: v for k, v in key.items() if k != "iteration"}))
        return rows

    def failover(self, case: Case, tick: Tick) -> Tables:
        k = self.p.iterations
        rows: list[dict[str, Any]] = []
        for i in range(k):
            rows += self.failover_trial(case, i, lambda f, i=i: tick((i + f) / k))
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
                        "reaction_ns": self.p.reaction_ns})
        return {"lag_failover_outage": pd.DataFrame(out)}

    # ----- a case -----------------------------------------------------------------------

    def _case_cols(self, case: Case) -> dict[str, Any]:
        prm = case.params
        pol = POLICIES[prm["policy"]]
        return {"case_id": case.case_id, "experiment": EXPERIMENT, "policy": pol.name,
                "policy_label": pol.label, "clients": int(prm["clients"]),
                **({"failover": prm["failover"]} if "failover" in prm else {}),
                "frame_size": self.p.frame_size}

    def __call__(self, case: Case, tick: Tick) -> Tables:
        pol = POLICIES[case.params["policy"]]
        test = case.params["test"]
        if not pol.supported:
            table = "lag_failover_throughput" if test == "throughput" else "lag_failover_outage"
            return {table: pd.DataFrame([{**self._case_cols(case), "supported": False,
                                          "note": f"not on the reference DUT: {pol.why_not}"}])}
        return getattr(self, test)(case, tick)

