"""Seed 001's TCP + RoCEv2 configuration: a lossy class and a lossless
class into one egress under an N:1 incast, and the traffic-manager profile
that makes the lossless class lossless (PFC on its priority, RED-like ECN,
a strict-priority queue for CNPs).

Priorities are the DUT's traffic classes, set from the DSCP
(`traffic_class` in p4src/dut.p4): lossy TCP-like frames keep DSCP 0
(class 0), RoCEv2-like frames carry DSCP 26 (class 3, the seed's lossless
priority), CNPs DSCP 48 (class 7, the seed's strict-priority queue).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from ..params import MAX_PORT, ParamError, Profile, check_int, check_number, check_sizes

LOSSY_PRIORITY, LOSSLESS_PRIORITY, CNP_PRIORITY = 0, 3, 7
LOSSY_DSCP, LOSSLESS_DSCP, CNP_DSCP = 0, 26, 48
DSCP_CLASSES = {LOSSLESS_DSCP: LOSSLESS_PRIORITY, CNP_DSCP: CNP_PRIORITY}
ROCEV2_UDP = 4791
# seed 001, Appendix: random-detect ECN thresholds
ECN_MIN_BYTES, ECN_MAX_BYTES = 153_600, 1_536_000
# seed 001, Table 1: 4800 cells (256 B) of PG headroom over 32 ports
HEADROOM_BYTES = 4800 * 256 // 32
PFC_CHOICES = ("off", "on")

# the PFC options and the engine's keys they set (its errors name the key)
OPTION_OF_KEY = {"pfc.xoff_bytes": "--xoff-bytes", "pfc.xon_bytes": "--xon-bytes",
                 "pfc.headroom_bytes": "--headroom-bytes", "pfc.quanta": "--quanta",
                 "pfc.ports": "--senders"}


@dataclass(frozen=True)
class LosslessParams:
    """senders: ingress ports 1..N, each sending one lossy and one lossless
    flow of `flow_frames` frames at `lossy_pct` and `lossless_pct` of line
    rate into `egress`; `cnp_fps` CNPs per second (0: none) from port N+1
    while the flows last; `pfc`: the cases (PFC off, on); xoff/xon/headroom
    per (ingress port, lossless priority); `obey_pause`: the senders obey
    PFC (False shows what the pause prevents)."""

    senders: int = 16
    egress: int = 31
    flow_frames: int = 1000
    lossy_size: int = 1518
    lossless_size: int = 2110  # a 2048-byte RoCEv2 MTU (seed 001) and its headers
    lossy_pct: float = 50.0
    lossless_pct: float = 50.0
    cnp_fps: float = 1e6
    pfc: tuple[str, ...] = PFC_CHOICES
    xoff_bytes: int = 262_144
    xon_bytes: int = 131_072
    headroom_bytes: int = HEADROOM_BYTES
    quanta: int = 0xFFFF
    ecn_min_bytes: int = ECN_MIN_BYTES
    ecn_max_bytes: int = ECN_MAX_BYTES
    ecn_pmax: float = 1.0
    obey_pause: bool = True
    rate_bps: float = 100e9

    @property
    def sender_ports(self) -> list[int]:
        return list(range(1, self.senders + 1))

    @property
    def cnp_port(self) -> Optional[int]:
        return self.senders + 1 if self.cnp_fps > 0 else None

    def check(self) -> "LosslessParams":
        check_int(self.senders, 2, 32, "--senders")
        check_int(self.egress, 1, MAX_PORT, "--egress")
        used = self.sender_ports + ([self.cnp_port] if self.cnp_port else [])
        if self.egress in used:
            raise ParamError(f"--egress {self.egress}: also a sender (ports 1..{used[-1]}"
                             f"{', the last one sending CNPs' if self.cnp_port else ''})")
        check_int(self.flow_frames, 10, 1_000_000, "--flow-frames")
        check_sizes([self.lossy_size], "--lossy-size")
        check_sizes([self.lossless_size], "--lossless-size")
        check_number(self.lossy_pct, 0, 100, "--lossy-pct", above=True, unit="%")
        check_number(self.lossless_pct, 0, 100, "--lossless-pct", above=True, unit="%")
        if self.lossy_pct + self.lossless_pct > 100 + 1e-9:
            raise ParamError(f"--lossy-pct {self.lossy_pct:g} + --lossless-pct "
                             f"{self.lossless_pct:g}: a sender's port cannot send above its "
                             "line rate")
        check_number(self.cnp_fps, 0, 10e6, "--cnp-fps", unit="frames/s")
        if not self.pfc or any(x not in PFC_CHOICES for x in self.pfc) \
                or len(set(self.pfc)) != len(self.pfc):
            raise ParamError(f"--pfc {','.join(self.pfc)}: off, on or both (off,on)")
        for v, opt in ((self.xoff_bytes, "--xoff-bytes"), (self.xon_bytes, "--xon-bytes"),
                       (self.headroom_bytes, "--headroom-bytes")):
            check_int(v, 0, 2**40, opt, unit="bytes")
        check_int(self.quanta, 1, 0xFFFF, "--quanta")
        check_int(self.ecn_min_bytes, 0, 2**40, "--ecn-min-bytes", unit="bytes")
        check_int(self.ecn_max_bytes, 0, 2**40, "--ecn-max-bytes", unit="bytes")
        if self.ecn_min_bytes > self.ecn_max_bytes:
            raise ParamError(f"--ecn-min-bytes {self.ecn_min_bytes}: above --ecn-max-bytes "
                             f"{self.ecn_max_bytes}")
        check_number(self.ecn_pmax, 0, 1, "--ecn-pmax")
        return self

    # ----- the traffic-manager profile --------------------------------------------

    def tm_extra(self, pfc: bool) -> dict[str, Any]:
        """The settings on top of the base profile: 8 queues, DRR between
        the data classes, queue 7 strict, ECN on the lossless queue, and
        (with `pfc`) PFC on the lossless priority of the senders' ports."""
        extra: dict[str, Any] = {
            "priority_queues": 8,
            "defaults": {"scheduler": "drr", "queues": {
                str(LOSSLESS_PRIORITY): {"ecn": {"min_bytes": self.ecn_min_bytes,
                                                 "max_bytes": self.ecn_max_bytes,
                                                 "pmax": self.ecn_pmax}},
                str(CNP_PRIORITY): {"strict": True}}},
        }
        if pfc:
            extra["pfc"] = {"priorities": [LOSSLESS_PRIORITY],
                            "ports": f"1-{self.senders}", "xoff_bytes": self.xoff_bytes,
                            "xon_bytes": self.xon_bytes, "headroom_bytes": self.headroom_bytes,
                            "quanta": self.quanta}
        return extra

    def profile(self, base: Profile, pfc: bool) -> Profile:
        """`base` (buffer, alpha, cells, arbitration) with this run's classes."""
        extra = {**{k: v for k, v in base.extra.items() if k != "pfc"}, **self.tm_extra(pfc)}
        return replace(base, name=f"lossless-pfc-{'on' if pfc else 'off'}", extra=extra,
                       description=f"{base.description}; classes 0 (lossy), 3 (lossless"
                                   f"{', PFC' if pfc else ''}), 7 (strict)")

    def check_profile(self, base: Profile) -> None:
        """The engine's own check of the PFC profile: thresholds above the
        buffer, xon above xoff, headroom that does not fit (ParamError
        naming the option)."""
        try:
            import p4scope_dataplane as dp
        except ImportError:  # the run says the engine is missing
            return
        try:
            dp.tm_config_check(self.profile(base, True).tm_config(self.rate_bps))
        except dp.ConfigError as e:
            msg = str(e).removeprefix("traffic manager config: ")
            key, _, why = msg.partition(": ")
            raise ParamError(f"{OPTION_OF_KEY.get(key, key)}: {why or msg}") from None
