"""Planning and measuring the trunk cases in Mininet (root), on one
MininetTestbed per policy (the DUT compiled with that policy's selector key;
mininet_run.py):

    lag-failover/throughput/<policy>/<n>clients           every client at
        --client-load-pct for --throughput-s: what each member link carried
        after the warm-up (the DUT's interface counters), and which member
        each client's flow took (a short probe per client after the trial)
    lag-failover/failover/<policy>/<n>clients/<mode>      the seed's schedule
        under a load one member can carry: each member link taken down and
        up with `ip link set` on the DUT's side (mininet_events.py)

Client c sends one UDP flow (its MAC drawn from the seed, 10.0.0.c, a source
port per iteration, destination port 5001: the virtual run's headers) to the
server, a host bonded over the member ports. The controller (the fabric
that configures the DUT over P4Runtime) made the LAG from the topology and
watches the DUT's links: it re-plans and rewrites the LAG group when one goes
down or up (controller failover). Data-plane failover: the LAG's members
also watch their own ports (the group rewritten with P4Runtime watch ports
before the trial); the switch follows its interfaces' link state
(switch/link_state.py), so the selector skips a down member at once.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ...topologies import traffic
from ...topologies.counters import CounterSampler, read_counters
from ..runner import Case, Tables, Tick
from ..tester.mininet import host_ip, host_mac
from ..tester.streams import Rate, Stream
from . import member_counters
from .analysis import per_event
from .cases import TTCP_PORT, Store, TrunkMeasure, client_mac, source_ports
from .link_changes import LinkChanges
from .mininet_events import LinkSchedule, changed, lost_runs, stream_runs
from .mininet_params import MininetLagParams

PROBE_FRAMES = 20
GUARD_NS = 50_000_000
"""Frames sent up to 50 ms before a link event may still be in the DUT."""


def _short_note(k: int) -> str:
    return f"{k} trial(s) where a generator fell short of the offered rate" if k else ""


class MininetLagMeasure(TrunkMeasure[MininetLagParams]):
    """measure(case, tick) -> tables on `bed` (the policy's MininetTestbed;
    None for a policy the DUT cannot do)."""

    def __init__(self, bed: Any, p: MininetLagParams, seed: int, store: Store):
        super().__init__(bed, p, seed, store)
        self.short_trials = 0
        """Trials of the throughput case being measured whose generator fell short."""

    # ----- helpers -----------------------------------------------------------------

    @property
    def members(self) -> dict[str, int]:
        """The DUT's member interfaces -> member port."""
        return {self.bed.dut_iface(m): m for m in self.p.members}

    def _headers(self, c: int, sport: int) -> dict[str, Any]:
        return {"src_mac": client_mac(self.seed, c), "src_ip": host_ip(c), "sport": sport,
                "dport": TTCP_PORT}

    def _streams(self, n: int, pct: float, iteration: int) -> list[Stream]:
        p = self.p
        return [Stream(c, p.server_port, Rate.pct(pct), p.frame_size, name=f"client {c}",
                       headers=self._headers(c, sport))
                for c, sport in zip(p.client_ports(n), source_ports(self.seed, iteration, n))]

    def _watch(self, on: bool) -> None:
        """The LAG's members watch their ports (data-plane failover) or not."""
        lags = self.bed.fabric().states[self.bed.switch].lags
        if lags.watch_ports != on:
            lags.watch_ports = on
            for lag_id, ports in sorted(lags.lags.items()):
                lags.set_ports(lag_id, ports)

    def _links_up(self, limit_s: float = 5.0) -> None:
        """Waits until the controller has every link up again in its plan."""
        fab = self.bed.fabric()
        deadline = time.monotonic() + limit_s
        while fab.plan.down:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the controller still has links down after {limit_s:g} s: "
                                   f"{sorted(fab.plan.down)}")
            time.sleep(0.01)

    def _placement(self, streams: list[Stream]) -> str:
        """'11:1,2 12:3': the member each client's flow takes, from a short
        probe of the flow's headers per client and the members' counters."""
        ifaces = list(self.members)
        server = self.p.server_port
        by: dict[int, list[str]] = {}
        member_counters.wait_quiet(ifaces)
        for k, st in enumerate(streams):
            h = st.headers
            before = [read_counters(i)["tx_packets"] for i in ifaces]
            traffic.send(self.bed.host(st.tx_port), self.bed.iface(st.tx_port), [traffic.Stream(
                1000 + k, dst=host_mac(server), ip_dst=host_ip(server),
                src=":".join(f"{b:02x}" for b in int(h["src_mac"]).to_bytes(6, "big")),
                ip_src=h["src_ip"], sport=int(h["sport"]), dport=int(h["dport"]),
                size=self.p.frame_size, rate=2000.0, count=PROBE_FRAMES)], timeout=30)
            member_counters.wait_quiet(ifaces, quiet_s=0.05)
            grew = [read_counters(i)["tx_packets"] - b for i, b in zip(ifaces, before)]
            member = self.members[ifaces[int(np.argmax(grew))]] if max(grew) > 0 else -1
            by.setdefault(member, []).append(str(st.tx_port))
        return " ".join(f"{m}:{','.join(cs)}" for m, cs in sorted(by.items()))

    # ----- throughput -------------------------------------------------------------------

    def throughput_trial(self, case: Case, iteration: int) -> dict[str, Any]:
        p = self.p
        n = int(case.params["clients"])
        streams = self._streams(n, p.client_load_pct, iteration)
        ifaces = self.members
        load = LinkSchedule(self.bed.dut_iface, [])  # notes when the load started
        member_counters.wait_quiet(list(ifaces))
        m0 = time.monotonic()
        with CounterSampler(list(ifaces), p.bin_ms / 1000) as cs:
            t = self.bed.trial(streams, round(p.throughput_s * 1e9), during=load)
        start = load.start_mono - m0
        per = {port: member_counters.window_gbps(cs.series, i, start + p.warmup_s,
                                                 start + p.throughput_s)
               for i, port in ifaces.items()}
        row = self._throughput_row(
            self._key(case, iteration), per, n, 0.01 * p.rate_bps / 1e9,
            placement=self._placement(streams), tx_frames=t.tx_frames, rx_frames=t.rx_frames,
            received_gbps=float(t.streams["rx_l1_bps"].sum()) / 1e9,
            generator_short=t.generator_short, retries=t.info.get("retries", 0))
        self.store("lag_failover_trials", pd.DataFrame([row]))
        self.short_trials += bool(t.generator_short)
        return row

    def throughput(self, case: Case, tick: Tick) -> Tables:
        self._watch(False)
        self._links_up()
        self.short_trials = 0
        out = super().throughput(case, tick)
        out["lag_failover_throughput"] = out["lag_failover_throughput"].assign(
            note=_short_note(self.short_trials), generator_short_trials=self.short_trials)
        return out

    # ----- failover ---------------------------------------------------------------------

    def failover_trial(self, case: Case, iteration: int, tick: Tick) -> list[dict[str, Any]]:
        p = self.p
        n, mode = int(case.params["clients"]), case.params["failover"]
        self._watch(mode == "dataplane")
        self._links_up()
        streams = self._streams(n, p.failover_load_pct / n, iteration)
        ifaces = self.members
        links = LinkSchedule(self.bed.dut_iface, p.events())
        fab = self.bed.fabric()
        member_counters.wait_quiet(list(ifaces))
        m0 = time.monotonic()
        with LinkChanges() as lc, CounterSampler(list(ifaces), p.bin_ms / 1000) as cs:
            t = self.bed.trial(streams, p.failover_ns, during=links, tick=tick)
            self._links_up()
        events = changed(links.events, self.bed.dut_iface, lc)
        last = self.bed.last
        tx = {s["id"]: s for rep in last["sent"].values() for s in rep.get("streams", [])}
        rx = {s["id"]: s for s in last["received"].get(p.server_port, {}).get("streams", [])}
        fps = {sid: st.rate.fps(p.rate_bps, st.mean_size)
               for sid, st in zip(last["ids"], last["streams"])}
        runs = [r for sid in last["ids"]
                for r in stream_runs(rx.get(sid), tx.get(sid, {}), fps[sid])]
        offered_fps = sum(float(tx.get(sid, {}).get("rate_pps", 0.0)) for sid in last["ids"])
        guard = min(GUARD_NS, p.interval_ns // 4)
        before, per = per_event(lost_runs(runs), [e.issued_ns for e in events],
                                [e.at_ns for e in events], guard, offered_fps)
        acted = [e for e in fab.events if e.time * 1e9 >= links.start_ns]
        key = self._key(case, iteration)
        rows = []
        for ev, loss in zip(events, per):
            done = next((a.time * 1e9 for a in acted if a.port == ev.port and a.up == ev.up
                         and a.time * 1e9 >= ev.issued_ns), np.nan)
            rows.append({**key, "event": ev.label, "member": ev.port, "up": ev.up,
                         "event_ns": ev.at_ns - links.start_ns, **loss.columns(),
                         "controller_acted_ns": done - links.start_ns,
                         "controller_reaction_ns": done - ev.at_ns,
                         "ip_command_ns": ev.done_ns - ev.issued_ns,
                         "kernel_announced": bool(ev.changed_ns),
                         "member_tx_down": np.nan, "generator_short": t.generator_short})
        self.store("lag_failover_events", pd.DataFrame(rows))
        self.store("lag_failover_trials", pd.DataFrame([{
            **key, "offered_gbps": p.failover_load_pct / 100.0 * p.rate_bps / 1e9,
            "offered_fps": offered_fps, "tx_frames": t.tx_frames, "rx_frames": t.rx_frames,
            "lost_frames": t.loss_frames, "lost_before_events": before, "placement": "",
            "tx_down": np.nan, "reactions": len(acted), "generator_short": t.generator_short,
            "retries": t.info.get("retries", 0)}]))
        if iteration == 0:  # the last attempt's (a trial may be run again: tester.mininet)
            s = pd.DataFrame(member_counters.series_rows(cs.series, ifaces, links.start_mono - m0,
                                            p.bin_ms / 1000))
            self.store("lag_failover_series", s.assign(
                **{k: v for k, v in key.items() if k != "iteration"}))
        return rows

    def _outage_cols(self, trials: pd.DataFrame, event: pd.DataFrame) -> dict[str, Any]:
        """The event's mean time (each trial's own), the controller's mean
        reaction, the trials whose generator fell short."""
        shorts = int(trials.groupby("iteration")["generator_short"].any().sum())
        return {"note": _short_note(shorts), "event_ns": float(event["event_ns"].mean()),
                "reaction_ns": float(event["controller_reaction_ns"].mean()),
                "generator_short_trials": shorts}
