"""Fairness parameters as in seed 000's Table 3: the ten port combinations
of 3, 6 and 16 source ports, destination port 31, the Tolly iMIX at 100 %
of line rate, at 100GbE."""

from __future__ import annotations

from dataclasses import dataclass

from ..linerate import GBPS_100, TOLLY_IMIX
from ..params import (EGRESS, MAX_DURATION_US, ParamError, check_int, check_mix_weights,
                      check_number, check_ports, check_sizes, combination_name)

# seed 000, Table 3: the source ports of each scenario (destination 31)
TABLE3_COMBINATIONS: dict[int, tuple[tuple[int, ...], ...]] = {
    3: ((25, 26, 27), (24, 25, 26)),
    6: (tuple(range(9, 15)), tuple(range(7, 13)), tuple(range(8, 14))),
    16: (tuple(range(9, 25)), tuple(range(8, 24)), (2, 3, 4) + tuple(range(9, 22)),
         (2, 3, 10, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 28, 29, 30),
         (1, 2, 4, 5, 6, 7, 8, 16, 24, 25, 26, 27, 28, 29, 30, 32)),
}


@dataclass(frozen=True)
class FairnessParams:
    combinations: tuple[tuple[int, ...], ...] = tuple(
        c for n in (3, 6, 16) for c in TABLE3_COMBINATIONS[n])
    egress: int = EGRESS
    mix: tuple[tuple[int, float], ...] = tuple(TOLLY_IMIX.items())
    duration_ns: int = 2_000_000
    warmup_ns: int = 1_000_000
    rate_bps: float = GBPS_100
    load: float = 1.0  # fraction of line rate each source offers

    def check(self) -> "FairnessParams":
        if not self.combinations:
            raise ParamError("fairness: no port combinations")
        for ports in self.combinations:
            check_ports(ports, self.egress, f"fairness {combination_name(ports)}")
        check_sizes([s for s, _ in self.mix], "--mix")
        check_mix_weights(self.mix)
        max_ns = int(MAX_DURATION_US * 1000)
        check_int(self.duration_ns, 1, max_ns, "duration_ns (--duration-us)")
        check_int(self.warmup_ns, 0, max_ns, "warmup_ns (--warmup-us)")
        if self.warmup_ns >= self.duration_ns:
            raise ParamError("fairness: need 0 <= warm-up < duration (--warmup-us below "
                             "--duration-us)")
        check_number(self.load, 0, 1.0, "load", above=True, where="a fraction of line rate")
        check_number(self.rate_bps, 0, 1e12, "rate_bps", above=True, where="the line rate")
        return self
