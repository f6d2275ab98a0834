"""How each RFC 2544 case is measured on a testbed: one case is one test at
one frame size (a search is one case of many trials). Every trial is
stored the moment it ends (table `rfc2544_trials`, its streams in
`rfc2544_streams`), so Ctrl-C in the middle of a search keeps it; the
case's answer is one row of `rfc2544_results`.

All pairs send at once, both ways, at the same share of line rate.
Latency and system recovery use the throughput measured for the same
size earlier in the run (cases are planned in that order); without a
throughput case they run at line rate and say so.

The testbed is any of tester's (tester.testbed.Testbed): `virtual` (the
embedded switch in virtual time, with the traffic manager's profile, from
which the buffer-sized figures and predictions come) or `mininet` (real
time: trials last `trial_s`, the longest burst tried is one trial at line
rate, and recovery is read from the analyzer's per-interval counts).
"""

from __future__ import annotations


from typing import Any, Callable, Optional, Sequence

import numpy as np
import pandas as pd

from ..runner import Case, Tables, Tick
from ..linerate import frame_time_ns, frames_per_second, wire_bits
from ..params import Profile
from ..tester import search
from ..tester.streams import Rate, Stream, pair
from ..tester.testbed import Testbed
from ..tester.trial import Trial
from ..tester.virtual import trial_frames
from . import EXPERIMENT
from . import theory as th
from .params import TESTS, Rfc2544Params

Store = Callable[[str, pd.DataFrame], None]


def plan(p: Rfc2544Params, profile: str, dut: Optional[str] = None) -> list[Case]:
    """Per size, the tests in RFC order (throughput first: latency,
    back-to-back and recovery use it, in one chain). Weights follow the frames a case sends. `profile`
    names what the DUT is configured as (the TM profile; in Mininet the
    DUT); `dut`, in Mininet, goes into the case's id and params."""
    cases = []
    for size in p.sizes:
        for test in TESTS:
            if test not in p.tests:
                continue
            cases.append(Case(f"{EXPERIMENT}/{test}/{size}" + (f"/{dut}" if dut else ""),
                              EXPERIMENT,
                              f"RFC 2544 {test.replace('_', '-')} {size} B"
                              + (f", {dut}" if dut else ""),
                              {"test": test, "size": size, "profile": profile,
                               **({"dut": dut} if dut else {})},
                              weight={"throughput": 6.0, "latency": 10.0, "frame_loss": 3.0,
                                      "back_to_back": 4.0, "recovery": 4.0}[test],
                              # each but frame loss uses the throughput of its size
                              chain=None if test == "frame_loss"
                              else f"{size}" + (f" {dut}" if dut else "")))
    return cases


def plan_duts(p: Rfc2544Params, duts: Sequence[str]) -> list[Case]:
    """A Mininet run's cases: every DUT's, DUT after DUT (each measured on
    its own testbed, the tester's run)."""
    return [c for d in duts for c in plan(p, d, dut=d)]


