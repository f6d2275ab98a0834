"""Measuring the trunk cases on the embedded switch (cases.py plans them).

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

from typing import Any

import numpy as np
import pandas as pd

from ..runner import Case, Tick
from ..testbed import compile_dut, host_ip
from . import analysis
from .cases import TTCP_PORT, Store, TrunkMeasure, client_mac, source_ports
from .controller import LinkController
from .params import LagFailoverParams
from .policies import POLICIES

LAG_ID = 1
SERVER_MAC, SERVER_IP = 0x02_00_00_00_01_00, 0x0A_00_01_00
"""The server behind the trunk (10.0.1.0, 02:00:00:00:01:00)."""


def policy_programs(p: LagFailoverParams, source: Any) -> dict[str, Any]:
    """The DUT compiled once for each of the run's policies that needs -D
    macros (policies.py), as workers get it (driver.ShippedDut): no worker
    compiles it again or needs the source."""
    from ..driver import ShippedDut

    return {name: ShippedDut.of(compile_dut(source, POLICIES[name].defines))
            for name in p.policies if POLICIES[name].defines}


class LagFailoverMeasure(TrunkMeasure[LagFailoverParams]):
    """measure(case, tick) -> tables, on `bed` (the virtual testbed)."""

    def __init__(self, bed: Any, p: LagFailoverParams, seed: int, programs: dict[str, Any],
                 store: Store):
        """`programs`: policy -> its DUT as the run compiled it (policy_programs)."""
        super().__init__(bed, p, seed, store)
        self.vs = bed.vs
        self.shipped = programs
        self.programs = {"l2-l4": bed.vs.program}
        """policy -> the DUT compiled for it (the shipped DUT is the run's own)."""

    # ----- one trial ------------------------------------------------------------------

    def _program(self, policy: str) -> Any:
        if policy not in self.programs:
            self.programs[policy] = self.shipped[policy].load()
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
        row = self._throughput_row(self._key(case, iteration), per, n, 0.0,
                                   placement=self._placement(rec, sent, n, dur + 1),
                                   tx_frames=sum(s.frames for s in sent),
                                   rx_frames=int(len(rec["seq"])))
        self.store("lag_failover_trials", pd.DataFrame([row]))
        return row

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
        times = [t for *_, t in events]
        before, per = analysis.per_event(analysis.LostRuns.of_frames(lost, interval), times,
                                         times, guard, offered_fps)
        acted = {(r.port, r.up, r.event_ns): r.acted_ns for r in ctrl.reactions}
        key = self._key(case, iteration)
        placement = self._placement(rec, sent, n, events[0][3])
        rows = []
        for (label, port, up, t), loss in zip(events, per):
            d = drops.get(port, {})
            rows.append({**key, "event": label, "member": port, "up": up, "event_ns": t,
                         **loss.columns(), "controller_acted_ns": acted.get((port, up, t), np.nan),
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

    def _outage_cols(self, trials: pd.DataFrame, event: pd.DataFrame) -> dict[str, Any]:
        return {"reaction_ns": self.p.reaction_ns}
