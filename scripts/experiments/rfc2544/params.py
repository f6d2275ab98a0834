"""The RFC 2544 suite's parameters (defaults from RFC 2544 s. 9 and 26 and
the method notes of RFC 2544 testers), checked before anything starts. Each mode has defaults of its
own (MODE_DEFAULTS): virtual time at 100GbE with a fine search; Mininet at
the rates software sustains, 1 s trials and a coarser search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..params import ParamError, check_mode, check_number, mode_values

STANDARD_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
JUMBO_SIZES = (2048, 4096, 9216)
TESTS = ("throughput", "latency", "frame_loss", "back_to_back", "recovery")
MAX_PORT = 63
MAX_FRAME = 9216
MODE_DEFAULTS: dict[str, dict[str, float]] = {
    "virtual": {"resolution_pct": 0.1, "rate_bps": 100e9},
    "mininet": {"resolution_pct": 1.0, "rate_bps": 100e6, "trial_s": 1.0},
}
"""What a mode's run uses for the parameters not given."""


@dataclass(frozen=True)
class Rfc2544Params:
    """sizes: frame sizes (FCS included); pairs: port pairs, each sending
    both ways, all pairs at once; tests: which of TESTS; tolerance_pct: the
    loss a throughput trial may have (0: RFC 2544; 0.01 or 0.5: PDR);
    resolution_pct: the search's resolution in % of line rate; trial_frames:
    frames per stream in a throughput or loss trial (None: enough that an
    overload of one resolution step shows as 50 frames); latency_trials:
    trials at the throughput rate (RFC 2544: at least 20); b2b_trials: how
    many times the longest clean burst is confirmed (RFC: 50); b2b_max_frames:
    the longest burst tried (None: twice what the buffer holds at line rate);
    recovery_overload: the overload phase's rate over the throughput (1.1);
    dut_rate_pct: the DUT's egress ports shaped to this share of line rate
    (100: unshaped), a DUT whose limit is known; rate_bps: each port's line
    rate (Mininet: what the tester says a port is).

    Mininet only: dut (p4scope, bmv2, bridge or module:Class; several
    comma-separated, measured one after another: `duts`), trial_s (a
    trial's length; virtual time sizes trials by trial_frames instead),
    link_bw_bps and link_queue (htb on every link, that many packets queued
    at each)."""

    sizes: tuple[int, ...] = STANDARD_SIZES
    pairs: tuple[tuple[int, int], ...] = ((1, 2),)
    tests: tuple[str, ...] = TESTS
    tolerance_pct: float = 0.0
    resolution_pct: float = 0.1
    trial_frames: Optional[int] = None
    latency_trials: int = 20
    b2b_trials: int = 50
    b2b_max_frames: Optional[int] = None
    recovery_overload: float = 1.1
    dut_rate_pct: float = 100.0
    rate_bps: float = 100e9
    mode: str = "virtual"
    dut: str = "p4scope"
    trial_s: Optional[float] = None
    link_bw_bps: Optional[int] = None
    link_queue: Optional[int] = None

    @classmethod
    def for_mode(cls, mode: str, **given: Any) -> "Rfc2544Params":
        """A `mode` run's parameters: those given (None: not given) over
        the mode's defaults."""
        return cls(mode=mode, **mode_values(mode, MODE_DEFAULTS, given))

    def check(self) -> "Rfc2544Params":
        if not self.sizes:
            raise ParamError("--sizes: no frame sizes")
        for s in self.sizes:
            if not 64 <= s <= MAX_FRAME:
                raise ParamError(f"--sizes: frame size {s} is outside 64..{MAX_FRAME} bytes")
        if len(set(self.sizes)) != len(self.sizes):
            raise ParamError("--sizes: a frame size repeats")
        if not self.pairs:
            raise ParamError("--pairs: no port pairs")
        seen: set[int] = set()
        for a, b in self.pairs:
            for p in (a, b):
                if not 1 <= p <= MAX_PORT:
                    raise ParamError(f"--pairs: port {p} is outside 1..{MAX_PORT}")
                if p in seen:
                    raise ParamError(f"--pairs: port {p} is in two pairs (or paired with itself)")
                seen.add(p)
        bad = [t for t in self.tests if t not in TESTS]
        if bad or not self.tests:
            raise ParamError(f"--tests: {', '.join(bad) or 'none'}: choose from {', '.join(TESTS)}")
        check_number(self.tolerance_pct, 0.0, 50.0, "--tolerance-pct")
        check_number(self.resolution_pct, 0.001, 10.0, "--resolution-pct")
        if self.trial_frames is not None and not 100 <= self.trial_frames <= 10_000_000:
            raise ParamError("--trial-frames: between 100 and 10,000,000 frames per stream")
        if not 1 <= self.latency_trials <= 1000:
            raise ParamError("--latency-trials: between 1 and 1000")
        if not 1 <= self.b2b_trials <= 1000:
            raise ParamError("--b2b-trials: between 1 and 1000")
        if self.b2b_max_frames is not None and not 1 <= self.b2b_max_frames <= 10_000_000:
            raise ParamError("--b2b-max-frames: between 1 and 10,000,000")
        check_number(self.recovery_overload, 1.0, 2.0, "--recovery-overload", above=True)
        check_number(self.dut_rate_pct, 1.0, 100.0, "--dut-rate-pct")
        check_mode(self.mode)
        if self.mode == "mininet":
            self._check_mininet()
        elif (self.trial_s, self.link_bw_bps, self.link_queue) != (None, None, None):
            raise ParamError("--trial-s, --link-bw and --link-queue: for --mode mininet only")
        return self

    def _check_mininet(self) -> None:
        check_number(self.rate_bps, 1e6, 100e9, "--line-rate")
        if self.trial_s is None:
            raise ParamError("--trial-s: a Mininet trial needs a length")
        check_number(self.trial_s, 0.05, 60.0, "--trial-s")
        if self.trial_frames is not None:
            raise ParamError("--trial-frames: for --mode virtual only (Mininet trials last "
                             "--trial-s)")
        if self.link_bw_bps is not None:
            check_number(self.link_bw_bps, 1e3, 400e9, "--link-bw")
        if self.link_queue is not None:
            if self.link_bw_bps is None:
                raise ParamError("--link-queue: the queue of a shaped link; give --link-bw too")
            if not 1 <= self.link_queue <= 100_000:
                raise ParamError(f"--link-queue: {self.link_queue} is outside 1..100000 packets")
        if not self.duts:
            raise ParamError("--dut: no DUT named")
        for d in self.duts:
            if self.duts.count(d) > 1:
                raise ParamError(f"--dut: {d} is named twice")
        other = [d for d in self.duts if d not in ("p4scope", "bmv2")]
        if self.dut_rate_pct < 100.0 and other:
            raise ParamError(f"--dut-rate-pct: shaping the DUT's ports needs a P4 DUT "
                             f"(--dut p4scope or bmv2), not {', '.join(other)}; shape the "
                             "links with --link-bw instead")

    @property
    def duts(self) -> tuple[str, ...]:
        """The DUTs `dut` names (comma-separated), in the order they run."""
        return tuple(d.strip() for d in self.dut.split(",") if d.strip())

    @property
    def trial_ns(self) -> Optional[int]:
        """A trial's length when it is set in time (Mininet), else None."""
        return None if self.trial_s is None else int(round(self.trial_s * 1e9))

    @property
    def ports(self) -> list[int]:
        return sorted(p for pr in self.pairs for p in pr)