class Rfc2544Measure:
    """The measure function of a run: `measure(case, tick) -> tables`."""

    def __init__(self, bed: Testbed, p: Rfc2544Params, profile: Optional[Profile], store: Store):
        """`profile`: the virtual DUT's traffic-manager profile (None in
        Mininet: no buffer is known, nothing buffer-sized is predicted)."""
        self.bed, self.p, self.prof, self.store = bed, p, profile, store
        self.rates: dict[int, float] = {}

    # ----- helpers -----------------------------------------------------------------

    def _duration(self, size: int) -> int:
        if self.p.trial_ns is not None:
            return self.p.trial_ns
        n = self.p.trial_frames or trial_frames(self.p.resolution_pct)
        return int(n / frames_per_second(size, self.p.rate_bps) * 1e9) + 1

    def _streams(self, size: int, pct: float, frames: Optional[int] = None) -> list[Stream]:
        out: list[Stream] = []
        for a, b in self.p.pairs:
            out += [Stream(s.tx_port, s.rx_port, s.rate, size, frames=frames)
                    for s in pair(a, b, size, pct)]
        return out

    @staticmethod
    def _dut(case: Case) -> dict[str, str]:
        """The case's DUT as a column (Mininet runs; none in virtual time)."""
        return {"dut": case.params["dut"]} if "dut" in case.params else {}

    def _keep(self, case: Case, step: search.Step, extra: Optional[dict[str, Any]] = None) -> None:
        t = step.trial
        row = {"case_id": case.case_id, **self._dut(case), "test": case.params["test"],
               "frame_size": case.params["size"], "trial": step.index,
               "procedure": step.procedure, "value": step.value,
               "passed": step.passed, **t.summary(), **(extra or {})}
        self.store("rfc2544_trials", pd.DataFrame([row]))
        streams = t.streams.assign(case_id=case.case_id, **self._dut(case),
                                   test=case.params["test"],
                                   frame_size_case=case.params["size"], trial=step.index)
        self.store("rfc2544_streams", streams.astype({"duplicated": "Int64"}))

    def _result(self, case: Case, **fields: Any) -> Tables:
        row = {"case_id": case.case_id, "experiment": EXPERIMENT, **self._dut(case),
               "test": case.params["test"],
               "frame_size": case.params["size"], "profile": case.params["profile"],
               "line_rate_bps": self.p.rate_bps, **fields}
        return {"rfc2544_results": pd.DataFrame([row])}

    def _rate_for(self, size: int) -> tuple[float, str]:
        if size in self.rates:
            return self.rates[size], "the throughput measured for this size"
        return 100.0, "line rate (no throughput measured for this size)"

    # ----- the tests --------------------------------------------------------------------

    def __call__(self, case: Case, tick: Tick) -> Tables:
        test, size = case.params["test"], int(case.params["size"])
        if self.p.dut_rate_pct < 100.0:
            self.bed.shape_ports(self.p.ports, self.p.dut_rate_pct, size)
        return getattr(self, test)(case, size, tick)

    def throughput(self, case: Case, size: int, tick: Tick) -> Tables:
        dur = self._duration(size)
        r = search.throughput(lambda pct: self.bed.trial(self._streams(size, pct), dur),
                              self.p.tolerance_pct, self.p.resolution_pct,
                              each=lambda step: self._keep(case, step), tick=tick)
        pct, note = r.answer()
        self.rates[size] = pct
        fps = pct / 100.0 * frames_per_second(size, self.p.rate_bps)
        best = r.best.trial.summary() if r.best else {}
        return self._result(case, throughput_pct=pct, throughput_fps_per_port=fps,
                            throughput_gbps_per_port=fps * wire_bits(size) / 1e9,
                            trials=len(r.steps), note=note,
                            rx_fps_total=best.get("rx_fps", 0.0),
                            theory_throughput_pct=th.throughput_pct(self.p, size))

    def latency(self, case: Case, size: int, tick: Tick) -> Tables:
        pct, why = self._rate_for(size)
        if not pct > 0:  # 0, or NaN when the tester could not measure it
            return self._result(case, note="no rate passed the throughput test: no latency")
        dur = self._duration(size)
        rows = []
        for i in range(self.p.latency_trials):
            t = self.bed.trial(self._streams(size, pct), dur, records=True)
            self._keep(case, search.Step("latency", i, pct, t, t.passed(self.p.tolerance_pct)))
            rows.append(t.streams)
            self.store("rfc2544_latency_hist", t.histogram.assign(
                case_id=case.case_id, **self._dut(case), frame_size=size, trial=i))
            tick((i + 1) / self.p.latency_trials)
        s = pd.concat(rows, ignore_index=True)
        w = s["rx_frames"].clip(lower=1)
        return self._result(
            case, offered_pct=pct, rate_from=why, trials=self.p.latency_trials,
            fifo_min_ns=float(s["lat_min_ns"].min()),
            fifo_avg_ns=float(np.average(s["lat_avg_ns"], weights=w)),
            fifo_max_ns=float(s["lat_max_ns"].max()),
            lifo_min_ns=float(s["lifo_min_ns"].min()),
            lifo_avg_ns=float(np.average(s["lifo_avg_ns"], weights=w)),
            lifo_max_ns=float(s["lifo_max_ns"].max()),
            jitter_ns=float(np.average(s["jitter_ns"].fillna(0.0), weights=w)),
            p99_ns=float(s["lat_p99_ns"].max()), p999_ns=float(s["lat_p999_ns"].max()),
            theory_fifo_min_ns=th.fifo_latency_ns(size, self.p.rate_bps)
            if self.prof is not None else np.nan)

    def frame_loss(self, case: Case, size: int, tick: Tick) -> Tables:
        dur = self._duration(size)

        def each(step: search.Step) -> None:
            self._keep(case, step, {"theory_loss_pct": th.loss_pct(self.p, step.value, size)})
            tick(min(1.0, (step.index + 1) / 10))

        r = search.frame_loss(lambda pct: self.bed.trial(self._streams(size, pct), dur), each=each)
        return self._result(case, clean_from_pct=r.value, trials=len(r.steps),
                            loss_at_100_pct=r.steps[0].trial.loss_pct if r.steps else np.nan)

    def back_to_back(self, case: Case, size: int, tick: Tick) -> Tables:
        prof = self.prof
        most = self.p.b2b_max_frames or (
            max(1, 2 * prof.shared_bytes // prof.footprint(size)) if prof is not None
            else max(1, int(self._duration(size) / 1e9 * frames_per_second(size, self.p.rate_bps))))
        steps = max(1, int(np.ceil(np.log2(most))) + 1)

        def each(step: search.Step) -> None:
            self._keep(case, step)
            tick(min(1.0, (step.index + 1) / steps))

        # a burst lasts its frames at line rate; what the DUT buffered is
        # not lost, so the trial waits until the DUT, forwarding at its
        # throughput (measured, else line rate), has sent the whole burst
        drain_pct = max(self._rate_for(size)[0], 1.0)

        def run_burst(n: int) -> Trial:
            burst_ns = n * frame_time_ns(size, self.p.rate_bps)
            return self.bed.trial(self._streams(size, 100.0, frames=n), int(burst_ns) + 1,
                                  settle_ns=int(burst_ns * 100.0 / drain_pct) + 10_000)

        r = search.back_to_back(run_burst, most, 1, each=each)
        frames = r.value or 0.0
        theory = th.back_to_back_frames(self.p, prof, size) if prof is not None else None
        return self._result(case, b2b_frames=frames, b2b_max_tried=most,
                            buffer_time_ns=th.buffer_time_ns(frames, size, self.p.rate_bps),
                            trials=len(r.steps), note=r.note,
                            theory_b2b_frames=np.nan if theory is None else float(theory))

    def _recovery_phases(self, size: int, pct: float, over: float) -> tuple[int, int, str]:
        """How long the overload and the reduced load last, and why."""
        prof = self.prof
        if prof is None:
            n = 2 * self._duration(size)
            return n, n, (f"overload {n / 1e9:g} s, then {n / 1e9:g} s at half the throughput "
                          f"(RFC 2544 asks 60 s); loss timed to {self.bed.recovery_resolution}")
        excess_bps = (over - pct) / 100.0 * self.p.rate_bps
        fill_ns = int(1.5 * prof.shared_bytes * 8 / excess_bps * 1e9)
        drain_ns = int(2.0 * prof.shared_bytes * 8 / (0.5 * pct / 100.0 * self.p.rate_bps) * 1e9)
        return fill_ns, drain_ns, ("overload phase long enough to fill the buffer 1.5 times "
                                   "(RFC 2544 asks 60 s; virtual time needs only the fill)")

    def recovery(self, case: Case, size: int, tick: Tick) -> Tables:
        pct, why = self._rate_for(size)
        over = round(pct * self.p.recovery_overload, 6)
        if not pct > 0:
            return self._result(case, recovery_ns=np.nan, rate_from=why,
                                note="not applicable: no throughput to overload")
        if over > 100.0:
            return self._result(case, recovery_ns=np.nan, rate_from=why,
                                note=f"not applicable: {self.p.recovery_overload:g} x the "
                                     f"throughput ({pct:g} %) is more than one port can send")
        fill_ns, drain_ns, note = self._recovery_phases(size, pct, over)
        streams = []
        for s in self._streams(size, over):
            streams.append(Stream(s.tx_port, s.rx_port, s.rate, size, name=f"over {s.label}",
                                  frames=int(fill_ns / 1e9 * s.rate.fps(self.p.rate_bps, size))))
        half = [Stream(s.tx_port, s.rx_port, Rate.pct(pct / 2), size, start_ns=fill_ns,
                       name=f"reduced {s.label}") for s in self._streams(size, pct)]
        t = self.bed.trial(streams + half, fill_ns + drain_ns, records=True,
                           tick=lambda f: tick(0.95 * f))
        self._keep(case, search.Step("recovery", 0, over, t, True))
        worst = self.bed.recovery_ns(t, half, fill_ns)
        tick(1.0)
        return self._result(case, recovery_ns=worst, overload_pct=round(over, 6),
                            reduced_pct=round(pct / 2, 6), overload_lost=t.streams["lost"].iloc[
                                :len(streams)].sum(),
                            overload_ns=fill_ns, rate_from=why, note=note)
