"""Planning and measuring the features-on cases on a testbed (the tester's
trials; the rules written by the testbed's setup_switch after each reset).

    throughput/<off|on>/<size>   binary search (search.throughput) on the
                                 port pairs, both ways, all pairs at once
    latency/<off|on>/<size>      trials at the throughput just measured for
                                 the same rules and size
    fairness/<N>to1/<size>       N sources at line rate into one egress port,
                                 rules on: each source's share of what left

Every trial is stored as it ends (`features_trials`), so Ctrl-C in a search
keeps it; a case's answer is one row of `features_results` (fairness: one
row per case in `features_fairness`, one per source in `features_shares`);
after each rules-on case the rules' direct counters go to
`features_acl_hits` (a rule set that was not installed shows no hits).

In Mininet trials last `trial_s`, the rules are written again before each
trial (and taken out for the rules-off cases) by the Mininet testbed's
setup_switch, a test stream is one stream per UDP destination port, and
a fairness case limits the egress port to line rate (the DUT's queue
rate), so the DUT's traffic manager shares it as a port at that rate would.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd

from ..figures import jain_index
from ..linerate import frames_per_second, wire_bits
from ..runner import Case, Tables, Tick
from ..tester import search
from . import EXPERIMENT
from .params import FeaturesParams, fairness_egress, fairness_sources
from .rules import RuleInstaller, esg_rules, rewrite_ports, test_streams

Store = Callable[[str, pd.DataFrame], None]
RULES = ("off", "on")


def plan(p: FeaturesParams) -> list[Case]:
    """Per size: throughput without and with the rules, then latency
    (which needs the throughput); then the fairness scenarios."""
    cases = []
    for size in p.sizes:
        for test in ("throughput", "latency"):
            if test not in p.tests:
                continue
            for rules in RULES:
                cases.append(Case(f"{EXPERIMENT}/{test}/{rules}/{size}", EXPERIMENT,
                                  f"features {test} {size} B, rules {rules}",
                                  {"test": test, "rules": rules, "size": size},
                                  weight=len(p.pairs) * (p.latency_trials if test == "latency"
                                                         else 2.0),
                                  chain=f"{rules} {size}"))
    if "fairness" in p.tests:
        for n, size in p.fairness:
            cases.append(Case(f"{EXPERIMENT}/fairness/{n}to1/{size}", EXPERIMENT,
                              f"features fairness {n}:1 {size} B, rules on",
                              {"test": "fairness", "rules": "on", "n": n, "size": size},
                              weight=n * p.fairness_us / 50.0 * 64.0 / size + 1.0))
    return cases


class FeaturesMeasure:
    """measure(case, tick) -> tables, on `bed` (a tester testbed with a
    `setup_switch` hook)."""

    def __init__(self, bed: Any, p: FeaturesParams, store: Store):
        self.bed, self.p, self.store = bed, p, store
        self.installer = RuleInstaller(esg_rules(p.pairs))
        self.rates: dict[tuple[str, int], float] = {}

    # ----- helpers -----------------------------------------------------------------

    def _duration(self, size: int) -> int:
        if self.p.trial_ns is not None:
            return self.p.trial_ns
        return int(self.p.trial_frames / frames_per_second(size, self.p.rate_bps) * 1e9) + 1

    def _streams(self, tx: int, rx: int, pct: float, size: int) -> list:
        """The rules' test streams (one per UDP port where the generator
        cannot vary it: Mininet's)."""
        return test_streams(tx, rx, pct, size, vary=self.p.mode == "virtual")

    def _pair_streams(self, size: int, pct: float) -> list:
        return [st for x, y in self.p.pairs for a, b in ((x, y), (y, x))
                for st in self._streams(a, b, pct, size)]

    def _rules(self, rules: str) -> None:
        self.bed.setup_switch = self.installer if rules == "on" else None

    def _keep(self, case: Case, step: search.Step) -> None:
        t = step.trial
        par = case.params
        row = {"case_id": case.case_id, "test": par["test"], "rules": par["rules"],
               "frame_size": par["size"], "trial": step.index, "procedure": step.procedure,
               "value": step.value, "passed": step.passed, **t.summary()}
        self.store("features_trials", pd.DataFrame([row]))

    def _hits(self, case: Case) -> dict[str, Any]:
        """Stores the rules' counters after the case's last trial; returns
        the totals for the case's row."""
        rows = pd.DataFrame(self.installer.hits()).assign(
            case_id=case.case_id, test=case.params["test"], frame_size=case.params["size"])
        self.store("features_acl_hits", rows)
        live = rows[rows["action"] != "deny"]
        return {"acl_rules": len(rows), "acl_rules_hit": int((rows["packets"] > 0).sum()),
                "acl_permit_dscp_hit": int((live["packets"] > 0).sum()),
                "acl_denied": int(rows.loc[rows["action"] == "deny", "packets"].sum()),
                "acl_packets": int(rows["packets"].sum())}

    def _result(self, case: Case, **fields: Any) -> Tables:
        par = case.params
        row = {"case_id": case.case_id, "experiment": EXPERIMENT, "test": par["test"],
               "rules": par["rules"], "frame_size": par["size"], "pairs": len(self.p.pairs),
               "line_rate_bps": self.p.rate_bps, **fields}
        return {"features_results": pd.DataFrame([row])}

    # ----- the tests --------------------------------------------------------------------

    def __call__(self, case: Case, tick: Tick) -> Tables:
        self._rules(case.params["rules"])
        return getattr(self, case.params["test"])(case, int(case.params["size"]), tick)

    def throughput(self, case: Case, size: int, tick: Tick) -> Tables:
        dur = self._duration(size)
        r = search.throughput(lambda pct: self.bed.trial(self._pair_streams(size, pct), dur),
                              self.p.tolerance_pct, self.p.resolution_pct,
                              each=lambda step: self._keep(case, step), tick=tick)
        pct, note = r.answer()
        self.rates[(case.params["rules"], size)] = pct
        hits = self._hits(case) if case.params["rules"] == "on" else {}
        fps = pct / 100.0 * frames_per_second(size, self.p.rate_bps)
        return self._result(case, throughput_pct=pct, throughput_fps_per_port=fps,
                            throughput_gbps_per_port=fps * wire_bits(size) / 1e9,
                            trials=len(r.steps), note=note, **hits)

    def latency(self, case: Case, size: int, tick: Tick) -> Tables:
        key = (case.params["rules"], size)
        pct = self.rates.get(key, 100.0)
        why = ("the throughput measured for these rules and size" if key in self.rates
               else "line rate (no throughput measured for these rules and size)")
        if not pct > 0:
            return self._result(case, rate_from=why,
                                note="no rate passed the throughput test: no latency")
        dur = self._duration(size)
        rows = []
        n = self.p.latency_trials
        short = 0
        for i in range(n):
            t = self.bed.trial(self._pair_streams(size, pct), dur)
            self._keep(case, search.Step("latency", i, pct, t, t.passed(self.p.tolerance_pct)))
            rows.append(t.streams)
            short += t.generator_short
            tick((i + 1) / n)
        hits = self._hits(case) if case.params["rules"] == "on" else {}
        note = (f"{short} trial(s) where the generator fell short of the offered rate"
                if short else "")
        s = pd.concat(rows, ignore_index=True)
        got = s[s["rx_frames"] > 0]
        if got.empty:
            return self._result(case, offered_pct=pct, rate_from=why, trials=n,
                                note="; ".join(x for x in ("nothing received", note) if x),
                                generator_short_trials=short, **hits)
        w = got["rx_frames"]
        return self._result(
            case, offered_pct=pct, rate_from=why, trials=n, note=note,
            generator_short_trials=short,
            lat_min_ns=float(got["lat_min_ns"].min()),
            lat_avg_ns=float(np.average(got["lat_avg_ns"], weights=w)),
            lat_max_ns=float(got["lat_max_ns"].max()),
            jitter_ns=float(np.average(got["jitter_ns"].fillna(0.0), weights=w)),
            lost=int(s["lost"].sum()), **hits)

    def fairness(self, case: Case, size: int, tick: Tick) -> Tables:
        n = int(case.params["n"])
        egress, sources = fairness_egress(n), fairness_sources(n)
        streams = [st for s in sources for st in self._streams(s, egress, 100.0, size)]
        if self.p.mode == "mininet":  # the egress port at line rate, as the DUT's queue rate
            self.bed.shape_ports([egress], 100.0, size)
        dur = self.p.trial_ns or int(round(self.p.fairness_us * 1000))
        t = self.bed.trial(streams, dur, tick=tick)
        self._keep(case, search.Step("fairness", 0, 100.0, t, True))
        hits = self._hits(case)
        st = t.streams.groupby("tx_port", sort=True, as_index=False)[
            ["tx_frames", "rx_frames", "rx_l1_bps"]].sum()
        bps = st["rx_l1_bps"].to_numpy(float)
        total = float(bps.sum())
        share = 100.0 * bps / total if total > 0 else np.full(len(bps), np.nan)
        scen = f"{n}:1"
        shares = pd.DataFrame({
            "case_id": case.case_id, "scenario": scen, "n": n, "frame_size": size,
            "egress_port": egress, "ingress_port": st["tx_port"].astype(int),
            "tx_frames": st["tx_frames"], "rx_frames": st["rx_frames"], "rx_l1_bps": bps,
            "share_pct": share, "fair_share_pct": 100.0 / n,
            "dscp_rewritten": st["tx_port"].isin(rewrite_ports(self.p.pairs))})
        row = {"case_id": case.case_id, "experiment": EXPERIMENT, "scenario": scen, "n": n,
               "frame_size": size, "egress_port": egress,
               "sources": ",".join(str(x) for x in sources), "duration_ns": dur,
               "egress_l1_bps": total, "egress_utilization_pct": 100.0 * total / self.p.rate_bps,
               "jain": jain_index(bps), "share_min_pct": float(np.nanmin(share)),
               "share_max_pct": float(np.nanmax(share)), "fair_share_pct": 100.0 / n,
               "tx_frames": t.tx_frames, "rx_frames": t.rx_frames,
               "generator_short": t.generator_short, **hits}
        return {"features_fairness": pd.DataFrame([row]), "features_shares": shares}
