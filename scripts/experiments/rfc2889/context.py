"""What every RFC 2889 procedure gets from the run: the testbed, the
parameters, the case, a way to store each trial as it ends, the progress
bar, and the trial length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import pandas as pd

from ..linerate import frames_per_second, wire_bits
from ..runner import Case, Tick
from ..tester import search
from ..tester.virtual import trial_frames
from . import EXPERIMENT
from .params import Rfc2889Params

Store = Callable[[str, pd.DataFrame], None]


@dataclass
class Context:
    bed: Any  # VirtualTestbed, MininetTestbed (tester) or chain.ChainTestbed
    p: Rfc2889Params
    case: Case
    store: Store
    tick: Tick

    @property
    def test(self) -> str:
        return self.case.params["test"]

    @property
    def size(self) -> int:
        return int(self.case.params["size"])

    def duration_ns(self) -> int:
        """A trial's length: --trial-s in Mininet; --trial-us, else the
        time a port takes to send --trial-frames frames at line rate
        (default: enough that an overload of one resolution step shows as
        50 frames)."""
        if self.p.trial_s is not None:
            return round(self.p.trial_s * 1e9)
        if self.p.trial_us is not None:
            return max(1, round(self.p.trial_us * 1000))
        n = self.p.trial_frames or trial_frames(self.p.resolution_pct)
        return int(n / frames_per_second(self.size, self.p.rate_bps) * 1e9) + 1

    def rates(self, summary: dict[str, Any], senders: int, offered_pct: float) -> dict[str, float]:
        """A trial's rates as the seed's tables give them: what the sending
        ports sent in bit/s (layer 1) over all of them, and the received
        rate as a share of their line rate: the offered rate times the
        share of the frames sent that arrived (Rx = Tx x (1 - loss))."""
        tx, rx = int(summary["tx_frames"]), int(summary["rx_frames"])
        return {"sending_ports": senders,
                "tx_bps": float(summary["tx_fps"]) * wire_bits(self.size),
                "rx_pct": offered_pct * rx / tx if tx else 0.0}

    def keep(self, step: search.Step, extra: Optional[dict[str, Any]] = None) -> None:
        """Stores one trial (table rfc2889_trials) the moment it ends."""
        row = {"case_id": self.case.case_id, "test": self.test, "frame_size": self.size,
               "procedure": step.procedure, "trial": step.index, "value": step.value,
               "passed": step.passed, **step.trial.summary(), **(extra or {})}
        self.store("rfc2889_trials", pd.DataFrame([row]))

    def result(self, **fields: Any) -> dict[str, pd.DataFrame]:
        """The case's answer (table rfc2889_results)."""
        row = {"case_id": self.case.case_id, "experiment": EXPERIMENT, "test": self.test,
               "frame_size": self.size, "ports": self.p.ports, "line_rate_bps": self.p.rate_bps,
               **fields}
        return {"rfc2889_results": pd.DataFrame([row])}
